import Foundation
import Platform

/// Why a user's date pattern was refused; `reason` is an English sentence for the API's
/// error message.
struct BeautifulDateError: Error, Hashable, Sendable {
    var reason: String
}

/// A user's own criterion: a digit pattern over the date written `DD.MM.YYYY`, eight
/// places (the year zero-padded to four digits).
///
/// - A digit `0`-`9` matches that digit.
/// - `?` matches any digit.
/// - A letter stands for a digit: the same letter is the same digit everywhere, different
///   letters are different digits. Letters are case-insensitive and may be any alphabet
///   (`AB.BA.????` and `аб.ба.????` are the same rule). A letter is not compared with the
///   literal digits: `A2.02.2022` matches 22.02.2022 (A = 2).
/// - Dots are optional and ignored wherever they are (`ABBA????` is `AB.BA.????`);
///   spaces around the pattern are ignored. Anything else is refused.
///
/// Examples: `AB.BA.????` (the day mirrored is the month: 12.21 cannot happen, so 10.01,
/// 20.02, 30.03, 01.10 and 21.12 of every year), `AA.AA.AAAA` (11.11.1111 only),
/// `??.??.2025` (every day of 2025), `AA.??.20AA` (22.03.2022, 11.06.2011).
///
/// A pattern must have exactly eight places, and its literal day and month digits must
/// fit some real day and month (`??.13.????` or `2025.??.??`, written year first, are
/// refused). A pattern that passes that check yet matches no date (`29.02.???1`: a year
/// ending in 1 is never a leap year) is accepted and simply finds nothing.
struct CustomDatePattern: Sendable, Hashable {
    /// The pattern as the user wrote it (spaces around it removed).
    let text: String
    /// `0xF` in the nibble of each place that holds a literal digit.
    private let literalMask: UInt32
    /// The literal digits, in their nibbles (as ``WrittenDate/digits``).
    private let literalValue: UInt32
    /// Each place's letter, one nibble per place in the same layout: 0 for none, 1-8 for
    /// the first, second ... distinct letter.
    private let letters: UInt32

    /// Parses a pattern; throws a ``BeautifulDateError`` saying what is wrong.
    init(_ text: String) throws(BeautifulDateError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw BeautifulDateError(reason: "the pattern is empty; write it as DD.MM.YYYY, e.g. AB.BA.????") }
        var mask: UInt32 = 0, value: UInt32 = 0, letters: UInt32 = 0
        var letterNames: [String] = []
        var place = 0
        for character in trimmed {
            if character == "." { continue }
            guard place < 8 else {
                throw BeautifulDateError(reason: "the pattern has more than eight places; write it as DD.MM.YYYY")
            }
            let shift = UInt32(28 - 4 * place)
            if character == "?" {
                // Any digit: no constraint.
            } else if character.isASCII, let digit = character.wholeNumberValue {
                mask |= 0xF << shift
                value |= UInt32(digit) << shift
            } else if character.isLetter {
                let name = String(character).lowercased()
                let index: Int
                if let known = letterNames.firstIndex(of: name) {
                    index = known
                } else {
                    letterNames.append(name)
                    index = letterNames.count - 1
                }
                letters |= UInt32(index + 1) << shift
            } else {
                throw BeautifulDateError(reason: "unexpected character \u{201C}\(character)\u{201D}: use digits, letters, ? and dots")
            }
            place += 1
        }
        guard place == 8 else {
            throw BeautifulDateError(reason: "the pattern has \(place) of the eight places DD.MM.YYYY")
        }
        self.text = trimmed
        literalMask = mask
        literalValue = value
        self.letters = letters
        guard someDayAndMonthFit() else {
            throw BeautifulDateError(reason: "no day and month fit \u{201C}\(trimmed)\u{201D}; write it as DD.MM.YYYY")
        }
    }

    /// Whether a date matches (a date that does not exist or has no four-digit year
    /// matches nothing).
    func matches(_ date: LocalDate) -> Bool {
        guard LocalDate(validYear: date.year, month: date.month, day: date.day) != nil, let written = WrittenDate(date) else { return false }
        return matches(written)
    }

    /// Whether a written date matches: the literal digits in one mask comparison, then the
    /// letters pairwise (at most 28 pairs), allocating nothing.
    func matches(_ written: WrittenDate) -> Bool {
        let digits = written.digits
        guard digits & literalMask == literalValue else { return false }
        guard letters != 0 else { return true }
        for first in 0..<7 {
            let shift = UInt32(28 - 4 * first)
            let letter = (letters >> shift) & 0xF
            guard letter != 0 else { continue }
            let digit = (digits >> shift) & 0xF
            for second in (first + 1)..<8 {
                let otherShift = UInt32(28 - 4 * second)
                let otherLetter = (letters >> otherShift) & 0xF
                guard otherLetter != 0 else { continue }
                // Same letter, same digit; different letters, different digits.
                if (letter == otherLetter) != (digit == (digits >> otherShift) & 0xF) { return false }
            }
        }
        return true
    }

    /// Whether some real day and month match the literal digits of the first four places
    /// (February 29th counts unless all four year places are literal digits of a common
    /// year).
    private func someDayAndMonthFit() -> Bool {
        let yearMask: UInt32 = 0xFFFF
        let leapPossible = literalMask & yearMask != yearMask || LocalDate.isLeap(year: Self.number(fromBCD: literalValue & yearMask))
        for month in 1...12 {
            let length = month == 2 ? (leapPossible ? 29 : 28) : LocalDate.daysIn(year: 2001, month: month)
            for day in 1...length {
                let digits = WrittenDate.bcd(day) << 24 | WrittenDate.bcd(month) << 16
                if digits & literalMask & ~yearMask == literalValue & ~yearMask { return true }
            }
        }
        return false
    }

    /// The number four packed decimal digits stand for.
    private static func number(fromBCD packed: UInt32) -> Int {
        var result = 0
        for shift in stride(from: 12, through: 0, by: -4) { result = result * 10 + Int((packed >> UInt32(shift)) & 0xF) }
        return result
    }
}

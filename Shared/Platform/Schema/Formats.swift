import Foundation

/// Checks of the value formats the contract uses (CONTRACT.md, "Values").
public enum Formats {
    /// `local@domain.tld`: one `@`, no spaces, a dot in the domain, at most 254 bytes.
    public static func isEmail(_ text: String) -> Bool {
        guard text.utf8.count <= 254, !text.contains(where: { $0.isWhitespace }) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
            && (labels.last?.count ?? 0) >= 2
    }

    /// A name people read (a person's, a cable's): at least one visible character (not
    /// only spaces, invisible format characters like U+200B or U+FEFF, or lone combining
    /// marks) and no bidirectional embeddings, overrides or isolates (U+202A–U+202E,
    /// U+2066–U+2069), which make a name display as something else.
    public static func isName(_ text: String) -> Bool {
        var visible = false
        for scalar in text.unicodeScalars {
            if (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) { return false }
            guard !visible else { continue }
            // Letters that draw nothing: the Hangul fillers, the blank Braille pattern.
            if [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800].contains(scalar.value) { continue }
            switch scalar.properties.generalCategory {
            case .format, .nonspacingMark, .enclosingMark, .spaceSeparator, .lineSeparator, .paragraphSeparator, .control: continue
            default: visible = !scalar.properties.isWhitespace
            }
        }
        return visible
    }

    /// `+` then 8 to 15 digits, the first not zero (ITU-T E.164).
    public static func isE164(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 9, bytes.count <= 16, bytes[0] == UInt8(ascii: "+"), bytes[1] != UInt8(ascii: "0") else { return false }
        return bytes.dropFirst().allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// Parses a calendar date `YYYY-MM-DD` that exists in the Gregorian calendar.
    public static func date(_ text: String) -> DateComponents? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(bytes[0..<4]), let month = number(bytes[5..<7]), let day = number(bytes[8..<10]),
            (1...12).contains(month), day >= 1
        else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard day <= days else { return nil }
        return DateComponents(year: year, month: month, day: day)
    }

    /// The tz database's canonical zone names, those without a `/` among them (`GMT`):
    /// an abbreviation Foundation also resolves (`PST`) is not one.
    static let zoneNames = Set(TimeZone.knownTimeZoneIdentifiers)

    /// Parses a local time `HH:MM` (00:00 to 23:59) into minutes since midnight.
    public static func time(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"), let hours = number(bytes[0..<2]),
            let minutes = number(bytes[3..<5]), hours < 24, minutes < 60
        else { return nil }
        return hours * 60 + minutes
    }

    /// An RFC 3339 instant that names its offset (`Z` or `+03:00`).
    public static func isInstant(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") else { return false }
        return Instant.parse(text) != nil
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }
}

/// What the full-text index holds for a reminder, and what a search asks it: every word
/// prefixed with its owner's key.
///
/// A word common to many users ("купить") would otherwise have one long list of rows in
/// the index, and a prefix query of one user reads it whole (a million reminders: a
/// quarter of a second). With each user's words their own terms (`k3v9d0q2xaкупить`), a
/// search reads the postings of its user only, and the ranking's word statistics are that
/// user's too. The key is a hash of the user id, so two users may share one (about one
/// pair in ten thousand among a million users): the search still joins on the user id,
/// the shared key only costs time.
///
/// Words are what SQLite's `unicode61` tokenizer would make of the text (``words(_:)``),
/// lowercased, with Ё as Е (Russian writers often type е for ё and unicode61 does not
/// fold it); the tokenizer then folds their diacritics.
public enum SearchTerms {
    /// Characters of a user's key (base 36: 36^10 keys).
    static let keyLength = 10

    /// The user's key: FNV-1a (64 bits) of the id, in base 36, fixed width.
    public static func key(user: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in user.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
        var key = [UInt8](repeating: 0, count: keyLength)
        for index in (0..<keyLength).reversed() {
            key[index] = digits[Int(hash % 36)]
            hash /= 36
        }
        return String(decoding: key, as: UTF8.self)
    }

    /// The words of a text as the index keeps them: what `unicode61` makes a token of.
    /// Letters, numbers and private-use characters make words; non-spacing and enclosing
    /// marks (accents, variation selectors) are dropped inside a word, as the tokenizer
    /// drops them; everything else separates, spacing marks too (so a word of marks
    /// alone is no word, and no text can make an index term without its owner's key).
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var word = String.UnicodeScalarView()
        for scalar in text.lowercased().unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber, .letterNumber, .otherNumber,
                .privateUse:
                word.append(scalar == "ё" ? "е" : scalar)
            case .nonspacingMark, .enclosingMark:
                continue
            default:
                if !word.isEmpty { words.append(String(word)) }
                word = String.UnicodeScalarView()
            }
        }
        if !word.isEmpty { words.append(String(word)) }
        return words
    }

    /// The indexed text of one field of a user's reminder ("" for none).
    public static func indexed(_ text: String?, user: String) -> String {
        guard let text, !text.isEmpty else { return "" }
        let key = key(user: user)
        return words(text).map { key + $0 }.joined(separator: " ")
    }

    /// The FTS5 query for what a user typed: every word a prefix of one of the user's
    /// words, all of them required, in any column or in `column` only; quoted, so nothing
    /// a user types is FTS syntax. `nil` when the text has no word. At most eight words
    /// count.
    static func match(_ text: String, user: String, in column: String? = nil) -> String? {
        let words = words(text).prefix(8)
        guard !words.isEmpty else { return nil }
        let key = key(user: user)
        let filter = column.map { "\($0) : " } ?? ""
        return words.map { "\(filter)\"\(key)\($0)\"*" }.joined(separator: " AND ")
    }
}

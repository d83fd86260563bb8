import Foundation

/// A JSON Schema (draft 2020-12 subset) that both documents an operation in `describe`
/// and validates its `data`, so the two can never disagree.
///
/// Objects reject members they do not declare (`additionalProperties: false`): unknown
/// fields are usually typos (CONTRACT.md, "Request").
public struct JSONSchema: Sendable {
    indirect enum Kind: Sendable {
        case object(properties: [String: JSONSchema], required: Set<String>, additional: JSONSchema?)
        case string(minLength: Int, maxLength: Int, format: StringFormat?, allowed: [String]?)
        case integer(minimum: Int64?, maximum: Int64?)
        case number
        case boolean
        case array(items: JSONSchema, minItems: Int, maxItems: Int)
        case any
    }

    let kind: Kind
    /// Text for people, shown in `describe`.
    public private(set) var summary: String?
    /// Whether `null` is accepted besides the declared type.
    public private(set) var isNullable = false

    init(_ kind: Kind) { self.kind = kind }

    // MARK: Building

    /// An object with the given members; those in `required` must be present.
    /// Undeclared members are rejected unless `additional` gives a schema for them.
    public static func object(_ properties: [String: JSONSchema], required: [String] = [], additional: JSONSchema? = nil) -> JSONSchema {
        JSONSchema(.object(properties: properties, required: Set(required), additional: additional))
    }

    /// An object with no members: the `data` of operations that take no input.
    public static let empty = JSONSchema.object([:])

    /// A string of 0 to `maxLength` characters (1 to ... when `minLength` is 1), optionally
    /// of a known format. Control characters are refused unless `multiline` allows newlines.
    public static func string(minLength: Int = 0, maxLength: Int = 1_000, format: StringFormat? = nil) -> JSONSchema {
        JSONSchema(.string(minLength: minLength, maxLength: maxLength, format: format, allowed: nil))
    }

    /// Text for people of 0 to `maxLength` characters that may hold line breaks and tabs.
    public static func text(minLength: Int = 0, maxLength: Int = 4_000) -> JSONSchema {
        string(minLength: minLength, maxLength: maxLength, format: .multiline)
    }

    /// A name people read, 1 to `maxLength` characters (``StringFormat/name``).
    public static func name(maxLength: Int = 100) -> JSONSchema {
        string(minLength: 1, maxLength: maxLength, format: .name)
    }

    /// A string that must be one of `values`.
    public static func oneOf(_ values: [String]) -> JSONSchema {
        JSONSchema(.string(minLength: 0, maxLength: 1_000, format: nil, allowed: values))
    }

    /// An integer within the bounds.
    public static func integer(minimum: Int64? = nil, maximum: Int64? = nil) -> JSONSchema {
        JSONSchema(.integer(minimum: minimum, maximum: maximum))
    }

    /// Any number (never used for money).
    public static let number = JSONSchema(.number)
    /// `true` or `false`.
    public static let boolean = JSONSchema(.boolean)
    /// Any JSON value.
    public static let any = JSONSchema(.any)

    /// An array of `items`.
    public static func array(of items: JSONSchema, minItems: Int = 0, maxItems: Int = 1_000) -> JSONSchema {
        JSONSchema(.array(items: items, minItems: minItems, maxItems: maxItems))
    }

    /// The same schema with a description for people.
    public func described(_ text: String) -> JSONSchema {
        var copy = self
        copy.summary = text
        return copy
    }

    /// An object schema with more members (a view with a few extra fields); other
    /// schemas come back unchanged.
    public func adding(_ members: [String: JSONSchema], required extra: [String] = []) -> JSONSchema {
        guard case .object(let properties, let required, let additional) = kind else { return self }
        var copy = JSONSchema(.object(properties: properties.merging(members) { _, new in new }, required: required.union(extra), additional: additional))
        copy.summary = summary
        copy.isNullable = isNullable
        return copy
    }

    /// The same schema, also accepting `null`.
    public func nullable() -> JSONSchema {
        var copy = self
        copy.isNullable = true
        return copy
    }
}

/// String formats the schema checks.
public enum StringFormat: String, Sendable {
    /// An email address (`local@domain.tld`).
    case email
    /// A calendar date `YYYY-MM-DD`.
    case date
    /// An RFC 3339 instant with its offset (`2026-11-22T10:00:00.000Z`).
    case dateTime = "date-time"
    /// A local time `HH:MM`. Written as `local-time` with a `pattern` (``JSONSchema/jsonValue``):
    /// JSON Schema's own `time` is RFC 3339's full-time (`09:30:00Z`), which it is not.
    case time = "local-time"
    /// A phone number in E.164 form (`+79161234567`).
    case e164
    /// An IANA time zone name (`Europe/Moscow`).
    case timeZone = "time-zone"
    /// An ISO 4217 currency code (`RUB`).
    case currency
    /// Free text for people that may hold line breaks and tabs (a comment, a plan's
    /// text); other control characters are still refused.
    case multiline
    /// A key chosen by people for others to type and put in URLs (a cable's id, a
    /// package's): lowercase ASCII letters, digits, `-`, `_` and `.`, starting with a
    /// letter or digit.
    case key
    /// A name people read: visible, without direction overrides (``Formats/isName(_:)``).
    case name

    /// Whether `text` has this format.
    public func accepts(_ text: String) -> Bool {
        switch self {
        case .email: return Formats.isEmail(text)
        case .date: return Formats.date(text) != nil
        case .dateTime: return Formats.isInstant(text)
        case .time: return Formats.time(text) != nil
        case .e164: return Formats.isE164(text)
        case .timeZone: return TimeZone(identifier: text) != nil && text.contains("/") || text == "UTC" || Formats.zoneNames.contains(text)
        case .currency: return Currency.isKnown(text)
        case .multiline: return true
        case .key:
            func alphanumeric(_ byte: UInt8) -> Bool { (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) }
            guard let first = text.utf8.first, alphanumeric(first) else { return false }
            return text.utf8.allSatisfy { alphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }
        case .name: return Formats.isName(text)
        }
    }

    /// A regular expression (ECMA-262, as JSON Schema's `pattern`) for generic
    /// validators, where the format's name is not JSON Schema's own.
    var pattern: String? {
        switch self {
        case .time: "^([01][0-9]|2[0-3]):[0-5][0-9]$"
        default: nil
        }
    }

    var problem: String {
        switch self {
        case .email: "not an email address"
        case .date: "not a date (YYYY-MM-DD)"
        case .dateTime: "not an RFC 3339 instant with a time zone offset"
        case .time: "not a time (HH:MM)"
        case .e164: "not a phone number in E.164 form (+ and 8 to 15 digits)"
        case .timeZone: "not an IANA time zone name"
        case .currency: "not an ISO 4217 currency code"
        case .multiline: "not text"
        case .key: "only lowercase letters a-z, digits, '-', '_' and '.', starting with a letter or digit"
        case .name: "must be a visible name: not only spaces or invisible characters, no direction overrides"
        }
    }
}

import Foundation

/// Any JSON value, kept as parsed. Integers stay integers (money and counters are never
/// floating point); other numbers are `Double`.
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The members of an object, `nil` for other values.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The elements of an array, `nil` for other values.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// An element of an array, `nil` when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// An object with `other`'s members added (replacing equal names); other values unchanged.
    public func merging(_ other: [String: JSONValue]) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.merging(other) { _, new in new })
    }

    /// The text of a string, `nil` for other values.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value of an integer, `nil` for other values.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// Looks up a member of an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// A short name of the value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

/// The JSON coders of the wire: one configuration for the whole system.
///
/// Text is read by ``JSONParser`` and written by ``JSONValue/serialized``; typed values go
/// through ``JSONValueDecoder`` and ``JSONValueEncoder`` over the parsed tree, or write
/// themselves (``JSONWritable``). `bench json` measured each against Foundation's coders
/// and the faster one is used (README, "Benchmarks").
public enum WireJSON {
    /// Encodes a value as compact JSON with sorted keys (stable bytes for hashing and tests).
    public static func encode(_ value: some Encodable) throws -> Data {
        if let raw = value as? RawJSON { return raw.bytes }
        if let writable = value as? any JSONWritable {
            var output: [UInt8] = []
            writable.writeJSON(to: &output)
            return Data(output)
        }
        return try JSONValueEncoder().encode(value).serialized
    }

    /// Decodes a typed value from JSON bytes (a stored reply read back for a retry). From
    /// bytes straight to a type, Foundation's decoder is the faster of the two (`bench json`);
    /// requests, which are parsed into a tree anyway, use ``JSONValueDecoder``.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }

    /// Converts an encodable value to a ``JSONValue`` tree.
    public static func value(of encodable: some Encodable) throws -> JSONValue {
        try JSONValueEncoder().encode(encodable)
    }
}

/// JSON text that is already encoded (a cached answer, say): handlers return it and the
/// runtime puts the bytes on the wire as they are.
public struct RawJSON: Encodable, Sendable {
    /// The JSON text.
    public let bytes: Data

    /// Wraps encoded JSON.
    public init(_ bytes: Data) {
        self.bytes = bytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(try JSONParser.parse(bytes))
    }
}

/// A tree writes itself: encoding one (a reply or an event built as a tree) goes straight
/// to bytes instead of through the `Encoder` protocol and back into a tree.
extension JSONValue: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) { write(to: &output) }
}

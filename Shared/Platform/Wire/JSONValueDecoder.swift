import Foundation

/// Decodes `Decodable` values straight from a parsed ``JSONValue`` tree.
///
/// A request's JSON is parsed once (``JSONParser``); its typed input is read from that
/// tree here, in the manner of Hummingbird's `URLEncodedFormDecoder` over its node tree,
/// with no second serialization and no second parse. Integers are read exactly (money is
/// `Int64` minor units); `Data` is base64 text and `Date` a number of seconds since
/// 2001-01-01, as Foundation's `JSONDecoder` does by default.
public struct JSONValueDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a value of `type` from `value`.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try JSONValueDecoding(value: value, codingPath: []).unbox(type)
    }
}

/// The decoder handed to `init(from:)`: one per value in the tree.
private struct JSONValueDecoding: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(value: value, codingPath: codingPath)
    }

    /// Decodes `type` from this node: the leaves directly, anything else by its `init(from:)`.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        // Fast, exact paths for the leaves and for JSONValue itself (no copy into Codable).
        if type == JSONValue.self, let same = value as? T { return same }
        if type == String.self, let text = try SingleValueContainer(value: value, codingPath: codingPath).decode(String.self) as? T {
            return text
        }
        if type == Data.self {
            guard case .string(let text) = value, let data = Data(base64Encoded: text) as? T else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "must be base64 text"))
            }
            return data
        }
        if type == Date.self {
            let seconds = try SingleValueContainer(value: value, codingPath: codingPath).decode(Double.self)
            if let date = Date(timeIntervalSinceReferenceDate: seconds) as? T { return date }
        }
        return try T(from: self)
    }
}

private func mismatch(_ expected: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    let what: String
    switch expected {
    case is [String: JSONValue].Type: what = "an object"
    case is [JSONValue].Type: what = "an array"
    case is String.Type: what = "a string"
    case is Bool.Type: what = "a boolean"
    default: what = "a number"
    }
    return DecodingError.typeMismatch(expected, .init(codingPath: path, debugDescription: "must be \(what), not \(value.typeName)"))
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "is required"))
        }
        return value
    }

    private func decoder(for key: Key) throws -> JSONValueDecoding {
        JSONValueDecoding(value: try member(key), codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = try member(key) { return true }
        return false
    }

    // The leaves are read in place: no nested decoder, no coding path unless it fails.
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        if case .string(let text)? = members[key.stringValue] { return text }
        return try decodeNested(type, forKey: key)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        if case .bool(let flag)? = members[key.stringValue] { return flag }
        return try decodeNested(type, forKey: key)
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        if case .integer(let number)? = members[key.stringValue], let exact = Int(exactly: number) { return exact }
        return try decodeNested(type, forKey: key)
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        if case .integer(let number)? = members[key.stringValue] { return number }
        return try decodeNested(type, forKey: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        switch members[key.stringValue] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: return try decodeNested(type, forKey: key)
        }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeNested(type, forKey: key)
    }

    private func decodeNested<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let value = try member(key)
        if case .null = value, type != JSONValue.self {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key], debugDescription: "must not be null"))
        }
        return try JSONValueDecoding(value: value, codingPath: codingPath + [key]).unbox(type)
    }

    // `decodeIfPresent` is the synthesized code's path for optionals: absent and null are nil.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = members[key.stringValue] else { return nil }
        if case .null = value { return type == JSONValue.self ? (JSONValue.null as? T) : nil }
        return try JSONValueDecoding(value: value, codingPath: codingPath + [key]).unbox(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoding(value: members["super"] ?? .null, codingPath: codingPath)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoding(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next<T>(_ type: T.Type) throws -> JSONValueDecoding {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath + [JSONIndexKey(currentIndex)], debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return JSONValueDecoding(value: elements[currentIndex], codingPath: codingPath + [JSONIndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = try next(type)
        if case .null = decoder.value, type != JSONValue.self {
            throw DecodingError.valueNotFound(type, .init(codingPath: decoder.codingPath, debugDescription: "must not be null"))
        }
        return try decoder.unbox(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next([String: JSONValue].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([JSONValue].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try next(JSONValue.self)
    }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        if case .null = value { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(type, value, codingPath) }
        return flag
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let text) = value else { throw mismatch(type, value, codingPath) }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .integer(let number): return Double(number)
        case .number(let number): return number
        default: throw mismatch(type, value, codingPath)
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    /// Integers are exact: a fraction or a value out of the type's range is refused, never rounded.
    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let exact: T?
        switch value {
        case .integer(let number): exact = T(exactly: number)
        case .number(let number): exact = T(exactly: number)
        default: throw mismatch(type, value, codingPath)
        }
        guard let exact else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "must be a whole number in range"))
        }
        return exact
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONValueDecoding(value: value, codingPath: codingPath).unbox(type)
    }
}

/// An index into an array, as a coding key (the coding paths of both tree coders).
struct JSONIndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

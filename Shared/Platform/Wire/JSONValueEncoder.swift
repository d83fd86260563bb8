import Foundation

/// Encodes `Encodable` values into a ``JSONValue`` tree, the counterpart of
/// ``JSONValueDecoder``.
///
/// Replies are built as a tree and written once by ``JSONValue/serialized`` (keys sorted,
/// so equal values give equal bytes for hashing and tests); a handler that needs a reply
/// as a tree (to add a member, say) gets it here without writing and re-reading JSON text.
/// `Data` becomes base64 text and `Date` a number of seconds since 2001-01-01, as with
/// Foundation's `JSONEncoder` defaults; the system's own instants are RFC 3339 strings
/// (``Instant``), never `Date` values on the wire.
public struct JSONValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Encodes `value` as a tree.
    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if let leaf = try Leaf.value(of: value) { return leaf }
        let encoder = JSONValueEncoding(codingPath: [])
        try value.encode(to: encoder)
        return encoder.result.value
    }
}

/// A value being built: leaves are final, objects and arrays are filled in place by
/// their containers (reference types, because containers outlive the calls that made them).
private enum Node {
    case leaf(JSONValue)
    case object(ObjectNode)
    case array(ArrayNode)

    var value: JSONValue {
        switch self {
        case .leaf(let value): value
        case .object(let node): .object(node.members.mapValues(\.value))
        case .array(let node): .array(node.elements.map(\.value))
        }
    }
}

private final class ObjectNode {
    var members: [String: Node] = [:]
}

private final class ArrayNode {
    var elements: [Node] = []
}

/// Where a value's encoding lands.
private final class NodeBox {
    var node: Node?
}

/// The leaves written directly, without going through `encode(to:)`.
private enum Leaf {
    static func value<T: Encodable>(of value: T) throws -> JSONValue? {
        // Metatype comparisons are cheap where `as?` casts go through the runtime; when
        // the types are equal the bit cast is the identity.
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == JSONValue.self, let json = value as? JSONValue { return json }
        if T.self == Double.self { return try double(unsafeBitCast(value, to: Double.self)) }
        if T.self == Data.self, let data = value as? Data { return .string(data.base64EncodedString()) }
        if T.self == Date.self, let date = value as? Date { return try double(date.timeIntervalSinceReferenceDate) }
        // Already-encoded JSON nested in a value has to be read back into the tree; the
        // runtime writes a top-level RawJSON as it is, so keep RawJSON at the top.
        if T.self == RawJSON.self, let raw = value as? RawJSON { return try JSONParser.parse(raw.bytes) }
        return nil
    }

    static func double(_ number: Double) throws -> JSONValue {
        guard number.isFinite else {
            throw EncodingError.invalidValue(number, .init(codingPath: [], debugDescription: "JSON has no NaN or infinity"))
        }
        return .number(number)
    }
}

private func integer<T: BinaryInteger>(_ number: T) throws -> JSONValue {
    guard let exact = Int64(exactly: number) else {
        throw EncodingError.invalidValue(number, .init(codingPath: [], debugDescription: "integer out of range"))
    }
    return .integer(exact)
}

private final class JSONValueEncoding: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let box = NodeBox()

    init(codingPath: [any CodingKey]) {
        self.codingPath = codingPath
    }

    /// What was encoded; an `encode(to:)` that wrote nothing is an empty object, as Foundation does.
    var result: Node { box.node ?? .object(ObjectNode()) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: ObjectNode
        if case .object(let existing)? = box.node {
            object = existing
        } else {
            object = ObjectNode()
            box.node = .object(object)
        }
        return KeyedEncodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: ArrayNode
        if case .array(let existing)? = box.node {
            array = existing
        } else {
            array = ArrayNode()
            box.node = .array(array)
        }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(box: box, codingPath: codingPath)
    }

    /// Encodes a nested value at `path`.
    static func node<T: Encodable>(of value: T, at path: [any CodingKey]) throws -> Node {
        if let leaf = try Leaf.value(of: value) { return .leaf(leaf) }
        let encoder = JSONValueEncoding(codingPath: path)
        try value.encode(to: encoder)
        return encoder.result
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: ObjectNode
    let codingPath: [any CodingKey]

    func encodeNil(forKey key: Key) { object.members[key.stringValue] = .leaf(.null) }
    func encode(_ value: Bool, forKey key: Key) { object.members[key.stringValue] = .leaf(.bool(value)) }
    func encode(_ value: String, forKey key: Key) { object.members[key.stringValue] = .leaf(.string(value)) }
    func encode(_ value: Double, forKey key: Key) throws { object.members[key.stringValue] = .leaf(try Leaf.double(value)) }
    func encode(_ value: Float, forKey key: Key) throws { object.members[key.stringValue] = .leaf(try Leaf.double(Double(value))) }
    func encode(_ value: Int, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int8, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int16, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int32, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int64, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(value)) }
    func encode(_ value: UInt, forKey key: Key) throws { object.members[key.stringValue] = .leaf(try integer(value)) }
    func encode(_ value: UInt8, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(Int64(value))) }
    func encode(_ value: UInt16, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(Int64(value))) }
    func encode(_ value: UInt32, forKey key: Key) { object.members[key.stringValue] = .leaf(.integer(Int64(value))) }
    func encode(_ value: UInt64, forKey key: Key) throws { object.members[key.stringValue] = .leaf(try integer(value)) }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        object.members[key.stringValue] = try JSONValueEncoding.node(of: value, at: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        object.members[key.stringValue] = .object(nested)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        object.members[key.stringValue] = .array(nested)
        return UnkeyedContainer(array: nested, codingPath: codingPath + [key])
    }

    func superEncoder() -> any Encoder { SuperEncoder(object: object, name: "super", codingPath: codingPath) }

    func superEncoder(forKey key: Key) -> any Encoder {
        SuperEncoder(object: object, name: key.stringValue, codingPath: codingPath + [key])
    }
}

/// An encoder whose result becomes a member of an object (class hierarchies' `super`).
private final class SuperEncoder: Encoder {
    let inner: JSONValueEncoding
    let object: ObjectNode
    let name: String
    var codingPath: [any CodingKey] { inner.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(object: ObjectNode, name: String, codingPath: [any CodingKey]) {
        inner = JSONValueEncoding(codingPath: codingPath)
        self.object = object
        self.name = name
    }

    deinit { object.members[name] = inner.result }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { inner.container(keyedBy: type) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { inner.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { inner.singleValueContainer() }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let array: ArrayNode
    let codingPath: [any CodingKey]
    var count: Int { array.elements.count }

    private var nextPath: [any CodingKey] { codingPath + [JSONIndexKey(array.elements.count)] }

    func encodeNil() { array.elements.append(.leaf(.null)) }
    func encode(_ value: Bool) { array.elements.append(.leaf(.bool(value))) }
    func encode(_ value: String) { array.elements.append(.leaf(.string(value))) }
    func encode(_ value: Double) throws { array.elements.append(.leaf(try Leaf.double(value))) }
    func encode(_ value: Float) throws { array.elements.append(.leaf(try Leaf.double(Double(value)))) }
    func encode(_ value: Int) { array.elements.append(.leaf(.integer(Int64(value)))) }
    func encode(_ value: Int8) { array.elements.append(.leaf(.integer(Int64(value)))) }
    func encode(_ value: Int16) { array.elements.append(.leaf(.integer(Int64(value)))) }
    func encode(_ value: Int32) { array.elements.append(.leaf(.integer(Int64(value)))) }
    func encode(_ value: Int64) { array.elements.append(.leaf(.integer(value))) }
    func encode(_ value: UInt) throws { array.elements.append(.leaf(try integer(value))) }
    func encode(_ value: UInt8) { array.elements.append(.leaf(.integer(Int64(value)))) }
    func encode(_ value: UInt16) { array.elements.append(.leaf(.integer(Int64(value)))) }
    func encode(_ value: UInt32) { array.elements.append(.leaf(.integer(Int64(value)))) }
    func encode(_ value: UInt64) throws { array.elements.append(.leaf(try integer(value))) }

    func encode<T: Encodable>(_ value: T) throws {
        array.elements.append(try JSONValueEncoding.node(of: value, at: nextPath))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectNode()
        let path = nextPath
        array.elements.append(.object(nested))
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(object: nested, codingPath: path))
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayNode()
        let path = nextPath
        array.elements.append(.array(nested))
        return UnkeyedContainer(array: nested, codingPath: path)
    }

    func superEncoder() -> any Encoder {
        let encoder = JSONValueEncoding(codingPath: nextPath)
        let box = encoder.box
        // The element's place is taken now and filled when the super encoder is done.
        let placeholder = ArrayNode()
        array.elements.append(.array(placeholder))
        let index = array.elements.count - 1
        return ElementSuperEncoder(inner: encoder, box: box, array: array, index: index)
    }
}

/// `superEncoder()` of an unkeyed container: writes its result into its element's place.
private final class ElementSuperEncoder: Encoder {
    let inner: JSONValueEncoding
    let box: NodeBox
    let array: ArrayNode
    let index: Int
    var codingPath: [any CodingKey] { inner.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(inner: JSONValueEncoding, box: NodeBox, array: ArrayNode, index: Int) {
        self.inner = inner
        self.box = box
        self.array = array
        self.index = index
    }

    deinit { array.elements[index] = inner.result }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { inner.container(keyedBy: type) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { inner.unkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { inner.singleValueContainer() }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let box: NodeBox
    let codingPath: [any CodingKey]

    func encodeNil() { box.node = .leaf(.null) }
    func encode(_ value: Bool) { box.node = .leaf(.bool(value)) }
    func encode(_ value: String) { box.node = .leaf(.string(value)) }
    func encode(_ value: Double) throws { box.node = .leaf(try Leaf.double(value)) }
    func encode(_ value: Float) throws { box.node = .leaf(try Leaf.double(Double(value))) }
    func encode(_ value: Int) { box.node = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int8) { box.node = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int16) { box.node = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int32) { box.node = .leaf(.integer(Int64(value))) }
    func encode(_ value: Int64) { box.node = .leaf(.integer(value)) }
    func encode(_ value: UInt) throws { box.node = .leaf(try integer(value)) }
    func encode(_ value: UInt8) { box.node = .leaf(.integer(Int64(value))) }
    func encode(_ value: UInt16) { box.node = .leaf(.integer(Int64(value))) }
    func encode(_ value: UInt32) { box.node = .leaf(.integer(Int64(value))) }
    func encode(_ value: UInt64) throws { box.node = .leaf(try integer(value)) }

    func encode<T: Encodable>(_ value: T) throws {
        box.node = try JSONValueEncoding.node(of: value, at: codingPath)
    }
}

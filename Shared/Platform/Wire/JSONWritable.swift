import Foundation

/// A value that writes its own JSON text: the hottest replies (a booking, say) skip the
/// tree that ``JSONValueEncoder`` builds and go straight to bytes.
///
/// The text must be what the value's `Encodable` conformance gives, keys sorted; a test of
/// each conforming type compares the two.
public protocol JSONWritable: Encodable {
    /// Appends the value's compact JSON text, keys sorted.
    func writeJSON(to output: inout [UInt8])
}

/// Writes the members of one JSON object in the order given (callers give them sorted).
public struct JSONObjectWriter {
    private var output: [UInt8]
    private var first = true

    /// Starts an object.
    public init(capacity: Int = 256) {
        output = []
        output.reserveCapacity(capacity)
        output.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ name: StaticString) {
        if !first { output.append(UInt8(ascii: ",")) }
        first = false
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }

    /// A string member; `nil` is written as `null`.
    public mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { JSONValue.writeString(value, to: &output) } else { output.append(contentsOf: "null".utf8) }
    }

    /// An integer member.
    public mutating func field(_ name: StaticString, _ value: Int64) {
        key(name)
        JSONValue.writeInteger(value, to: &output)
    }

    /// A boolean member.
    public mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        output.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    /// A member whose value writes itself; `nil` is written as `null`.
    public mutating func field(_ name: StaticString, _ value: (some JSONWritable)?) {
        key(name)
        if let value { value.writeJSON(to: &output) } else { output.append(contentsOf: "null".utf8) }
    }

    /// A member whose value writes itself.
    public mutating func field(_ name: StaticString, _ value: some JSONWritable) {
        key(name)
        value.writeJSON(to: &output)
    }

    /// A member whose value is JSON text already (trusted: written by this service).
    public mutating func field(_ name: StaticString, json: some Collection<UInt8>) {
        key(name)
        output.append(contentsOf: json)
    }

    /// Closes the object and appends it to `target`.
    public consuming func finish(into target: inout [UInt8]) {
        output.append(UInt8(ascii: "}"))
        target.append(contentsOf: output)
    }
}

/// A value whose wire form is only the text it writes (a reply assembled from rows and
/// rules, say): its `Encodable` conformance parses that text, so the two cannot differ and
/// the value is written once.
public protocol JSONWrittenOnly: JSONWritable {}

extension JSONWrittenOnly {
    public func encode(to encoder: any Encoder) throws {
        var bytes: [UInt8] = []
        writeJSON(to: &bytes)
        try JSONParser.parse(Data(bytes)).encode(to: encoder)
    }

    /// The value as a JSON tree (to put it inside another).
    public var jsonValue: JSONValue {
        var bytes: [UInt8] = []
        writeJSON(to: &bytes)
        return (try? JSONParser.parse(Data(bytes))) ?? .null
    }
}

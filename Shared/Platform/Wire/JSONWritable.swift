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

    /// Starts an object at the end of `output`, which the writer takes over (leaving it
    /// empty) until ``finish(returningTo:)`` gives it back: the text is never copied.
    public init(taking output: inout [UInt8]) {
        self.output = []
        swap(&self.output, &output)
        self.output.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ name: StaticString) {
        if !first { output.append(UInt8(ascii: ",")) }
        first = false
        output.append(UInt8(ascii: "\""))
        output.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
    }

    /// A string member; `nil` is written as `null`.
    public mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { JSONValue.writeString(value, to: &output) } else { output.append(contentsOf: "null".utf8) }
    }

    /// A string member from UTF-8 text (a database column's); `nil` is written as `null`.
    public mutating func field(_ name: StaticString, utf8 value: UnsafeBufferPointer<UInt8>?) {
        key(name)
        if let value { JSONValue.writeString(utf8: value, to: &output) } else { output.append(contentsOf: "null".utf8) }
    }

    /// An integer member.
    public mutating func field(_ name: StaticString, _ value: Int64) {
        key(name)
        JSONValue.writeInteger(value, to: &output)
    }

    /// A boolean member.
    public mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        let text: StaticString = value ? "true" : "false"
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
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

    /// A member whose value `body` writes in place (trusted JSON text: written by this
    /// service), with no copy of its own.
    public mutating func field(_ name: StaticString, writing body: (inout [UInt8]) -> Void) {
        key(name)
        body(&output)
    }

    /// A member that is an object, written in place by `body`.
    public mutating func object(_ name: StaticString, _ body: (inout JSONObjectWriter) -> Void) {
        key(name)
        var nested = JSONObjectWriter(taking: &output)
        body(&nested)
        nested.finish(returningTo: &output)
    }

    /// A member that is an array of strings.
    public mutating func field(_ name: StaticString, strings: [String]) {
        key(name)
        output.append(UInt8(ascii: "["))
        for (index, text) in strings.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONValue.writeString(text, to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// A `null` member.
    public mutating func null(_ name: StaticString) {
        key(name)
        output.append(contentsOf: "null".utf8)
    }

    /// Closes the object and gives the text it took back to `target`, the object added.
    public mutating func finish(returningTo target: inout [UInt8]) {
        output.append(UInt8(ascii: "}"))
        swap(&output, &target)
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

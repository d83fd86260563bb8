import Foundation
import Platform
import Testing

@Suite("Typed JSON over the parsed tree, and instants")
struct JSONCodingTests {
    struct Line: Codable, Equatable {
        var name: String
        var minor: Int64
        var note: String?
    }

    struct Order: Codable, Equatable {
        var id: String
        var lines: [Line]
        var tags: [String: Int]
        var paid: Bool
        var ratio: Double
        var raw: JSONValue
        var blob: Data
        var nested: [[Int]]
        var missing: Int?
    }

    static let order = Order(
        id: "o-1", lines: [Line(name: "a\"b", minor: Int64.max, note: nil), Line(name: "é", minor: -1, note: "x")],
        tags: ["k": 1, "z": -2], paid: true, ratio: 0.25, raw: ["deep": [1, nil, "s"]], blob: Data([0, 1, 254, 255]),
        nested: [[1, 2], []], missing: nil)

    @Test("typed values encode to the tree and decode back unchanged")
    func roundTrips() throws {
        let tree = try JSONValueEncoder().encode(Self.order)
        #expect(tree["lines"]?[0]?["minor"] == .integer(Int64.max))
        #expect(tree["lines"]?[0]?.objectValue?.keys.contains("note") == false, "nil optionals are omitted")
        #expect(tree["blob"] == "AAH+/w==")
        #expect(tree["raw"] == ["deep": [1, nil, "s"]])
        #expect(try JSONValueDecoder().decode(Order.self, from: tree) == Self.order)
        // Through text as well, the way replies travel.
        #expect(try WireJSON.decode(Order.self, from: WireJSON.encode(Self.order)) == Self.order)
    }

    @Test("the encoder writes what Foundation's encoder writes, keys sorted")
    func matchesFoundation() throws {
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let ours = try JSONParser.parse(WireJSON.encode(Self.order))
        let theirs = try JSONParser.parse(foundation.encode(Self.order))
        #expect(ours == theirs)
    }

    @Test("decoding failures name the field by its path")
    func namesFields() throws {
        let missing: JSONValue = ["name": "a"]
        #expect {
            try JSONValueDecoder().decode(Line.self, from: missing)
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "minor"
        }
        let wrongType = try JSONParser.parse(Data(#"{"id":"o","lines":[{"name":"a","minor":1},{"name":2,"minor":1}]}"#.utf8))
        #expect {
            try JSONValueDecoder().decode(Order.self, from: wrongType)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue } == ["lines", "1", "name"]
        }
    }

    @Test("integers are exact: no fractions, no overflow, no null", arguments: [#"{"name":"a","minor":1.5}"#, #"{"name":"a","minor":1e30}"#, #"{"name":"a","minor":null}"#, #"{"name":"a","minor":"1"}"#])
    func integersAreExact(text: String) throws {
        let value = try JSONParser.parse(Data(text.utf8))
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Line.self, from: value) }
    }

    @Test("absent and null optionals both decode as nil")
    func optionals() throws {
        #expect(try JSONValueDecoder().decode(Line.self, from: ["name": "a", "minor": 1, "note": nil]).note == nil)
        #expect(try JSONValueDecoder().decode(Line.self, from: ["name": "a", "minor": 1]).note == nil)
    }

    @Test("instants format like Foundation's ISO 8601 formatter, across centuries and leap days")
    func formatsInstants() {
        let reference = ISO8601DateFormatter()
        reference.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        reference.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        var samples: [Int64] = [0, -1, 951_782_400_000, 4_107_542_399_999, -2_208_988_800_001, 1_795_392_000_123]
        for _ in 0..<2_000 { samples.append(Int64.random(in: -2_000_000_000_000...7_000_000_000_000, using: &generator)) }
        for milliseconds in samples {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let ours = Instant.format(epochMilliseconds: milliseconds)
            #expect(ours == reference.string(from: date), "\(milliseconds)")
            #expect(Instant.parse(ours).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == milliseconds)
        }
    }

    @Test(
        "instants parse with Z or an offset and a fraction of up to nine digits",
        arguments: [
            ("2026-11-22T10:00:00Z", 1_795_341_600_000), ("2026-11-22T10:00:00.5Z", 1_795_341_600_500),
            ("2026-11-22T13:00:00.000+03:00", 1_795_341_600_000), ("2026-11-22t05:30:00.123456789-04:30", 1_795_341_600_123),
            ("2024-02-29T00:00:00z", 1_709_164_800_000),
        ] as [(String, Int64)])
    func parsesInstants(text: String, milliseconds: Int64) throws {
        let date = try #require(Instant.parse(text))
        #expect(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) == milliseconds)
    }

    @Test(
        "malformed instants are refused",
        arguments: [
            "2026-11-22T10:00:00", "2026-11-22 10:00:00Z", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z",
            "2026-11-22T10:00:60Z", "2026-11-22T10:00:00.Z", "2026-11-22T10:00:00.1234567890Z", "2026-11-22T10:00:00+0300",
            "2026-11-22T10:00:00Zjunk", "２026-11-22T10:00:00Z", "",
        ])
    func refusesInstants(text: String) {
        #expect(Instant.parse(text) == nil)
    }

    @Test("the idempotency hash covers data as sent and tells bodies apart")
    func requestHash() throws {
        let first = try RequestEnvelope.parse(Data(#"{"id":"1","op":"a.b","idem":"k","data":{"x":1,"y":[2]}}"#.utf8))
        let retry = try RequestEnvelope.parse(Data(#"{"op":"a.b","data":{"x":1,"y":[2]},"id":"2","idem":"k","token":"t"}"#.utf8))
        let other = try RequestEnvelope.parse(Data(#"{"id":"3","op":"a.b","idem":"k","data":{"x":2,"y":[2]}}"#.utf8))
        let otherOp = try RequestEnvelope.parse(Data(#"{"id":"4","op":"a.c","idem":"k","data":{"x":1,"y":[2]}}"#.utf8))
        #expect(first.dataBytes.map { String(decoding: $0, as: UTF8.self) } == #"{"x":1,"y":[2]}"#)
        #expect(first.requestHash == retry.requestHash)
        #expect(first.requestHash != other.requestHash)
        #expect(first.requestHash != otherOp.requestHash)
        // Built in code, the canonical text stands in for the bytes.
        let built = RequestEnvelope(id: "5", op: "a.b", data: ["y": [2], "x": 1])
        #expect(built.requestHash == first.requestHash)
    }
}

@Suite("JSON writing")
struct JSONWritingTests {
    @Test("integers are written exactly, to the extremes", arguments: [0, -1, 7, 10, -10, 1_234_567_890, Int64.max, Int64.min])
    func integers(value: Int64) throws {
        #expect(String(decoding: JSONValue.integer(value).serialized, as: UTF8.self) == String(value))
        #expect(try JSONParser.parse(JSONValue.integer(value).serialized) == .integer(value))
    }

    @Test("strings escape quotes, backslashes and control characters and keep the rest as they are")
    func strings() throws {
        let text = "plain \"quoted\" back\\slash\nnew\tline \u{01}\u{1F} é 😀 end"
        let written = String(decoding: JSONValue.string(text).serialized, as: UTF8.self)
        #expect(written == #""plain \"quoted\" back\\slash\nnew\tline \u0001\u001f é 😀 end""#)
        #expect(try JSONParser.parse(Data(written.utf8)) == .string(text))
    }
}

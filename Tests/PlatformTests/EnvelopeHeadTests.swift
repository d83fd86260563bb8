import Foundation
import Platform
import SharedTesting
import Testing

/// The gateway's envelope reader (`RequestEnvelope.parseHead`, over
/// `JSONParser.parseMembers`) must agree with the full parse on every input: the same
/// errors at the same offsets, the same `id`, `op`, `token` and `idem`.
@Suite("Envelope head reader")
struct EnvelopeHeadTests {
    static let documents: [String] = [
        #"{"id":"c-1","op":"booking.create","token":"t","idem":"k","extra":1,"data":{"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00"}}"#,
        #"{"id":"c-1","op":"auth.health"}"#, #"{"id":"c-1","op":"auth.health","data":null}"#,
        #"{"id":"c-1","op":"auth.health","data":[1]}"#, #"{"id":"c-1","op":"auth.health","data":"x"}"#,
        #"{"id":"c-1","op":"auth.health","data":1e5}"#, #"{"id":"c-1","op":"auth.health","data":true}"#,
        #"{"id":"c-1","op":"auth.health","data":{},"data":[]}"#, #"{"id":"c-1","op":"auth.health","data":[],"data":{}}"#,
        #"{"id":"a","id":"b","op":"auth.health"}"#, #"{"\u0069d":"esc","op":"auth.health","d\u0061ta":[1]}"#,
        #"{"id":"c-1","op":"auth.health","data":{"x":1e999}}"#, #"{"id":"c-1","op":"auth.health","data":{"x":-0.5e-3,"y":12345678901234567890}}"#,
        #"{"id":"c-1","op":"auth.health","data":{"x":"\x"}}"#, #"{"id":"c-1","op":"auth.health","data":{"x":"\ud800"}}"#,
        #"{"id":"c-1","op":"auth.health","data":{"x":"\udc00\u0041"}}"#, "{\"id\":\"c-1\",\"op\":\"auth.health\",\"data\":{\"x\":\"tab\tin\"}}",
        #"{"id":"c-1","op":"auth.health","data":{"x":"ok"}"#, #"{"id":"c-1","op":"auth.health","data":{"x" 1}}"#,
        #"{"id":"c-1","op":"auth.health","data":{"x":1,}}"#, #"{"id":"c-1","op":"auth.health"} x"#,
        #"{"id":"c-1","op":"auth.health","data":{"x":01}}"#, #"{"id":"c-1","op":"auth.health","data":{"x":tru}}"#,
        #"{"id":7,"op":"auth.health"}"#, #"{"id":"r1"}"#, #"{"id":"r2","op":["auth"]}"#, #"{"id":"r4","op":"auth.health","token":5}"#,
        #"{"id":"r4","op":"auth.health","idem":""}"#, #"{"op":"auth.health"}"#, #"{"id":"","op":"auth.health"}"#,
        #"{"id":"r","op":"Auth.health"}"#, "[1,2]", "\"x\"", "12", "null", "", "  ", "{", "hello", "{\"a\":1,}", "[1 2]", "01", "1.", "-",
        "\"a", "{\"a\" 1}", "tru", "[1]x", "NaN", "{\"a\":1e999}", "{\"id\":\"q\",\"op\":\"a.b\",\"data\":{\"n\":1" + String(repeating: "0", count: 400) + "}}",
        "{\"id\":\"q\",\"op\":\"a.b\",\"data\":" + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "}",
        "{\"id\":\"q\",\"op\":\"a.b\",\"data\":{\"s\":\"" + String(repeating: "abcdéfg😀", count: 300) + "\"}}",
    ]

    /// Invalid UTF-8 in several places: inside `data`, in a skipped member's name, in `id`.
    static let byteDocuments: [[UInt8]] = [
        Array(#"{"id":"x","op":"a.b","data":{"s":"abcdefgh"#.utf8) + [0xFF] + Array(#"ijklmnop"}}"#.utf8),
        Array(#"{"id":"x","op":"a.b","data":{"s":"abcdefgh"#.utf8) + [0xC3] + Array(#"\n"}}"#.utf8),
        Array(#"{"id":"x","op":"a.b","data":{"s":"a"#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}}"#.utf8),
        Array(#"{"id":"x","op":"a.b","data":{"s":"a"#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}}"#.utf8),
        Array(#"{"id":"x","op":"a.b","data":{"s":"a"#.utf8) + [0xE0, 0x80, 0x80] + Array(#"\x"}}"#.utf8),
        Array(#"{"id":"x","op":"a.b","data":{"s":"\u00e9"#.utf8) + [0xA9] + Array(#""}}"#.utf8),
        Array(#"{"id":"x","op":"a.b","#.utf8) + [0x22, 0xFF, 0x22] + Array(#":1}"#.utf8),
        [0x7B, 0x22, 0x69, 0x64, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D],
    ]

    @Test("parseHead and parse agree on each document")
    func agreesWithFullParse() {
        for document in Self.documents.map({ Data($0.utf8) }) + Self.byteDocuments.map({ Data($0) }) {
            expectAgreement(document)
        }
    }

    @Test("parseMembers and parse agree on thousands of mutated documents")
    func agreesOnMutations() {
        var random = SplitMix64(seed: 42)
        let seeds = (Self.documents.prefix(16).map { Array($0.utf8) }) + Self.byteDocuments
        let interesting: [UInt8] = Array(#""\{}[]:,0-eE.u "#.utf8) + [0xFF, 0xC3, 0xA9, 0x80, 0xED, 0x01, 0x09, 0x61]
        for _ in 0..<5_000 {
            var bytes = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0..<(1 + random.next() % 3) where !bytes.isEmpty {
                let position = Int(random.next() % UInt64(bytes.count))
                let byte = interesting[Int(random.next() % UInt64(interesting.count))]
                switch random.next() % 4 {
                case 0: bytes[position] = byte
                case 1: bytes.insert(byte, at: position)
                case 2: bytes.remove(at: position)
                default: bytes.removeSubrange(position...)
                }
            }
            expectAgreement(Data(bytes))
        }
    }

    @Test("data is skipped, not built: only the named members come back")
    func onlyNamedMembers() throws {
        let document = Data(#"{"id":"i","op":"a.b","data":{"big":"\#(String(repeating: "x", count: 100_000))"},"other":[1]}"#.utf8)
        let members = try #require(try JSONParser.parseMembers(of: document, keeping: ["id"], noting: ["data"]))
        #expect(members == ["id": .value("i"), "data": .skipped(.object)])
        let head = try RequestEnvelope.parseHead(document)
        #expect(head.id == "i" && head.op == "a.b" && head.token == nil && head.idem == nil && head.service == "a")
    }

    private func expectAgreement(_ document: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = String(decoding: document, as: UTF8.self)
        // The JSON layer: same failure, or the same values and kinds.
        let full = Result { () throws(JSONParser.Failure) in try JSONParser.parse(document) }
        // A repeated name the head does not read (or one nested in data) is refused by the
        // full parse only: the gateway forwards, the service answers bad_request.
        if case .failure(let failure) = full, failure.message.hasPrefix("repeated member name") { return }
        let partial = Result { () throws(JSONParser.Failure) in
            try JSONParser.parseMembers(of: document, keeping: ["id", "op"], noting: ["data", "token"])
        }
        switch (full, partial) {
        case (.failure(let expected), .failure(let actual)):
            #expect(actual == expected, "\(text)", sourceLocation: sourceLocation)
        case (.success(.object(let object)), .success(let members?)):
            for name in ["id", "op"] {
                #expect(members[name] == object[name].map { .value($0) }, "\(text)", sourceLocation: sourceLocation)
            }
            for name in ["data", "token"] {
                #expect(members[name] == object[name].map { .skipped(Self.kind(of: $0)) }, "\(text)", sourceLocation: sourceLocation)
            }
        case (.success(let value), .success(nil)):
            #expect(value.objectValue == nil, "\(text)", sourceLocation: sourceLocation)
        default:
            Issue.record("disagreement on \(text): \(full) vs \(partial)", sourceLocation: sourceLocation)
        }
        // The envelope layer: same rejection (code, message, id), or the same head.
        let envelope = Result { () throws(RequestEnvelope.Rejection) in try RequestEnvelope.parse(document) }
        let head = Result { () throws(RequestEnvelope.Rejection) in try RequestEnvelope.parseHead(document) }
        switch (envelope, head) {
        case (.success(let envelope), .success(let head)):
            #expect(
                [head.id, head.op, head.token, head.idem] == [envelope.id, envelope.op, envelope.token, envelope.idem], "\(text)",
                sourceLocation: sourceLocation)
        case (.failure(let expected), .failure(let actual)):
            #expect(actual.error == expected.error && actual.id == expected.id, "\(text)", sourceLocation: sourceLocation)
        default:
            Issue.record("envelope disagreement on \(text): \(envelope) vs \(head)", sourceLocation: sourceLocation)
        }
    }

    private static func kind(of value: JSONValue) -> JSONParser.Kind {
        switch value {
        case .null: .null
        case .bool: .bool
        case .integer, .number: .number
        case .string: .string
        case .array: .array
        case .object: .object
        }
    }
}


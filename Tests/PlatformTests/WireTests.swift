import Foundation
import Platform
import Testing

@Suite("JSON parser and envelope codec")
struct WireTests {
    @Test("parses every JSON type, keeping integers exact")
    func parsesValues() throws {
        let value = try JSONParser.parse(
            Data(#" {"a":[1,-2,3.5,1e3,true,false,null],"b":{"c":"d\n\u00e9\ud83d\ude00"},"big":9007199254740993} "#.utf8))
        #expect(value["a"] == [1, -2, .number(3.5), .number(1000), true, false, nil])
        #expect(value["b"]?["c"] == "d\né😀")
        #expect(value["big"] == .integer(9_007_199_254_740_993))
    }

    @Test(
        "rejects what is not strict JSON",
        arguments: [
            "", "{", "{\"a\":1,}", "[1 2]", "01", "1.", "-", "\"a", "{\"a\" 1}", "tru", "[1]x", "\"\\x\"", "\"\\ud800\"",
            "\"tab\there\"", "NaN", "{\"a\":1e999}",
        ])
    func rejectsInvalid(text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data(text.utf8)) }
    }

    @Test("a success frame's data is found where Reply.success put it; any other frame is left to the parser")
    func successDataRange() throws {
        for id in ["r-1", #"quote " and \ back"#, "ünïcode", "", nil] as [String?] {
            for data in [#"{"a":[1,2,{"b":"}"}]}"#, "null", "[]", #""x""#, "3"] {
                let frame = Reply.success(id: id, data: Data(data.utf8))
                let range = try #require(Reply.successDataRange(of: frame), "\(id ?? "null") \(data)")
                #expect(String(decoding: frame[range], as: UTF8.self) == data)
                // Sliced frames (a Data not starting at 0) are read the same.
                let sliced = (Data("xx".utf8) + frame).dropFirst(2)
                let slicedRange = try #require(Reply.successDataRange(of: sliced))
                #expect(String(decoding: sliced[(sliced.startIndex + slicedRange.lowerBound)..<(sliced.startIndex + slicedRange.upperBound)], as: UTF8.self) == data)
            }
        }
        #expect(Reply.successDataRange(of: Reply.failure(id: "r", error: .notFound("no"))) == nil)
        for other in [#"{"ok":true,"id":"r","data":{}}"#, #"{"id":"r","ok":true}"#, #"{"id":"r"#, #"{"id":"r\"#, #"{"id":nul,"ok":true,"data":1}"#, "", "{}"] {
            #expect(Reply.successDataRange(of: Data(other.utf8)) == nil, "\(other)")
        }
    }

    @Test("SHA-256 gives the standard's answers, fed at once or in parts; a request's idempotency hash is over its op, a zero byte and its data as sent")
    func digests() throws {
        #expect(Digest.sha256Hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha256Hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let parts = Digest.sha256 { update in
            for piece in ["a", "", "bc"] { Data(piece.utf8).withUnsafeBytes(update) }
        }
        #expect(Digest.hex(parts) == Digest.sha256Hex(Data("abc".utf8)))
        let request = try RequestEnvelope.parse(Data(#"{"id":"r1","op":"savings.deposits.record","data":{"b":1, "a":2}}"#.utf8))
        #expect(request.requestHash == Digest.sha256Hex(Data("savings.deposits.record\u{0}{\"b\":1, \"a\":2}".utf8)))
    }

    @Test("rejects invalid UTF-8 and deep nesting")
    func rejectsBadBytesAndDepth() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data([0x22, 0xC3, 0x28, 0x22])) }
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data(deep.utf8)) }
    }

    @Test("a repeated member name is refused, in a full parse and in the gateway's head parse")
    func rejectsRepeatedNames() throws {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data(#"{"a":1,"b":{"c":1,"c":2}}"#.utf8)) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Data(#"{"a":1,"a":1}"#.utf8)) }
        // A gateway keeping one `op` and a service keeping the other would route one
        // operation and run another.
        let twoOps = Data(#"{"id":"x","op":"booking.health","op":"auth.internal.admin.grant","data":{}}"#.utf8)
        #expect(throws: (any Error).self) { try RequestEnvelope.parseHead(twoOps) }
        #expect(throws: (any Error).self) { try RequestEnvelope.parse(twoOps) }
        #expect(throws: (any Error).self) { try RequestEnvelope.parse(Data(#"{"id":"x","op":"a.b","data":{"k":1,"k":2}}"#.utf8)) }
        #expect(try JSONParser.parse(Data(#"{"a":{"k":1},"b":{"k":2}}"#.utf8)) == ["a": ["k": 1], "b": ["k": 2]])
    }

    @Test("serialization round-trips with sorted keys and escapes")
    func serializes() throws {
        let value: JSONValue = ["z": 1, "a": ["x\"y\\\n\u{01}", .number(2.5), nil], "m": ["k": true]]
        let text = String(decoding: value.serialized, as: UTF8.self)
        #expect(text == #"{"a":["x\"y\\\n\u0001",2.5,null],"m":{"k":true},"z":1}"#)
        #expect(try JSONParser.parse(value.serialized) == value)
    }

    @Test("an envelope is read with its optional parts and data defaulting to {}")
    func parsesEnvelope() throws {
        let envelope = try RequestEnvelope.parse(Data(#"{"id":"c-1","op":"booking.create","token":"t","idem":"k","extra":1}"#.utf8))
        #expect(envelope == RequestEnvelope(id: "c-1", op: "booking.create", token: "t", idem: "k", data: [:]))
        #expect(envelope.service == "booking")
        #expect(try RequestEnvelope.parse(envelope.encoded) == envelope)
    }

    @Test(
        "operation names",
        arguments: [
            ("booking.create", true), ("auth.phone.start", true), ("stats.keyFacts", true), ("booking", false), ("Booking.create", false),
            (".x", false), ("a..b", false), ("a.b.", false), ("a.b-c", false),
        ])
    func operationNames(name: String, valid: Bool) {
        #expect(RequestEnvelope.isOperationName(name) == valid)
    }

    @Test("replies carry the id, data or error with details")
    func replies() throws {
        let success = try Reply.parse(Reply.success(id: "r", data: Data(#"{"x":1}"#.utf8)))
        #expect(success == Reply.Parsed(id: "r", data: ["x": 1], error: nil))
        let error = ServiceError.validationFailed(["email": "not an email address"])
        let failure = try Reply.parse(Reply.failure(id: nil, error: error))
        #expect(failure.id == nil)
        #expect(failure.error == error)
        let limited = try Reply.parse(Reply.failure(id: "q", error: .rateLimited(retryAfterMs: 1500)))
        #expect(limited.error?.details["retryAfterMs"] == 1500)
    }

    @Test("instants are RFC 3339 UTC with milliseconds")
    func instants() throws {
        #expect(Instant.format(epochMilliseconds: 1_795_341_600_123) == "2026-11-22T10:00:00.123Z")
        #expect(Instant.format(epochMilliseconds: -1) == "1969-12-31T23:59:59.999Z")
        // Beyond the four-digit years: clamped to their ends, never wrapped to 0000.
        #expect(Instant.format(Date(timeIntervalSince1970: 253_402_300_799.9995)) == "9999-12-31T23:59:59.999Z")
        #expect(Instant.format(Date(timeIntervalSince1970: 253_402_400_000)) == "9999-12-31T23:59:59.999Z")
        #expect(Instant.format(Date(timeIntervalSince1970: -62_167_219_300)) == "0000-01-01T00:00:00.000Z")
        // Before 1970 a parsed instant is not exact in binary; it must not lose a millisecond.
        for text in ["1969-12-31T23:59:59.123Z", "1900-02-28T01:02:03.001Z", "1970-01-01T00:00:00.001Z", "0001-01-01T00:00:00.999Z"] {
            #expect(Instant.parse(text).map(Instant.format) == text)
        }
        let parsed = try #require(Instant.parse("2026-11-22T13:00:00.123+03:00"))
        #expect(Instant.format(parsed) == "2026-11-22T10:00:00.123Z")
    }
}

@Suite("JSON Schema")
struct SchemaTests {
    let schema = JSONSchema.object(
        [
            "email": .string(format: .email), "name": .string(minLength: 1, maxLength: 10),
            "count": .integer(minimum: 1, maximum: 5), "kind": .oneOf(["a", "b"]),
            "tags": .array(of: .string(maxLength: 3), maxItems: 2),
            "when": .string(format: .date).nullable(),
        ], required: ["email", "name"])

    @Test("a valid value has no problems")
    func valid() {
        #expect(schema.validate(["email": "a@b.co", "name": "Ann", "count": 3, "kind": "a", "tags": ["x"], "when": nil]).isEmpty)
    }

    @Test("each problem is named by its path")
    func problems() {
        let problems = schema.validate([
            "email": "nope", "count": 9, "kind": "c", "tags": ["long!", 1, "x"], "extra": 1, "when": "2026-02-30",
        ])
        #expect(problems["email"] == "not an email address")
        #expect(problems["name"] == "is required")
        #expect(problems["count"] == "must be at most 5")
        #expect(problems["kind"] == "must be one of: a, b")
        #expect(problems["tags"] == "must have at most 2 items")
        #expect(problems["tags[0]"] == "must have at most 3 characters")
        #expect(problems["tags[1]"] == "must be a string")
        #expect(problems["extra"] == "is not a known field")
        #expect(problems["when"] == "not a date (YYYY-MM-DD)")
    }

    @Test("control characters and over-long strings are refused")
    func strings() {
        #expect(schema.validate(["email": "a@b.co", "name": "A\u{0007}"])["name"] == "must not contain control characters")
        #expect(schema.validate(["email": "a@b.co", "name": .string(String(repeating: "x", count: 10_000))])["name"]
            == "must have at most 10 characters")
        #expect(schema.validate(["email": "a@b.co", "name": ""])["name"] == "must not be empty")
    }

    @Test("names must be visible and keep their direction; keys are lowercase and typeable")
    func namesAndKeys() {
        let name = JSONSchema.object(["name": .name()])
        for good in ["Anna", "Ива́н", "李", "O'Brien-Smith", "  Anna ", "Ann\u{200B}a", "é"] {
            #expect(name.validate(["name": .string(good)]).isEmpty, "\(good)")
        }
        for bad in ["   ", "\u{00A0}", "\u{3000}", "\u{200B}", "\u{FEFF}", "\u{0301}", "\u{200B}\u{0301} ", "\u{202E}nnA", "Anna\u{2066}", "\u{061C}", "\u{3164}", "\u{2800} \u{2800}", "\u{FFA0}"] {
            #expect(name.validate(["name": .string(bad)])["name"] != nil, "\(bad.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        let key = JSONSchema.object(["id": .string(format: .key)])
        for good in ["reverse-1", "a", "r_2.b", "9"] { #expect(key.validate(["id": .string(good)]).isEmpty, "\(good)") }
        for bad in ["A", "Reverse", ".", "..", "-", "_a", "a b", "a/b", "é", "🏄", ""] {
            #expect(key.validate(["id": .string(bad)])["id"] != nil, "\(bad)")
        }
    }

    @Test("lengths count code points, not bytes nor grapheme clusters; control characters are found from the bytes exactly as Unicode's category Cc")
    func characterCounts() {
        // Ten code points of two and four bytes each pass; eleven do not.
        for character in ["é", "😀"] {
            #expect(schema.validate(["email": "a@b.co", "name": .string(String(repeating: character, count: 10))])["name"] == nil)
            #expect(schema.validate(["email": "a@b.co", "name": .string(String(repeating: character, count: 11))])["name"] != nil)
        }
        // A flag is two code points, a letter with a combining accent too: five pass, six do not,
        // so combining marks cannot stretch a limit.
        for character in ["🇧🇾", "e\u{0301}"] {
            #expect(schema.validate(["email": "a@b.co", "name": .string(String(repeating: character, count: 5))])["name"] == nil)
            #expect(schema.validate(["email": "a@b.co", "name": .string(String(repeating: character, count: 6))])["name"] != nil)
        }
        #expect(schema.validate(["email": "a@b.co", "name": .string("x" + String(repeating: "\u{0301}", count: 1_000))])["name"] != nil)
        let short = JSONSchema.object(["code": .string(minLength: 3, maxLength: 5)])
        #expect(short.validate(["code": "ab"])["code"] == "must have at least 3 characters")
        #expect(short.validate(["code": "éé"])["code"] == "must have at least 3 characters")
        #expect(short.validate(["code": "éée"])["code"] == nil)
        let text = JSONSchema.object(["text": .string(maxLength: 100)])
        let overrides = Set(Array(0x202A...0x202E) + Array(0x2066...0x2069))
        for value in Array(0...0x3000) + [0xFEFF, 0xFFFD, 0x1F600, 0xE0001] {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let isControl = scalar.properties.generalCategory == .control
            let problem = text.validate(["text": .string("a\(Character(scalar))b")])["text"]
            #expect((problem == "must not contain control characters") == isControl, "U+\(String(value, radix: 16))")
            #expect((problem?.hasPrefix("must not contain bidirectional") ?? false) == overrides.contains(value), "U+\(String(value, radix: 16))")
            #expect(problem == nil || isControl || overrides.contains(value), "U+\(String(value, radix: 16))")
        }
        // The marks right-to-left text may need pass, also beside Hebrew and Arabic.
        #expect(text.validate(["text": "\u{05E9}\u{05DC}\u{05D5}\u{05DD} \u{200F}abc\u{200E} \u{061C}\u{0627}"])["text"] == nil)
    }

    @Test(
        "formats",
        arguments: [
            (StringFormat.e164, "+79161234567", true), (.e164, "89161234567", false), (.e164, "+0123456789", false),
            (.email, "first.last@example.com", true), (.email, "a@b", false), (.email, "a b@c.de", false),
            (.date, "2024-02-29", true), (.date, "2023-02-29", false), (.time, "23:59", true), (.time, "24:00", false),
            (.dateTime, "2026-11-22T10:00:00.000Z", true), (.dateTime, "2026-11-22T10:00:00", false),
            (.timeZone, "Europe/Moscow", true), (.timeZone, "Mars/Base", false), (.currency, "RUB", true), (.currency, "rub", false),
        ])
    func formats(format: StringFormat, text: String, accepted: Bool) {
        #expect(format.accepts(text) == accepted)
    }

    @Test("the JSON Schema document says what validation checks")
    func document() {
        let document = schema.jsonValue
        #expect(document["type"] == "object")
        #expect(document["additionalProperties"] == false)
        #expect(document["required"] == ["email", "name"])
        #expect(document["properties"]?["count"] == ["type": "integer", "minimum": 1, "maximum": 5])
        #expect(document["properties"]?["when"]?["type"] == ["string", "null"])
    }
}

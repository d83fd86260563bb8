import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// Reading schemas back from `describe`, and the fixtures' checking of replies against them.
@Suite("Schema checking")
struct SchemaCheckingTests {
    /// A response schema with what replies use: nested objects and arrays, required and
    /// optional members, nullable values, formats, enums and maps.
    static let booking = JSONSchema.object(
        [
            "id": .string(), "start": .string(format: .dateTime), "status": .oneOf(["booked", "cancelled"]),
            "sanction": JSONSchema.oneOf(["forfeit", "waived"]).nullable(),
            "price": .object(["minor": .integer(minimum: 0), "currency": .string(format: .currency)], required: ["minor", "currency"]),
            "rider": JSONSchema.object(["name": .string(), "phone": JSONSchema.string(format: .e164).nullable()], required: ["name"]).nullable(),
            "tags": .array(of: .string(maxLength: 10), minItems: 1, maxItems: 3).described("labels"),
            "byRole": .object([:], additional: .integer(minimum: 0)), "detail": .object([:], additional: .any), "note": .any,
            "ratio": .number, "paid": .boolean,
        ], required: ["id", "start", "status", "sanction", "price"])

    static let page = JSONSchema.object(["items": .array(of: booking), "next": JSONSchema.string().nullable()], required: ["items"])

    static let valid: JSONValue = [
        "id": "b1", "start": "2026-11-22T10:00:00.000Z", "status": "booked", "sanction": nil,
        "price": ["minor": 2500, "currency": "BYN"], "rider": ["name": "Ivan", "phone": nil], "tags": ["a"],
        "byRole": ["admin": 1], "detail": ["anything": [1, "two"]], "note": [true], "ratio": 1, "paid": false,
    ]

    @Test("nested values are checked member by member, with the path of each problem")
    func nested() {
        #expect(Self.page.validate(["items": [Self.valid], "next": nil]).isEmpty)
        #expect(Self.page.validate(["items": []]).isEmpty, "optional members may be absent")
        let broken: JSONValue = [
            "items": [
                Self.valid,
                [
                    "id": "b2", "start": "2026-11-22 10:00", "status": "lost", "price": ["minor": -1, "currency": "byn"],
                    "rider": ["phone": "12"], "tags": [], "byRole": ["admin": "one"], "paid": "no",
                ],
            ]
        ]
        let problems = Self.page.validate(broken)
        #expect(problems["items[1].start"] == "not an RFC 3339 instant with a time zone offset")
        #expect(problems["items[1].status"] == "must be one of: booked, cancelled")
        #expect(problems["items[1].sanction"] == "is required")
        #expect(problems["items[1].price.minor"] == "must be at least 0")
        #expect(problems["items[1].price.currency"] == "not an ISO 4217 currency code")
        #expect(problems["items[1].rider.name"] == "is required")
        #expect(problems["items[1].rider.phone"] != nil)
        #expect(problems["items[1].tags"] == "must have at least 1 items")
        #expect(problems["items[1].byRole.admin"] == "must be an integer")
        #expect(problems["items[1].paid"] == "must be true or false")
        #expect(problems.count == 10)
        #expect(Self.page.validate(["items": [Self.valid.merging(["price": nil])]])["items[0].price"] == "must not be null")
    }

    @Test("a schema read back from its JSON Schema document is the same schema")
    func readBack() throws {
        for schema in [Self.booking, Self.page, .empty, .any, .array(of: .integer()), JSONSchema.string(format: .date).nullable()] {
            let document = schema.jsonValue
            let read = try JSONSchema(jsonValue: document)
            #expect(read.jsonValue == document)
        }
        let read = try JSONSchema(jsonValue: Self.page.jsonValue)
        #expect(read.validate(["items": [Self.valid]]).isEmpty)
        #expect(read.validate(["items": [Self.valid.merging(["status": "lost"])]]) == ["items[0].status": "must be one of: booked, cancelled"])
    }

    @Test("as JSON Schema: a nullable enum lists null, a local time is `local-time` with a pattern (JSON Schema's `time` is RFC 3339's), read back the same")
    func standardKeywords() throws {
        let sanction = JSONSchema.oneOf(["forfeit", "none"]).nullable()
        #expect(sanction.jsonValue == ["type": ["string", "null"], "enum": ["forfeit", "none", .null]])
        #expect(try JSONSchema(jsonValue: sanction.jsonValue).jsonValue == sanction.jsonValue)
        #expect(sanction.validate(.null).isEmpty)
        let time = JSONSchema.string(format: .time)
        #expect(time.jsonValue["format"] == "local-time" && time.jsonValue["pattern"] == "^([01][0-9]|2[0-3]):[0-5][0-9]$")
        #expect(try JSONSchema(jsonValue: time.jsonValue).jsonValue == time.jsonValue)
        // What older services wrote is read as the same format.
        let older = try JSONSchema(jsonValue: ["type": "string", "format": "time", "maxLength": 5])
        #expect(older.validate("09:30").isEmpty && !older.validate("09:30:00Z").isEmpty)
        // Zone names: the tz database's, with or without a slash; not abbreviations.
        let zone = JSONSchema.string(format: .timeZone)
        #expect(["UTC", "GMT", "Europe/Berlin", "US/Eastern", "Etc/GMT+12"].allSatisfy { zone.validate(.string($0)).isEmpty })
        #expect(["PST", "MSK", "Mars/Olympus", ""].allSatisfy { !zone.validate(.string($0)).isEmpty })
        // The pattern agrees with the format's own check on every minute of the day and around it.
        let pattern = try Regex(try #require(time.jsonValue["pattern"]?.stringValue))
        for text in ["00:00", "23:59", "24:00", "9:30", "09:60", "19:5", "ab:cd", "12:345"] {
            #expect((text.wholeMatch(of: pattern) != nil) == time.validate(.string(text)).isEmpty, "\(text)")
        }
    }

    @Test("documents outside the subset are refused with the reason")
    func unreadable() {
        #expect(throws: SchemaParsingError("unknown type tuple")) { try JSONSchema(jsonValue: ["type": "tuple"]) }
        #expect(throws: SchemaParsingError("unknown format uuid")) { try JSONSchema(jsonValue: ["type": "string", "format": "uuid"]) }
        #expect(throws: SchemaParsingError("a: an array schema needs items")) {
            try JSONSchema(jsonValue: ["type": "object", "properties": ["a": ["type": "array"]]])
        }
        #expect(throws: SchemaParsingError.self) { try JSONSchema(jsonValue: ["type": ["string", "integer"]]) }
    }

    @Test("a successful reply that breaks its schema is a mismatch naming the op and the problems; errors are not checked")
    func responseSchemas() throws {
        let schemas = try ResponseSchemas(describe: ["operations": [["op": "x.get", "response": Self.booking.jsonValue]]])
        #expect(throws: Never.self) { try schemas.check(Reply.Parsed(id: "1", data: Self.valid, error: nil), of: "x.get") }
        #expect(throws: Never.self) { try schemas.check(Reply.Parsed(id: "1", data: nil, error: .notFound()), of: "x.get") }
        let mismatch = #expect(throws: ReplySchemaMismatch.self) {
            try schemas.check(Reply.Parsed(id: "1", data: Self.valid.merging(["status": 1]), error: nil), of: "x.get")
        }
        #expect(mismatch?.problems == ["status": "must be a string"])
        #expect(mismatch?.description.hasPrefix("the reply of x.get does not match its declared response schema: status: must be a string") == true)
        #expect(throws: ReplySchemaMismatch.self) { try schemas.check(Reply.Parsed(id: "1", data: [:], error: nil), of: "x.other") }
    }

    /// A service whose `drift.get` answers what its schema does not declare.
    static let drifting = ServiceDefinition(
        name: "drift", summary: "Declares one thing, answers another.", durability: .normal,
        operations: [
            .inline("drift.get", summary: "Says a count is a string.", response: .object(["count": .integer()], required: ["count"])) {
                (_, _: Empty) -> JSONValue in ["count": "three"]
            },
            .inline("drift.me", summary: "The caller.", auth: .authenticated, response: .object(["id": .string(), "roles": .array(of: .string())])) {
                (context, _: Empty) -> JSONValue in
                let principal = try context.requirePrincipal()
                return ["id": .string(principal.userID), "roles": .array(principal.roles.sorted().map { .string($0) })]
            },
        ])

    @Test("the in-process fixture fails a call whose reply drifted from its schema, and calls as any user")
    func inProcess() async throws {
        let service = try await InProcessService(Self.drifting)
        let mismatch = await #expect(throws: ReplySchemaMismatch.self) { try await service.call("drift.get") }
        #expect(mismatch?.op == "drift.get" && mismatch?.problems == ["count": "must be an integer"])
        #expect(try await service.call("drift.me", as: .user("u1", roles: ["staff", "admin"])).data == ["id": "u1", "roles": ["admin", "staff"]])
        #expect(try await service.call("drift.me").error?.code == .unauthenticated)
        #expect(try await service.call("drift.me", as: .token("not-a-token")).error?.code == .unauthenticated)
        #expect(try await service.call("drift.health").ok, "built-in operations are checked too")
        // Over the wire, with the schemas from describe, the same drift is caught.
        let wire = CheckedClient(endpoint: service.endpoint)
        await #expect(throws: ReplySchemaMismatch.self) { try await wire.call("drift.get") }
        #expect(try await wire.call("drift.describe").ok)
        await wire.close()
        await service.stop()
    }

    @Test("the fixture removes its data folder when stopped")
    func cleanup() async throws {
        let service = try await InProcessService(Self.drifting)
        let folder = service.dataDirectory
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("drift.sqlite").path))
        await service.stop()
        await service.stop()
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }

    @Test("test tokens name the user, roles and active role", arguments: [
        (TestCaller.user("u1"), Principal(userID: "u1", roles: [], sessionID: "test-session-u1")),
        (.user("u2", roles: ["sponsor", "recipient"], activeRole: "sponsor"),
         Principal(userID: "u2", roles: ["recipient", "sponsor"], activeRole: "sponsor", sessionID: "test-session-u2")),
    ])
    func testTokens(caller: TestCaller, principal: Principal) throws {
        #expect(try TestTokenVerifier().verify(try #require(caller.token)) == principal)
        #expect(throws: ServiceError.self) { try TestTokenVerifier().verify("user::") }
    }

    @Test("a request with thousands of unknown members gets at most 20 problems back")
    func reportedProblemsAreCapped() {
        let schema = JSONSchema.object(["name": .string()], required: ["name"])
        let members = Dictionary(uniqueKeysWithValues: (0..<5_000).map { ("k\($0)", JSONValue.integer(1)) })
        let problems = schema.validate(.object(members))
        #expect(problems.count == JSONSchema.maxReportedProblems)
        #expect(schema.validate(["name": "x"]).isEmpty)
    }
}

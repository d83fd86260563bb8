import Foundation
import HTTPTypes
import Platform
import Testing
import ZeroMQ

@testable import EdgeService

/// The edge's rules apart from sockets: whose address a request carries, the rate limit,
/// the envelope it sends, the HTTP answer it makes of a reply, and its OpenAPI document.
@Suite("Edge rules")
struct EdgeRulesTests {
    // MARK: Client address

    @Test("the Date header is RFC 9110's IMF-fixdate")
    func httpDate() {
        // RFC 9110, 5.6.7's own example, and days either side of a leap day and of 1970.
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1_709_164_800)) == "Thu, 29 Feb 2024 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
    }

    @Test("event loops: one per core by default; BACKEND_EDGE_THREADS sets them, refused when not a positive count")
    func eventLoops() throws {
        #expect(EdgeSettings.defaultEventLoops(cores: 0) == 1)
        #expect(EdgeSettings.defaultEventLoops(cores: 2) == 2)
        var configuration = PlatformConfiguration()
        configuration.edgeBind = "127.0.0.1:0"
        #expect(try EdgeSettings(configuration: configuration, environment: ["BACKEND_EDGE_THREADS": "3"]).eventLoops == 3)
        #expect(throws: ConfigurationError.self) { try EdgeSettings(configuration: configuration, environment: ["BACKEND_EDGE_THREADS": "0"]) }
    }

    @Test("X-Forwarded-For is believed only from a trusted proxy, read from its right end")
    func forwardedFor() throws {
        let resolver = try ClientAddressResolver(trustedProxies: "10.0.0.0/8, 192.0.2.1, fd00::/8")
        // Not from a proxy: the peer, whatever the header says.
        #expect(resolver.resolve(peer: "198.51.100.4", forwardedFor: ["203.0.113.9"]) == "198.51.100.4")
        // From a trusted proxy: the entry it appended.
        #expect(resolver.resolve(peer: "10.1.2.3", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        // A client-made prefix is skipped: the rightmost untrusted entry counts.
        #expect(resolver.resolve(peer: "10.1.2.3", forwardedFor: ["1.2.3.4, 203.0.113.9, 10.9.9.9"]) == "203.0.113.9")
        // Several header lines are one list, in order.
        #expect(resolver.resolve(peer: "192.0.2.1", forwardedFor: ["1.2.3.4", "203.0.113.9"]) == "203.0.113.9")
        // Garbage ends the walk at the hop that wrote it.
        #expect(resolver.resolve(peer: "10.1.2.3", forwardedFor: ["203.0.113.9, <script>"]) == "10.1.2.3")
        // All trusted: the leftmost.
        #expect(resolver.resolve(peer: "10.1.2.3", forwardedFor: ["10.4.4.4, 10.5.5.5"]) == "10.4.4.4")
        // IPv6, and IPv4-mapped peers.
        #expect(resolver.resolve(peer: "fd00::1", forwardedFor: ["2001:db8::7"]) == "2001:db8::7")
        #expect(resolver.resolve(peer: "::ffff:10.0.0.1", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        // No proxies configured: never believed.
        let none = try ClientAddressResolver(trustedProxies: "")
        #expect(none.resolve(peer: "127.0.0.1", forwardedFor: ["203.0.113.9"]) == "127.0.0.1")
        #expect(throws: ConfigurationError.self) { try ClientAddressResolver(trustedProxies: "10.0.0.0/33") }
        #expect(throws: ConfigurationError.self) { try ClientAddressResolver(trustedProxies: "proxy.example") }
    }

    @Test("address blocks match by prefix")
    func blocks() throws {
        let block = try #require(AddressBlock("172.16.0.0/12"))
        #expect(block.contains(try #require(IPAddress("172.31.255.255"))))
        #expect(!block.contains(try #require(IPAddress("172.32.0.0"))))
        #expect(!block.contains(try #require(IPAddress("::1"))))
        #expect(try #require(AddressBlock("0.0.0.0/0")).contains(try #require(IPAddress("8.8.8.8"))))
        #expect(IPAddress("256.1.1.1") == nil)
    }

    @Test("only the edge's claimed address is plausible text: no spaces, quotes or line breaks")
    func plausibleAddresses() {
        #expect(EdgeTrust.isPlausibleAddress("203.0.113.9"))
        #expect(EdgeTrust.isPlausibleAddress("fe80::1%eth0"))
        #expect(!EdgeTrust.isPlausibleAddress(""))
        #expect(!EdgeTrust.isPlausibleAddress("1.2.3.4\nforged=1"))
        #expect(!EdgeTrust.isPlausibleAddress(String(repeating: "1", count: 65)))
    }

    // MARK: Rate limit

    @Test("a token bucket admits the burst, then one request per refill interval")
    func tokenBucket() {
        let start = ContinuousClock.now
        let limiter = RateLimiter(perSecond: 2, burst: 3)
        for _ in 0..<3 { #expect(limiter.admit("a", now: start) == nil) }
        let wait = limiter.admit("a", now: start)
        #expect(wait == .milliseconds(500))
        // Another address has its own bucket.
        #expect(limiter.admit("b", now: start) == nil)
        #expect(limiter.admit("a", now: start + .milliseconds(500)) == nil)
        #expect(limiter.admit("a", now: start + .milliseconds(600)) != nil)
        // Off when the rate is 0.
        #expect(RateLimiter(perSecond: 0, burst: 1).admit("a", now: start) == nil)
    }

    @Test("many addresses do not grow the limiter without bound")
    func boundedMemory() {
        let limiter = RateLimiter(perSecond: 1, burst: 1)
        let now = ContinuousClock.now
        for index in 0..<(RateLimiter.shardCount * RateLimiter.maxAddressesPerShard * 2) {
            _ = limiter.admit("10.\(index >> 16 & 255).\(index >> 8 & 255).\(index & 255)", now: now)
        }
        #expect(limiter.trackedAddresses <= RateLimiter.shardCount * RateLimiter.maxAddressesPerShard)
    }

    // MARK: Envelope and answers

    @Test("the body goes into the envelope as it is, after it is checked to be one object")
    func envelope() throws {
        let data = try EdgeEnvelope.data(fromBody: Data(#" {"a": [1, 2]} "#.utf8))
        let frame = EdgeEnvelope.encode(id: "r-1", op: "auth.login", token: "t\"k", idem: "k1", client: "203.0.113.9", data: data)
        let parsed = try RequestEnvelope.parse(frame)
        #expect(parsed.id == "r-1" && parsed.op == "auth.login" && parsed.token == "t\"k" && parsed.idem == "k1")
        #expect(parsed.data == ["a": [1, 2]])
        #expect(try RequestEnvelope.parseHead(frame).client == "203.0.113.9")
        // Empty is {}.
        #expect(try EdgeEnvelope.data(fromBody: Data("  \n".utf8)) == nil)
        #expect(try RequestEnvelope.parse(EdgeEnvelope.encode(id: "r", op: "a.b", token: nil, idem: nil, client: "", data: nil)).data == [:])
        // A body that would add members to the envelope is refused, as are non-objects.
        for body in [#"{}, "client": "1.1.1.1""#, #"{"a":1}}"#, "[1]", "\"x\"", "{", "\u{FF}"] {
            #expect(throws: ServiceError.self, "\(body)") { try EdgeEnvelope.data(fromBody: Data(body.utf8)) }
        }
    }

    @Test("every error code has its status; rate limits carry Retry-After in whole seconds")
    func statuses() {
        let expected: [ErrorCode: Int] = [
            .badRequest: 400, .validationFailed: 422, .unauthenticated: 401, .forbidden: 403, .notFound: 404, .conflict: 409,
            .rateLimited: 429, .payloadTooLarge: 413, .unavailable: 503, .timeout: 504, .internal: 500, .unknownOp: 404,
        ]
        for code in ErrorCode.allCases {
            #expect(HTTPStatusMapping.status(of: code).code == expected[code], "\(code)")
        }
        let limited = EdgeAnswer.error(.rateLimited(retryAfterMs: 1_200))
        #expect(limited.headers[.retryAfter] == "2")
        #expect(EdgeAnswer.error(.rateLimited(retryAfterMs: 100)).headers[.retryAfter] == "1")
        let body = try? JSONParser.parse(EdgeAnswer.error(.invalid("email", "not an email address")).body)
        #expect(body == ["code": "validation_failed", "message": "the request data is not valid", "fields": ["email": "not an email address"]])
    }

    @Test("a reply's data is passed on byte for byte; its error becomes the HTTP error")
    func replies() throws {
        let data = Data(#"{"b":1,  "a":"\u00e9"}"#.utf8)
        let success = EdgeAnswer.reply(Reply.success(id: "r", data: data))
        #expect(success.status == .ok && success.body == data)
        let failure = EdgeAnswer.reply(Reply.failure(id: "r", error: ServiceError(.internal, "bug", details: ["ref": "ab12"])))
        #expect(failure.status == .internalServerError && failure.headers[.errorReference] == "ab12")
        #expect(try JSONParser.parse(failure.body)["code"] == "internal")
        #expect(EdgeAnswer.reply(Data("not json".utf8)).status == .internalServerError)
    }

    // MARK: Trust

    @Test("both sides derive the same keys from one secret; another secret gives other keys")
    func trust() throws {
        let secret = EdgeTrust.generateSecret()
        let one = try EdgeTrust(secret: secret), two = try EdgeTrust(secret: secret)
        #expect(one == two)
        #expect(one.gatewayKeys.publicKey != one.edgeKeys.publicKey)
        #expect(try EdgeTrust(secret: EdgeTrust.generateSecret()).edgeKeys != one.edgeKeys)
        #expect(throws: ConfigurationError.self) { try EdgeTrust(secret: "short") }
    }

    // MARK: OpenAPI

    @Test("the document lists client operations only, with their auth, bodies and error responses")
    func openAPI() throws {
        let describe: JSONValue = [
            "service": "booking", "summary": "Bookings.",
            "operations": [
                ["op": "booking.create", "summary": "Books a slot. More text.", "auth": "authenticated", "mode": "write",
                 "request": ["type": "object", "properties": ["start": ["type": "string"]], "required": ["start"]], "response": ["type": "object"]],
                ["op": "booking.health", "summary": "Health.", "auth": "public", "mode": "inline", "request": ["type": "object"], "response": ["type": "object"]],
                ["op": "booking.admin.park.update", "summary": "Park.", "auth": "role:admin|staff", "mode": "write", "request": ["type": "object"], "response": ["type": "object"]],
                ["op": "booking.events.replay", "summary": "Replay.", "auth": "internal", "mode": "read", "request": ["type": "object"], "response": ["type": "object"]],
                ["op": "booking.internal.x", "summary": "X.", "auth": "internal", "mode": "read", "request": ["type": "object"], "response": ["type": "object"]],
                ["op": "booking.media.get", "summary": "Image.", "auth": "public", "mode": "read", "request": ["type": "object"], "response": ["type": "object"]],
                ["op": "booking.media.put", "summary": "Upload.", "auth": "role:staff", "mode": "write", "request": ["type": "object"], "response": ["type": "object"]],
                ["op": "booking.pass.topup", "summary": "Pays.", "auth": "authenticated", "mode": "task", "request": ["type": "object"], "response": ["type": "object"]],
                ["op": "booking.login", "summary": "Signs in.", "auth": "public", "mode": "task", "request": ["type": "object"], "response": ["type": "object"], "idem": "ignored"],
            ],
            "events": [],
        ]
        let document = OpenAPIDocument.build(describes: [describe], version: "1", serverURL: nil)
        let paths = try #require(document["paths"]?.objectValue)
        #expect(paths["/v1/booking.events.replay"] == nil && paths["/v1/booking.internal.x"] == nil)
        let create = try #require(paths["/v1/booking.create"]?["post"])
        #expect(create["operationId"] == "booking.create" && create["summary"] == "Books a slot.")
        #expect(create["security"] == [["bearerAuth": []]])
        #expect(create["requestBody"]?["required"] == true)
        #expect(create["parameters"] == [["$ref": "#/components/parameters/IdempotencyKey"]])
        for status in ["200", "400", "401", "403", "404", "409", "413", "422", "429", "500", "503", "504"] {
            #expect(create["responses"]?[status] != nil, "\(status)")
        }
        // A task (a payment) takes an idempotency key as a write does; an inline read does not.
        #expect(paths["/v1/booking.pass.topup"]?["post"]?["parameters"] == [["$ref": "#/components/parameters/IdempotencyKey"]])
        #expect(paths["/v1/booking.health"]?["post"]?["parameters"] == nil)
        // An operation that ignores idem offers no key.
        #expect(paths["/v1/booking.login"]?["post"] != nil && paths["/v1/booking.login"]?["post"]?["parameters"] == nil)
        #expect(paths["/v1/booking.health"]?["post"]?["security"] == [])
        #expect(paths["/v1/booking.admin.park.update"]?["post"]?["x-roles"] == ["admin", "staff"])
        #expect(paths["/v1/media/{service}/{id}"]?["get"] != nil && paths["/v1/media/booking"]?["post"] != nil)
        #expect(document["openapi"] == "3.1.0")
    }

    @Test("If-None-Match matches the tag, a weak copy of it, or *")
    func etags() {
        #expect(EdgeServer.matches("\"abc\"", etag: "\"abc\""))
        #expect(EdgeServer.matches("\"x\", W/\"abc\"", etag: "\"abc\""))
        #expect(EdgeServer.matches("*", etag: "\"abc\""))
        #expect(!EdgeServer.matches("\"abd\"", etag: "\"abc\""))
    }
}

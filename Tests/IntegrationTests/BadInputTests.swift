import Foundation
import Platform
import SharedTesting
import Testing

/// Bad requests through the gateway and directly at a service get the contract's error,
/// and the process keeps serving (Platform issue, "Bad input and faults").
@Suite("Bad input", .serialized)
struct BadInputTests {
    /// Where a request goes: through the gateway, or straight to the auth service.
    enum Target: String, CaseIterable, CustomTestStringConvertible {
        case gateway, service
        var testDescription: String { rawValue }
        func link(_ stack: TestStack) throws -> Link {
            self == .gateway ? Link(stack.configuration.gatewayEndpoint) : try stack.configuration.operatorLink(to: "auth")
        }
    }

    static let cases: [(name: String, body: Data, code: ErrorCode, id: String?)] = [
        ("not UTF-8", Data([0x7B, 0x22, 0x69, 0x64, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D]), .badRequest, nil),
        ("not JSON", Data("hello".utf8), .badRequest, nil),
        ("an array", Data("[1,2]".utf8), .badRequest, nil),
        ("a string", Data("\"x\"".utf8), .badRequest, nil),
        ("missing id", Data(#"{"op":"auth.health"}"#.utf8), .badRequest, nil),
        ("missing op", Data(#"{"id":"r1"}"#.utf8), .badRequest, "r1"),
        ("id of wrong type", Data(#"{"id":7,"op":"auth.health"}"#.utf8), .badRequest, nil),
        ("op of wrong type", Data(#"{"id":"r2","op":["auth"]}"#.utf8), .badRequest, "r2"),
        ("data not an object", Data(#"{"id":"r3","op":"auth.health","data":[1]}"#.utf8), .badRequest, "r3"),
        ("token of wrong type", Data(#"{"id":"r4","op":"auth.health","token":5}"#.utf8), .badRequest, "r4"),
        ("id too long", Data(("{\"id\":\"" + String(repeating: "x", count: 129) + "\",\"op\":\"auth.health\"}").utf8), .badRequest, nil),
        ("unknown op", Data(#"{"id":"r5","op":"auth.no_such_thing"}"#.utf8), .unknownOp, "r5"),
        ("op not shaped like a name", Data(#"{"id":"r7","op":"no such thing"}"#.utf8), .unknownOp, "r7"),
        ("op without a service", Data(#"{"id":"r8","op":"health"}"#.utf8), .unknownOp, "r8"),
        ("empty op", Data(#"{"id":"r9","op":""}"#.utf8), .badRequest, "r9"),
        ("unknown field in data", Data(#"{"id":"r6","op":"auth.health","data":{"typo":1}}"#.utf8), .validationFailed, "r6"),
    ]

    @Test("malformed requests get the right error and the process keeps serving", arguments: Target.allCases)
    func malformedRequests(target: Target) async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            for testCase in Self.cases {
                let reply = try #require(
                    await RawClient.request(testCase.body, link: try target.link(stack)), "no reply for \(testCase.name)")
                #expect(reply.error?.code == testCase.code, "\(testCase.name)")
                #expect(reply.id == testCase.id, "\(testCase.name)")
            }
            try await expectServing(stack, target)
        }
    }

    @Test("a request over 1 MiB is payload_too_large; a 5 MiB frame drops only that connection", arguments: Target.allCases)
    func oversizeRequests(target: Target) async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            // Over the contract's 1 MiB, under the service socket's frame limit (1.25 MiB).
            let padding = String(repeating: "a", count: (1 << 20) + (100 << 10))
            let big = Data(#"{"id":"big","op":"auth.health","data":{"pad":"\#(padding)"}}"#.utf8)
            let reply = try #require(await RawClient.request(big, link: try target.link(stack)))
            #expect(reply.error?.code == .payloadTooLarge)

            let huge = Data(count: 5 << 20)
            let dropped = await RawClient.request(huge, link: try target.link(stack), timeout: .seconds(1))
            #expect(dropped == nil, "a frame over ZMQ_MAXMSGSIZE must not be answered")
            try await expectServing(stack, target)
        }
    }

    @Test("a DEALER client's extra frames, a missing delimiter and too many routing frames get bad_request", arguments: Target.allCases)
    func extraFrames(target: Target) async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let body = Data(#"{"id":"x1","op":"auth.health"}"#.utf8)
            let extra = try #require(
                await RawClient.exchange([Data(), body, Data("extra".utf8)], link: try target.link(stack)))
            #expect(extra.count == 2 && extra[0].isEmpty)
            #expect(try Reply.parse(extra[1]).error?.code == .badRequest)

            let noDelimiter = try #require(await RawClient.exchange([body], link: try target.link(stack)))
            #expect(try Reply.parse(try #require(noDelimiter.last)).error?.code == .badRequest)

            // 100,000 routing frames: refused as read, never forwarded or held.
            let many = try #require(
                await RawClient.exchange(Array(repeating: Data("x".utf8), count: 100_000) + [Data(), body], link: try target.link(stack)))
            #expect(many.count == 2 && many[0].isEmpty)
            let refusal = try Reply.parse(try #require(many.last))
            #expect(refusal.error?.code == .badRequest)
            let limit = target == .gateway ? RoutedMessage.maxClientFrames : RoutedMessage.maxFrames
            #expect(refusal.error?.message.contains("at most \(limit) frames") == true)
            try await expectServing(stack, target)
        }
    }

    /// What the gateway forwards must fit what a service accepts: a request whose own
    /// frames fit but which the hops would take past a service's limits is refused at the
    /// gateway, at once, and the link to the service stays up for everyone else.
    @Test("routing frames the hops would take past a service's limits are refused by the gateway at once")
    func envelopeBounds() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let gateway = Link(stack.configuration.gatewayEndpoint)
            let body = Data(#"{"id":"e1","op":"auth.health"}"#.utf8)
            // Exactly as many frames as the gateway takes: answered by auth.
            let most = RoutedMessage.maxClientFrames
            let fits = try #require(
                await RawClient.exchange(Array(repeating: Data("r".utf8), count: most - 3) + [Data(), body], link: gateway))
            #expect(try Reply.parse(try #require(fits.last)).ok)
            // One more (with the client's identity, the hops would reach past 32): bad_request.
            let over = try #require(
                await RawClient.exchange(Array(repeating: Data("r".utf8), count: most - 2) + [Data(), body], link: gateway, timeout: .seconds(2)))
            #expect(try Reply.parse(try #require(over.last)).error?.code == .badRequest)

            // A large routing frame beside a body just under 1 MiB: payload_too_large, and
            // the client's frames come back so it can match the reply.
            let padding = String(repeating: "a", count: (1 << 20) - 100)
            let large = Data(#"{"id":"e2","op":"auth.health","data":{"p":"\#(padding)"}}"#.utf8)
            let tag = Data(repeating: 7, count: 400_000)
            let refused = try #require(await RawClient.exchange([tag, Data(), large], link: gateway, timeout: .seconds(2)))
            #expect(refused.count == 3 && refused[0] == tag && refused[1].isEmpty)
            let refusal = try Reply.parse(refused[2])
            #expect(refusal.error?.code == .payloadTooLarge)
            #expect(refusal.error?.message.contains("routing frames") == true)
            // The service's link was never dropped: calls keep being answered.
            try await expectServing(stack, .gateway)
        }
    }

    @Test("data that breaks the schema names each field")
    func validationNamesFields() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            // events.replay is internal, so it is called at the service directly.
            let body = Data(#"{"id":"v1","op":"auth.events.replay","data":{"after":"zero","limit":5000,"extra":true}}"#.utf8)
            let reply = try #require(await RawClient.request(body, link: try stack.configuration.operatorLink(to: "auth")))
            let error = try #require(reply.error)
            #expect(error.code == .validationFailed)
            #expect(error.fields["after"] == "must be an integer")
            #expect(error.fields["limit"] == "must be at most 1000")
            #expect(error.fields["extra"] == "is not a known field")
        }
    }

    @Test("a REQ client gets one-frame replies")
    func requestSocketClient() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let frames = try #require(
                await RawClient.exchange(
                    [Data(#"{"id":"q1","op":"auth.health"}"#.utf8)], endpoint: stack.configuration.gatewayEndpoint, type: .req))
            #expect(frames.count == 1)
            let reply = try Reply.parse(frames[0])
            #expect(reply.ok && reply.id == "q1" && reply.data?["status"] == "ok")
        }
    }

    @Test("the gateway refuses events.replay and unknown services")
    func gatewayRouting() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let replay = try await stack.client.call("auth.events.replay", data: ["after": 0], idempotent: true)
            #expect(replay.error?.code == .forbidden)
            let unknown = try await stack.client.call("nosuch.health", idempotent: true)
            #expect(unknown.error?.code == .unknownOp)
            let direct = try #require(
                await RawClient.request(
                    Data(#"{"id":"d","op":"auth.events.replay","data":{"after":0}}"#.utf8),
                    link: try stack.configuration.operatorLink(to: "auth")))
            #expect(direct.ok && direct.data?["last"] == 0)
        }
    }

    private func expectServing(_ stack: TestStack, _ target: Target) async throws {
        let reply = try #require(
            await RawClient.request(Data(#"{"id":"after","op":"auth.health"}"#.utf8), link: try target.link(stack)))
        #expect(reply.ok && reply.id == "after")
    }
}

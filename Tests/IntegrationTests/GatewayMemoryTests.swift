import Foundation
import Platform
import SharedTesting
import Synchronization
import Testing
import ZeroMQ

/// Memory stays bounded under pipelining: clients that pipeline large requests are
/// answered `rate_limited` past the in-flight limits instead of being queued, and other
/// clients keep being served (Platform issue, "memory stays bounded under pipelining").
@Suite("Gateway memory")
struct GatewayMemoryTests {
    static let limit = 256 << 20

    /// The flood saturates both cores, so it runs at the lowest priority (the flooding
    /// clients, the gateway and auth alike) and the suites beside it keep their deadlines.
    /// Deadlines here are long for the same reason: a starved flood must not turn into
    /// `timeout` or `unavailable`; a request that is never answered still fails the test.
    static let environment = ["BACKEND_GATEWAY_DEADLINE_MS": "20000", "BACKEND_REQUEST_DEADLINE_MS": "15000"]

    @Test("six clients pipelining 1 MB requests: gateway and service stay under 256 MiB; small calls are served meanwhile")
    func pipelinedLargeRequests() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment) { stack in
            let gateway = try #require(stack.process("gateway"))
            let auth = try #require(stack.process("auth"))
            gateway.lowerPriority()
            auth.lowerPriority()
            // About 1 MB in `data`, under the 1 MiB limit: the gateway must skip it, auth
            // parses it and refuses it (an email of a million characters) in a task.
            let email = String(repeating: "x", count: 1_000_000)
            let body = Data(#"{"id":"flood","op":"auth.login","data":{"email":"\#(email)","password":"12345678"}}"#.utf8)
            // 6 x 64 requests: enough to fill every queue and limit (a client's share is
            // 16 in flight plus 16 queued), few enough to keep the flood to a few seconds
            // on 2 cores, so the suites running beside it keep their deadlines. The
            // limits do not depend on the count: 6 x 3,000 is measured with
            // `bench pipelining` (README).
            let clients = 6, requestsPerClient = 64

            let flooding = Atomic<Bool>(true)
            let smallCalls = Task {
                var latencies: [Duration] = []
                var failures: [String] = []
                while flooding.load(ordering: .relaxed) {
                    let started = ContinuousClock.now
                    do {
                        let reply = try await stack.client.call("auth.health", idempotent: true, timeout: .seconds(20), attempts: 1)
                        if reply.ok { latencies.append(.now - started) } else { failures.append(reply.error?.code.rawValue ?? "?") }
                    } catch {
                        failures.append("\(error)")
                    }
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return (latencies, failures)
            }
            let floodStarted = ContinuousClock.now
            let outcomes = await withTaskGroup(of: [PipeliningClient.Outcome].self) { group in
                for _ in 0..<clients {
                    group.addTask {
                        await PipeliningClient.run(
                            Array(repeating: body, count: requestsPerClient), endpoint: stack.configuration.gatewayEndpoint,
                            timeout: .seconds(240), stallTimeout: .seconds(30), niceness: 19)
                    }
                }
                var all: [PipeliningClient.Outcome] = []
                for await outcome in group { all += outcome }
                return all
            }
            let flood = ContinuousClock.now - floodStarted
            flooding.store(false, ordering: .relaxed)
            let (latencies, failures) = await smallCalls.value

            // Every request answered (the clients wait while the gateway keeps taking or
            // answering requests: starved by other suites, the flood once took longer than a
            // fixed 45 s, and replies still on the way were counted as lost), each either served (auth refused the email) or
            // refused by the limits; never internal, unavailable or a hang.
            var codes: [String: Int] = [:]
            for outcome in outcomes {
                codes[outcome.reply.map { $0.error?.code.rawValue ?? "ok" } ?? "no reply", default: 0] += 1
            }
            #expect(outcomes.count == clients * requestsPerClient)
            #expect(Set(codes.keys).isSubset(of: ["validation_failed", "rate_limited"]), "\(codes)")
            #expect(codes["validation_failed", default: 0] > 0 && codes["rate_limited", default: 0] > 0, "\(codes)")
            let limited = outcomes.compactMap { $0.reply?.error }.first { $0.code == .rateLimited }
            #expect(limited?.details["retryAfterMs"]?.integerValue ?? 0 > 0)

            // The small client was served throughout: every call answered within its 20 s
            // timeout (a failure above; the 384 MB also cross the CURVE link to auth, encrypted
            // and decrypted on the same two cores, so the slowest call may wait several seconds) and at least three during the flood, so its calls
            // were not queued behind the 384 large ones. Latency itself is not bounded
            // tightly: the flood, the gateway and auth run niced, so when other suites hold
            // both cores the scheduler, not the gateway, decides how long a call waits
            // (medians of 40 ms alone, 2 s beside a busy machine were measured; with two
            // busy loops at normal priority beside it the flood took 50-60 s and the median
            // small call 4.5-8 s: still a small part of the flood, not queued behind it).
            #expect(failures.isEmpty, "\(failures)")
            #expect(latencies.count >= 3, "only \(latencies.count) small calls were served")
            let sorted = latencies.sorted()
            let median = sorted.isEmpty ? .zero : sorted[sorted.count / 2], slowest = sorted.last ?? .zero
            #expect(
                median < max(.seconds(4), flood / 4),
                "median small call: \(median.wholeMilliseconds) ms during a flood of \(flood.wholeMilliseconds) ms")

            // VmHWM: the peak over the whole run, not a sample.
            let gatewayMemory = try #require(gateway.memory)
            let authMemory = try #require(auth.memory)
            #expect(gatewayMemory.peakResident < Self.limit, "gateway peak RSS \(gatewayMemory.peakResident >> 20) MiB")
            #expect(authMemory.peakResident < Self.limit, "auth peak RSS \(authMemory.peakResident >> 20) MiB")
            print(
                "pipelining \(clients) x \(requestsPerClient) x 1 MB: \(codes); gateway peak \(gatewayMemory.peakResident >> 20) MiB, "
                    + "auth peak \(authMemory.peakResident >> 20) MiB; \(latencies.count) small calls, median \(median.wholeMilliseconds) ms, slowest \(slowest.wholeMilliseconds) ms")
        }
    }

    @Test("a client asking for images and never reading the replies cannot make the gateway hold them; others are served")
    func unreadLargeReplies() async throws {
        let environment = Self.environment.merging(["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0"]) { _, new in new }
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: environment) { stack in
            let gateway = try #require(stack.process("gateway"))
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@memory.example")
            // An image near the 512 KiB limit: each reply is about 700 KB of base64.
            let image = TestImages.png(width: 300, height: 580)
            let put = try await stack.client.call("booking.media.put", data: ["content": .string(image.base64EncodedString())], token: admin)
            let id = try #require(put.data?["id"]?.stringValue, "\(put.error?.message ?? "")")
            let body = Data(#"{"id":"g","op":"booking.media.get","data":{"id":"\#(id)"}}"#.utf8)
            let endpoint = stack.configuration.gatewayEndpoint
            // 2,000 small requests (1.4 GB of replies) from a socket that reads nothing:
            // its own queue takes one message, so TCP and then the gateway's queue fill up.
            let flood = SocketThread(name: "unread-replies") {
                guard let socket = try? ZMQSocket(type: .dealer, options: .with { $0.receiveHighWaterMark = 1; $0.sendHighWaterMark = 10_000 })
                else { return }
                defer { socket.close() }
                guard (try? socket.connect(endpoint)) != nil else { return }
                for _ in 0..<2_000 {
                    _ = try? socket.send(multipart: [Data(), body])
                    usleep(2_000)
                }
                usleep(1_000_000)
            }
            await flood.join()
            let got = try await stack.client.call("booking.media.get", data: ["id": .string(id)], idempotent: true)
            #expect(got.data?["content"]?.stringValue.flatMap { Data(base64Encoded: $0) } == image)
            let memory = try #require(gateway.memory)
            // At most 256 replies queued (about 180 MiB); with libzmq's default of 1,000 this
            // took the gateway past 600 MiB.
            #expect(memory.peakResident < Self.limit, "gateway peak RSS \(memory.peakResident >> 20) MiB")
            print("unread image replies: gateway peak \(memory.peakResident >> 20) MiB")
        }
    }
}

import Foundation
import Platform
import Synchronization
import SharedTesting
import Testing

/// Hostile input to every operation of every service, through the gateway, for a bounded
/// time (`FUZZ_SECONDS`, 30 by default; `FUZZ_SEED` replays a run): each request is
/// answered with a reply of the contract, never `internal` (a handler that failed) and
/// never not at all; afterwards every service still serves and none holds much memory.
@Suite("Request fuzzing")
struct RequestFuzzTests {
    static let services = ["auth", "booking", "goals", "savings", "reminders", "stats"]

    /// Operations that would end the fuzzer's own session or account (they are fuzzed
    /// by their own tests): the rest of the run would only see `unauthenticated`.
    static func isSessionEnding(_ op: String) -> Bool {
        ["logout", "delete", "revoke", "password", "keys", "role.switch", "refresh"].contains { op.contains($0) }
    }

    @Test("every operation: a contract reply to hostile requests, never internal, never silence", .timeLimit(.minutes(5)))
    func fuzzEveryOperation() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1..<UInt64.max)
        let seconds = environment["FUZZ_SECONDS"].flatMap { Double($0) } ?? 30
        print("request fuzzing: seed \(seed), \(seconds) s (FUZZ_SEED=\(seed) replays it)")
        try await TestStack.with(services: Self.services, extraEnvironment: [
            "BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0",
            // The Graph API at a closed port: refused at once, instead of a lookup of the real one timing out.
            "BACKEND_AUTH_FACEBOOK_GRAPH_URL": "http://127.0.0.1:9",
        ]) { stack in
            let direct = try stack.directClient("auth")
            let user = try await AuthFixtures.signUp(stack.client, email: "fuzz-user@fuzz.example")
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: direct, email: "fuzz-admin@fuzz.example")
            var operations: [(op: String, schema: JSONValue)] = []
            for service in Self.services {
                let document = try await stack.client.call("\(service).describe", idempotent: true)
                for operation in document.data?["operations"]?.arrayValue ?? [] {
                    guard let op = operation["op"]?.stringValue, !(operation["auth"]?.stringValue ?? "").hasPrefix("internal"), !Self.isSessionEnding(op) else { continue }
                    operations.append((op, operation["request"] ?? .object([:])))
                }
            }
            #expect(operations.count > 100)
            let findings = Findings()
            let client = ServiceClient(endpoint: stack.configuration.gatewayEndpoint, name: "fuzz")
            let deadline = ContinuousClock.now + .seconds(seconds)
            let all = operations
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var fuzzer = RequestFuzzer(seed: seed &+ UInt64(worker))
                        var index = worker
                        while ContinuousClock.now < deadline {
                            let (op, schema) = all[index % all.count]
                            index += 8
                            let token = [user, admin, nil][index % 3]
                            let (kind, body) = fuzzer.request(op: op, schema: schema, token: token)
                            findings.count()
                            do {
                                let reply = try await client.send(body, timeout: .seconds(10))
                                guard let parsed = try? Reply.parse(reply) else {
                                    findings.add("\(op) (\(kind)): not a reply: \(String(decoding: reply.prefix(200), as: UTF8.self))")
                                    continue
                                }
                                findings.tally(parsed.error?.code.rawValue ?? "ok")
                                if parsed.error?.code == .unavailable || parsed.error?.code == .timeout {
                                    findings.slow("\(op) (\(kind)): \(parsed.error!.code.rawValue): \(String(decoding: body.prefix(400), as: UTF8.self))")
                                }
                                if parsed.error?.code == .internal {
                                    findings.add("\(op) (\(kind)): internal: \(String(decoding: body.prefix(300), as: UTF8.self))")
                                }
                            } catch {
                                findings.add("\(op) (\(kind)): no reply in 10 s (\(error))")
                            }
                        }
                    }
                }
            }
            await client.close()
            print("request fuzzing: \(findings.sent) requests to \(operations.count) operations; replies \(findings.outcomes.sorted { $0.key < $1.key })")
            // The valid ones reach the handlers: some succeed, some are refused by the rules.
            #expect((findings.outcomes["ok"] ?? 0) > 0 && (findings.outcomes["validation_failed"] ?? 0) > 0)
            for service in Self.services {
                #expect(try await stack.client.call("\(service).health", idempotent: true).ok, "\(service) stopped serving")
                if let memory = stack.process(service)?.memory {
                    #expect(memory.resident < 300 << 20, "\(service) holds \(memory.resident >> 20) MiB after the fuzzing")
                }
            }
            for line in findings.slowList.prefix(5) { print("answered unavailable or timeout: \(line)") }
            let found = findings.list
            #expect(found.isEmpty, "seed \(seed): \(found.count) findings, e.g.\n\(found.prefix(10).joined(separator: "\n"))")
        }
    }

    /// Findings of all workers.
    final class Findings: Sendable {
        private let state = Mutex<(sent: Int, list: [String], outcomes: [String: Int])>((0, [], [:]))
        func count() { state.withLock { $0.sent += 1 } }
        private let slowOnes = Mutex<[String]>([])
        func slow(_ finding: String) { slowOnes.withLock { $0.append(finding) } }
        var slowList: [String] { slowOnes.withLock { $0 } }
        func tally(_ outcome: String) { state.withLock { $0.outcomes[outcome, default: 0] += 1 } }
        var outcomes: [String: Int] { state.withLock { $0.outcomes } }
        func add(_ finding: String) { state.withLock { $0.list.append(finding) } }
        var sent: Int { state.withLock { $0.sent } }
        var list: [String] { state.withLock { $0.list } }
    }
}

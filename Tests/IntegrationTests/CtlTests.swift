import Foundation
import Platform
import SharedTesting
import Testing

/// The operator CLI against a running gateway, and against nothing.
@Suite("ctl")
struct CtlTests {
    /// Runs `ctl` with the stack's configuration and returns its exit status and output.
    private func ctl(_ arguments: [String], configuration: PlatformConfiguration, directory: TemporaryDirectory) async throws
        -> (status: Int32, output: String)
    {
        let process = try ChildProcess(
            executable: TestEnvironment.binary("ctl"), arguments: arguments, environment: configuration.environment,
            logFile: directory.url.appendingPathComponent("ctl-\(UUID().uuidString.prefix(6)).log"))
        let status = await process.waitForExit(timeout: .seconds(20))
        return (status ?? -1, process.output)
    }

    @Test("health, call, describe and events against a running stack")
    func againstRunningStack() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let health = try await ctl(["health"], configuration: stack.configuration, directory: stack.directory)
            // Only auth runs, so the stack is degraded: exit 1, with one line per service.
            #expect(health.status == 1)
            #expect(health.output.contains("auth       ok"))
            #expect(health.output.contains("booking    unavailable"))

            let call = try await ctl(["call", "auth.health", "--json"], configuration: stack.configuration, directory: stack.directory)
            #expect(call.status == 0)
            let reply = try Reply.parse(Data(call.output.split(separator: "\n").last.map(String.init)?.utf8 ?? "".utf8))
            #expect(reply.ok && reply.data?["status"] == "ok")

            let unknown = try await ctl(["call", "auth.nope"], configuration: stack.configuration, directory: stack.directory)
            #expect(unknown.status == 1)
            #expect(unknown.output.contains("error unknown_op"))

            let invalid = try await ctl(["call", "auth.health", "{not json"], configuration: stack.configuration, directory: stack.directory)
            #expect(invalid.status != 0 && invalid.output.contains("not valid JSON"))

            let describe = try await ctl(["describe", "auth"], configuration: stack.configuration, directory: stack.directory)
            #expect(describe.status == 0)
            #expect(describe.output.contains("auth.events.replay") && describe.output.contains("[internal]"))

            let events = try await ctl(["events", "auth", "--after", "0", "--json"], configuration: stack.configuration, directory: stack.directory)
            #expect(events.status == 0)
        }
    }

    @Test("events --follow prints events as they are published")
    func followEvents() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: ["BACKEND_AUTH_POW_DIFFICULTY": "0", "BACKEND_AUTH_SCRYPT_LOG_N": "10"]) { stack in
            let follower = try ChildProcess(
                executable: TestEnvironment.binary("ctl"), arguments: ["events", "--follow", "auth."], environment: stack.configuration.environment,
                logFile: stack.directory.url.appendingPathComponent("follow.log"))
            defer { follower.kill(signal: SIGKILL) }
            while !follower.output.contains("following") { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(300))  // the subscription reaches the bus
            #expect(try await AuthFixtures.register(stack.client, email: "events@example.com").ok)
            var seen = false
            for _ in 0..<100 where !seen {
                seen = follower.output.contains("auth.user.registered")
                if !seen { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(seen, "ctl events --follow printed: \(follower.output)")
        }
    }

    @Test("no stack: a clear message and exit status 3")
    func noStack() async throws {
        let directory = try TemporaryDirectory()
        var configuration = PlatformConfiguration()
        configuration.gatewayEndpoint = TestEnvironment.freeEndpoint()
        let result = try await ctl(["health", "--timeout", "1"], configuration: configuration, directory: directory)
        #expect(result.status == 3)
        #expect(result.output.contains("Is the stack running?"))
    }
}

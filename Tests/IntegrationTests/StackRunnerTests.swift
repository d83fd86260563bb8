import Foundation
import Platform
import SharedTesting
import Testing

/// The `stack` executable brings all nine processes (the edge and the admin panel among them) to healthy, restarts a crashed one,
/// and stops them all.
@Suite("Stack runner")
struct StackRunnerTests {
    @Test("starts nine healthy processes (the edge and the admin panel among them), restarts a killed one, stops them all")
    func fullStack() async throws {
        let stack = try TestStack()
        let runner = try ChildProcess(
            executable: TestEnvironment.binary("stack"), environment: stack.configuration.environment,
            logFile: stack.directory.url.appendingPathComponent("stack.log"))
        do {
            let output = try await waitFor("all 9 processes are healthy", in: runner, timeout: .seconds(60))
            let health = try await stack.client.call("gateway.health", idempotent: true)
            #expect(health.data?["status"] == "ok")
            let services = try #require(health.data?["services"]?.objectValue)
            #expect(Set(services.keys) == Set(PlatformConfiguration.serviceNames))
            #expect(services.values.allSatisfy { $0["status"] == "ok" })

            let pids = Self.childPIDs(in: output)
            #expect(pids.count == 9)

            // A crashed child is restarted and served again.
            let bookingPID = try #require(pids["booking"])
            let killedAt = ContinuousClock.now
            kill(bookingPID, SIGKILL)
            let deadline = ContinuousClock.now + .seconds(30)
            var back = false
            while ContinuousClock.now < deadline {
                // Served by a new process: one started after the kill.
                if let reply = try? await stack.client.call("booking.health", idempotent: true, timeout: .milliseconds(500), attempts: 1),
                    reply.ok, let uptime = reply.data?["uptimeMs"]?.integerValue,
                    uptime < (ContinuousClock.now - killedAt).wholeMilliseconds,
                    let newPID = Self.childPIDs(in: runner.output)["booking"], newPID != bookingPID
                {
                    back = true
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(back, "booking was not restarted")

            let status = await runner.stop(grace: .seconds(20))
            #expect(status == 0)
            let livePIDs = Self.childPIDs(in: runner.output).values.filter { kill($0, 0) == 0 }
            #expect(livePIDs.isEmpty, "children still running: \(livePIDs)")
            await stack.stop()
        } catch {
            await runner.stop()
            await stack.stop()
            throw error
        }
    }

    /// Waits until the runner's output contains `text`.
    private func waitFor(_ text: String, in process: ChildProcess, timeout: Duration) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let output = process.output
            if output.contains(text) { return output }
            guard process.isRunning else { throw TestStackError("stack exited:\n\(output)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestStackError("timed out waiting for '\(text)':\n\(process.output)")
    }

    /// Every `child=<name> pid=<pid> ... started` line of the runner's log; later starts win.
    static func childPIDs(in output: String) -> [String: Int32] {
        var pids: [String: Int32] = [:]
        for line in output.split(separator: "\n") where line.contains("started") {
            let fields = line.split(separator: " ")
            guard let child = fields.first(where: { $0.hasPrefix("child=") })?.dropFirst(6),
                let pid = fields.first(where: { $0.hasPrefix("pid=") }).flatMap({ Int32($0.dropFirst(4)) })
            else { continue }
            pids[String(child)] = pid
        }
        return pids
    }
}

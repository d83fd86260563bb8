import Foundation
import Platform
import SharedTesting
import Testing

/// A service that dies is reported `unavailable` within the gateway's deadline, and is
/// served again once it is back (Platform issue, "Bad input and faults").
@Suite("Faults")
struct FaultTests {
    @Test("SIGKILL: unavailable within the deadline, served again after a restart")
    func killedServiceRecovers() async throws {
        try await TestStack.with(services: ["auth", "booking"]) { stack in
            let auth = try #require(stack.process("auth"))
            auth.kill(signal: SIGKILL)
            await auth.waitForExit(timeout: .seconds(5))

            let started = ContinuousClock.now
            let reply = try await stack.client.call("auth.health", idempotent: true, timeout: .seconds(10), attempts: 1)
            let elapsed = ContinuousClock.now - started
            #expect(reply.error?.code == .unavailable)
            #expect(elapsed < .milliseconds(stack.configuration.gatewayDeadlineMs + 500))

            // Other services are unaffected.
            #expect(try await stack.client.call("booking.health", idempotent: true).ok)

            let health = try await stack.client.call("gateway.health", idempotent: true)
            #expect(health.data?["status"] == "degraded")
            #expect(health.data?["services"]?["auth"]?["status"] == "unavailable")
            #expect(health.data?["services"]?["booking"]?["status"] == "ok")

            try stack.start("auth")
            try await stack.waitUntilHealthy(["auth"], timeout: .seconds(20))
            #expect(try await stack.client.call("auth.health", idempotent: true).ok)
        }
    }

    @Test("a request in flight when the service dies is answered unavailable by the deadline")
    func requestInFlightWhenServiceStops() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let auth = try #require(stack.process("auth"))
            // SIGSTOP: the connection stays up but nothing answers, the worst case.
            await auth.suspend()
            defer { auth.kill(signal: SIGCONT) }
            let started = ContinuousClock.now
            let reply = try await stack.client.call("auth.health", idempotent: true, timeout: .seconds(10), attempts: 1)
            let elapsed = ContinuousClock.now - started
            #expect(reply.error?.code == .unavailable)
            #expect(elapsed >= .milliseconds(stack.configuration.gatewayDeadlineMs - 100))
            // The deadline plus scheduling slack for a machine busy with other suites.
            #expect(elapsed < .milliseconds(stack.configuration.gatewayDeadlineMs + 1_500))
            auth.kill(signal: SIGCONT)
            try await stack.waitUntilHealthy(["auth"], timeout: .seconds(10))
        }
    }

    @Test("SIGTERM stops a service cleanly")
    func gracefulStop() async throws {
        try await TestStack.with(services: ["savings"]) { stack in
            let savings = try #require(stack.process("savings"))
            let status = await savings.stop(grace: .seconds(10))
            #expect(status == 0)
            #expect(savings.output.contains("request socket closed"))
        }
    }
}

import Foundation
@testable import GatewayService
import Platform
import Testing

/// The gateway's in-flight budget and its `gateway.health` rounds, without sockets.
@Suite("Gateway limits and health rounds")
struct GatewayLimitsTests {
    let alice = Data("alice".utf8), bob = Data("bob".utf8), carol = Data("carol".utf8)

    @Test("a client is refused past its count or bytes; others are not affected")
    func perClient() throws {
        var limits = GatewayLimits()
        limits.maxInFlightPerClient = 2
        var budget = InFlightBudget(limits: limits)
        #expect(budget.admit(client: alice, bytes: 100) == nil)
        #expect(budget.admit(client: alice, bytes: 100) == nil)
        let refused = budget.admit(client: alice, bytes: 100)
        let refusal = try #require(refused)
        #expect(refusal.code == .rateLimited)
        #expect(refusal.details["retryAfterMs"] == .integer(Int64(limits.retryAfter.wholeMilliseconds)))
        #expect(budget.admit(client: bob, bytes: 100) == nil)
        budget.release(client: alice, bytes: 100)
        #expect(budget.admit(client: alice, bytes: 100) == nil)

        var bytes = InFlightBudget(limits: GatewayLimits())
        for _ in 0..<16 { #expect(bytes.admit(client: alice, bytes: 1 << 20) == nil) }
        #expect(bytes.admit(client: alice, bytes: 1 << 20)?.code == .rateLimited)
        #expect(bytes.admit(client: bob, bytes: 1 << 20) == nil)
    }

    @Test("large requests fill three quarters of the gateway's bytes; small ones still pass")
    func gatewayWide() {
        var budget = InFlightBudget(limits: GatewayLimits())
        // Three clients of large requests reach the large-request share (48 MiB)...
        for client in [alice, bob, carol] {
            for _ in 0..<16 { #expect(budget.admit(client: client, bytes: 1 << 20) == nil) }
        }
        #expect(budget.total == InFlightBudget.Usage(count: 48, bytes: 48 << 20))
        #expect(budget.admit(client: Data("dave".utf8), bytes: 1 << 20)?.message == "the gateway has too many requests in flight")
        // ...while a small request from anyone is still forwarded.
        #expect(budget.admit(client: Data("erin".utf8), bytes: 300) == nil)
        for _ in 0..<16 { budget.release(client: alice, bytes: 1 << 20) }
        budget.release(client: Data("erin".utf8), bytes: 300)
        #expect(budget.total == InFlightBudget.Usage(count: 32, bytes: 32 << 20))
        #expect(budget.usage(of: alice) == InFlightBudget.Usage())
    }

    @Test("one round of checks answers every caller, and its answer is reused for a second")
    func healthRounds() throws {
        let start = ContinuousClock.now
        var health = HealthAggregator(services: ["b", "a"], startedAt: start, lifetime: .seconds(1))
        func waiter(_ id: String) -> HealthAggregator.Waiter { .init(envelope: ReturnPath(envelope: [Data()], viaEdge: false, packed: false), id: id, started: start) }

        guard case .checkServices(let services) = health.ask(waiter("1"), now: start) else {
            Issue.record("the first caller starts a round")
            return
        }
        #expect(services == ["a", "b"])
        guard case .wait = health.ask(waiter("2"), now: start) else {
            Issue.record("a second caller joins the running round")
            return
        }
        #expect(health.record("a", status: ["status": "ok"], now: start) == nil)
        let ended = health.record("b", status: HealthAggregator.noAnswer, now: start + .milliseconds(10))
        let (body, waiters) = try #require(ended)
        #expect(waiters.map(\.id) == ["1", "2"])
        #expect(body["status"] == "degraded")
        #expect(body["services"]?["b"]?["status"] == "unavailable")
        #expect(body["uptimeMs"] == 10)

        guard case .answer(let cached) = health.ask(waiter("3"), now: start + .milliseconds(500)) else {
            Issue.record("a caller within a second gets the last answer")
            return
        }
        #expect(cached["services"] == body["services"])
        #expect(cached["uptimeMs"] == 500)
        guard case .checkServices = health.ask(waiter("4"), now: start + .milliseconds(1_100)) else {
            Issue.record("after a second, a new round")
            return
        }
        #expect(health.abandon().map(\.id) == ["4"])
    }

    @Test("a health reply becomes a status with its latency")
    func healthStatus() {
        let ok = HealthAggregator.status(
            fromReply: Reply.success(id: "x", data: Data(#"{"status":"ok","version":"1","uptimeMs":5}"#.utf8)), latency: .milliseconds(3))
        #expect(ok == ["status": "ok", "version": "1", "uptimeMs": 5, "latencyMs": .number(3)])
        let failed = HealthAggregator.status(fromReply: Reply.failure(id: "x", error: .timeout()), latency: .zero)
        #expect(failed["status"] == "unavailable")
        #expect(failed["error"] == "the service answered its health check with timeout")
    }
}

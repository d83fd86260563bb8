import Foundation
import Platform
import SharedTesting
import Testing

/// The operators' figures (README, "Metrics"): each service counts per operation, the
/// gateway serves them all in Prometheus text on its metrics port, and `ctl top` shows live
/// rates from the same figures.
@Suite("Operator metrics", .serialized)
struct OperatorMetricsTests {
    @Test("the gateway's /metrics shows each service's per-operation counts and latency; ctl top shows live rates; clients cannot reach the figures")
    func prometheusAndTop() async throws {
        let stack = try TestStack()
        do {
            let metricsBind = "127.0.0.1:\(TestEnvironment.freePort())"
            try stack.start("auth", environment: ["BACKEND_AUTH_POW_DIFFICULTY": "4", "BACKEND_AUTH_SCRYPT_LOG_N": "10"])
            try stack.start("savings")
            try stack.start("stats")
            try stack.start("gateway", environment: ["BACKEND_METRICS_BIND": metricsBind])
            try await stack.waitUntilHealthy(["auth", "savings", "stats"])
            // A sign-up: auth's event, applied by stats (event lag and delivery figures).
            _ = try await AuthFixtures.signUp(stack.client, email: "metrics@metrics.example")

            // The sign-up asks one challenge, or more when a loaded machine made it try again:
            // count from what the figures say now.
            let before = PrometheusText.samples(
                String(decoding: try await HTTPTestClient.send("GET", "http://\(metricsBind)/metrics").body, as: UTF8.self))
            let challengesBefore = before.first {
                $0.name == "backend_requests_total" && $0.labels == ["service": "auth", "op": "auth.challenge", "outcome": "ok"]
            }?.value ?? 0
            #expect(challengesBefore >= 1)
            for _ in 0..<12 { #expect(try await stack.client.call("auth.challenge", attempts: 1).ok) }
            let unknown = try await stack.client.call("savings.nosuch", idempotent: true)
            #expect(unknown.error?.code == .unknownOp)
            // Clients never reach the raw figures: internal, refused by the gateway.
            let refused = try await stack.client.call("auth.metrics.prometheus", idempotent: true)
            #expect(refused.error?.code == .forbidden)

            // The gateway reuses a scrape for a second: this one is fresh.
            try await Task.sleep(for: .milliseconds(1_200))
            let answer = try await HTTPTestClient.send("GET", "http://\(metricsBind)/metrics")
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true, "\(answer.headers)")
            let text = String(decoding: answer.body, as: UTF8.self)
            let samples = PrometheusText.samples(text)
            let challenges = samples.first {
                $0.name == "backend_requests_total" && $0.labels == ["service": "auth", "op": "auth.challenge", "outcome": "ok"]
            }
            // Twelve more than before, each counted once, and timed once.
            #expect(challenges?.value == challengesBefore + 12, "\(text.prefix(3_000))")
            #expect(samples.contains {
                $0.name == "backend_request_duration_seconds_count" && $0.labels["op"] == "auth.challenge" && $0.value == challengesBefore + 12
            })
            // A made-up operation is one label, not a new series per name a client invents.
            #expect(samples.contains { $0.name == "backend_requests_total" && $0.labels["op"] == "(unknown)" && $0.labels["outcome"] == "unknown_op" })
            #expect(!text.contains("savings.nosuch"))
            #expect(samples.first { $0.name == "backend_service_up" && $0.labels["service"] == "auth" }?.value == 1)
            #expect(samples.first { $0.name == "backend_service_up" && $0.labels["service"] == "booking" }?.value == 0)
            // Events applied by stats: their lag from the event's time and their delivery
            // from the bus announcement, as histograms per subscriber and source.
            let applied = try await Poll.until(timeout: .seconds(10)) {
                let text = String(decoding: try await HTTPTestClient.send("GET", "http://\(metricsBind)/metrics").body, as: UTF8.self)
                let samples = PrometheusText.samples(text)
                return ["backend_event_lag_seconds_count", "backend_event_delivery_seconds_count"].allSatisfy { name in
                    samples.contains { $0.name == name && $0.labels == ["service": "stats", "source": "auth"] && $0.value >= 1 }
                }
            }
            #expect(applied)
            // Memory per process, the gateway's included: one series each, not the first one only.
            for service in ["auth", "savings", "gateway"] {
                let resident = samples.first { $0.name == "process_resident_memory_bytes" && $0.labels == ["service": service] }
                #expect((resident?.value ?? 0) > 1_000_000, "\(service)")
            }
            // One HELP and TYPE per family.
            #expect(text.components(separatedBy: "# TYPE backend_requests_total counter").count == 2)

            // ctl top: two readings one second apart while requests keep coming.
            let load = Task {
                while !Task.isCancelled {
                    _ = try? await stack.client.call("auth.challenge")
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            let top = try ChildProcess(
                executable: TestEnvironment.binary("ctl"), arguments: ["top", "--iterations", "2", "--interval", "1", "--services", "auth,savings"],
                environment: stack.configuration.environment, logFile: stack.directory.url.appendingPathComponent("top.log"))
            let status = await top.waitForExit(timeout: .seconds(20))
            load.cancel()
            #expect(status == 0, "\(top.output)")
            let last = top.output.components(separatedBy: "last ").last ?? ""
            let line = try #require(last.split(separator: "\n").first { $0.contains("auth.challenge") }, "\(top.output)")
            let columns = line.split(separator: " ")
            let rate = try #require(Double(columns[2]))
            #expect(rate > 5, "auth.challenge at \(rate)/s: \(line)")
            #expect(Double(columns[4]) != nil, "a p99 for the interval: \(line)")
        } catch {
            await stack.stop()
            throw error
        }
        await stack.stop()
    }
}

import Foundation
import Platform
import Testing

/// The Prometheus text the gateway merges and `ctl top` reads (README, "Metrics").
@Suite("Prometheus text")
struct PrometheusTextTests {
    static let auth = """
        # HELP backend_requests_total Requests.
        # TYPE backend_requests_total counter
        backend_requests_total{service="auth",op="auth.login",outcome="ok"} 90
        backend_requests_total{service="auth",op="auth.login",outcome="unauthenticated"} 10
        # HELP backend_request_duration_seconds Time.
        # TYPE backend_request_duration_seconds histogram
        backend_request_duration_seconds_bucket{service="auth",op="auth.login",le="0.001"} 50
        backend_request_duration_seconds_bucket{service="auth",op="auth.login",le="0.01"} 99
        backend_request_duration_seconds_bucket{service="auth",op="auth.login",le="+Inf"} 100
        backend_request_duration_seconds_sum{service="auth",op="auth.login"} 0.5
        backend_request_duration_seconds_count{service="auth",op="auth.login"} 100

        """
    static let booking = """
        # HELP backend_requests_total Requests.
        # TYPE backend_requests_total counter
        backend_requests_total{service="booking",op="booking.create",outcome="ok"} 7
        # HELP backend_request_duration_seconds Time.
        # TYPE backend_request_duration_seconds histogram
        backend_request_duration_seconds_bucket{service="booking",op="booking.create",le="+Inf"} 7

        """

    @Test("merging keeps each family whole, its HELP and TYPE once, and a series twice seen once")
    func merge() {
        let merged = PrometheusText.merge([Self.auth, Self.booking, Self.auth])
        let lines = merged.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0 == "# TYPE backend_requests_total counter" }.count == 1)
        #expect(lines.filter { $0.hasPrefix("# HELP backend_request_duration_seconds") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("backend_requests_total{") }.count == 3)
        // A family's samples are contiguous: nothing of another family between them.
        let counters = lines.indices.filter { lines[$0].hasPrefix("backend_requests_total{") }
        #expect(counters.last! - counters.first! == counters.count - 1)
        let typeLine = lines.firstIndex(of: "# TYPE backend_requests_total counter")!
        #expect(typeLine < counters.first!)
        #expect(merged.hasSuffix("\n"))
    }

    @Test("samples: names, escaped label values, +Inf")
    func samples() {
        let samples = PrometheusText.samples(Self.auth + "odd{a=\"x\\\"y\",b=\"line\\nbreak\"} 3\nnot a sample\n")
        #expect(samples.count == 8)
        #expect(samples.first == PrometheusText.Sample(
            name: "backend_requests_total", labels: ["service": "auth", "op": "auth.login", "outcome": "ok"], value: 90))
        #expect(samples.contains { $0.labels["le"] == "+Inf" && $0.value == 100 })
        #expect(samples.last?.labels == ["a": "x\"y", "b": "line\nbreak"])
    }

    @Test("rates over an interval: requests and errors per second, the interval's p99 bucket; the first reading gives totals")
    func rates() throws {
        let first = PrometheusText.samples(Self.auth)
        let since = OperationRates.between(nil, first, seconds: 0)
        let login = try #require(since.first { $0.op == "auth.login" })
        #expect(login.totalRequests == 100 && login.requestsPerSecond == 0)
        #expect(login.p99Ms == 10, "99 of 100 within 10 ms")

        // 100 more, 20 of them errors, all under 1 ms, in 2 s.
        let later = PrometheusText.samples(
            Self.auth.replacingOccurrences(of: "outcome=\"ok\"} 90", with: "outcome=\"ok\"} 170")
                .replacingOccurrences(of: "outcome=\"unauthenticated\"} 10", with: "outcome=\"unauthenticated\"} 30")
                .replacingOccurrences(of: "le=\"0.001\"} 50", with: "le=\"0.001\"} 150")
                .replacingOccurrences(of: "le=\"0.01\"} 99", with: "le=\"0.01\"} 199")
                .replacingOccurrences(of: "le=\"+Inf\"} 100", with: "le=\"+Inf\"} 200"))
        let rate = try #require(OperationRates.between(first, later, seconds: 2).first { $0.op == "auth.login" })
        #expect(rate.requestsPerSecond == 50)
        #expect(rate.errorsPerSecond == 10)
        #expect(rate.p99Ms == 1)
        #expect(rate.totalRequests == 200)
    }
}

import Foundation
import Platform
import Testing

/// `<service>.metrics`' counting: per-minute ring, percentiles from fixed buckets.
@Suite("Request metrics")
struct RequestMetricsTests {
    @Test("latency percentiles are bucket upper bounds; minutes roll over")
    func metrics() {
        let metrics = RequestMetrics()
        let now = Date()
        for micros: Int64 in [40, 90, 400, 800, 900, 1_200, 9_000, 60_000, 70_000, 20_000_000] {
            metrics.record(micros: micros, outcome: micros > 50_000 ? "timeout" : "ok", at: now)
        }
        let snapshot = metrics.snapshot(now: now)
        #expect(snapshot.total.requests == 10 && snapshot.total.errors == 3)
        #expect(snapshot.total.errorsByCode == ["timeout": 3])
        #expect(snapshot.total.percentileMs(0.5) == 1.0)  // the 5th of 10 is 900 µs: bucket ≤ 1 ms
        #expect(snapshot.total.percentileMs(0.9) == 75)
        #expect(snapshot.total.percentileMs(1.0) == 20_000)  // slower than the last bound
        #expect(snapshot.minutes.count == 60 && snapshot.minutes.last?.counts.requests == 10)
        // An hour later the minute is gone from the last hour, not from the total.
        let later = metrics.snapshot(now: now.addingTimeInterval(3_600))
        #expect(later.lastHour.requests == 0 && later.total.requests == 10)
    }
}

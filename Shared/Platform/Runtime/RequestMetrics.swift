import Foundation
import Metrics
import Prometheus
import Synchronization

/// Requests, errors and latency of one service, counted where its request line is
/// written (``RequestServer``), for `<service>.metrics` and the admin panel's monitoring.
///
/// Latencies go into fixed buckets (``LatencyBuckets``): a percentile is the upper bound
/// of the bucket its rank falls in, so "p99 5 ms" means 99 % took at most 5 ms. Kept per
/// minute for the last hour (a ring of 60) and since the process started. Recording is a
/// lock and a few additions on the socket thread.
public final class RequestMetrics: Sendable {
    /// The counts of one period.
    public struct Counts: Sendable, Equatable {
        public var requests: Int64 = 0
        public var errors: Int64 = 0
        /// Errors by the contract's code.
        public var errorsByCode: [String: Int64] = [:]
        public var buckets = [Int64](repeating: 0, count: LatencyBuckets.upperBoundsMicros.count + 1)

        mutating func add(micros: Int64, outcome: String) {
            requests += 1
            if outcome != "ok" {
                errors += 1
                errorsByCode[outcome, default: 0] += 1
            }
            buckets[LatencyBuckets.index(ofMicros: micros)] += 1
        }

        mutating func add(_ other: Counts) {
            requests += other.requests
            errors += other.errors
            for (code, count) in other.errorsByCode { errorsByCode[code, default: 0] += count }
            for index in buckets.indices { buckets[index] += other.buckets[index] }
        }

        /// The latency under which `fraction` of the requests finished, in milliseconds
        /// (a bucket's upper bound); `nil` without requests.
        public func percentileMs(_ fraction: Double) -> Double? {
            LatencyBuckets.percentileMs(fraction, of: buckets)
        }
    }

    private struct Minute {
        var minute: Int64 = -1
        var counts = Counts()
    }

    private struct State {
        var total = Counts()
        var ring = [Minute](repeating: Minute(), count: 60)
        /// Per operation, through swift-metrics (a counter per outcome, a timer per
        /// operation; created once, then only recorded into).
        var counters: [String: CoreMetrics.Counter] = [:]
        var timers: [String: CoreMetrics.Timer] = [:]
        /// Per operation since the start, for `<service>.metrics` and the admin panel.
        var operations: [String: Counts] = [:]
    }

    private let state = Mutex(State())
    /// The service these figures are of (the `service` label).
    public let service: String
    /// When the counting started (the process's start, in practice).
    public let startedAt = Date()

    public init(service: String = "") {
        self.service = service
    }

    /// The process's Prometheus registry: every service's per-operation figures
    /// (`backend_requests_total{service,op,outcome}`,
    /// `backend_request_duration_seconds{service,op}`), as `<service>.metrics.prometheus`
    /// and the gateway's `/metrics` show them. The figures are recorded through the
    /// swift-metrics API; ``bootstrapMetrics()`` makes this registry its backend.
    public static let prometheus = PrometheusCollectorRegistry()

    /// Makes swift-metrics record into ``prometheus`` (timers as histograms with the
    /// buckets of ``LatencyBuckets``); once per process, at start (``ProcessSetup``).
    public static func bootstrapMetrics() {
        var factory = PrometheusMetricsFactory(registry: prometheus)
        factory.defaultDurationHistogramBuckets = LatencyBuckets.upperBoundsMicros.map { .microseconds($0) }
        MetricsSystem.bootstrap(factory)
    }

    /// Sets `process_resident_memory_bytes`, `process_peak_resident_memory_bytes` and
    /// `process_proportional_memory_bytes` (`VmRSS`, `VmHWM`, `Pss`) to this moment's figures,
    /// labelled with the process's `service` (so the gateway's merged `/metrics` keeps one
    /// series per process).
    public static func recordMemory(service: String) {
        guard let memory = ProcessMemory.of(pid: getpid()) else { return }
        let labels = [("service", service)]
        prometheus.makeGauge(name: "process_resident_memory_bytes", labels: labels).set(to: Double(memory.resident))
        prometheus.makeGauge(name: "process_peak_resident_memory_bytes", labels: labels).set(to: Double(memory.peakResident))
        if let proportional = memory.proportional {
            prometheus.makeGauge(name: "process_proportional_memory_bytes", labels: labels).set(to: Double(proportional))
        }
    }

    /// Counts one answered request. `outcome` is `ok` or the error's code; `op` is the
    /// operation when the service has it (an unknown or unparsable one counts as
    /// `(unknown)`, so clients cannot make up label values).
    public func record(micros: Int64, outcome: String, op: String? = nil, at date: Date = Date()) {
        let minute = Int64(date.timeIntervalSince1970 / 60)
        let label = op.flatMap { outcome == "unknown_op" || outcome == "bad_request" ? nil : $0 } ?? "(unknown)"
        let (counter, timer) = state.withLock { state in
            state.total.add(micros: micros, outcome: outcome)
            let slot = Int(minute % 60)
            if state.ring[slot].minute != minute { state.ring[slot] = Minute(minute: minute) }
            state.ring[slot].counts.add(micros: micros, outcome: outcome)
            state.operations[label, default: Counts()].add(micros: micros, outcome: outcome)
            let key = label + " " + outcome
            let counter =
                state.counters[key]
                ?? CoreMetrics.Counter(label: "backend_requests_total", dimensions: [("service", service), ("op", label), ("outcome", outcome)])
            state.counters[key] = counter
            let timer =
                state.timers[label]
                ?? CoreMetrics.Timer(label: "backend_request_duration_seconds", dimensions: [("service", service), ("op", label)])
            state.timers[label] = timer
            return (counter, timer)
        }
        counter.increment()
        timer.recordMicroseconds(micros)
    }

    /// Since the start, the last hour in all, and each of the last 60 minutes (oldest first,
    /// minutes without requests included as zeros).
    public func snapshot(now: Date = Date()) -> (total: Counts, lastHour: Counts, minutes: [(start: Date, counts: Counts)]) {
        let current = Int64(now.timeIntervalSince1970 / 60)
        return state.withLock { state in
            var lastHour = Counts()
            var minutes: [(Date, Counts)] = []
            for minute in (current - 59)...current {
                let slot = state.ring[Int(((minute % 60) + 60) % 60)]
                let counts = slot.minute == minute ? slot.counts : Counts()
                lastHour.add(counts)
                minutes.append((Date(timeIntervalSince1970: TimeInterval(minute * 60)), counts))
            }
            return (state.total, lastHour, minutes)
        }
    }

    /// Per operation since the start (an unknown operation as `(unknown)`).
    public func operations() -> [String: Counts] {
        state.withLock { $0.operations }
    }

    /// One instance per service name in this process.
    public static func of(service: String) -> RequestMetrics {
        registry.withLock { registry in
            if let existing = registry[service] { return existing }
            let created = RequestMetrics(service: service)
            registry[service] = created
            return created
        }
    }

    private static let registry = Mutex<[String: RequestMetrics]>([:])
}

/// The latency buckets of ``RequestMetrics``: 50 µs to 10 s, about four per power of ten.
public enum LatencyBuckets {
    /// Upper bounds in microseconds; one more bucket past the last holds everything slower.
    public static let upperBoundsMicros: [Int64] = [
        50, 100, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 15_000, 20_000, 30_000, 50_000,
        75_000, 100_000, 150_000, 200_000, 300_000, 500_000, 750_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000,
    ]

    static func index(ofMicros micros: Int64) -> Int {
        var low = 0
        var high = upperBoundsMicros.count
        while low < high {
            let middle = (low + high) / 2
            if upperBoundsMicros[middle] < micros { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The upper bound (ms) of the bucket holding the request of rank ⌈fraction × count⌉;
    /// past the last bound, the last bound doubled stands for "slower than 10 s".
    public static func percentileMs(_ fraction: Double, of buckets: [Int64]) -> Double? {
        let count = buckets.reduce(0, +)
        guard count > 0 else { return nil }
        let rank = max(1, Int64((fraction * Double(count)).rounded(.up)))
        var seen: Int64 = 0
        for (index, value) in buckets.enumerated() {
            seen += value
            if seen >= rank {
                let bound = index < upperBoundsMicros.count ? upperBoundsMicros[index] : upperBoundsMicros[upperBoundsMicros.count - 1] * 2
                return Double(bound) / 1_000
            }
        }
        return nil
    }
}

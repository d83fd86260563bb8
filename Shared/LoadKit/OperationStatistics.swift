import Foundation
import Histogram

/// Latency and outcomes of one operation in a load run (microseconds, HDR histogram with
/// three significant digits, up to 60 s).
public struct OperationStatistics: Sendable {
    public var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    public var ok = 0
    /// Error code → count, refusals and failures.
    public var errors: [String: Int] = [:]

    public init() {}

    public var count: Int { Int(histogram.totalCount) }
    public var refused: Int { errors.filter { LoadReply.refusalCodes.contains($0.key) }.values.reduce(0, +) }
    public var failed: Int { errors.filter { !LoadReply.refusalCodes.contains($0.key) }.values.reduce(0, +) }

    public mutating func record(micros: UInt64, reply: LoadReply) {
        _ = histogram.record(min(micros, 60_000_000))
        if reply.ok { ok += 1 } else { errors[reply.code ?? "unknown", default: 0] += 1 }
    }

    public mutating func add(_ other: OperationStatistics) {
        histogram.add(other.histogram)
        ok += other.ok
        errors.merge(other.errors, uniquingKeysWith: +)
    }

    /// Percentile in milliseconds (`nil` with nothing recorded).
    public func percentileMs(_ percentile: Double) -> Double? {
        count == 0 ? nil : Double(histogram.valueAtPercentile(percentile)) / 1000
    }

    /// The summary a report holds, over `seconds` of measurement.
    public func summary(op: String, seconds: Double) -> OperationSummary {
        OperationSummary(
            op: op, count: count, ok: ok, refused: refused, failed: failed, errors: errors, ratePerSecond: seconds > 0 ? Double(count) / seconds : 0,
            okPerSecond: seconds > 0 ? Double(ok) / seconds : 0,
            p50Ms: percentileMs(50), p90Ms: percentileMs(90), p99Ms: percentileMs(99), p999Ms: percentileMs(99.9),
            maxMs: count == 0 ? nil : Double(histogram.max) / 1000)
    }
}

/// One operation's figures in a report.
public struct OperationSummary: Codable, Sendable {
    public var op: String
    public var count: Int
    public var ok: Int
    public var refused: Int
    public var failed: Int
    public var errors: [String: Int]
    /// Every reply per second, refusals and failures included.
    public var ratePerSecond: Double
    /// Successful replies per second (what a refusal-heavy run really served).
    public var okPerSecond: Double
    public var p50Ms: Double?
    public var p90Ms: Double?
    public var p99Ms: Double?
    public var p999Ms: Double?
    public var maxMs: Double?

    /// A table row: op, count, rate, p50, p90, p99, p99.9, max, refused and failed.
    public var row: String {
        func ms(_ value: Double?) -> String { value.map { String(format: "%8.2f", $0) } ?? "       -" }
        let problems = errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return op.padding(toLength: 28, withPad: " ", startingAt: 0)
            + String(format: "%9d %9.0f %9.0f ", count, ratePerSecond, okPerSecond) + "\(ms(p50Ms)) \(ms(p90Ms)) \(ms(p99Ms)) \(ms(p999Ms)) \(ms(maxMs))"
            + (problems.isEmpty ? "" : "  \(problems)")
    }

    public static let header = "op".padding(toLength: 28, withPad: " ", startingAt: 0) + "    count     req/s      ok/s   p50 ms   p90 ms   p99 ms p99.9 ms   max ms"
}

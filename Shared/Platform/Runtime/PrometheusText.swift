import Foundation

/// The Prometheus text exposition format (version 0.0.4) as the gateway's `/metrics` and
/// `ctl top` need it: merging the texts of several processes into one valid exposition,
/// and reading samples back.
public enum PrometheusText {
    /// One sample line: `name{label="value",...} value`.
    public struct Sample: Sendable, Equatable {
        public var name: String
        public var labels: [String: String]
        public var value: Double

        public init(name: String, labels: [String: String], value: Double) {
            self.name = name
            self.labels = labels
            self.value = value
        }
    }

    /// One exposition from several: each metric family once, with its first `# HELP` and
    /// `# TYPE` and the samples of every text together (a family may not be split), and a
    /// series that two texts both have kept once (the first).
    public static func merge(_ texts: [String]) -> String {
        var order: [String] = []
        var headers: [String: [String]] = [:]
        var samples: [String: [String]] = [:]
        var seen: Set<String> = []
        for text in texts {
            var family = ""
            for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
                let line = String(rawLine)
                if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                    let name = line.dropFirst(7).split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
                    family = name
                    if headers[name] == nil {
                        order.append(name)
                        headers[name] = []
                    }
                    if !(headers[name]!.contains { $0.hasPrefix(String(line.prefix(7))) }) { headers[name]!.append(line) }
                    continue
                }
                if line.hasPrefix("#") { continue }
                let series = line.split(separator: " ", maxSplits: 1).first.map(String.init) ?? line
                guard seen.insert(series).inserted else { continue }
                if headers[family] == nil {
                    family = metricName(of: line)
                    if headers[family] == nil {
                        order.append(family)
                        headers[family] = []
                    }
                }
                samples[family, default: []].append(line)
            }
        }
        return order.map { name in ((headers[name] ?? []) + (samples[name] ?? [])).joined(separator: "\n") }
            .joined(separator: "\n") + (order.isEmpty ? "" : "\n")
    }

    /// The samples of an exposition (comments skipped; a line that is no sample too).
    public static func samples(_ text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            return sample(String(line))
        }
    }

    static func metricName(of line: String) -> String {
        String(line.prefix { $0 != "{" && $0 != " " })
    }

    static func sample(_ line: String) -> Sample? {
        let name = metricName(of: line)
        guard !name.isEmpty else { return nil }
        var rest = line.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while let equals = rest.firstIndex(of: "=") {
                let key = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: ", "))
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                var value = ""
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character == "n" ? "\n" : character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
                labels[key] = value
                if rest.first == "," { rest = rest.dropFirst() }
                if rest.first == "}" { break }
            }
            guard rest.first == "}" else { return nil }
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: " ")
        guard let first = fields.first, let value = Double(first == "+Inf" ? "inf" : String(first)) else { return nil }
        return Sample(name: name, labels: labels, value: value)
    }
}

/// Per-operation figures of a service from two readings of its Prometheus text: what
/// `ctl top` shows (requests and errors per second over the interval, the p99 of the
/// interval's requests, and totals since start).
extension PrometheusText {
    /// A histogram's cumulative bucket counts (`le` bound in seconds → count), perhaps the
    /// difference of two readings.
    public struct Buckets: Sendable, Equatable {
        public var cumulative: [(bound: Double, count: Double)]

        public init(cumulative: [(bound: Double, count: Double)]) {
            self.cumulative = cumulative.sorted { $0.bound < $1.bound }
        }

        /// Observations counted.
        public var count: Double { cumulative.last?.count ?? 0 }

        /// The upper bound of the bucket the `fraction` quantile falls in (`nil` when empty).
        public func quantile(_ fraction: Double) -> Double? {
            let count = self.count
            guard count > 0 else { return nil }
            return cumulative.first { $0.count >= (fraction * count).rounded(.up) }?.bound
        }

        public static func == (left: Buckets, right: Buckets) -> Bool {
            left.cumulative.map(\.bound) == right.cumulative.map(\.bound) && left.cumulative.map(\.count) == right.cumulative.map(\.count)
        }
    }

    /// The buckets of histogram `name` (samples `<name>_bucket`) summed over the series
    /// whose labels `matching` accepts, as counted between `earlier` and `later`.
    public static func buckets(
        _ name: String, between earlier: [Sample]?, and later: [Sample], matching: ([String: String]) -> Bool = { _ in true }
    ) -> Buckets {
        func tally(_ samples: [Sample]) -> [Double: Double] {
            var counts: [Double: Double] = [:]
            for sample in samples where sample.name == name + "_bucket" && matching(sample.labels) {
                let bound = sample.labels["le"].flatMap { $0 == "+Inf" ? Double.infinity : Double($0) } ?? .infinity
                counts[bound, default: 0] += sample.value
            }
            return counts
        }
        let now = tally(later), before = earlier.map(tally) ?? [:]
        return Buckets(cumulative: now.map { bound, count in (bound, count - (before[bound] ?? 0)) })
    }
}

public struct OperationRates: Sendable, Equatable {
    public var service: String
    public var op: String
    public var requestsPerSecond: Double
    public var errorsPerSecond: Double
    /// The upper bound of the histogram bucket the interval's 99th percentile falls in,
    /// in ms; `nil` without requests in the interval.
    public var p99Ms: Double?
    public var totalRequests: Double

    /// The rates between `earlier` and `later` (samples of one or more services) over
    /// `seconds`; with no earlier reading, the totals and the p99 since start.
    public static func between(_ earlier: [PrometheusText.Sample]?, _ later: [PrometheusText.Sample], seconds: Double) -> [OperationRates] {
        struct Key: Hashable {
            var service: String
            var op: String
        }
        func tally(_ samples: [PrometheusText.Sample]) -> (requests: [Key: Double], errors: [Key: Double], buckets: [Key: [Double: Double]]) {
            var requests: [Key: Double] = [:], errors: [Key: Double] = [:], buckets: [Key: [Double: Double]] = [:]
            for sample in samples {
                let key = Key(service: sample.labels["service"] ?? "", op: sample.labels["op"] ?? "")
                switch sample.name {
                case "backend_requests_total":
                    requests[key, default: 0] += sample.value
                    if sample.labels["outcome"] != "ok" { errors[key, default: 0] += sample.value }
                case "backend_request_duration_seconds_bucket":
                    let bound = sample.labels["le"].flatMap { $0 == "+Inf" ? Double.infinity : Double($0) } ?? .infinity
                    buckets[key, default: [:]][bound] = sample.value
                default: break
                }
            }
            return (requests, errors, buckets)
        }
        let now = tally(later)
        let before = earlier.map(tally)
        let interval = max(seconds, 0.001)
        return now.requests.keys.map { key in
            let requests = now.requests[key] ?? 0, errors = now.errors[key] ?? 0
            let previousRequests = before?.requests[key] ?? 0, previousErrors = before?.errors[key] ?? 0
            let cumulative: [(bound: Double, count: Double)] = (now.buckets[key] ?? [:]).map { bound, count in
                (bound, count - (before?.buckets[key]?[bound] ?? 0))
            }
            let p99 = PrometheusText.Buckets(cumulative: cumulative).quantile(0.99).map { $0 * 1_000 }
            return OperationRates(
                service: key.service, op: key.op,
                requestsPerSecond: before == nil ? 0 : (requests - previousRequests) / interval,
                errorsPerSecond: before == nil ? 0 : (errors - previousErrors) / interval,
                p99Ms: p99.map { $0.isFinite ? $0 : Double(LatencyBuckets.upperBoundsMicros.last! * 2) / 1_000 }, totalRequests: requests)
        }.sorted { ($0.requestsPerSecond, $0.totalRequests, $1.op) > ($1.requestsPerSecond, $1.totalRequests, $0.op) }
    }
}

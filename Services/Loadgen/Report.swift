import Foundation
import LoadKit
import Platform

/// The limits a run is compared with, measured in the same run.
struct LimitFigures: Codable, Sendable {
    /// A raw libzmq echo through a ROUTER/DEALER proxy (the gateway's topology, no JSON, no SQLite).
    var echoRatePerSecond: Double
    var echoInFlight: Int
    var echoP50Ms: Double?
    var echoP99Ms: Double?
    /// SQLite committing one small row per transaction, WAL, `synchronous=FULL`, on the data folder's disk.
    var sqliteCommitsPerSecond: Double
}

/// A figure next to its target.
struct Comparison: Codable, Sendable {
    var measure: String
    var figure: String
    var target: String
    var met: Bool
}

/// What a load run reports (JSON with `--report`, a table on standard output).
struct LoadReport: Codable, Sendable {
    var machine: String
    var date = Instant.format(Date())
    var target: String
    var mix: String
    var users: Int
    var loop: String
    var warmupSeconds: Double
    var measuredSeconds: Double = 0
    var notSent = 0
    var operations: [OperationSummary] = []
    var total: OperationSummary?
    var limits: LimitFigures?
    var comparisons: [Comparison] = []
    /// Named extra figures (phases of `loadgen targets`, memory, event lag).
    var phases: [String: [OperationSummary]] = [:]
    var notes: [String] = []

    mutating func add(_ outcome: LoadOutcome) {
        measuredSeconds = outcome.measuredSeconds
        notSent = outcome.notSent
        operations = outcome.summaries()
        total = outcome.total.summary(op: "(all)", seconds: outcome.measuredSeconds)
        if let limits, let total {
            comparisons.append(
                Comparison(
                    measure: "all operations vs the raw echo at \(limits.echoInFlight) in flight",
                    figure: String(format: "%.0f req/s = %.0f%% of %.0f", total.ratePerSecond, 100 * total.ratePerSecond / max(limits.echoRatePerSecond, 1), limits.echoRatePerSecond),
                    target: "reported", met: true))
        }
    }

    var table: String {
        var lines = ["\(mix) on \(target), \(users) users, \(loop), \(String(format: "%.1f", measuredSeconds)) s measured after \(warmupSeconds) s of warm-up"]
        lines.append(OperationSummary.header)
        lines += operations.map(\.row)
        if let total { lines.append(total.row) }
        if notSent > 0 { lines.append("\(notSent) requests were due but not sent before the end (the system fell behind the rate)") }
        if let limits {
            lines.append(
                String(
                    format: "limits, same run: raw libzmq echo via a proxy at %d in flight %.0f req/s (p50 %.2f ms, p99 %.2f ms); SQLite one commit per write, WAL, synchronous=FULL: %.0f commits/s",
                    limits.echoInFlight, limits.echoRatePerSecond, limits.echoP50Ms ?? 0, limits.echoP99Ms ?? 0, limits.sqliteCommitsPerSecond))
        }
        for comparison in comparisons {
            lines.append("\(comparison.measure): \(comparison.figure) (target \(comparison.target)) \(comparison.target == "reported" ? "" : comparison.met ? "MET" : "NOT MET")")
        }
        lines += notes
        return lines.joined(separator: "\n")
    }

    func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: url)
    }
}

/// Measures the limits: the raw echo (two child processes of this executable) and SQLite's
/// durable commit rate on the data folder's disk.
enum Limits {
    static func measure(inFlight: Int, seconds: Double, directory: URL, say: (String) -> Void) async throws -> LimitFigures {
        let echo = try await echoRate(inFlight: inFlight, seconds: seconds)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let commits = try await SocketThread.value(name: "sqlite-limit") { try SQLiteReference.measure(directory: directory, seconds: seconds) }
        return LimitFigures(
            echoRatePerSecond: echo.total.summary(op: "echo", seconds: echo.measuredSeconds).ratePerSecond, echoInFlight: inFlight,
            echoP50Ms: echo.total.percentileMs(50), echoP99Ms: echo.total.percentileMs(99), sqliteCommitsPerSecond: commits)
    }

    /// Closed loop through `loadgen raw-proxy` to `loadgen raw-service`, with a message the
    /// size of a small request.
    static func echoRate(inFlight: Int, seconds: Double) async throws -> LoadOutcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loadgen-echo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var children: [SpawnedProcess] = []
        defer {
            for child in children { child.send(SIGKILL) }
        }
        func start(_ arguments: [String], file: String) async throws -> String {
            let path = folder.appendingPathComponent(file).path
            children.append(
                try SpawnedProcess(
                    executable: ProcessSetup.executablePath, arguments: arguments + ["--endpoint-file", path],
                    environment: SpawnedProcess.environment(adding: ["BACKEND_STOP_WITH_PARENT": "1"]), output: nil))
            for _ in 0..<100 {
                if let endpoint = try? String(contentsOfFile: path, encoding: .utf8), !endpoint.isEmpty { return endpoint }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw LoadError("the raw echo did not start")
        }
        let service = try await start(["raw-service"], file: "service")
        let proxy = try await start(["raw-proxy", "--back", service], file: "proxy")
        let body = Data(#"{"date":"2026-12-01","padding":"raw echo of a request the size of booking.slots with its token"}"#.utf8)
        let request = LoadRequest(op: "echo", token: String(repeating: "t", count: 200), data: body)
        return try await LoadEngine.run(
            shape: LoadShape(loop: .closed(inFlight: inFlight), users: 1, seconds: seconds, count: nil, warmupSeconds: 1),
            workload: RepeatedWorkload(request),
            makeTransport: { try ZeroMQLoadTransport(link: Link(proxy), echo: true) })
    }
}

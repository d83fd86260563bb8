import ArgumentParser
import Foundation
import Platform
import SharedTesting

/// The HTTP edge against the gateway it fronts (HTTP edge issue, "Measured"): `auth.health`
/// at 1 in flight (p50) and at 64 connections (throughput), the gateway driven by the
/// platform's ZeroMQ load generator and the edge by wrk (Debian's `wrk`) with keep-alive.
struct EdgeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "edge")

    @Option(help: "Seconds measured per scenario.")
    var seconds: Double = 5
    @Option(help: "Seconds of warm-up per scenario (not measured).")
    var warmup: Double = 1
    @Option(help: "Log level of the measured processes.")
    var serviceLogLevel: String = "info"

    func run() async throws {
        guard let wrk = ["/usr/bin/wrk", "/usr/local/bin/wrk"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw ValidationError("wrk is missing: apt-get install wrk")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-edge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = try BenchStack.configuration(in: directory, logLevel: serviceLogLevel)
        configuration.gatewayEdgeEndpoint = TestEnvironment.freeEndpoint()
        configuration.edgeSecret = EdgeTrust.generateSecret()
        configuration.edgeBind = "127.0.0.1:\(TestEnvironment.freePort())"
        let environment = configuration.environment.merging(["BACKEND_EDGE_RATE_PER_SECOND": "0"]) { $1 }
        let processes = try BenchStack.start(["auth", "gateway", "edge"], environment: environment, in: directory)
        defer { for process in processes { process.kill(signal: SIGKILL) } }
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "bench")
        try await BenchStack.waitUntilHealthy(["auth"], client: client)
        await client.close()
        let url = "http://\(configuration.edgeBind)/v1/auth.health"
        for _ in 0..<100 where (try? await HTTPTestClient.send("POST", url, timeout: .seconds(1)))?.status != 200 {
            try await Task.sleep(for: .milliseconds(100))
        }
        let script = directory.appendingPathComponent("post.lua")
        try Data("wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n".utf8).write(to: script)

        print("Edge benchmark: auth.health, \(seconds) s per scenario after \(warmup) s warm-up, processes logging at \(serviceLogLevel)")
        print("scenario                               in flight     req/s    p50 µs    p99 µs")
        let body = Data(#"{"id":"b","op":"auth.health"}"#.utf8)
        var gateway: [Int: LoadResult] = [:], edge: [Int: LoadResult] = [:]
        for inFlight in [1, 64] {
            let direct = try await LoadGenerator.run(
                endpoint: configuration.gatewayEndpoint, body: body, expected: Data(#""ok":true"#.utf8), inFlight: inFlight, warmup: warmup, seconds: seconds)
            gateway[inFlight] = direct
            print("gateway (ZeroMQ DEALER)".padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: "%6d  %9.0f  %8.1f  %8.1f", inFlight, direct.rate, direct.p50, direct.p99))
            _ = try await Self.wrk(wrk, url: url, script: script, connections: inFlight, seconds: warmup, in: directory)
            let http = try await Self.wrk(wrk, url: url, script: script, connections: inFlight, seconds: seconds, in: directory)
            edge[inFlight] = http
            print("edge (HTTP/1.1 keep-alive, wrk)".padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: "%6d  %9.0f  %8.1f  %8.1f", inFlight, http.rate, http.p50, http.p99))
            if http.errors > 0 { print("  \(http.errors) non-2xx answers or socket errors") }
        }
        if let g1 = gateway[1], let e1 = edge[1], let g64 = gateway[64], let e64 = edge[64] {
            let added = (e1.p50 - g1.p50) / 1_000
            print(String(format: "edge adds %.3f ms to p50 at 1 in flight (target at most 0.5 ms) %@", added, added <= 0.5 ? "PASS" : "FAIL"))
            let ratio = e64.rate / g64.rate
            print(String(format: "edge/gateway throughput at 64: %.0f%% (target at least 50%%) %@", ratio * 100, ratio >= 0.5 ? "PASS" : "FAIL"))
        }
    }

    /// Runs wrk (2 threads, or 1 for one connection) and reads its rate and latency percentiles.
    static func wrk(_ path: String, url: String, script: URL, connections: Int, seconds: Double, in directory: URL) async throws -> LoadResult {
        let threads = min(2, connections)
        let process = try ChildProcess(
            executable: URL(fileURLWithPath: path),
            arguments: ["-t\(threads)", "-c\(connections)", "-d\(max(1, Int(seconds.rounded())))s", "--latency", "-s", script.path, url],
            environment: [:], logFile: directory.appendingPathComponent("wrk-\(UUID().uuidString.prefix(6)).log"))
        guard await process.waitForExit(timeout: .seconds(Int64(seconds) + 30)) == 0 else { throw ValidationError("wrk failed:\n\(process.output)") }
        return try parseWrk(process.output)
    }

    /// Requests/sec, the 50% and 99% latency lines (µs) and the error counts of wrk's report.
    static func parseWrk(_ output: String) throws -> LoadResult {
        func microseconds(_ text: Substring) -> Double? {
            let units: [(String, Double)] = [("us", 1), ("ms", 1_000), ("s", 1_000_000)]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                return Double(text.dropLast(suffix.count)).map { $0 * factor }
            }
            return nil
        }
        var result = LoadResult(rate: 0, p50: 0, p99: 0, errors: 0)
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if line.hasPrefix("Requests/sec:"), let rate = fields.last.flatMap({ Double($0) }) { result.rate = rate }
            if fields.first == "50%", let value = fields.last.flatMap(microseconds) { result.p50 = value }
            if fields.first == "99%", let value = fields.last.flatMap(microseconds) { result.p99 = value }
            if line.contains("Non-2xx or 3xx responses:"), let count = fields.last.flatMap({ Int($0) }) { result.errors += count }
            if line.contains("Socket errors:") { result.errors += line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }.reduce(0, +) }
        }
        guard result.rate > 0 else { throw ValidationError("cannot read wrk's report:\n\(output)") }
        return result
    }
}

import ArgumentParser
import Foundation
import Histogram
import LoadKit
import Platform
import SharedTesting
import ZeroMQ

/// Benchmarks (commands, not tests). Each starts the processes it measures on loopback
/// with a temporary data folder, runs for a bounded time, and stops them.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the platform against a raw libzmq reference.",
        subcommands: [
            PlatformBench.self, TokenBench.self, SignInBench.self, BookingBench.self, MediaBench.self, JSONBench.self, PipeliningBench.self,
            TimerBench.self, DeliveryBench.self, FaultBench.self, ValuesBench.self, ChangesBench.self, GoalsBench.self, SavingsBench.self, RemindersBench.self, StatsBench.self, EdgeBench.self, PushBench.self, RawService.self, RawProxy.self,
        ],
        defaultSubcommand: PlatformBench.self)
}

/// (a) raw libzmq echo through a proxy vs (b) `auth.health` through the gateway, at 1
/// and 64 requests in flight (Platform issue, "Performance").
struct PlatformBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "platform")

    @Option(help: "Seconds measured per scenario.")
    var seconds: Double = 5
    @Option(help: "Seconds of warm-up per scenario (not measured).")
    var warmup: Double = 1
    @Option(help: "Log level of the measured services (their default is info: one line per request).")
    var serviceLogLevel: String = "info"

    func run() async throws {
        let binaries = URL(fileURLWithPath: ProcessSetup.executablePath).deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var processes: [SpawnedProcess] = []
        defer {
            for process in processes { process.send(SIGTERM) }
            for process in processes { while process.isRunning { usleep(10_000) } }
        }
        func launch(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
            let log = directory.appendingPathComponent("\(name)-\(processes.count).log")
            let process = try SpawnedProcess(
                executable: binaries.appendingPathComponent(name).path, arguments: arguments,
                environment: SpawnedProcess.environment(adding: environment), output: log.path)
            processes.append(process)
        }

        // (a) raw reference: client -> proxy (ROUTER/DEALER) -> echo (ROUTER), no JSON.
        let rawFront = TestEnvironment.freeEndpoint(), rawBack = TestEnvironment.freeEndpoint()
        try launch("bench", ["raw-service", "--endpoint", rawBack])
        try launch("bench", ["raw-proxy", "--front", rawFront, "--back", rawBack])

        // (b) the real path: gateway -> auth, auth.health.
        var configuration = PlatformConfiguration()
        configuration.gatewayEndpoint = TestEnvironment.freeEndpoint()
        configuration.busInEndpoint = TestEnvironment.freeEndpoint()
        configuration.busOutEndpoint = TestEnvironment.freeEndpoint()
        for name in PlatformConfiguration.serviceNames { configuration.serviceEndpoints[name] = TestEnvironment.freeEndpoint() }
        configuration.dataDirectory = directory.appendingPathComponent("data").path
        configuration.logLevel = try PlatformConfiguration.fromEnvironment(["BACKEND_LOG_LEVEL": serviceLogLevel]).logLevel
        configuration.stopWithParent = true
        try configuration.makeCurveKeys(in: directory)
        try launch("auth", [], environment: configuration.environment)
        try launch("gateway", [], environment: configuration.environment)
        let measured = [("gateway", processes[processes.count - 1].pid), ("auth", processes[processes.count - 2].pid)]
        try await Task.sleep(for: .seconds(1))

        let rawBody = Data(#"{"id":"raw","op":"echo"}"#.utf8)
        let healthBody = Data(#"{"id":"b","op":"auth.health"}"#.utf8)
        print("Platform benchmark: \(seconds) s per scenario after \(warmup) s warm-up, services logging at \(serviceLogLevel)")
        print("scenario                               in flight     req/s    p50 µs    p99 µs")
        var results: [String: LoadResult] = [:]
        for inFlight in [1, 64] {
            for (name, endpoint, body, expected) in [
                ("(a) raw libzmq echo via proxy", rawFront, rawBody, nil),
                ("(b) auth.health via gateway", configuration.gatewayEndpoint, healthBody, Data(#""ok":true"#.utf8)),
            ] {
                let cpuBefore = measured.map { ProcessFigures.cpuSeconds(pid: $0.1) }
                let result = try await LoadGenerator.run(
                    endpoint: endpoint, body: body, expected: expected, inFlight: inFlight, warmup: warmup, seconds: seconds)
                if result.errors > 0 { print("  \(result.errors) replies were errors") }
                results["\(name.prefix(3))\(inFlight)"] = result
                print(
                    name.padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: "%6d  %9.0f  %8.1f  %8.1f", inFlight, result.rate, result.p50, result.p99))
                if expected != nil {
                    // CPU over warm-up and measurement, per request at the measured rate: a
                    // figure the machine's noise moves far less than the rate itself.
                    let requests = result.rate * (warmup + seconds)
                    let perRequest = zip(measured, cpuBefore).map { process, before in
                        String(format: "%@ %.1f µs", process.0, (ProcessFigures.cpuSeconds(pid: process.1) - before) / requests * 1e6)
                    }
                    print("  CPU per request: " + perRequest.joined(separator: ", "))
                }
            }
        }
        if let a64 = results["(a)64"], let b64 = results["(b)64"], let a1 = results["(a)1"], let b1 = results["(b)1"] {
            let throughputRatio = b64.rate / a64.rate
            let latencyRatio = b1.p50 / a1.p50
            print(String(format: "(b)/(a) throughput at 64 in flight: %.0f%% (target at least 40%%) %@", throughputRatio * 100, throughputRatio >= 0.4 ? "PASS" : "FAIL"))
            print(String(format: "(b)/(a) p50 at 1 in flight: %.2fx (target at most 1.5x) %@", latencyRatio, latencyRatio <= 1.5 ? "PASS" : "FAIL"))
        }
    }
}

/// What one load run measured.
struct LoadResult: Sendable {
    var rate: Double
    var p50: Double
    var p99: Double
    var errors: Int
    var completed = 0
    /// Error code → count, for the errors above.
    var codes: [String: Int] = [:]

    /// The errors by code, as `code: count, ...` (empty without errors).
    var codeSummary: String {
        codes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }
}

/// Keeps `inFlight` requests outstanding through the load driver (`LoadKit`'s
/// ``LoadEngine`` on one DEALER, its own thread) and reads the total from its HDR
/// histogram. The requests are whole envelopes prepared in advance: the driver shares the
/// machine's two cores with what it measures.
enum LoadGenerator {
    static func run(endpoint: String, body: Data, expected: Data?, inFlight: Int, warmup: Double, seconds: Double) async throws -> LoadResult {
        try await run(endpoint: endpoint, bodies: { _ in body }, expected: expected, inFlight: inFlight, warmup: warmup, seconds: seconds)
    }

    /// Sends `bodies(n)` as the n-th request (0, 1, ...) until it returns `nil` or the time
    /// is up. `expected` `nil`: the peer echoes (any reply counts); otherwise a reply counts
    /// as an error unless it is a success.
    static func run(
        endpoint: String, bodies: @escaping @Sendable (Int) -> Data?, expected: Data?, inFlight: Int, warmup: Double, seconds: Double
    ) async throws -> LoadResult {
        let outcome = try await LoadEngine.run(
            shape: LoadShape(loop: .closed(inFlight: inFlight), users: inFlight, seconds: seconds, count: nil, warmupSeconds: warmup),
            workload: EnvelopeWorkload(bodies),
            makeTransport: { try ZeroMQLoadTransport(link: Link(endpoint), echo: expected == nil) })
        let total = outcome.total
        return LoadResult(
            rate: Double(total.count) / outcome.measuredSeconds, p50: (total.percentileMs(50) ?? 0) * 1000,
            p99: (total.percentileMs(99) ?? 0) * 1000, errors: total.count - total.ok, completed: total.count, codes: total.errors)
    }
}

/// The raw reference service (``RawEcho/serve(endpoint:)``) in a process of its own.
struct RawService: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-service", shouldDisplay: false)
    @Option var endpoint: String

    func run() throws {
        ProcessSetup.watchParent()
        try RawEcho.serve(endpoint: endpoint)
    }
}

/// The raw reference proxy (``RawEcho/proxy(front:back:)``) in a process of its own.
struct RawProxy: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-proxy", shouldDisplay: false)
    @Option var front: String
    @Option var back: String

    func run() throws {
        ProcessSetup.watchParent()
        try RawEcho.proxy(front: front, back: back)
    }
}

/// Prints a line of figures at once, even when the output is a file.
func report(_ line: String) {
    print(line)
    fflush(nil)
}

import ArgumentParser
import Foundation
import Logging
import Platform

/// The local stack runner: starts the gateway and the six services as child processes,
/// waits until all are healthy, restarts any that crashes, and stops them all on
/// Ctrl-C or SIGTERM.
@main
struct Stack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "Run the gateway and all six services locally, on SQLite files under the data folder.")

    @OptionGroup var platform: PlatformOptions
    @Option(help: "Folder of the children's log files (default: <data folder>/logs).")
    var logDir: String?
    @Flag(help: "Send the children's logs to this terminal instead of files.")
    var logsToTerminal = false
    @Option(help: "Seconds to wait for every process to become healthy.")
    var startTimeout: Double = 60

    func run() async throws {
        var configuration = try platform.resolve()
        let logger = ProcessSetup.start(label: "stack", configuration: configuration)
        // Each child binds its own endpoint and exits if the runner dies.
        configuration.bind = nil
        configuration.stopWithParent = true
        let binaries = URL(fileURLWithPath: ProcessSetup.executablePath).deletingLastPathComponent()
        let logs = logsToTerminal ? nil : URL(fileURLWithPath: logDir ?? configuration.dataDirectoryURL.appendingPathComponent("logs").path)
        if let logs { try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true) }
        try FileManager.default.createDirectory(at: configuration.dataDirectoryURL, withIntermediateDirectories: true)

        let names = ["gateway"] + PlatformConfiguration.serviceNames
        let supervisor = Supervisor(logger: logger)
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        for name in names {
            let executable = binaries.appendingPathComponent(name)
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                throw ValidationError("\(executable.path) is missing: build everything first with `swift build`")
            }
            await supervisor.add(
                Child(name: name, executable: executable, environment: configuration.environment.merging(Self.localDefaults()) { _, new in new },
                    log: logs?.appendingPathComponent("\(name).log")))
        }
        await supervisor.startAll()

        let healthy = await waitUntilHealthy(configuration, names: names, timeout: startTimeout, signals: signals)
        if healthy {
            let pids = await supervisor.pids()
            var text = "stack: all \(names.count) processes are healthy\n"
            text += "  gateway    \(configuration.gatewayEndpoint)   <- clients connect here (REQ or DEALER)\n"
            text += "  bus        in \(configuration.busInEndpoint), out \(configuration.busOutEndpoint)\n"
            for name in PlatformConfiguration.serviceNames {
                text += "  \(name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(configuration.serviceEndpoints[name] ?? "?")   pid \(pids[name] ?? 0)\n"
            }
            text += "  gateway pid \(pids["gateway"] ?? 0)\n"
            text += "  data       \(configuration.dataDirectoryURL.standardizedFileURL.path)\n"
            if let logs { text += "  logs       \(logs.standardizedFileURL.path)\n" }
            text += "Try `.build/debug/ctl health` (or `swift run ctl health`). Ctrl-C stops everything.\n"
            print(text, terminator: "")
            fflush(nil)
        } else if !signals.received {
            logger.error("not every process became healthy in time; still supervising, see the logs")
        }
        await signals.wait()
        print("stack: stopping")
        fflush(nil)
        await supervisor.stopAll(grace: .seconds(10))
        print("stack: stopped")
    }

    /// Polls `gateway.health` until the gateway and every service report ok. The gateway
    /// checks each service through the socket it forwards requests on, so once this says
    /// healthy, a request sent through the gateway reaches every service.
    func waitUntilHealthy(_ configuration: PlatformConfiguration, names: [String], timeout: Double, signals: SignalWatcher) async -> Bool {
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "stack")
        defer { Task { await client.close() } }
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline, !signals.received {
            if let reply = try? await client.call("gateway.health", idempotent: true, timeout: .seconds(2), attempts: 1),
                reply.data?["status"]?.stringValue == "ok"
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// What the local stack chooses unless its environment says otherwise: the `dev`
    /// payment provider (a booking service started with no payment configuration answers
    /// top-ups `unavailable`; production configures `http`).
    static func localDefaults(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        environment["BACKEND_BOOKING_PAYMENT_PROVIDER"] == nil && environment["BACKEND_BOOKING_PAYMENT_URL"] == nil
            ? ["BACKEND_BOOKING_PAYMENT_PROVIDER": "dev"] : [:]
    }
}

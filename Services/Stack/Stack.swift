import ArgumentParser
import Foundation
import Logging
import Platform

/// The local stack runner: starts the gateway, the six services, the HTTP edge and the admin
/// panel as child processes,
/// waits until all are healthy, restarts any that crashes, and stops them all on
/// Ctrl-C or SIGTERM.
@main
struct Stack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "Run the gateway, all six services, the HTTP edge and the admin panel locally, on SQLite files under the data folder.")

    @OptionGroup var platform: PlatformOptions
    @Option(help: "Folder of the children's log files (default: <data folder>/logs).")
    var logDir: String?
    @Flag(help: "Send the children's logs to this terminal instead of files.")
    var logsToTerminal = false
    @Option(help: "Seconds to wait for every process to become healthy.")
    var startTimeout: Double = 60
    @Option(help: "Each service backs up its database this often, in seconds (0: never; BACKEND_BACKUP_INTERVAL_S; README, \"Backups\").")
    var backupInterval: Int?
    @Option(help: "Folder of the periodic backups (default: <data folder>/backups; BACKEND_BACKUP_DIR).")
    var backupDir: String?
    @Option(help: "Periodic backups kept per service; older ones are deleted (BACKEND_BACKUP_KEEP).")
    var backupKeep: Int?

    func run() async throws {
        var configuration = try platform.resolve()
        let logger = ProcessSetup.start(label: "stack", configuration: configuration)
        // Periodic backups are the services' own (PeriodicBackup): the runner passes the settings on.
        if let backupInterval {
            guard backupInterval >= 0 else { throw ValidationError("--backup-interval takes seconds, 0 for never") }
            configuration.backupIntervalSeconds = backupInterval
        }
        if let backupDir { configuration.backupDirectory = URL(fileURLWithPath: backupDir).standardizedFileURL.path }
        if let backupKeep {
            guard backupKeep >= 1 else { throw ValidationError("--backup-keep takes 1 or more") }
            configuration.backupKeep = backupKeep
        }
        // Each child binds its own endpoint and exits if the runner dies.
        configuration.bind = nil
        configuration.stopWithParent = true
        let binaries = URL(fileURLWithPath: ProcessSetup.executablePath).deletingLastPathComponent()
        let logs = logsToTerminal ? nil : URL(fileURLWithPath: logDir ?? configuration.dataDirectoryURL.appendingPathComponent("logs").path)
        if let logs { try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true) }
        try FileManager.default.createDirectory(at: configuration.dataDirectoryURL, withIntermediateDirectories: true)

        // The gateway, the edge and the admin panel share a secret (README, "HTTP edge"); a
        // local stack makes one when none is set. Only those three processes get it.
        if configuration.edgeSecret == nil { configuration.edgeSecret = EdgeTrust.generateSecret() }
        // Encrypted links by default: CURVE keys made on first start, kept in <data>/keys.
        if configuration.curveOff {
            logger.warning("CURVE is OFF (--no-curve or BACKEND_CURVE=off): every internal link of this stack is plaintext")
        } else if configuration.curveKeysDirectory == nil {
            let folder = configuration.dataDirectoryURL.appendingPathComponent("keys")
            if try CurveKeyring.ensure(in: folder) { logger.info("made CURVE keys", metadata: ["folder": "\(folder.path)"]) }
            configuration.curveKeysDirectory = folder.path
        }
        let edgeAddress = try Self.edgeURL(configuration)
        let adminAddress = try Self.adminURL(configuration)

        let names = ["gateway"] + PlatformConfiguration.serviceNames + ["edge", "admin"]
        let supervisor = Supervisor(logger: logger)
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        for name in names {
            let executable = binaries.appendingPathComponent(name)
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                throw ValidationError("\(executable.path) is missing: build everything first with `swift build`")
            }
            var environment = configuration.environment.merging(Self.localDefaults()) { _, new in new }
            let needsSecret = name == "gateway" || name == "edge" || name == "admin"
            if !needsSecret { environment["BACKEND_EDGE_SECRET"] = nil }
            await supervisor.add(
                Child(name: name, executable: executable, environment: environment, log: logs?.appendingPathComponent("\(name).log"),
                    removing: needsSecret ? [] : ["BACKEND_EDGE_SECRET"]))
        }
        await supervisor.startAll()

        let healthy = await waitUntilHealthy(configuration, names: names, timeout: startTimeout, signals: signals)
        if healthy {
            let pids = await supervisor.pids()
            var text = "stack: all \(names.count) processes are healthy\n"
            text += "  gateway    \(configuration.gatewayEndpoint)   <- clients connect here (REQ or DEALER)\n"
            text += "  edge       \(edgeAddress)   <- apps connect here (HTTP/JSON; OpenAPI at \(edgeAddress)/v1/openapi.json)\n"
            text += "  admin      \(adminAddress)   <- the admin panel (a browser; sign in with an admin or staff account)\n"
            text += "  bus        in \(configuration.busInEndpoint), out \(configuration.busOutEndpoint)\n"
            for name in PlatformConfiguration.serviceNames {
                text += "  \(name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(configuration.serviceEndpoints[name] ?? "?")   pid \(pids[name] ?? 0)\n"
            }
            text += "  gateway pid \(pids["gateway"] ?? 0), edge pid \(pids["edge"] ?? 0), admin pid \(pids["admin"] ?? 0)\n"
            text += "  data       \(configuration.dataDirectoryURL.standardizedFileURL.path)\n"
            text += configuration.curveOff
                ? "  links      PLAINTEXT (CURVE off)\n" : "  links      CURVE, keys in \(configuration.curveKeysDirectory ?? "?")\n"
            if let logs { text += "  logs       \(logs.standardizedFileURL.path)\n" }
            if let metrics = configuration.metricsBind {
                text += "  metrics    http://\(metrics)/metrics   <- Prometheus; `ctl top` shows live rates\n"
            }
            if configuration.backupIntervalSeconds > 0 {
                text += "  backups    every \(configuration.backupIntervalSeconds) s into \(configuration.backupDirectoryURL.standardizedFileURL.path)\n"
            }
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
        guard let gateway = try? configuration.links(as: "operator").gateway else { return false }
        let client = ServiceClient(link: gateway, name: "stack")
        defer { Task { await client.close() } }
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline, !signals.received {
            if let reply = try? await client.call("gateway.health", idempotent: true, timeout: .seconds(2), attempts: 1),
                reply.data?["status"]?.stringValue == "ok", let bind = try? HostAndPort(configuration.edgeBind, name: "edge"),
                await Self.isListening(bind), let admin = try? HostAndPort(configuration.adminBind, name: "admin"),
                await Self.isListening(admin)
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// The edge's URL: https when the environment gives it a certificate.
    static func edgeURL(_ configuration: PlatformConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let bind = try HostAndPort(configuration.edgeBind, name: "BACKEND_EDGE_BIND")
        let scheme = (environment["BACKEND_EDGE_TLS_CERT"] ?? "").isEmpty ? "http" : "https"
        let host = bind.host.contains(":") ? "[\(bind.host)]" : bind.host
        return "\(scheme)://\(host):\(bind.port)"
    }

    /// The admin panel's URL.
    static func adminURL(_ configuration: PlatformConfiguration) throws -> String {
        let bind = try HostAndPort(configuration.adminBind, name: "BACKEND_ADMIN_BIND")
        let host = bind.host.contains(":") ? "[\(bind.host)]" : bind.host
        return "http://\(host):\(bind.port)"
    }

    /// Whether something accepts TCP connections at `address` (the edge, once it listens).
    static func isListening(_ address: HostAndPort) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(address.host, String(address.port), &hints, &list) == 0, let first = list else {
                    return continuation.resume(returning: false)
                }
                defer { freeaddrinfo(list) }
                let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
                guard descriptor >= 0 else { return continuation.resume(returning: false) }
                defer { close(descriptor) }
                continuation.resume(returning: connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0)
            }
        }
    }

    /// What the local stack chooses unless its environment says otherwise: the `dev`
    /// payment provider (a booking service started with no payment configuration answers
    /// top-ups `unavailable`; production configures `http`).
    static func localDefaults(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        environment["BACKEND_BOOKING_PAYMENT_PROVIDER"] == nil && environment["BACKEND_BOOKING_PAYMENT_URL"] == nil
            ? ["BACKEND_BOOKING_PAYMENT_PROVIDER": "dev"] : [:]
    }
}

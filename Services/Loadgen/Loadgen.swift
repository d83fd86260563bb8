import ArgumentParser
import Foundation
import LoadKit
import Platform

/// Message injection: virtual users that sign up once, then send a mix of the apps'
/// operations through the gateway, straight into one service, or over the HTTP edge.
@main
struct Loadgen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract: "Load a running stack with virtual users (loopback only) and report latency per operation.",
        discussion: "Run it against a test stack: it makes accounts, opens the park around the clock and writes data.",
        subcommands: [RunCommand.self, TargetsCommand.self, RawServiceCommand.self, RawProxyCommand.self],
        defaultSubcommand: RunCommand.self)
}

/// Options every load run shares.
struct LoadOptions: ParsableArguments {
    @OptionGroup var platform: PlatformOptions
    @Option(help: "Virtual users (device accounts), signed up once before the run.")
    var users = 64
    @Option(help: "Where requests go: gateway, edge (HTTP), or a service's name (straight into it, with the operator's CURVE key).")
    var target = "gateway"
    @Option(help: "The edge's host:port (default BACKEND_EDGE_BIND, 127.0.0.1:8080).")
    var edge: String?
    @Option(help: "Seconds of warm-up (not measured).")
    var warmup: Double = 2
    @Option(help: "Write the JSON report to this file.")
    var report: String?
    @Flag(help: "No progress line.")
    var quiet = false

    var configuration: PlatformConfiguration {
        get throws {
            var configuration = try platform.resolve()
            configuration.curveKeysDirectory = configuration.operatorKeyFolder?.path
            return configuration
        }
    }

    /// Refuses endpoints off this machine: load runs are for loopback only. Every endpoint
    /// loadgen may reach is checked (the gateway, each service, the bus, the edge).
    func checkLoopback(_ configuration: PlatformConfiguration) throws {
        var addresses = [configuration.gatewayEndpoint, configuration.busOutEndpoint] + Array(configuration.serviceEndpoints.values)
        if target == "edge" { addresses.append("tcp://" + edgeAddress(configuration)) }
        for address in addresses where !Self.isLoopback(address) {
            throw ValidationError("loadgen sends to loopback addresses only, not \(address)")
        }
    }

    /// Whether a ZeroMQ endpoint (`tcp://host:port`, `ipc://`, `inproc://`) stays on this
    /// machine. A `source;host` endpoint is judged by its host.
    static func isLoopback(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        var rest = Substring(endpoint.hasPrefix("tcp://") ? String(endpoint.dropFirst(6)) : endpoint)
        if let separator = rest.lastIndex(of: ";") { rest = rest[rest.index(after: separator)...] }
        let host: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return false }
            host = rest[rest.index(after: rest.startIndex)..<close]
        } else {
            host = rest.split(separator: ":", maxSplits: 1).first ?? ""
        }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    func validate() throws {
        guard users > 0, users <= 100_000 else { throw ValidationError("--users must be 1 to 100000") }
        guard warmup.isFinite, warmup >= 0, warmup <= 3_600 else { throw ValidationError("--warmup must be 0 to 3600 seconds") }
    }

    func edgeAddress(_ configuration: PlatformConfiguration) -> String { edge ?? configuration.edgeBind }

    /// Prints to standard error (standard output keeps the report).
    func say(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// `loadgen run`: one mix or one operation, closed or open loop, bounded by time or count.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a mix (realistic, reads, writes) or one operation (e.g. booking.slots) and report p50/p90/p99/p99.9 per operation.")

    @OptionGroup var options: LoadOptions
    @Option(help: "realistic, reads, writes, or one operation: \(MixOperation.allCases.map(\.rawValue).joined(separator: ", ")).")
    var mix = "realistic"
    @Option(help: "Closed loop: requests kept in flight.")
    var inFlight = 64
    @Option(help: "Open loop: requests per second, each timed from when it was due (instead of --in-flight).")
    var rate: Double?
    @Option(help: "Seconds measured (after the warm-up).")
    var seconds: Double?
    @Option(help: "Requests in all (warm-up included); with --seconds, whichever comes first.")
    var count: Int?
    @Flag(help: "Also measure the limits in the same run: a raw libzmq echo over the same topology and SQLite's durable one-commit rate.")
    var limits = false

    func validate() throws {
        guard MixOperation.mix(named: mix) != nil else { throw ValidationError("unknown mix or operation \(mix)") }
        guard inFlight > 0, inFlight <= 10_000 else { throw ValidationError("--in-flight must be 1 to 10000") }
        if let rate { guard rate.isFinite, rate > 0, rate <= 1_000_000 else { throw ValidationError("--rate must be more than 0, up to 1000000") } }
        if let seconds { guard seconds.isFinite, seconds > 0, seconds <= 86_400 else { throw ValidationError("--seconds must be more than 0, up to 86400") } }
        if let count { guard count > 0 else { throw ValidationError("--count must be more than 0") } }
    }

    func run() async throws {
        let configuration = try options.configuration
        try options.checkLoopback(configuration)
        let stack = try LoadStack(configuration: configuration)
        defer { Task { await stack.close() } }
        let weights = MixOperation.mix(named: mix)!
        let population = try await Population.make(
            count: options.users, services: Set(weights.map { $0.0.service }), gateway: stack.gateway, auth: stack.auth, say: options.say)
        let workload = try MixWorkload(population: population, weights: weights)
        let shape = shape(seconds: seconds ?? (count == nil ? 30 : nil))
        var report = LoadReport(
            machine: ProcessFigures.machine(), target: options.target, mix: mix, users: options.users, loop: loopDescription, warmupSeconds: options.warmup)
        if limits {
            options.say("measuring the limits (raw echo, SQLite commits)...")
            report.limits = try await Limits.measure(
                inFlight: rate == nil ? inFlight : 64, seconds: min(seconds ?? 5, 5), directory: configuration.dataDirectoryURL, say: options.say)
        }
        let refresher = stack.refresher(population)
        defer { refresher.cancel() }
        let outcome = try await stack.run(shape: shape, workload: workload, target: options.target, edge: options.edgeAddress(configuration), quiet: options.quiet)
        report.add(outcome)
        print(report.table)
        if let path = options.report { try report.write(to: URL(fileURLWithPath: path)) }
        await population.close(auth: stack.auth)
        await stack.close()
    }

    var loopDescription: String { rate.map { "open loop, \($0) req/s" } ?? "closed loop, \(inFlight) in flight" }

    func shape(seconds: Double?) -> LoadShape {
        LoadShape(
            loop: rate.map { .open(ratePerSecond: $0) } ?? .closed(inFlight: inFlight), users: options.users, seconds: seconds, count: count,
            warmupSeconds: options.warmup)
    }
}

/// Where a run's clients connect: the gateway, auth straight (sign-ups, token refresh,
/// with the operator's key), each service straight (metrics, direct injection).
final class LoadStack: Sendable {
    let configuration: PlatformConfiguration
    let links: Links
    let gateway: ServiceClient
    let auth: ServiceClient

    init(configuration: PlatformConfiguration) throws {
        self.configuration = configuration
        links = try configuration.links(as: "operator")
        gateway = ServiceClient(link: try links.gateway, name: "loadgen")
        auth = ServiceClient(link: try links.service("auth"), name: "loadgen-auth")
    }

    func close() async {
        await gateway.close()
        await auth.close()
    }

    /// Refreshes the users' tokens every 4 minutes (they last 5) while the run lasts.
    func refresher(_ population: Population) -> Task<Void, Never> {
        let auth = self.auth
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(240))
                if Task.isCancelled { break }
                _ = await population.refreshTokens(auth: auth)
            }
        }
    }

    /// Runs `workload` over the transport `target` names, with a progress line on standard error.
    func run(shape: LoadShape, workload: any LoadWorkload, target: String, edge: String, quiet: Bool) async throws -> LoadOutcome {
        let links = self.links
        let makeTransport: @Sendable () throws -> any LoadTransport
        switch target {
        case "gateway":
            let gatewayLink = try links.gateway
            makeTransport = { try ZeroMQLoadTransport(link: gatewayLink) }
        case "edge":
            let connections: Int
            switch shape.loop {
            case .closed(let inFlight): connections = inFlight
            case .open: connections = shape.maxInFlight > 256 ? 256 : shape.maxInFlight
            }
            makeTransport = { try HTTPLoadTransport(address: edge, connections: connections) }
        default:
            let link = try links.service(target)
            makeTransport = { try ZeroMQLoadTransport(link: link) }
        }
        let outcome = try await LoadEngine.run(shape: shape, workload: workload, makeTransport: makeTransport) { progress in
            guard !quiet else { return }
            FileHandle.standardError.write(Data(("\r" + progress.line + "   ").utf8))
        }
        if !quiet { FileHandle.standardError.write(Data("\n".utf8)) }
        return outcome
    }
}

/// `loadgen raw-service`: the raw echo (a limit), in a process of its own.
struct RawServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-service", shouldDisplay: false)
    @Option var endpoint = "tcp://127.0.0.1:*"
    @Option var endpointFile: String

    func run() throws {
        ProcessSetup.watchParent()
        try RawEcho.serve(endpoint: endpoint) { bound in try? bound.write(toFile: endpointFile, atomically: true, encoding: .utf8) }
    }
}

/// `loadgen raw-proxy`: the raw proxy in front of the echo, in a process of its own.
struct RawProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-proxy", shouldDisplay: false)
    @Option var front = "tcp://127.0.0.1:*"
    @Option var back: String
    @Option var endpointFile: String

    func run() throws {
        ProcessSetup.watchParent()
        try RawEcho.proxy(front: front, back: back) { bound in try? bound.write(toFile: endpointFile, atomically: true, encoding: .utf8) }
    }
}

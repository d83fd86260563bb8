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

    /// Refuses targets off this machine: load runs are for loopback only.
    func checkLoopback(_ configuration: PlatformConfiguration) throws {
        var addresses = [configuration.gatewayEndpoint]
        if target == "edge" { addresses.append("tcp://" + edgeAddress(configuration)) }
        if target != "gateway" && target != "edge" { addresses.append(configuration.serviceEndpoints[target] ?? "") }
        for address in addresses {
            let host = address.replacingOccurrences(of: "tcp://", with: "").split(separator: ":").first.map(String.init) ?? ""
            guard ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) || address.hasPrefix("ipc://") || address.hasPrefix("inproc://") else {
                throw ValidationError("loadgen sends to loopback addresses only, not \(address)")
            }
        }
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
        guard options.users > 0, inFlight > 0, (rate ?? 1) > 0 else { throw ValidationError("users, in-flight and rate must be positive") }
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

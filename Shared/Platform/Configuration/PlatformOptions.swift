import ArgumentParser
import Foundation

/// The command-line flags every executable takes; each overrides its environment
/// variable (see ``PlatformConfiguration``).
public struct PlatformOptions: ParsableArguments, Sendable {
    @Option(help: "Gateway ROUTER for clients (BACKEND_GATEWAY_ENDPOINT).")
    public var gatewayEndpoint: String?
    @Option(help: "Event bus XSUB, where services publish (BACKEND_BUS_IN_ENDPOINT).")
    public var busIn: String?
    @Option(help: "Event bus XPUB, where subscribers connect (BACKEND_BUS_OUT_ENDPOINT).")
    public var busOut: String?
    @Option(help: "A service endpoint as name=endpoint, repeatable (BACKEND_<NAME>_ENDPOINT).")
    public var service: [String] = []
    @Option(help: "Endpoint to bind instead of this process's own (BACKEND_BIND).")
    public var bind: String?
    @Option(help: "Folder of the SQLite files (BACKEND_DATA_DIR).")
    public var dataDir: String?
    @Option(help: "trace|debug|info|notice|warning|error|critical (BACKEND_LOG_LEVEL).")
    public var logLevel: String?
    @Option(help: "Handler deadline in ms (BACKEND_REQUEST_DEADLINE_MS).")
    public var requestDeadlineMs: Int?
    @Option(help: "How long the gateway waits for a service, in ms (BACKEND_GATEWAY_DEADLINE_MS).")
    public var gatewayDeadlineMs: Int?
    @Option(help: "Gateway ROUTER for the HTTP edge (BACKEND_GATEWAY_EDGE_ENDPOINT).")
    public var gatewayEdgeEndpoint: String?
    @Option(help: "host:port the HTTP edge listens on (BACKEND_EDGE_BIND).")
    public var edgeBind: String?
    @Option(help: "host:port the admin panel listens on (BACKEND_ADMIN_BIND).")
    public var adminBind: String?
    @Option(help: "host:port where the gateway serves Prometheus metrics (BACKEND_METRICS_BIND).")
    public var metricsBind: String?
    @Option(help: "Folder of the CURVE keys (BACKEND_CURVE_KEYS_DIR).")
    public var curveKeys: String?
    @Flag(help: "Plaintext internal links, no CURVE (BACKEND_CURVE=off); logged as a warning.")
    public var noCurve = false
    @Flag(help: "Exit when the parent process exits (BACKEND_STOP_WITH_PARENT=1).")
    public var stopWithParent = false

    public init() {}

    /// The environment's configuration with these flags applied on top.
    public func resolve(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PlatformConfiguration {
        var configuration = try PlatformConfiguration.fromEnvironment(environment)
        if let gatewayEndpoint { configuration.gatewayEndpoint = gatewayEndpoint }
        if let busIn { configuration.busInEndpoint = busIn }
        if let busOut { configuration.busOutEndpoint = busOut }
        for entry in service {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, PlatformConfiguration.serviceNames.contains(parts[0]) else {
                throw ConfigurationError("--service takes name=endpoint with a known service name, got \(entry)")
            }
            configuration.serviceEndpoints[parts[0]] = parts[1]
        }
        if let bind { configuration.bind = bind }
        if let dataDir { configuration.dataDirectory = dataDir }
        if let logLevel { configuration.logLevel = try PlatformConfiguration.level(logLevel) }
        if let requestDeadlineMs { configuration.requestDeadlineMs = try PlatformConfiguration.milliseconds(String(requestDeadlineMs), "--request-deadline-ms") }
        if let gatewayDeadlineMs { configuration.gatewayDeadlineMs = try PlatformConfiguration.milliseconds(String(gatewayDeadlineMs), "--gateway-deadline-ms") }
        if let gatewayEdgeEndpoint { configuration.gatewayEdgeEndpoint = gatewayEdgeEndpoint }
        if let edgeBind {
            _ = try HostAndPort(edgeBind, name: "--edge-bind")
            configuration.edgeBind = edgeBind
        }
        if let adminBind {
            _ = try HostAndPort(adminBind, name: "--admin-bind")
            configuration.adminBind = adminBind
        }
        if let metricsBind {
            _ = try HostAndPort(metricsBind, name: "--metrics-bind")
            configuration.metricsBind = metricsBind
        }
        if let curveKeys { configuration.curveKeysDirectory = curveKeys }
        if noCurve { configuration.curveOff = true }
        if stopWithParent { configuration.stopWithParent = true }
        return configuration
    }
}

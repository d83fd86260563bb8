import Foundation
import Platform

/// The edge's settings, read from `BACKEND_EDGE_*` variables on top of the platform's
/// (README, "HTTP edge").
public struct EdgeSettings: Sendable {
    /// Where to listen (`BACKEND_EDGE_BIND`, from the platform configuration).
    public var bind: HostAndPort
    /// PEM certificate chain and private key (`BACKEND_EDGE_TLS_CERT`, `BACKEND_EDGE_TLS_KEY`);
    /// both set: HTTPS; neither: plain HTTP, allowed on loopback only unless
    /// `BACKEND_EDGE_ALLOW_PLAIN=1` (behind a proxy that ends TLS).
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// Peers whose `X-Forwarded-For` is believed (`BACKEND_EDGE_TRUSTED_PROXIES`).
    var resolver: ClientAddressResolver
    /// Requests per second and burst per client address (`BACKEND_EDGE_RATE_PER_SECOND`,
    /// `BACKEND_EDGE_RATE_BURST`); 0 per second switches the limit off.
    public var ratePerSecond: Double = 50
    public var rateBurst: Double = 100
    /// The largest operation body: the contract's 1 MiB request limit.
    public var maxBodyBytes = RequestLimits().maxRequestBytes
    /// The largest media upload: the media store's limit.
    public var maxMediaBytes = MediaLimits().maxBytes
    /// How long a connection may take to send a request's head, and then its body
    /// (`BACKEND_EDGE_HEADER_TIMEOUT_MS`, `BACKEND_EDGE_BODY_TIMEOUT_MS`); a keep-alive
    /// connection may then idle for `idleTimeout` (`BACKEND_EDGE_IDLE_TIMEOUT_MS`), and the
    /// next head's clock starts with its first byte.
    public var headerTimeout: Duration = .seconds(10)
    public var bodyTimeout: Duration = .seconds(30)
    public var idleTimeout: Duration = .seconds(75)
    /// Connections held at once, in all and from one peer address (trusted proxies: no
    /// per-address bound) (`BACKEND_EDGE_MAX_CONNECTIONS`,
    /// `BACKEND_EDGE_MAX_CONNECTIONS_PER_ADDRESS`); the total is at most half the process's
    /// descriptors (``HTTPDoor/ConnectionLimits``).
    public var maxConnections = 10_000
    public var maxConnectionsPerAddress = 256
    /// Bytes of request bodies held in memory at once, across connections
    /// (`BACKEND_EDGE_BODY_BUDGET_MB`); a body finding it spent is answered 503.
    public var bodyBudgetBytes = 64 << 20
    /// Origins allowed to call from a browser (`BACKEND_EDGE_CORS_ORIGINS`, comma-separated);
    /// empty (the default): no CORS headers at all.
    public var corsOrigins: Set<String> = []
    /// How long the edge waits for the gateway: its deadline and a second more.
    public var gatewayTimeout: Duration
    /// Event loop threads, which also run the handlers (`BACKEND_EDGE_THREADS`): by
    /// default one per core. One loop on two cores was measured twice against two
    /// (`bench edge`, alternating runs on Nov 27 and Nov 28): 0.26–0.54 ms added at 1 in
    /// flight against 0.35–0.60 ms, and 27–29% of the gateway's rate at 64 connections
    /// against 30–33%, within the machine's noise, so the default stayed.
    public var eventLoops = Self.defaultEventLoops(cores: ProcessInfo.processInfo.activeProcessorCount)

    static func defaultEventLoops(cores: Int) -> Int { max(1, cores) }

    /// Reads the settings.
    public init(configuration: PlatformConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        bind = try HostAndPort(configuration.edgeBind, name: "BACKEND_EDGE_BIND")
        tlsCertificatePath = environment["BACKEND_EDGE_TLS_CERT"].flatMap { $0.isEmpty ? nil : $0 }
        tlsKeyPath = environment["BACKEND_EDGE_TLS_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        guard (tlsCertificatePath == nil) == (tlsKeyPath == nil) else {
            throw ConfigurationError("set both BACKEND_EDGE_TLS_CERT and BACKEND_EDGE_TLS_KEY, or neither")
        }
        if tlsCertificatePath == nil, !Self.isLoopback(bind.host), environment["BACKEND_EDGE_ALLOW_PLAIN"] != "1" {
            throw ConfigurationError(
                "the edge serves plain HTTP on loopback only: set BACKEND_EDGE_TLS_CERT and BACKEND_EDGE_TLS_KEY, "
                    + "or BACKEND_EDGE_ALLOW_PLAIN=1 behind a proxy that ends TLS")
        }
        resolver = try ClientAddressResolver(trustedProxies: environment["BACKEND_EDGE_TRUSTED_PROXIES"] ?? "")
        if let text = environment["BACKEND_EDGE_RATE_PER_SECOND"] { ratePerSecond = try Self.number(text, "BACKEND_EDGE_RATE_PER_SECOND") }
        if let text = environment["BACKEND_EDGE_RATE_BURST"] { rateBurst = try Self.number(text, "BACKEND_EDGE_RATE_BURST") }
        if let text = environment["BACKEND_EDGE_HEADER_TIMEOUT_MS"] { headerTimeout = .milliseconds(try Self.milliseconds(text, "BACKEND_EDGE_HEADER_TIMEOUT_MS")) }
        if let text = environment["BACKEND_EDGE_BODY_TIMEOUT_MS"] { bodyTimeout = .milliseconds(try Self.milliseconds(text, "BACKEND_EDGE_BODY_TIMEOUT_MS")) }
        if let text = environment["BACKEND_EDGE_IDLE_TIMEOUT_MS"] { idleTimeout = .milliseconds(try Self.milliseconds(text, "BACKEND_EDGE_IDLE_TIMEOUT_MS")) }
        if let text = environment["BACKEND_EDGE_MAX_CONNECTIONS"] { maxConnections = try Self.count(text, "BACKEND_EDGE_MAX_CONNECTIONS") }
        if let text = environment["BACKEND_EDGE_MAX_CONNECTIONS_PER_ADDRESS"] {
            maxConnectionsPerAddress = try Self.count(text, "BACKEND_EDGE_MAX_CONNECTIONS_PER_ADDRESS")
        }
        if let text = environment["BACKEND_EDGE_BODY_BUDGET_MB"] { bodyBudgetBytes = try Self.count(text, "BACKEND_EDGE_BODY_BUDGET_MB") << 20 }
        corsOrigins = Set((environment["BACKEND_EDGE_CORS_ORIGINS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        if let text = environment["BACKEND_EDGE_THREADS"] { eventLoops = try Self.count(text, "BACKEND_EDGE_THREADS") }
        gatewayTimeout = .milliseconds(configuration.gatewayDeadlineMs + 1_000)
    }

    /// The variables the edge reads besides the platform's.
    public static let variables: [(name: String, meaning: String)] = [
        ("BACKEND_EDGE_TLS_CERT", "PEM certificate chain for HTTPS"),
        ("BACKEND_EDGE_TLS_KEY", "PEM private key for HTTPS"),
        ("BACKEND_EDGE_ALLOW_PLAIN", "1: plain HTTP on a non-loopback address (behind a TLS proxy)"),
        ("BACKEND_EDGE_TRUSTED_PROXIES", "addresses/blocks whose X-Forwarded-For is believed"),
        ("BACKEND_EDGE_RATE_PER_SECOND", "requests per second per client address (0: off)"),
        ("BACKEND_EDGE_RATE_BURST", "burst per client address"),
        ("BACKEND_EDGE_HEADER_TIMEOUT_MS", "time to send a request head"),
        ("BACKEND_EDGE_BODY_TIMEOUT_MS", "time to send a request body"),
        ("BACKEND_EDGE_IDLE_TIMEOUT_MS", "how long a keep-alive connection may idle between requests"),
        ("BACKEND_EDGE_CORS_ORIGINS", "browser origins allowed (comma-separated; empty: CORS off)"),
        ("BACKEND_EDGE_MAX_CONNECTIONS", "connections held at once (at most half the process's descriptors)"),
        ("BACKEND_EDGE_MAX_CONNECTIONS_PER_ADDRESS", "connections held at once from one peer address (trusted proxies: no bound)"),
        ("BACKEND_EDGE_BODY_BUDGET_MB", "MiB of request bodies held in memory at once (then 503)"),
        ("BACKEND_EDGE_THREADS", "event loop threads (default: one per core)"),
    ]

    /// Whether the scheme is HTTPS.
    public var usesTLS: Bool { tlsCertificatePath != nil }

    /// The URL clients use, for the stack runner's banner.
    public var url: String {
        let host = bind.host.contains(":") ? "[\(bind.host)]" : bind.host
        return "\(usesTLS ? "https" : "http")://\(host):\(bind.port)"
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    private static func number(_ text: String, _ name: String) throws -> Double {
        guard let value = Double(text), value >= 0, value.isFinite else { throw ConfigurationError("\(name) must be a number ≥ 0") }
        return value
    }

    private static func count(_ text: String, _ name: String) throws -> Int {
        guard let value = Int(text), value > 0, value < 1 << 30 else { throw ConfigurationError("\(name) must be a positive whole number") }
        return value
    }

    private static func milliseconds(_ text: String, _ name: String) throws -> Int {
        guard let value = Int(text), value > 0 else { throw ConfigurationError("\(name) must be a positive number of milliseconds") }
        return value
    }
}

import Foundation
import Logging

/// Where everything is and how it behaves: one set of settings for every executable,
/// read from environment variables and overridden by command-line flags
/// (README, "Configuration").
public struct PlatformConfiguration: Sendable, Equatable {
    /// The gateway's client-facing ROUTER (`BACKEND_GATEWAY_ENDPOINT`).
    public var gatewayEndpoint = "tcp://127.0.0.1:5555"
    /// The bus's XSUB, where services publish (`BACKEND_BUS_IN_ENDPOINT`).
    public var busInEndpoint = "tcp://127.0.0.1:5556"
    /// The bus's XPUB, where subscribers connect (`BACKEND_BUS_OUT_ENDPOINT`).
    public var busOutEndpoint = "tcp://127.0.0.1:5557"
    /// Each service's ROUTER, as others connect to it (`BACKEND_<SERVICE>_ENDPOINT`).
    public var serviceEndpoints: [String: String] = PlatformConfiguration.defaultServiceEndpoints
    /// What this process binds instead of its endpoint, e.g. `tcp://*:5601` in a
    /// container (`BACKEND_BIND`); `nil` binds the endpoint itself.
    public var bind: String?
    /// The folder of the SQLite files and other local data (`BACKEND_DATA_DIR`).
    public var dataDirectory = "./data"
    /// The lowest log level written (`BACKEND_LOG_LEVEL`: trace, debug, info, notice,
    /// warning, error, critical).
    public var logLevel: Logger.Level = .info
    /// How long a service handler may run (`BACKEND_REQUEST_DEADLINE_MS`).
    public var requestDeadlineMs = 4_000
    /// How long the gateway waits for a service (`BACKEND_GATEWAY_DEADLINE_MS`).
    public var gatewayDeadlineMs = 5_000
    /// The folder of the deployment's CURVE keys (`BACKEND_CURVE_KEYS_DIR`; see
    /// ``CurveKeyring``): this process's `<component>.secret` and `public-keys`. The
    /// executables refuse to start without it unless ``curveOff`` says so.
    public var curveKeysDirectory: String?
    /// Plaintext links, explicitly (`BACKEND_CURVE=off`): every process logs a warning.
    public var curveOff = false
    /// The gateway's public ROUTER speaks CURVE too (`BACKEND_GATEWAY_PUBLIC_CURVE=1`):
    /// clients need the gateway's public key, any client key is admitted.
    public var gatewayPublicCurve = false
    /// The gateway's ROUTER for the HTTP edge, CURVE-secured (`BACKEND_GATEWAY_EDGE_ENDPOINT`);
    /// bound only when ``edgeSecret`` is set.
    public var gatewayEdgeEndpoint = "tcp://127.0.0.1:5558"
    /// The secret the gateway and the edge derive their CURVE keys from
    /// (`BACKEND_EDGE_SECRET`, at least 32 characters); see ``EdgeTrust``. Never log it.
    public var edgeSecret: String?
    /// Where the HTTP edge listens, `host:port` (`BACKEND_EDGE_BIND`).
    public var edgeBind = "127.0.0.1:8080"
    /// Where the admin panel listens, `host:port` (`BACKEND_ADMIN_BIND`).
    public var adminBind = "127.0.0.1:8081"
    /// Where the gateway serves the Prometheus text of every service (`GET /metrics`),
    /// `host:port` (`BACKEND_METRICS_BIND`); `nil`: not served.
    public var metricsBind: String?
    /// Each service backs up its database this often, in seconds; 0 never
    /// (`BACKEND_BACKUP_INTERVAL_S`; see ``PeriodicBackup``).
    public var backupIntervalSeconds = 0
    /// Where periodic backups go (`BACKEND_BACKUP_DIR`); `nil`: `<data folder>/backups`.
    public var backupDirectory: String?
    /// Periodic backups kept per service (`BACKEND_BACKUP_KEEP`); older ones are deleted.
    public var backupKeep = 24
    /// Exit when the parent process goes away (`BACKEND_STOP_WITH_PARENT=1`), so children
    /// of the stack runner or of a test never outlive it.
    public var stopWithParent = false

    /// The six services, in port order.
    public static let serviceNames = ["auth", "goals", "reminders", "savings", "booking", "stats"]

    /// `tcp://127.0.0.1:5601` to `5606`, in the order of ``serviceNames``.
    public static let defaultServiceEndpoints: [String: String] = Dictionary(
        uniqueKeysWithValues: serviceNames.enumerated().map { ($1, "tcp://127.0.0.1:\(5601 + $0)") })

    /// The defaults: everything on loopback, data under `./data`.
    public init() {}

    /// Reads the environment on top of the defaults.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PlatformConfiguration {
        var configuration = PlatformConfiguration()
        try configuration.apply(environment)
        return configuration
    }

    /// Every environment variable this type reads, with its description.
    public static let variables: [(name: String, meaning: String)] = [
        ("BACKEND_GATEWAY_ENDPOINT", "gateway ROUTER for clients"),
        ("BACKEND_BUS_IN_ENDPOINT", "event bus XSUB (publishers connect)"),
        ("BACKEND_BUS_OUT_ENDPOINT", "event bus XPUB (subscribers connect)"),
    ] + serviceNames.map { ("BACKEND_\($0.uppercased())_ENDPOINT", "\($0) service ROUTER") } + [
        ("BACKEND_BIND", "endpoint this process binds instead of its own (e.g. tcp://*:5601)"),
        ("BACKEND_DATA_DIR", "folder of the SQLite files"),
        ("BACKEND_LOG_LEVEL", "trace|debug|info|notice|warning|error|critical"),
        ("BACKEND_LOG_FORMAT", "text (default) or json: one JSON object per log line"),
        ("BACKEND_REQUEST_DEADLINE_MS", "handler deadline in a service"),
        ("BACKEND_GATEWAY_DEADLINE_MS", "how long the gateway waits for a service"),
        ("BACKEND_CURVE_KEYS_DIR", "folder of the CURVE keys (ctl keys generate): <component>.secret and public-keys"),
        ("BACKEND_CURVE", "on (default) or off: off makes every internal link plaintext, loudly logged"),
        ("BACKEND_GATEWAY_PUBLIC_CURVE", "1: the gateway's client socket speaks CURVE too (clients need its public key)"),
        ("BACKEND_GATEWAY_EDGE_ENDPOINT", "gateway ROUTER for the HTTP edge (CURVE)"),
        ("BACKEND_EDGE_SECRET", "shared secret of the gateway and the edge (32+ characters)"),
        ("BACKEND_EDGE_BIND", "host:port the HTTP edge listens on"),
        ("BACKEND_ADMIN_BIND", "host:port the admin panel listens on"),
        ("BACKEND_METRICS_BIND", "host:port where the gateway serves Prometheus metrics (GET /metrics); unset: off"),
        ("BACKEND_BACKUP_INTERVAL_S", "each service backs up its database this often, in seconds (0: never)"),
        ("BACKEND_BACKUP_DIR", "folder of the periodic backups (default <data folder>/backups)"),
        ("BACKEND_BACKUP_KEEP", "periodic backups kept per service (default 24)"),
        ("BACKEND_STOP_WITH_PARENT", "1: exit when the parent process exits"),
        ("BACKEND_READ_MEMORY", "off: reads declared remembered are worked out every time (default on)"),
    ]

    /// Applies the `BACKEND_*` variables present in `environment`.
    public mutating func apply(_ environment: [String: String]) throws {
        if let value = environment["BACKEND_GATEWAY_ENDPOINT"] { gatewayEndpoint = value }
        if let value = environment["BACKEND_BUS_IN_ENDPOINT"] { busInEndpoint = value }
        if let value = environment["BACKEND_BUS_OUT_ENDPOINT"] { busOutEndpoint = value }
        for name in Self.serviceNames {
            if let value = environment["BACKEND_\(name.uppercased())_ENDPOINT"] { serviceEndpoints[name] = value }
        }
        if let value = environment["BACKEND_BIND"], !value.isEmpty { bind = value }
        if let value = environment["BACKEND_DATA_DIR"] { dataDirectory = value }
        if let value = environment["BACKEND_LOG_LEVEL"] { logLevel = try Self.level(value) }
        if let value = environment["BACKEND_REQUEST_DEADLINE_MS"] { requestDeadlineMs = try Self.milliseconds(value, "BACKEND_REQUEST_DEADLINE_MS") }
        if let value = environment["BACKEND_GATEWAY_DEADLINE_MS"] { gatewayDeadlineMs = try Self.milliseconds(value, "BACKEND_GATEWAY_DEADLINE_MS") }
        if let value = environment["BACKEND_CURVE_KEYS_DIR"], !value.isEmpty { curveKeysDirectory = value }
        if let value = environment["BACKEND_CURVE"], !value.isEmpty {
            switch value.lowercased() {
            case "on": curveOff = false
            case "off": curveOff = true
            default: throw ConfigurationError("BACKEND_CURVE must be on or off")
            }
        }
        if let value = environment["BACKEND_GATEWAY_PUBLIC_CURVE"] { gatewayPublicCurve = value == "1" || value == "true" }
        if let value = environment["BACKEND_GATEWAY_EDGE_ENDPOINT"], !value.isEmpty { gatewayEdgeEndpoint = value }
        if let value = environment["BACKEND_EDGE_SECRET"], !value.isEmpty {
            _ = try EdgeTrust(secret: value)
            edgeSecret = value
        }
        if let value = environment["BACKEND_EDGE_BIND"], !value.isEmpty {
            _ = try HostAndPort(value, name: "BACKEND_EDGE_BIND")
            edgeBind = value
        }
        if let value = environment["BACKEND_ADMIN_BIND"], !value.isEmpty {
            _ = try HostAndPort(value, name: "BACKEND_ADMIN_BIND")
            adminBind = value
        }
        if let value = environment["BACKEND_METRICS_BIND"], !value.isEmpty {
            _ = try HostAndPort(value, name: "BACKEND_METRICS_BIND")
            metricsBind = value
        }
        if let value = environment["BACKEND_BACKUP_INTERVAL_S"], !value.isEmpty {
            guard let seconds = Int(value), seconds >= 0 else { throw ConfigurationError("BACKEND_BACKUP_INTERVAL_S must be a whole number of seconds, 0 for never") }
            backupIntervalSeconds = seconds
        }
        if let value = environment["BACKEND_BACKUP_DIR"], !value.isEmpty { backupDirectory = value }
        if let value = environment["BACKEND_BACKUP_KEEP"], !value.isEmpty {
            guard let keep = Int(value), keep >= 1 else { throw ConfigurationError("BACKEND_BACKUP_KEEP must be at least 1") }
            backupKeep = keep
        }
        if let value = environment["BACKEND_STOP_WITH_PARENT"] { stopWithParent = value == "1" || value == "true" }
    }

    /// The environment variables that reproduce this configuration, for child processes.
    public var environment: [String: String] {
        var variables: [String: String] = [
            "BACKEND_GATEWAY_ENDPOINT": gatewayEndpoint, "BACKEND_BUS_IN_ENDPOINT": busInEndpoint,
            "BACKEND_BUS_OUT_ENDPOINT": busOutEndpoint, "BACKEND_DATA_DIR": dataDirectory,
            "BACKEND_LOG_LEVEL": logLevel.rawValue, "BACKEND_REQUEST_DEADLINE_MS": String(requestDeadlineMs),
            "BACKEND_GATEWAY_DEADLINE_MS": String(gatewayDeadlineMs),
        ]
        for (name, endpoint) in serviceEndpoints { variables["BACKEND_\(name.uppercased())_ENDPOINT"] = endpoint }
        if let curveKeysDirectory { variables["BACKEND_CURVE_KEYS_DIR"] = curveKeysDirectory }
        if curveOff { variables["BACKEND_CURVE"] = "off" }
        if gatewayPublicCurve { variables["BACKEND_GATEWAY_PUBLIC_CURVE"] = "1" }
        variables["BACKEND_GATEWAY_EDGE_ENDPOINT"] = gatewayEdgeEndpoint
        variables["BACKEND_EDGE_BIND"] = edgeBind
        variables["BACKEND_ADMIN_BIND"] = adminBind
        if let edgeSecret { variables["BACKEND_EDGE_SECRET"] = edgeSecret }
        if let metricsBind { variables["BACKEND_METRICS_BIND"] = metricsBind }
        if backupIntervalSeconds > 0 {
            variables["BACKEND_BACKUP_INTERVAL_S"] = String(backupIntervalSeconds)
            variables["BACKEND_BACKUP_KEEP"] = String(backupKeep)
            if let backupDirectory { variables["BACKEND_BACKUP_DIR"] = backupDirectory }
        }
        if stopWithParent { variables["BACKEND_STOP_WITH_PARENT"] = "1" }
        return variables
    }

    /// The endpoint of a service, or a configuration error.
    public func endpoint(of service: String) throws -> String {
        guard let endpoint = serviceEndpoints[service] else { throw ConfigurationError("unknown service \(service)") }
        return endpoint
    }

    /// The links of the process that is `component` (see ``CurveKeyring/components``):
    /// CURVE with its keys from ``curveKeysDirectory``, plaintext when there is no key
    /// folder (in-process tests; the executables insist on one, see
    /// ``ProcessSetup/links(_:as:logger:)``) or when ``curveOff``.
    public func links(as component: String) throws -> Links {
        guard !curveOff, let curveKeysDirectory else { return Links(configuration: self, keyring: nil) }
        let keyring = try CurveKeyring.load(from: URL(fileURLWithPath: curveKeysDirectory, isDirectory: true), name: component)
        return Links(configuration: self, keyring: keyring)
    }

    /// The key folder an operator's tool uses: BACKEND_CURVE_KEYS_DIR, else the data
    /// folder's `keys` when it holds a deployment's keys (where the stack runner makes them).
    public var operatorKeyFolder: URL? {
        if let curveKeysDirectory { return URL(fileURLWithPath: curveKeysDirectory, isDirectory: true) }
        let local = dataDirectoryURL.appendingPathComponent("keys")
        return FileManager.default.fileExists(atPath: local.appendingPathComponent(CurveKeyring.publicKeysFile).path) ? local : nil
    }

    /// The folder of periodic backups as a URL.
    public var backupDirectoryURL: URL {
        backupDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? dataDirectoryURL.appendingPathComponent("backups")
    }

    /// The data folder as a URL.
    public var dataDirectoryURL: URL { URL(fileURLWithPath: dataDirectory, isDirectory: true) }

    static func level(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ConfigurationError("log level must be one of trace, debug, info, notice, warning, error, critical")
        }
        return level
    }

    static func milliseconds(_ text: String, _ name: String) throws -> Int {
        guard let value = Int(text), value > 0 else { throw ConfigurationError("\(name) must be a positive number of milliseconds") }
        return value
    }
}

/// A `host:port` pair, as `BACKEND_EDGE_BIND` takes (`[::1]:8443` for IPv6).
public struct HostAndPort: Sendable, Equatable {
    /// The host name or address, without brackets.
    public var host: String
    /// The port.
    public var port: Int

    /// Parses `text`; `name` is the setting, for the error.
    public init(_ text: String, name: String) throws(ConfigurationError) {
        let problem = ConfigurationError("\(name) must be host:port, e.g. 127.0.0.1:8080, got \(text)")
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port)
        else { throw problem }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw problem }
        self.host = host
        self.port = port
    }
}

/// A setting that cannot be used.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

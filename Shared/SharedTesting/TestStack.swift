import Foundation
import Platform
import Synchronization

/// A gateway and some services as real processes on free ports with a temporary data
/// folder: the fixture of integration tests and of each service's one journey through the
/// gateway. Its clients check every successful reply against the response schema the
/// operation's service declares in `describe` (see ``CheckedClient``).
///
/// ```swift
/// try await TestStack.with(services: ["auth"]) { stack in
///     let reply = try await stack.client.call("auth.health", idempotent: true)
/// }
/// ```
public final class TestStack: Sendable {
    /// The configuration every process of the stack got.
    public let configuration: PlatformConfiguration
    /// The temporary data folder.
    public let directory: TemporaryDirectory
    /// A client connected to the gateway.
    public let client: CheckedClient
    private let processes: Mutex<[String: ChildProcess]>
    private let directClients = Mutex<[CheckedClient]>([])

    /// Creates the configuration and folder; starts nothing.
    public init(extraEnvironment: [String: String] = [:]) throws {
        directory = try TemporaryDirectory(prefix: "stack")
        var configuration = PlatformConfiguration()
        configuration.gatewayEndpoint = TestEnvironment.freeEndpoint()
        configuration.busInEndpoint = TestEnvironment.freeEndpoint()
        configuration.busOutEndpoint = TestEnvironment.freeEndpoint()
        for name in PlatformConfiguration.serviceNames {
            configuration.serviceEndpoints[name] = TestEnvironment.freeEndpoint()
        }
        configuration.gatewayEdgeEndpoint = TestEnvironment.freeEndpoint()
        configuration.edgeSecret = EdgeTrust.generateSecret()
        configuration.edgeBind = "127.0.0.1:\(TestEnvironment.freePort())"
        configuration.adminBind = "127.0.0.1:\(TestEnvironment.freePort())"
        configuration.dataDirectory = directory.url.appendingPathComponent("data").path
        configuration.logLevel = .info
        configuration.gatewayDeadlineMs = 2_000
        configuration.requestDeadlineMs = 1_500
        try configuration.makeCurveKeys(in: directory.url)
        self.configuration = configuration
        self.extraEnvironment = extraEnvironment
        client = CheckedClient(endpoint: configuration.gatewayEndpoint, name: "test")
        processes = Mutex([:])
    }

    private let extraEnvironment: [String: String]

    /// What tests choose unless they say otherwise: the `dev` payment provider.
    static let defaults = ["BACKEND_BOOKING_PAYMENT_PROVIDER": "dev"]

    /// The HTTP edge's address, once started with ``start(_:environment:)`` (name `edge`).
    public var edgeURL: String { "http://\(configuration.edgeBind)" }

    /// Starts the gateway (name `gateway`), the edge (`edge`) or a service by its name;
    /// `environment` adds to the stack's.
    @discardableResult
    public func start(_ name: String, environment: [String: String] = [:]) throws -> ChildProcess {
        let process = try ChildProcess(
            executable: TestEnvironment.binary(name),
            environment: configuration.environment.merging(Self.defaults) { _, new in new }.merging(extraEnvironment) { _, new in new }
                .merging(environment) { _, new in new },
            logFile: directory.url.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(6)).log"))
        processes.withLock { $0[name] = process }
        return process
    }

    /// The running process of `name`.
    public func process(_ name: String) -> ChildProcess? {
        processes.withLock { $0[name] }
    }

    /// A client connected to `service` itself, not through the gateway (for internal
    /// operations); closed by ``stop()``.
    public func directClient(_ service: String) throws -> CheckedClient {
        let direct = CheckedClient(link: try configuration.operatorLink(to: service), name: "direct")
        directClients.withLock { $0.append(direct) }
        return direct
    }

    /// Waits until `op` answers ok through the gateway (or directly at `endpoint`).
    public func waitUntilHealthy(_ names: [String], timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        for name in names {
            let op = "\(name).health"
            while true {
                if let reply = try? await client.call(op, idempotent: true, timeout: .milliseconds(500), attempts: 1), reply.ok {
                    break
                }
                guard ContinuousClock.now < deadline else {
                    throw TestStackError(
                        """
                        \(name) did not become healthy; its output:
                        \(process(name)?.output ?? "(not started)")
                        gateway output:
                        \(process("gateway")?.output ?? "(not started)")
                        """)
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Stops every process (SIGTERM, then SIGKILL) and removes the data folder.
    public func stop() async {
        let all = processes.withLock { processes in
            let all = Array(processes.values)
            processes.removeAll()
            return all
        }
        for process in all { process.kill(signal: SIGTERM) }
        for process in all { await process.stop(grace: .seconds(10)) }
        await client.close()
        for direct in directClients.withLock({ $0 }) { await direct.close() }
        directory.remove()
    }

    /// Runs `body` with the gateway and `services` started and healthy, and stops
    /// everything afterwards, whether `body` succeeded or not.
    public static func with<T>(
        services: [String], gateway: Bool = true, extraEnvironment: [String: String] = [:],
        _ body: (TestStack) async throws -> T
    ) async throws -> T {
        let stack = try TestStack(extraEnvironment: extraEnvironment)
        do {
            for service in services { try stack.start(service) }
            if gateway {
                try stack.start("gateway")
                try await stack.waitUntilHealthy(services)
            }
            let result = try await body(stack)
            await stack.stop()
            return result
        } catch {
            await stack.stop()
            throw error
        }
    }
}

/// A fixture that could not be set up.
public struct TestStackError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

import Foundation
import Logging
import Platform
import ServiceLifecycle

/// A service running inside the test process over real sockets and a real SQLite file,
/// with test tokens (``TestTokenVerifier``) unless told otherwise: the fast level of a
/// service's tests, beside one journey over real processes (``TestStack``).
///
/// ```swift
/// let service = try await InProcessService(definition, configuration: .forTests(directory: folder, services: ["booking"]))
/// defer { Task { await service.stop() } }
/// let reply = try await service.client.call("booking.pass.get", token: TestTokenVerifier.token(user: "u1"))
/// ```
///
/// Every successful reply through ``client`` is checked against the operation's declared
/// response schema (``SchemaCheckedClient``).
public final class InProcessService: Sendable {
    /// The assembled service.
    public let runtime: ServiceRuntime
    /// Its service group (already running).
    public let group: ServiceGroup
    /// The task running the group.
    public let task: Task<Void, any Error>
    /// A client on the service's own endpoint.
    public let client: SchemaCheckedClient
    /// The endpoint the service bound.
    public let endpoint: String

    /// Opens the database, starts the service and waits until its socket is bound.
    ///
    /// - Parameter verifier: test tokens by default; `nil` gives the service the verifier it
    ///   runs with in production (auth's keys from `auth.keys`, revocations by event).
    public init(
        _ definition: ServiceDefinition, configuration: PlatformConfiguration, verifier: (any TokenVerifier)? = TestTokenVerifier(),
        catchUpInterval: Duration = .seconds(5)
    ) async throws {
        var logger = Logger(label: definition.name)
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG"] == nil ? .warning : .info
        runtime = try ServiceRuntime(
            definition: definition, configuration: configuration, logger: logger, verifier: verifier, catchUpInterval: catchUpInterval)
        group = runtime.makeGroup()
        let group = self.group
        task = Task { try await group.run() }
        endpoint = try configuration.endpoint(of: definition.name)
        _ = await runtime.server.waitUntilBound()
        client = SchemaCheckedClient(ServiceClient(endpoint: endpoint, name: "test"))
    }

    /// Stops the service gracefully and closes the client.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        await client.close()
    }
}

extension PlatformConfiguration {
    /// Loopback endpoints on free ports and a data folder, for in-process tests.
    public static func forTests(directory: TemporaryDirectory, services: [String]) -> PlatformConfiguration {
        var configuration = PlatformConfiguration()
        configuration.busInEndpoint = TestEnvironment.freeEndpoint()
        configuration.busOutEndpoint = TestEnvironment.freeEndpoint()
        for service in services { configuration.serviceEndpoints[service] = TestEnvironment.freeEndpoint() }
        configuration.dataDirectory = directory.path
        configuration.requestDeadlineMs = 1_000
        return configuration
    }
}

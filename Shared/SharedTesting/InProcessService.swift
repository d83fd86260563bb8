import Foundation
import Logging
import Platform
import ServiceLifecycle
import Synchronization

/// A service running inside the test process over its real socket and a real SQLite file,
/// called as any user with test tokens: the fixture most service tests are written
/// against (one journey per service goes through real processes with ``TestStack``).
///
/// Every successful reply is checked against the operation's declared response schema
/// (see ``CheckedClient``).
///
/// ```swift
/// try await InProcessService.with(BookingService.definition(auth: nil)) { booking in
///     let pass = try await booking.call("booking.pass.get", as: .user("u1"))
///     #expect(pass.data?["sessions"] == 0)
/// }
/// ```
public final class InProcessService: Sendable {
    /// The assembled service: its database pool, socket, publisher and subscriber.
    public let runtime: ServiceRuntime
    /// A client of the service's socket that checks replies against the operations' schemas.
    public let client: CheckedClient
    /// The service's endpoint.
    public let endpoint: String
    /// The configuration it runs with.
    public let configuration: PlatformConfiguration
    /// The service's name.
    public let name: String
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    /// The data folder, when the fixture made it (and removes it on ``stop()``).
    private let ownDirectory: TemporaryDirectory?
    private let stopped = Mutex(false)

    /// Starts `definition` in process and waits until its socket is bound.
    ///
    /// - Parameters:
    ///   - configuration: endpoints and data folder; by default free ports and a fresh
    ///     temporary folder, removed by ``stop()``.
    ///   - verifier: checks tokens; by default ``TestTokenVerifier`` (see ``TestCaller``).
    ///     `nil` keeps the service's own: auth's signing keys, or for other services the
    ///     keys fetched from `auth.keys`.
    ///   - catchUpInterval: how often the subscriber asks sources for missed events.
    public convenience init(
        _ definition: ServiceDefinition, configuration: PlatformConfiguration? = nil,
        verifier: (any TokenVerifier)? = TestTokenVerifier(), catchUpInterval: Duration = .seconds(5)
    ) async throws {
        try await self.init(configuration: configuration, verifier: verifier, catchUpInterval: catchUpInterval) { _ in definition }
    }

    /// Starts the service `makeDefinition` builds from the configuration (for definitions
    /// that need its data folder or endpoints, like auth's), and waits until it is bound.
    public init(
        configuration: PlatformConfiguration? = nil, verifier: (any TokenVerifier)? = TestTokenVerifier(),
        catchUpInterval: Duration = .seconds(5), _ makeDefinition: (PlatformConfiguration) throws -> ServiceDefinition
    ) async throws {
        var ownDirectory: TemporaryDirectory?
        var configuration = configuration
        if configuration == nil {
            let directory = try TemporaryDirectory(prefix: "service")
            ownDirectory = directory
            configuration = .forTests(directory: directory)
        }
        guard var configuration else { throw TestStackError("no configuration") }
        do {
            let definition = try makeDefinition(configuration)
            if configuration.serviceEndpoints[definition.name] == nil {
                configuration.serviceEndpoints[definition.name] = TestEnvironment.freeEndpoint()
            }
            var logger = Logger(label: definition.name)
            logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG"] == nil ? .warning : .info
            runtime = try ServiceRuntime(
                definition: definition, configuration: configuration, logger: logger, verifier: verifier, catchUpInterval: catchUpInterval)
            name = definition.name
            endpoint = try configuration.endpoint(of: definition.name)
            client = CheckedClient(link: try configuration.operatorLink(to: definition.name), name: "test", schemas: ResponseSchemas(definition.servedOperations))
        } catch {
            ownDirectory?.remove()
            throw error
        }
        self.configuration = configuration
        self.ownDirectory = ownDirectory
        group = runtime.makeGroup()
        let group = self.group
        task = Task { try await group.run() }
        _ = await runtime.server.waitUntilBound()
    }

    /// Runs `body` with `definition` started in process, and stops it afterwards whether
    /// `body` succeeded or not.
    public static func with<T>(
        _ definition: ServiceDefinition, configuration: PlatformConfiguration? = nil,
        verifier: (any TokenVerifier)? = TestTokenVerifier(), _ body: (InProcessService) async throws -> T
    ) async throws -> T {
        let service = try await InProcessService(definition, configuration: configuration, verifier: verifier)
        do {
            let result = try await body(service)
            await service.stop()
            return result
        } catch {
            await service.stop()
            throw error
        }
    }

    /// Calls `op` as `caller` and returns the reply, after checking a successful reply's
    /// `data` against the operation's response schema.
    ///
    /// - Throws: ``ReplySchemaMismatch`` when the reply breaks the schema, and
    ///   `ClientError` when no reply came.
    @discardableResult
    public func call(
        _ op: String, data: JSONValue = .object([:]), as caller: TestCaller = .anonymous, idem: String? = nil,
        idempotent: Bool? = nil, timeout: Duration = .seconds(10)
    ) async throws -> Reply.Parsed {
        try await client.call(op, data: data, token: caller.token, idem: idem, idempotent: idempotent, timeout: timeout)
    }

    /// The data folder (its SQLite file is `<name>.sqlite`).
    public var dataDirectory: URL { configuration.dataDirectoryURL }

    /// Starts a graceful shutdown without waiting for it (tests of shutdown itself).
    public func triggerShutdown() async {
        await group.triggerGracefulShutdown()
    }

    /// Waits until the service has stopped after ``triggerShutdown()``.
    public func waitUntilStopped() async {
        _ = try? await task.value
    }

    /// Stops the service (requests in flight finish), closes the client and removes the data
    /// folder the fixture made. Calling it again does nothing.
    public func stop() async {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        await client.close()
        try? runtime.pool.close()
        ownDirectory?.remove()
    }

    deinit {
        // A test that forgot to stop the service must not leave it serving: shut it down.
        if !stopped.withLock({ $0 }) {
            let group = self.group
            Task { await group.triggerGracefulShutdown() }
        }
    }
}

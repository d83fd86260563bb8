import Foundation
import GRDB
import Logging
import ServiceLifecycle
import ZeroMQ

/// Runs a service as a process: reads the configuration, opens and migrates its
/// database, then runs the event publisher, the subscriber and the request socket in
/// one `ServiceGroup` until SIGTERM or SIGINT, when they stop in reverse order.
public enum ServiceMain {
    /// Runs the service `definition` describes; returns only at exit.
    public static func run(_ definition: ServiceDefinition, options: PlatformOptions) async -> Never {
        let configuration = ProcessSetup.configuration(options)
        let logger = ProcessSetup.start(label: definition.name, configuration: configuration)
        let links = ProcessSetup.links(configuration, as: definition.name, logger: logger)
        do {
            let runtime = try ServiceRuntime(definition: definition, configuration: configuration, links: links, logger: logger)
            try await runtime.runUntilSignalled()
            exit(0)
        } catch {
            logger.critical("service stopped with an error", metadata: ["error": "\(error)"])
            exit(1)
        }
    }
}

/// One service assembled: database, request socket, publisher, subscriber, and the
/// token verifier supplied with auth's keys and revocations.
public final class ServiceRuntime: Sendable {
    /// The service's database.
    public let pool: DatabasePool
    /// The request socket.
    public let server: RequestServer
    /// The outbox publisher.
    public let publisher: EventPublisher
    /// The subscriber, if the service applies other services' events.
    public let subscriber: EventSubscriber?
    /// Background work the service runs beside its socket (key refresh, delivery, ...).
    public let workers: [any Service]
    private let logger: Logger

    /// Opens the database and builds the parts; nothing runs until the group runs.
    ///
    /// - Parameters:
    ///   - links: the service's links; by default those of `configuration` for its name.
    ///   - verifier: overrides the token verifier (tests); by default the definition's own
    ///     (auth) or one fed by `auth.keys` and `auth.session.revoked`.
    public init(
        definition: ServiceDefinition, configuration: PlatformConfiguration, links: Links? = nil, logger: Logger,
        verifier: (any TokenVerifier)? = nil, catchUpInterval: Duration = .seconds(1)
    ) throws {
        self.logger = logger
        let links = try links ?? configuration.links(as: definition.name)
        pool = try ServiceDatabase.open(
            directory: configuration.dataDirectoryURL, name: definition.name, durability: definition.durability,
            migrations: definition.migrations)
        try definition.prepare(pool)
        var subscriptions = definition.subscriptions
        var workers: [any Service] = definition.workers(pool, logger) + [
            Housekeeping(pool: pool, logger: logger, media: MediaStore(service: definition.name, databasePath: pool.path)), WALCheckpointer(path: pool.path, logger: logger),
        ]
        if configuration.backupIntervalSeconds > 0 {
            workers.append(
                PeriodicBackup(
                    service: definition.name, database: URL(fileURLWithPath: pool.path), folder: configuration.backupDirectoryURL,
                    interval: .seconds(configuration.backupIntervalSeconds), keep: configuration.backupKeep,
                    sealing: links.keyring?.backupSealing, logger: logger))
        }
        if !definition.timers.isEmpty {
            workers.append(TimerWorker(pool: pool, handlers: definition.timers, logger: logger))
        }
        let tokenVerifier: any TokenVerifier
        if let verifier {
            tokenVerifier = verifier
        } else if let own = definition.verifier {
            tokenVerifier = own
        } else {
            let access = AccessTokenVerifier()
            try SessionRevocations.load(into: access, from: pool)
            subscriptions.append(SessionRevocations.subscription(verifier: access))
            workers.append(AuthKeyRefresher(auth: try links.service("auth"), verifier: access, logger: logger))
            tokenVerifier = access
        }
        self.workers = workers
        let operations = BuiltinOperations.complete(definition, startedAt: .now)
        let dispatcher = RequestDispatcher(
            service: definition.name, operations: operations, verifier: tokenVerifier, pool: pool, logger: logger,
            operatorKeys: links.keyring.map { keyring in Set([keyring.publicKeys["operator"]].compactMap { $0 }) })
        var limits = RequestLimits()
        limits.deadline = .milliseconds(configuration.requestDeadlineMs)
        let endpoint = try configuration.bind ?? configuration.endpoint(of: definition.name)
        server = RequestServer(
            endpoint: endpoint, dispatcher: dispatcher, limits: limits, logger: logger, curve: try links.serverRole())
        publisher = EventPublisher(source: definition.name, pool: pool, bus: try links.busIn, logger: logger)
        subscriber =
            subscriptions.isEmpty
            ? nil
            : EventSubscriber(
                subscriptions: subscriptions, pool: pool, bus: try links.busOut,
                sources: try links.services(), serviceName: definition.name, logger: logger,
                catchUpInterval: catchUpInterval)
    }

    /// The parts in start order; they stop in reverse (requests first, publisher last).
    public var services: [any Service] {
        [publisher] + (subscriber.map { [$0] } ?? []) + workers + [server]
    }

    /// Runs until SIGTERM or SIGINT.
    public func runUntilSignalled() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [], logger: logger))
        try await group.run()
    }

    /// A group to run the service in process (tests): shut it down with
    /// `triggerGracefulShutdown()`.
    public func makeGroup() -> ServiceGroup {
        ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: logger))
    }
}

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
        do {
            let runtime = try ServiceRuntime(definition: definition, configuration: configuration, logger: logger)
            try await runtime.runUntilSignalled()
            exit(0)
        } catch {
            logger.critical("service stopped with an error", metadata: ["error": "\(error)"])
            exit(1)
        }
    }
}

/// One service assembled: database, request socket, publisher and subscriber.
public final class ServiceRuntime: Sendable {
    /// The service's database.
    public let pool: DatabasePool
    /// The request socket.
    public let server: RequestServer
    /// The outbox publisher.
    public let publisher: EventPublisher
    /// The subscriber, if the service applies other services' events.
    public let subscriber: EventSubscriber?
    private let logger: Logger

    /// Opens the database and builds the parts; nothing runs until ``run()``.
    public init(
        definition: ServiceDefinition, configuration: PlatformConfiguration, logger: Logger,
        verifier: any TokenVerifier = RefusingTokenVerifier(), catchUpInterval: Duration = .seconds(5)
    ) throws {
        self.logger = logger
        pool = try ServiceDatabase.open(
            directory: configuration.dataDirectoryURL, name: definition.name, durability: definition.durability,
            migrations: definition.migrations)
        let operations = BuiltinOperations.complete(definition, startedAt: .now)
        let dispatcher = RequestDispatcher(
            service: definition.name, operations: operations, verifier: verifier, pool: pool, logger: logger)
        var limits = RequestLimits()
        limits.deadline = .milliseconds(configuration.requestDeadlineMs)
        let endpoint = try configuration.bind ?? configuration.endpoint(of: definition.name)
        server = RequestServer(
            endpoint: endpoint, dispatcher: dispatcher, limits: limits, logger: logger, curve: configuration.serverCurve)
        publisher = EventPublisher(source: definition.name, pool: pool, busEndpoint: configuration.busInEndpoint, logger: logger)
        subscriber =
            definition.subscriptions.isEmpty
            ? nil
            : EventSubscriber(
                subscriptions: definition.subscriptions, pool: pool, busEndpoint: configuration.busOutEndpoint,
                sourceEndpoints: configuration.serviceEndpoints, serviceName: definition.name, logger: logger,
                catchUpInterval: catchUpInterval)
    }

    /// The parts in start order; they stop in reverse (requests first, publisher last).
    public var services: [any Service] {
        [publisher] + (subscriber.map { [$0] } ?? []) + [server]
    }

    /// Runs until SIGTERM or SIGINT.
    public func runUntilSignalled() async throws {
        let group = ServiceGroup(
            configuration: .init(
                services: services.map { .init(service: $0) }, gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [], logger: logger))
        try await group.run()
    }

    /// Runs until the task is cancelled or `group` is shut down (for in-process tests).
    public func makeGroup() -> ServiceGroup {
        ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: logger))
    }
}

extension PlatformConfiguration {
    /// The CURVE role of a server socket, when keys are configured.
    var serverCurve: CurveRole? {
        guard let curveSecretKey else { return nil }
        return .server(secretKey: curveSecretKey)
    }
}

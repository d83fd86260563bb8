import GRDB
import Logging
import ServiceLifecycle

/// What a service is: its name, operations, events, subscriptions and database.
/// The runtime adds `health`, `describe` and `events.replay` to every service.
public struct ServiceDefinition: Sendable {
    /// The service's name, the first segment of its operations (`booking`).
    public var name: String
    /// One line about the service, for `describe`.
    public var summary: String
    /// How its database survives power loss (see README, "Storage").
    public var durability: Durability
    /// Its domain operations.
    public var operations: [ServiceOperation]
    /// The event types it publishes.
    public var events: [EventDescription]
    /// Other services' events it applies.
    public var subscriptions: [EventSubscription]
    /// Registers its forward-only migrations (after the platform's own).
    public var migrations: @Sendable (inout DatabaseMigrator) -> Void
    /// The service's own token verifier (auth, which holds the keys); `nil` for the
    /// default one fed by `auth.keys`.
    public var verifier: (any TokenVerifier)?
    /// Runs once the database is open and migrated, before any request (loading keys, ...).
    public var prepare: @Sendable (DatabasePool) throws -> Void
    /// Background work to run beside the socket, given the opened database.
    public var workers: @Sendable (DatabasePool, Logger) -> [any Service]
    /// What runs each kind of durable timer the service schedules (``DurableTimers``).
    public var timers: [TimerHandler]

    /// Creates a definition.
    public init(
        name: String, summary: String, durability: Durability, operations: [ServiceOperation] = [],
        events: [EventDescription] = [], subscriptions: [EventSubscription] = [],
        migrations: @escaping @Sendable (inout DatabaseMigrator) -> Void = { _ in },
        verifier: (any TokenVerifier)? = nil,
        prepare: @escaping @Sendable (DatabasePool) throws -> Void = { _ in },
        workers: @escaping @Sendable (DatabasePool, Logger) -> [any Service] = { _, _ in [] },
        timers: [TimerHandler] = []
    ) {
        self.name = name
        self.summary = summary
        self.durability = durability
        self.operations = operations
        self.events = events
        self.subscriptions = subscriptions
        self.migrations = migrations
        self.verifier = verifier
        self.prepare = prepare
        self.workers = workers
        self.timers = timers
    }
}

/// The version every executable reports in `health`.
public enum BuildInfo {
    /// The system's version.
    public static let version = "0.1.0"
}

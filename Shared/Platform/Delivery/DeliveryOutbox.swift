import Foundation
import GRDB
import Synchronization

/// A service's queue of outgoing messages (emails, SMS, pushes) in its own database.
///
/// A message is queued with ``enqueue(_:id:channel:to:payload:)`` in the same transaction
/// as the change that needs it, so it exists exactly when the change does; a
/// ``DeliveryWorker`` sends it after the commit through the channel's
/// ``DeliveryTransport``, retries failures with backoff, and leaves what it gives up in
/// a dead-letter state that admins list and retry (``DeliveryOperations``). Delivery is
/// at least once: a crash between a send and its recording resends the message with the
/// same id, which transports pass on so that providers can drop the duplicate.
///
/// Rows live in `platform_delivery`. `next_attempt_at` (ms since 1970) is when a pending
/// message is due; for a sent or dead one it is when it became so, so one index serves
/// the due scan, the dead-letter list and the pruning of old sent rows.
public final class DeliveryOutbox: Sendable {
    /// The service whose database holds the queue (and names its admin operations).
    public let service: String
    /// The prefix of generated ids (`msg` gives `msg_0193a4f2c1e8_…`).
    public let idPrefix: String
    let wake = DeliveryWake()
    private let wakeOnCommit: CommitCollector<Bool>

    /// An outbox of `service`.
    public init(service: String, idPrefix: String = "msg") {
        self.service = service
        self.idPrefix = idPrefix
        let wake = self.wake
        wakeOnCommit = CommitCollector(merge: { _, _ in true }, onCommit: { _ in wake.signal() })
    }

    /// Queues a message in the current transaction and wakes the worker after the commit.
    /// With an `id` already queued (or sent within the last week), nothing changes:
    /// a caller that retries its transaction does not queue the message twice.
    ///
    ///
    /// - Parameters:
    ///   - priority: what goes first when more is due than the worker sends at once (a due
    ///     reminder before a broadcast's thousands).
    ///   - notBefore: the first attempt waits until then (quiet hours); `nil`: at once.
    /// - Returns: the message's id, `id` or a new one.
    @discardableResult
    public func enqueue(
        _ db: Database, id: String? = nil, channel: DeliveryChannel, to destination: String, payload: JSONValue,
        priority: DeliveryPriority = .normal, notBefore: Date? = nil
    ) throws -> String {
        let now = Date()
        let id = id ?? RecordID.make(prefix: idPrefix, at: now)
        let dueMs = max(Instant.milliseconds(now), notBefore.map(Instant.milliseconds) ?? 0)
        try db.cachedStatement(
            sql: """
                INSERT INTO platform_delivery (id, channel, destination, payload, next_attempt_at, created_at, priority)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING
                """
        ).execute(arguments: [
            id, channel, destination, String(decoding: payload.serialized, as: UTF8.self), dueMs, Instant.format(now), priority.rawValue,
        ])
        wakeAfterCommit(db)
        return id
    }

    /// Removes every message to `destination`, whatever its state, in the current
    /// transaction: when an account is deleted, or a device token changes hands, nothing
    /// addressed to it stays.
    public static func forget(_ db: Database, destination: String) throws {
        try db.execute(sql: "DELETE FROM platform_delivery WHERE destination = ?", arguments: [destination])
    }

    /// Wakes the worker once the current transaction commits: one commit hook however
    /// many messages it queues (a hook per message made a broadcast's chunk of 2,000
    /// quadratic: every statement visits every registered hook).
    func wakeAfterCommit(_ db: Database) {
        wakeOnCommit.add(true, in: db)
    }

    /// Creates `platform_delivery` (ServiceDatabase registers it with the platform's tables).
    static func registerMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("platform-delivery-1") { db in
            try db.execute(sql: """
                CREATE TABLE platform_delivery (
                    id TEXT PRIMARY KEY,
                    channel TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dead')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    last_error TEXT,
                    created_at TEXT NOT NULL,
                    sent_at TEXT
                );
                CREATE INDEX platform_delivery_due ON platform_delivery(status, next_attempt_at);
                """)
        }
        migrator.registerMigration("platform-delivery-2-priority") { db in
            try db.execute(sql: """
                ALTER TABLE platform_delivery ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
                CREATE INDEX platform_delivery_priority ON platform_delivery(status, priority, next_attempt_at);
                -- What is queued for an address (a push token handed to another user, an account deleted).
                CREATE INDEX platform_delivery_destination ON platform_delivery(destination);
                """)
        }
    }
}

/// Wakes the worker's thread: after a commit that queued a message, or a retry. Signals
/// while it is awake fold into one wake-up, so a burst of commits costs one extra scan.
final class DeliveryWake: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let signalled = Atomic<Bool>(false)

    func signal() {
        if !signalled.exchange(true, ordering: .acquiringAndReleasing) { semaphore.signal() }
    }

    /// Waits up to `milliseconds` for a signal.
    func wait(milliseconds: Int64) {
        _ = semaphore.wait(timeout: .now() + .milliseconds(Int(max(0, milliseconds))))
        signalled.store(false, ordering: .releasing)
    }
}

/// The SQL of the queue: what the worker and the admin operations read and write.
enum DeliveryQueue {
    /// Pending messages due at `nowMs`: the most urgent priority first, oldest due first
    /// within one. (One range of the priority index per level, so what waits for later,
    /// such as quiet hours, is never scanned.)
    static func due(_ db: Database, nowMs: Int64, limit: Int) throws -> [DeliveryMessage] {
        var messages: [DeliveryMessage] = []
        let statement = try db.cachedStatement(sql: """
            SELECT id, channel, destination, payload, attempts, created_at FROM platform_delivery
            WHERE status = 'pending' AND priority = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?
            """)
        for priority in DeliveryPriority.allCases.reversed() where messages.count < limit {
            let rows = try Row.fetchCursor(statement, arguments: [priority.rawValue, nowMs, limit - messages.count])
            while let row = try rows.next() {
                let payload = (try? JSONParser.parse(Data((row["payload"] as String).utf8))) ?? .object([:])
                messages.append(DeliveryMessage(
                    id: row["id"], channel: row["channel"], destination: row["destination"], payload: payload, attempts: row["attempts"],
                    createdAt: row["created_at"]))
            }
        }
        return messages
    }

    /// When the next pending message is due, if any.
    static func nextDueMs(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT MIN(next_attempt_at) FROM platform_delivery WHERE status = 'pending'")
    }

    /// What the worker records about one message.
    enum Update: Sendable {
        /// Delivered: the payload (it may hold a code) is erased.
        case sent(id: String, atMs: Int64)
        /// Failed: tried again at `nextMs`, or dead when `nextMs` is nil.
        case failed(id: String, attempts: Int, nextMs: Int64?, reason: String, atMs: Int64)
        /// Held back by the rate limit until `untilMs`; not an attempt.
        case deferred(id: String, untilMs: Int64)
    }

    /// Records updates; a message an admin or another writer moved meanwhile is left alone.
    static func apply(_ db: Database, _ updates: [Update]) throws {
        for update in updates {
            switch update {
            case .sent(let id, let atMs):
                try db.cachedStatement(
                    sql: """
                        UPDATE platform_delivery SET status = 'sent', payload = '{}', attempts = attempts + 1, sent_at = ?,
                        next_attempt_at = ? WHERE id = ? AND status = 'pending'
                        """
                ).execute(
                    arguments: [Instant.format(epochMilliseconds: atMs), atMs, id])
            case .failed(let id, let attempts, let nextMs, let reason, let atMs):
                try db.cachedStatement(
                    sql: """
                        UPDATE platform_delivery SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?
                        WHERE id = ? AND status = 'pending'
                        """
                ).execute(
                    arguments: [nextMs == nil ? DeliveryStatus.dead : .pending, attempts, nextMs ?? atMs, reason, id])
            case .deferred(let id, let untilMs):
                try db.cachedStatement(sql: "UPDATE platform_delivery SET next_attempt_at = ? WHERE id = ? AND status = 'pending'")
                    .execute(arguments: [untilMs, id])
            }
        }
    }

    /// Removes sent messages recorded before `beforeMs`; returns how many.
    static func pruneSent(_ db: Database, beforeMs: Int64) throws -> Int {
        try db.execute(sql: "DELETE FROM platform_delivery WHERE status = 'sent' AND next_attempt_at < ?", arguments: [beforeMs])
        return db.changesCount
    }
}

import Foundation
import GRDB
import Synchronization

/// Durable timers: a write schedules work at an instant, in its own transaction; the
/// service's ``TimerWorker`` runs the work once after that instant, in a write
/// transaction of its own together with the work's effects, also across restarts.
///
/// A timer is a row of `platform_timer`. Firing deletes the row in the transaction that
/// applies the handler's effects, so a timer's work is applied exactly once: a crash
/// before the commit leaves the row, and the timer fires again after the restart. What
/// fell due while the service was down fires at start-up with ``FiredTimer/late`` set.
///
/// A timer may carry a `key`, unique per kind: scheduling the same (kind, key) again
/// moves the timer (and replaces its payload), and ``cancel(_:kind:key:)`` removes it.
/// A handler may schedule its own kind and key again: a recurring timer (the fired row is
/// gone by then).
public enum DurableTimers {
    /// At most this many bytes of payload JSON per timer.
    public static let maximumPayloadBytes = 16 * 1_024

    /// Schedules `kind` at `instant` with `payload`, in the caller's transaction; the
    /// worker is woken after the commit. Returns the timer's id.
    @discardableResult
    public static func schedule(
        _ db: Database, kind: String, at instant: Date, key: String? = nil, payload: some Encodable = [String: String]()
    ) throws -> Int64 {
        // Most timers carry no payload: its text without an encoder (a burst of alerts sets thousands).
        let json = (payload as? [String: String])?.isEmpty == true ? Data("{}".utf8) : try WireJSON.encode(payload)
        guard json.count <= maximumPayloadBytes else { throw ServiceError.internal(ref: "timer-payload-too-large") }
        let dueMs = Int64((instant.timeIntervalSince1970 * 1_000).rounded(.up))
        if let key,
            let unchanged = try db.cachedStatement(sql: "SELECT id, due_ms, payload, dead FROM platform_timer WHERE kind = ? AND key = ?")
                .firstRow(kind, key, read: { columns -> Int64? in
                    guard columns.integer(1) == dueMs, !columns.bool(3), let payload = columns.utf8(2), payload.elementsEqual(json) else { return nil }
                    return columns.integer(0)
                }),
            let id = unchanged
        {
            // Set again as it stands (a plan's next reminder after a deposit, say): nothing to write, no one to wake.
            return id
        }
        let id = try db.cachedStatement(
            sql: """
                INSERT INTO platform_timer (kind, key, due_ms, payload, created_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (kind, key) WHERE key IS NOT NULL
                DO UPDATE SET due_ms = excluded.due_ms, payload = excluded.payload, created_at = excluded.created_at,
                              attempts = 0, last_error = NULL, dead = 0
                RETURNING id
                """
        ).firstRow(kind, key, dueMs, UTF8Text(json), Instant.format(Date())) { $0.integer(0) }.flatMap { $0 } ?? db.lastInsertedRowID
        TimerWakeups.wake(after: db, dueMs: dueMs)
        return id
    }

    /// Removes the keyed timer, in the caller's transaction; returns whether there was one.
    @discardableResult
    public static func cancel(_ db: Database, kind: String, key: String) throws -> Bool {
        try db.cachedStatement(sql: "DELETE FROM platform_timer WHERE kind = ? AND key = ?").run(kind, key)
        return db.changesCount > 0
    }

    /// Pending and dead timers, for `describe`-level counts and tests.
    public static func counts(_ db: Database) throws -> (pending: Int, dead: Int) {
        let row = try Row.fetchOne(db, sql: "SELECT COUNT(*) FILTER (WHERE dead = 0), COUNT(*) FILTER (WHERE dead = 1) FROM platform_timer")
        return (row?[0] ?? 0, row?[1] ?? 0)
    }

    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("platform-timers-1") { db in
            try db.execute(sql: """
                CREATE TABLE platform_timer (
                    id INTEGER PRIMARY KEY,
                    kind TEXT NOT NULL,
                    key TEXT,
                    due_ms INTEGER NOT NULL,
                    payload TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_error TEXT,
                    dead INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX platform_timer_due ON platform_timer(dead, due_ms);
                CREATE UNIQUE INDEX platform_timer_key ON platform_timer(kind, key) WHERE key IS NOT NULL;
                """)
        }
    }
}

/// A timer as its handler sees it.
public struct FiredTimer: Sendable {
    /// The timer's id.
    public var id: Int64
    /// Its kind, which chose the handler.
    public var kind: String
    /// Its key, if it was scheduled with one.
    public var key: String?
    /// The instant it was due.
    public var dueAt: Date
    /// When it fired.
    public var firedAt: Date
    /// It fell due while the service was not running (it fires at start-up).
    public var late: Bool
    /// Earlier attempts that threw.
    public var attempts: Int
    /// The payload's JSON text.
    public var payload: Data

    /// A timer as the worker hands it over (tests drive handlers with their own clock).
    public init(id: Int64, kind: String, key: String?, dueAt: Date, firedAt: Date, late: Bool = false, attempts: Int = 0, payload: Data = Data("{}".utf8)) {
        self.id = id
        self.kind = kind
        self.key = key
        self.dueAt = dueAt
        self.firedAt = firedAt
        self.late = late
        self.attempts = attempts
        self.payload = payload
    }

    /// The payload decoded as `type`.
    public func payload<T: Decodable>(as type: T.Type) throws -> T {
        try JSONValueDecoder().decode(T.self, from: JSONParser.parse(payload))
    }
}

/// What runs a kind of timer: its effects are written in `run`'s transaction, with the
/// timer's removal. Throwing rolls the effects back; the timer is tried again later
/// (``TimerWorker/defaultRetry``) and, after its last attempt, kept as dead for an operator.
public struct TimerHandler: Sendable {
    /// The kind it handles.
    public var kind: String
    /// The work; it must have no effect outside the database except through
    /// `afterNextTransaction`.
    public var run: @Sendable (Database, FiredTimer) throws -> Void

    /// Creates a handler for `kind`.
    public init(kind: String, run: @escaping @Sendable (Database, FiredTimer) throws -> Void) {
        self.kind = kind
        self.run = run
    }
}

/// Wakes the timer workers after a transaction that scheduled a timer commits, when the
/// earliest timer it scheduled is due before a worker planned to wake anyway (one commit
/// hook per transaction, ``CommitCollector``). A process runs one service (tests run
/// several), so every worker of the process is asked and looks at its own database:
/// cheaper than finding the database's worker.
enum TimerWakeups {
    private static let wakes = Mutex<[ObjectIdentifier: TimerWake]>([:])
    /// The earliest due time each transaction scheduled.
    private static let commits = CommitCollector<Int64>(merge: min) { earliest in
        for wake in wakes.withLock({ Array($0.values) }) { wake.signal(dueMs: earliest) }
    }

    static func register(_ wake: TimerWake) {
        wakes.withLock { $0[ObjectIdentifier(wake)] = wake }
    }

    static func unregister(_ wake: TimerWake) {
        _ = wakes.withLock { $0.removeValue(forKey: ObjectIdentifier(wake)) }
    }

    static func wake(after db: Database, dueMs: Int64) { commits.add(dueMs, in: db) }
}

/// A re-armable wake-up: `signal` ends the current or next `wait`.
final class TimerWake: Sendable {
    private let state = Mutex<(signalled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    /// When the worker will wake by itself (ms since 1970), or `Int64.min` while it is
    /// busy (then every signal counts: what it read may be stale).
    private let plannedWakeMs = Atomic<Int64>(Int64.min)

    /// The worker is about to look at its timers: every signal counts until ``planWake(atMs:)``.
    func busy() { plannedWakeMs.store(Int64.min, ordering: .sequentiallyConsistent) }

    /// The worker will wake by itself at `ms`: a timer due later need not wake it.
    func planWake(atMs ms: Int64) { plannedWakeMs.store(ms, ordering: .sequentiallyConsistent) }

    /// Signals unless the worker already plans to wake before `dueMs`.
    func signal(dueMs: Int64) {
        let planned = plannedWakeMs.load(ordering: .sequentiallyConsistent)
        guard planned == Int64.min || dueMs < planned else { return }
        signal()
    }

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.signalled = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when signalled, or after `timeout`.
    func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                    self.signal()
                } catch {}
            }
            group.addTask {
                // Cancelled (shutdown): the waiter is released at once.
                await withTaskCancellationHandler { await self.waitForSignal() } onCancel: { self.signal() }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.signalled {
                    state.signalled = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

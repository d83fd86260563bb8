import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Synchronization

/// Fires a service's due timers (``DurableTimers``): each with its removal, up to
/// `batchSize` per write transaction (in a savepoint each when one of them throws); then sleeps until
/// the next one is due, or until a commit schedules one (at most `idleCheck`).
public final class TimerWorker: Service, Sendable {
    private let pool: DatabasePool
    private let handlers: [String: TimerHandler]
    private let retry: BackoffPolicy
    private let logger: Logger
    private let batchSize: Int
    private let idleCheck: Duration
    private let wake = TimerWake()
    private let stopping = Atomic<Bool>(false)
    /// Timers due before this fell due while the service was down: they are late.
    private let startedAt = Date()

    /// A timer whose handler threw is tried again 1 s, 2 s, 4 s … later (less up to a fifth
    /// at random, so timers that failed together spread out), at most an hour apart; after
    /// 12 attempts it is dead.
    public static let defaultRetry = BackoffPolicy(initial: .seconds(1), cap: .seconds(3_600), jitter: 0.2, maxAttempts: 12)

    /// Creates the worker for `handlers` over the service's database.
    public init(
        pool: DatabasePool, handlers: [TimerHandler], retry: BackoffPolicy = TimerWorker.defaultRetry, logger: Logger, batchSize: Int = 1_000,
        idleCheck: Duration = .seconds(30)
    ) {
        self.pool = pool
        self.handlers = Dictionary(handlers.map { ($0.kind, $0) }, uniquingKeysWith: { first, _ in first })
        self.retry = retry
        self.logger = logger
        self.batchSize = batchSize
        self.idleCheck = idleCheck
    }

    public func run() async throws {
        TimerWakeups.register(wake)
        defer { TimerWakeups.unregister(wake) }
        await withGracefulShutdownHandler {
            while !Task.isCancelled && !stopping.load(ordering: .relaxed) {
                wake.busy()
                let next = await fireDue()
                var wait = idleCheck
                if let next {
                    let untilNext = Duration.milliseconds(max(0, Int64((next.timeIntervalSinceNow * 1_000).rounded(.up))))
                    wait = min(wait, untilNext)
                }
                guard wait > .zero else { continue }
                // A commit that schedules a timer due before this wakes the worker (TimerWakeups).
                wake.planWake(atMs: Instant.milliseconds(Date()) + Int64(wait.milliseconds.rounded(.down)))
                await wake.wait(upTo: wait)
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            self.wake.signal()
        }
    }

    /// Fires everything due now; returns when the next pending timer is due.
    func fireDue() async -> Date? {
        while !stopping.load(ordering: .relaxed) {
            do {
                let now = Date()
                let outcome: BatchOutcome
                do {
                    outcome = try await pool.write { db in try self.fireBatch(db, now: now, isolated: false) }
                } catch is PartialBatch {
                    // A handler threw: nothing of that attempt was kept; each timer again in
                    // its own savepoint, so the others still fire.
                    outcome = try await pool.write { db in try self.fireBatch(db, now: now, isolated: true) }
                }
                if outcome.late > 0 {
                    logger.notice("timers that fell due while the service was down fired", metadata: ["count": "\(outcome.late)"])
                }
                if outcome.examined < batchSize { return outcome.next }
            } catch {
                logger.error("cannot fire timers", metadata: ["error": "\(error)"])
                return Date().addingTimeInterval(1)
            }
        }
        return nil
    }

    private struct BatchOutcome {
        var examined = 0
        var late = 0
        var next: Date?
    }

    /// A handler threw in a batch run without savepoints: its transaction is rolled back.
    private struct PartialBatch: Error {}

    /// Fires the due timers, up to `batchSize`. Not `isolated`, they run one after the
    /// other in the transaction and a handler that throws throws ``PartialBatch`` (two
    /// statements fewer per timer: a burst of 10,000 is the common case, a failure the rare
    /// one); `isolated`, each runs in its own savepoint and one that throws is rolled back
    /// alone and tried again later.
    private func fireBatch(_ db: Database, now: Date, isolated: Bool) throws -> BatchOutcome {
        let nowMs = Instant.milliseconds(now)
        // Read by position and bound directly (a burst fires thousands per batch).
        var timers: [FiredTimer] = []
        try db.cachedStatement(
            sql: "SELECT id, kind, key, due_ms, payload, attempts FROM platform_timer WHERE dead = 0 AND due_ms <= ? ORDER BY due_ms, id LIMIT ?"
        ).forEachRow(nowMs, batchSize) { row in
            let dueMs = row.integer(3) ?? 0
            timers.append(
                FiredTimer(
                    id: row.integer(0) ?? 0, kind: row.string(1), key: row.text(2), dueAt: Date(timeIntervalSince1970: Double(dueMs) / 1_000),
                    firedAt: now, late: Double(dueMs) / 1_000 < startedAt.timeIntervalSince1970, attempts: Int(row.integer(5) ?? 0),
                    payload: row.utf8(4).map { Data($0) } ?? Data()))
        }
        var outcome = BatchOutcome(examined: timers.count)
        for timer in timers {
            guard let handler = handlers[timer.kind] else {
                try markFailed(db, timer, reason: "no handler for this kind", nowMs: nowMs, final: true)
                continue
            }
            // Removed first: a recurring handler may schedule its own kind and key again,
            // which makes a new row (a rollback restores this one).
            func fire() throws {
                try db.cachedStatement(sql: "DELETE FROM platform_timer WHERE id = ?").run(timer.id)
                try handler.run(db, timer)
            }
            guard isolated else {
                do {
                    try fire()
                } catch {
                    logger.notice(
                        "timer failed; its batch runs again with each timer apart",
                        metadata: ["kind": "\(timer.kind)", "timer": "\(timer.id)", "error": "\(Self.describe(error))"])
                    throw PartialBatch()
                }
                if timer.late { outcome.late += 1 }
                continue
            }
            do {
                try db.inSavepoint {
                    try fire()
                    return .commit
                }
                if timer.late { outcome.late += 1 }
            } catch {
                try markFailed(db, timer, reason: Self.describe(error), nowMs: nowMs, final: false)
            }
        }
        outcome.next = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MIN(due_ms) FROM platform_timer WHERE dead = 0"))
            .map { Date(timeIntervalSince1970: Double($0) / 1_000) }
        return outcome
    }

    private func markFailed(_ db: Database, _ timer: FiredTimer, reason: String, nowMs: Int64, final: Bool) throws {
        let attempts = timer.attempts + 1
        switch retry.decide(attempts: attempts, permanent: final, random: Double.random(in: 0..<1)) {
        case .retry(let delay):
            try db.execute(
                sql: "UPDATE platform_timer SET attempts = ?, last_error = ?, due_ms = ? WHERE id = ?",
                arguments: [attempts, reason, nowMs + delay, timer.id])
            logger.warning(
                "timer failed; it will be tried again",
                metadata: ["kind": "\(timer.kind)", "timer": "\(timer.id)", "attempts": "\(attempts)", "error": "\(reason)"])
        case .dead:
            try db.execute(
                sql: "UPDATE platform_timer SET attempts = ?, last_error = ?, dead = 1 WHERE id = ?", arguments: [attempts, reason, timer.id])
            logger.error(
                "timer is dead: kept for an operator", metadata: ["kind": "\(timer.kind)", "timer": "\(timer.id)", "error": "\(reason)"])
        }
    }

    /// A short description of a handler's error, kept with the timer (no payload, no SQL).
    private static func describe(_ error: any Error) -> String {
        if let serviceError = error as? ServiceError { return serviceError.code.rawValue }
        if let databaseError = error as? DatabaseError { return "database error \(databaseError.resultCode.rawValue)" }
        return String(String(describing: type(of: error)).prefix(200))
    }
}

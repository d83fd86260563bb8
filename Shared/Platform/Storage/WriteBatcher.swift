import Foundation
import GRDB
import GRDBSQLite
import Logging
import SQLiteWALBuffer
import Synchronization

/// Group commit: write requests that arrive together share one transaction, and so one
/// fsync.
///
/// With `synchronous=FULL` every commit waits for the disk, so committing requests one
/// by one caps a service at roughly one write per fsync. The batcher takes every write
/// waiting when the writer becomes free (up to 256), runs them one after the other in one
/// transaction, and commits once. Callers get their results or errors after the commit,
/// so nobody is told "done" before the data is durable.
///
/// A request that throws must leave nothing behind while the others' writes stand.
/// Handlers validate before they write, so almost every refusal throws before its first
/// change: the batcher checks SQLite's change counter around each request and, when it
/// did not move, the refusal needs no undo. Only when a request throws after changing
/// rows is the whole transaction rolled back and the batch run again with each request
/// in its own savepoint. (Savepoints for every request cost a SAVEPOINT and a RELEASE
/// statement each, and a copy of every page a request touches into the sub-journal:
/// about a tenth of the writer's time.) So a request's body may run twice, in a
/// transaction that is then rolled back: its effects outside the database must wait for
/// the commit (`afterNextTransaction`), as they must anyway.
///
/// The writer also decides when the write-ahead log starts over (``LogRestart``).
public final class WriteBatcher: Sendable {
    private struct Job: Sendable {
        let body: @Sendable (Database) throws -> any Sendable
        /// Told the outcome after the commit (or the rollback).
        let done: @Sendable (Swift.Result<any Sendable, any Error>) -> Void
    }

    private struct State {
        var jobs: [Job] = []
        /// Whether the writer thread is alive (it ends after a quiet spell).
        var writerRunning = false
    }

    private let pool: DatabasePool
    private let state = Mutex(State())
    /// Signalled for each job queued while the writer thread is alive.
    private let queued = DispatchSemaphore(value: 0)
    private let maxBatch: Int
    private let idleExit: DispatchTimeInterval
    private let logRestart: LogRestart
    /// The log's length in frames after the writer connection's last commit.
    private let logFrames: LogFrames
    private static let logger = Logger(label: "write-batcher")

    /// Creates a batcher over the service's database. Its writer thread starts with the
    /// first write and ends after `idleExit` without one.
    public init(pool: DatabasePool, maxBatch: Int = 256, idleExit: DispatchTimeInterval = .seconds(10), logRestart: LogRestart = LogRestart()) {
        self.pool = pool
        self.maxBatch = maxBatch
        self.idleExit = idleExit
        self.logRestart = logRestart
        self.logFrames = LogFrames(backstop: logRestart.backstopFrames)
    }

    /// Runs `body` in the next group transaction and returns its result once that
    /// transaction has committed.
    public func write<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        let value = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any Sendable, any Error>) in
            enqueue(Job(body: { db in try body(db) }, done: { continuation.resume(with: $0) }))
        }
        guard let result = value as? Result else { throw ServiceError.internal(ref: "write-batcher") }
        return result
    }

    /// Queues `body` for the next group transaction without waiting: `done` gets its
    /// result (or error) on the writer thread once that transaction has committed (or
    /// failed), so it must only hand the outcome on (to a ``Mailbox``, say). For a thread
    /// that is not a task (a request socket's), which then needs no task nor continuation.
    public func submit(_ body: @escaping @Sendable (Database) throws -> any Sendable, done: @escaping @Sendable (Swift.Result<any Sendable, any Error>) -> Void) {
        enqueue(Job(body: body, done: done))
    }

    private func enqueue(_ job: Job) {
        let startWriter = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard !state.writerRunning else { return false }
            state.writerRunning = true
            return true
        }
        if startWriter { startWriterThread() } else { queued.signal() }
    }

    /// The writer: one dedicated thread that takes every waiting job, runs them in one
    /// transaction on the pool's writer connection (GRDB runs a synchronous write on the
    /// calling thread when its queue is free), and resumes their callers after the commit.
    /// A thread of its own, not a task hopping to GRDB's queue and back: on a busy
    /// machine each hand-off between threads costs as much as a small write.
    private func startWriterThread() {
        let thread = Thread { [self] in
            Thread.nameForKernel("writer")
            // Every transaction of this thread commits with the database's durability: a
            // fully synced one's log writes may wait for its sync (SQLiteWALBuffer).
            backend_wal_buffer_gather_on_this_thread(1)
            while true {
                let batch = state.withLock { state -> [Job] in
                    let batch = Array(state.jobs.prefix(maxBatch))
                    state.jobs.removeFirst(batch.count)
                    return batch
                }
                if batch.isEmpty {
                    if queued.wait(timeout: .now() + idleExit) == .timedOut {
                        let quiet = state.withLock { state -> Bool in
                            guard state.jobs.isEmpty else { return false }
                            state.writerRunning = false
                            return true
                        }
                        if quiet { return }
                    }
                    continue
                }
                run(batch)
            }
        }
        thread.name = "writer"
        thread.start()
    }

    private func run(_ batch: [Job]) {
        do {
            let results: [Swift.Result<any Sendable, any Error>]
            do {
                results = try transaction { db in try Self.runWithoutSavepoints(batch, db) }
            } catch is PartialWrite {
                results = try transaction { db in Self.runInSavepoints(batch, db) }
            }
            for (job, result) in zip(batch, results) { job.done(result) }
        } catch {
            // The commit itself failed: nothing of the batch was written.
            for job in batch { job.done(.failure(error)) }
        }
        // After the replies: whoever waits now waits for this, not those just answered.
        let waiting = state.withLock { !$0.jobs.isEmpty }
        if logRestart.due(frames: logFrames.frames.load(ordering: .relaxed), writesWaiting: waiting) {
            // Passive: what the checkpointer beside the writer has not copied yet, then the
            // next transaction starts the log over. Busy (the checkpointer is at it): the
            // next batch tries again.
            do {
                _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            } catch {
                Self.logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// `body` in one transaction on the writer connection (as `pool.write`), then, still
    /// holding the connection, tells the log's write buffer whether it committed: what a
    /// rolled-back transaction whose pages spilled left there is dropped (SQLiteWALBuffer).
    private func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            // This batcher's counter hears the commit (another batcher of the same pool, in
            // tests, may have put its own there).
            logFrames.hear(db.sqliteConnection)
            var result: T?
            do {
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
            } catch {
                _ = backend_wal_buffer_transaction_ended(0)
                throw error
            }
            let code = backend_wal_buffer_transaction_ended(1)
            guard code == ResultCode.SQLITE_OK.rawValue else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "the log's write buffer") }
            return result!
        }
    }

    /// A request threw after it changed rows: the transaction is rolled back and the batch
    /// runs again in savepoints.
    private struct PartialWrite: Error {}

    private static func runWithoutSavepoints(_ batch: [Job], _ db: Database) throws -> [Swift.Result<any Sendable, any Error>] {
        var results: [Swift.Result<any Sendable, any Error>] = []
        results.reserveCapacity(batch.count)
        for job in batch {
            let changesBefore = db.totalChangesCount
            do {
                results.append(.success(try job.body(db)))
            } catch {
                // Rows changed, or SQLite ended the transaction itself (a full disk, say).
                guard db.totalChangesCount == changesBefore, db.isInsideTransaction else { throw PartialWrite() }
                results.append(.failure(error))
            }
        }
        return results
    }

    private static func runInSavepoints(_ batch: [Job], _ db: Database) -> [Swift.Result<any Sendable, any Error>] {
        batch.map { job in
            Swift.Result {
                var output: (any Sendable)?
                try db.inSavepoint {
                    output = try job.body(db)
                    return .commit
                }
                guard let output else { throw ServiceError.internal(ref: "write-batcher") }
                return output
            }
        }
    }
}

/// When the writer starts the write-ahead log over.
///
/// SQLite starts its log over (writes again from its first frame) only in a write
/// transaction that begins when every frame has been copied into the database file. The
/// checkpointer beside the writer (``WALCheckpointer``) copies while the writer appends,
/// so under a steady stream of writes it never finds the log complete, and without the
/// writer's help the log would grow for as long as the writes go on. SQLite's own answer,
/// the automatic checkpoint in the commit that crosses a threshold, holds that commit's
/// callers while it copies the rest, syncs the database file and truncates it: on the
/// booking benchmark, the commit that crossed it took 5 to 20 ms instead of 1 ms, every
/// 150 ms or so, and everyone waiting for that commit with it.
///
/// So the writer runs that last checkpoint itself, after the batch's callers have their
/// replies: when it has nothing else to do and the log holds at least `idleFrames`, or,
/// however busy it is, once the log holds `busyFrames` (32 MiB at the default, as SQLite's
/// own checkpoint at 8,000 pages left it; 32,768 pages measured the same). What it copies
/// is normally what came in since the checkpointer's last pass.
///
/// Other writes on the pool's writer connection (`pool.write`: event subscribers, timers,
/// housekeeping) commit under the same hook, so SQLite's behaviour is kept for them as a
/// backstop: a commit that leaves the log at `backstopFrames` or more checkpoints in place.
/// A read that holds an old snapshot keeps the log from starting over, whoever
/// checkpoints, so the log grows behind it; ``ServiceDatabase`` sets `journal_size_limit`
/// so that the file is cut back when the log next starts over.
public struct LogRestart: Sendable {
    public var idleFrames: Int
    public var busyFrames: Int

    /// Twice `busyFrames`.
    public var backstopFrames: Int { busyFrames > Int.max / 2 ? Int.max : busyFrames * 2 }

    public init(idleFrames: Int = 1_000, busyFrames: Int = 8_192) {
        self.idleFrames = idleFrames
        self.busyFrames = busyFrames
    }

    /// Whether the writer should checkpoint now, with the log at `frames` frames.
    public func due(frames: Int, writesWaiting: Bool) -> Bool {
        frames >= busyFrames || (!writesWaiting && frames >= idleFrames)
    }
}

/// The frame count SQLite reports after each commit of a connection (its write-ahead log
/// hook, which replaces the automatic checkpoint on that connection).
private final class LogFrames: Sendable {
    let frames = Atomic<Int>(0)
    /// The length at which a commit checkpoints in place, as SQLite's automatic checkpoint.
    let backstop: Int

    /// Retained for the life of the process: the connection may call the hook after the
    /// batcher that installed it is gone (a later write on the pool).
    init(backstop: Int) {
        self.backstop = backstop
        _ = Unmanaged.passRetained(self)
    }

    /// Makes this counter the one the connection's commits update.
    func hear(_ connection: OpaquePointer?) {
        sqlite3_wal_hook(connection, { context, connection, database, frames in
            let counter = Unmanaged<LogFrames>.fromOpaque(context!).takeUnretainedValue()
            counter.frames.store(Int(frames), ordering: .relaxed)
            // As SQLite's own hook: the commit is durable; a failed checkpoint is not its error.
            if Int(frames) >= counter.backstop { _ = sqlite3_wal_checkpoint(connection, database) }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}

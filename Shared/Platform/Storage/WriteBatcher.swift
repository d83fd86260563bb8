import Foundation
import GRDB
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
public final class WriteBatcher: Sendable {
    private struct Job: Sendable {
        let body: @Sendable (Database) throws -> any Sendable
        let continuation: CheckedContinuation<any Sendable, any Error>
    }

    private let pool: DatabasePool
    private let state = Mutex<(jobs: [Job], draining: Bool)>(([], false))
    private let maxBatch: Int

    /// Creates a batcher over the service's database.
    public init(pool: DatabasePool, maxBatch: Int = 256) {
        self.pool = pool
        self.maxBatch = maxBatch
    }

    /// Runs `body` in a savepoint of the next group transaction and returns its result
    /// once that transaction has committed.
    public func write<Result: Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        let value = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any Sendable, any Error>) in
            let startDrain = state.withLock { state -> Bool in
                state.jobs.append(Job(body: { db in try body(db) }, continuation: continuation))
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if startDrain { Task { await self.drain() } }
        }
        guard let result = value as? Result else { throw ServiceError.internal(ref: "write-batcher") }
        return result
    }

    private func drain() async {
        while true {
            let batch = state.withLock { state -> [Job] in
                let batch = Array(state.jobs.prefix(maxBatch))
                state.jobs.removeFirst(batch.count)
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                let results: [Swift.Result<any Sendable, any Error>]
                do {
                    results = try await pool.write { db in try Self.runWithoutSavepoints(batch, db) }
                } catch is PartialWrite {
                    results = try await pool.write { db in Self.runInSavepoints(batch, db) }
                }
                for (job, result) in zip(batch, results) { job.continuation.resume(with: result) }
            } catch {
                // The commit itself failed: nothing of the batch was written.
                for job in batch { job.continuation.resume(throwing: error) }
            }
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

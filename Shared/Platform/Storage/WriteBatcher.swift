import Foundation
import GRDB
import Synchronization

/// Group commit: write requests that arrive together share one transaction, and so one
/// fsync, each in its own savepoint.
///
/// With `synchronous=FULL` every commit waits for the disk, so committing requests one
/// by one caps a service at roughly one write per fsync. The batcher takes every write
/// waiting when the writer becomes free (up to 256), runs each in a savepoint of one
/// transaction, and commits once. A request that throws rolls back its own savepoint
/// only; its caller gets its error, the others their results, all after the commit, so
/// nobody is told "done" before the data is durable.
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
                let results = try await pool.write { db -> [Swift.Result<any Sendable, any Error>] in
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
                for (job, result) in zip(batch, results) { job.continuation.resume(with: result) }
            } catch {
                // The commit itself failed: nothing of the batch was written.
                for job in batch { job.continuation.resume(throwing: error) }
            }
        }
    }
}

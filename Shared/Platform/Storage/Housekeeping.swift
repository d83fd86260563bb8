import Foundation
import GRDB
import Logging
import ServiceLifecycle

/// Periodic clean-up of the platform's own tables: idempotency keys older than a week
/// (a client retries within minutes; a week is generous) are removed once an hour.
public struct Housekeeping: Service {
    let pool: DatabasePool
    let logger: Logger
    let keepIdempotencyKeys: TimeInterval

    /// Creates the clean-up for a service's database.
    public init(pool: DatabasePool, logger: Logger, keepIdempotencyKeys: TimeInterval = 7 * 86_400) {
        self.pool = pool
        self.logger = logger
        self.keepIdempotencyKeys = keepIdempotencyKeys
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let removed = try await pool.write { db in try IdempotencyStore.prune(db, olderThan: keepIdempotencyKeys) }
                    if removed > 0 { logger.info("pruned idempotency keys", metadata: ["count": "\(removed)"]) }
                } catch {
                    logger.warning("cannot prune idempotency keys", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(3_600))
            }
        }
    }
}

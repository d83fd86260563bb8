import Foundation
import GRDB
import Logging
import ServiceLifecycle

/// Periodic clean-up of the platform's own tables: idempotency keys older than a week
/// (a client retries within minutes; a week is generous), revocations whose tokens have
/// all expired (after an hour), and deletion markers of the
/// changes feed older than 45 days are removed once an hour, and the service's media are
/// swept (``MediaSweep``).
public struct Housekeeping: Service {
    let pool: DatabasePool
    let logger: Logger
    let keepIdempotencyKeys: TimeInterval
    let media: MediaStore?

    /// Creates the clean-up for a service's database and, when given, its media files.
    public init(pool: DatabasePool, logger: Logger, keepIdempotencyKeys: TimeInterval = 7 * 86_400, media: MediaStore? = nil) {
        self.pool = pool
        self.logger = logger
        self.keepIdempotencyKeys = keepIdempotencyKeys
        self.media = media
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let removed = try await pool.write { db in try IdempotencyStore.prune(db, olderThan: keepIdempotencyKeys) }
                    if removed > 0 { logger.info("pruned idempotency keys", metadata: ["count": "\(removed)"]) }
                    let tombstones = try await pool.write { db in try ChangeFeed.prune(db) }
                    _ = try await pool.write { db in try SessionRevocations.prune(db) }
                    if tombstones > 0 { logger.info("pruned deletion markers", metadata: ["count": "\(tombstones)"]) }
                } catch {
                    logger.warning("cannot prune idempotency keys or deletion markers", metadata: ["error": "\(error)"])
                }
                if let media {
                    do {
                        let swept = try await MediaSweep.run(pool: pool, store: media)
                        if swept != MediaSweep.Outcome() {
                            logger.info(
                                "swept media",
                                metadata: ["uploads": "\(swept.uploads)", "files": "\(swept.files)", "temporaries": "\(swept.temporaries)"])
                        }
                    } catch {
                        logger.warning("cannot sweep media", metadata: ["error": "\(error)"])
                    }
                }
                try? await Task.sleep(for: .seconds(3_600))
            }
        }
    }
}

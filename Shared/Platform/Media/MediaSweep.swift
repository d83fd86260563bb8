import Foundation
import GRDB

/// The media clean-up a service's housekeeping runs at start and then hourly: uploads
/// nothing has referred to for a day go (a client uploads, then sets the image on its
/// row; one that never does leaves nothing behind), files no row names go (a crash after
/// a commit and before its file removal, or an upload whose transaction failed), and so do
/// temporary files of uploads that died mid-write.
public enum MediaSweep {
    /// What one pass removed.
    public struct Outcome: Sendable, Equatable {
        /// Upload rows removed because nothing referred to them (their files go after the
        /// commit unless another upload has the same content).
        public var uploads = 0
        /// Files found with no row naming them, removed after the commit unless an upload of
        /// the same content committed meanwhile.
        public var files = 0
        /// Temporary files removed.
        public var temporaries = 0

        /// Nothing removed.
        public init() {}
    }

    /// How long an upload nothing refers to is kept.
    public static let unreferencedGrace: TimeInterval = 86_400
    /// How old a file must be before the sweep may remove it for want of a row: younger
    /// ones may belong to an upload between its file and its commit.
    public static let settle: TimeInterval = 600

    /// One pass over `store` and the rows of `pool`.
    public static func run(
        pool: DatabasePool, store: MediaStore, now: Date = Date(), unreferencedGrace: TimeInterval = unreferencedGrace,
        settle: TimeInterval = settle
    ) async throws -> Outcome {
        var outcome = Outcome()
        let stored = try await MediaStore.files.run {
            (temporaries: store.removeTemporaries(writtenBefore: now.addingTimeInterval(-3_600)),
             hashes: store.hashes(writtenBefore: now.addingTimeInterval(-settle)))
        }
        outcome.temporaries = stored.temporaries
        // Which files no row names is read outside the writer; the writer's hook checks again.
        let orphans = try await pool.read { db in
            try stored.hashes.filter { try Bool.fetchOne(db, sql: "SELECT 1 FROM platform_media WHERE sha256 = ?", arguments: [$0]) != true }
        }
        let cutoff = Instant.format(now.addingTimeInterval(-unreferencedGrace))
        let expired = try await pool.write { db -> Int in
            let hashes = try String.fetchAll(
                db,
                sql: """
                    DELETE FROM platform_media
                    WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM platform_media_reference r WHERE r.media_id = platform_media.id)
                    RETURNING sha256
                    """, arguments: [cutoff])
            MediaCatalog.removeFilesAfterCommit(db, Set(hashes).union(orphans), store: store)
            return hashes.count
        }
        outcome.uploads = expired
        outcome.files = orphans.count
        return outcome
    }
}

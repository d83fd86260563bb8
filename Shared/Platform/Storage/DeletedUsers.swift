import GRDB

/// Users whose account deletion (`auth.user.deleted`) the service has applied, kept for
/// good as a bare id and an instant. A write that names a user on someone else's behalf
/// (staff crediting a pass, a late payment) checks here inside its transaction, so it
/// never recreates data for an account that is gone, however its checks before the
/// transaction went. (A user's own requests are stopped by their revoked session, see
/// ``RequestContext/commit(requiringLiveSession:_:)``.)
public enum DeletedUsers {
    static func registerMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("platform-deleted-users-1") { db in
            try db.execute(sql: """
                CREATE TABLE platform_deleted_user (
                    user_id TEXT PRIMARY KEY,
                    deleted_at TEXT NOT NULL
                ) WITHOUT ROWID;
                """)
        }
    }

    /// Records `user` as deleted, in the transaction that applies the deletion.
    public static func record(_ db: Database, user: String, at: String) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO platform_deleted_user (user_id, deleted_at) VALUES (?, ?)", arguments: [user, at])
    }

    /// Whether `user`'s deletion was applied.
    public static func contains(_ db: Database, user: String) throws -> Bool {
        try db.cachedStatement(sql: "SELECT 1 FROM platform_deleted_user WHERE user_id = ?").firstRow(user) { _ in true } ?? false
    }
}

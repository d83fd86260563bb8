import GRDB

/// A counter per user that SQLite triggers move on with every change to the user's rows
/// in the tables a service names: what a remembered read checks to know that its answer
/// still stands (``ThreadReader/read(_:remembering:user:_:)``).
///
/// Kept by triggers, so no write path can forget it: a request, a timer, an event
/// consumer, a migration, even a tool writing the file. Read in the same transaction as
/// the rows, so a counter and the rows it stands for are always of one snapshot. Rows are
/// never deleted (a user's counter only grows; ids are never reused).
public enum UserChanges {
    static func registerMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("platform-user-changes-1") { db in
            try db.execute(sql: table)
        }
    }

    /// The counters' table (made by the platform's migrations, and by the first
    /// ``triggers(on:userColumn:)`` of a database migrated without them, as in a test).
    static let table = """
        CREATE TABLE IF NOT EXISTS platform_user_change (
            user_id TEXT PRIMARY KEY,
            generation INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// The SQL of the triggers that count every insert, update and delete in `table` for
    /// the user in `userColumn`; for a service's migration.
    public static func triggers(on table: String, userColumn: String = "user_id") -> String {
        func count(_ row: String) -> String {
            """
            INSERT INTO platform_user_change (user_id, generation) VALUES (\(row).\(userColumn), 1)
                ON CONFLICT (user_id) DO UPDATE SET generation = generation + 1;
            """
        }
        return Self.table + """
            CREATE TRIGGER \(table)_user_change_insert AFTER INSERT ON \(table) BEGIN \(count("NEW")) END;
            CREATE TRIGGER \(table)_user_change_update AFTER UPDATE ON \(table) BEGIN \(count("NEW")) END;
            CREATE TRIGGER \(table)_user_change_move AFTER UPDATE OF \(userColumn) ON \(table)
                WHEN OLD.\(userColumn) IS NOT NEW.\(userColumn) BEGIN \(count("OLD")) END;
            CREATE TRIGGER \(table)_user_change_delete AFTER DELETE ON \(table) BEGIN \(count("OLD")) END;
            """
    }

    /// `user`'s counter as of the transaction's snapshot (0 before any change).
    public static func generation(_ db: Database, user: String) throws -> Int64 {
        try db.cachedStatement(sql: "SELECT generation FROM platform_user_change WHERE user_id = ?").firstRow(user) { $0.integer(0) ?? 0 } ?? 0
    }
}

import GRDB

/// A small key-value table for the platform's own state (e.g. the publisher's position).
enum PlatformMeta {
    static func get(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM platform_meta WHERE key = ?", arguments: [key])
    }

    static func set(_ db: Database, _ key: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO platform_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }
}

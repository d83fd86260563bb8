import CBackendSystem
import Foundation
import GRDB
import SQLiteWALBuffer

/// How a service's database survives a power loss.
public enum Durability: String, Sendable, Codable {
    /// `synchronous=FULL`: a committed transaction survives power loss. For data users
    /// entrust to us (accounts, money, bookings, goals, reminders).
    case full
    /// `synchronous=NORMAL` (WAL): a power loss may roll back the last commits but never
    /// corrupts. For data rebuilt from other services' events (statistics).
    case normal
}

/// The one way to open a service database: a file under the data folder, WAL,
/// foreign keys on, a busy timeout, the chosen durability, and forward-only migrations
/// (the platform's tables first, then the service's own) run before anything else.
public enum ServiceDatabase {
    /// Opens (creating if needed) `<directory>/<name>.sqlite` and migrates it.
    public static func open(
        directory: URL, name: String, durability: Durability,
        migrations: @Sendable (inout DatabaseMigrator) -> Void
    ) throws -> DatabasePool {
        _ = sqliteTuned
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // The data folder and the database files are the service user's only (folders
        // made by an older version, or by hand, are tightened too).
        try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        configuration.label = name
        configuration.maximumReaderCount = 8
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA busy_timeout = 5000")
            // Group commit runs each request in a savepoint, and SQLite keeps the original
            // of every page a savepoint changes in a sub-journal: in memory, not in a
            // temporary file written with pwrite and deleted at each commit (that file
            // took a fifth of the writer's time).
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        let path = directory.appendingPathComponent("\(name).sqlite").path
        if durability == .full {
            // Its log's writes go to the kernel together, at the sync FULL makes before each
            // commit is published (SQLiteWALBuffer): two pwrites per page before.
            let code = backend_wal_buffer_enable(path)
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "the log's write buffer") }
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        // DatabasePool sets its writer to synchronous=NORMAL whatever prepareDatabase
        // asked for, so FULL is applied to the writer after opening.
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            if durability == .full {
                // No page goes to the log before its transaction commits: a group commit is
                // small, and SQLite 3.40 can write a transaction that spilled pages and then
                // rolled back to a savepoint (a failed request in a batch) with frames that
                // recovery after a crash stops at, losing later acknowledged commits (found
                // by a crash test of the log's write buffer, with or without it).
                try db.execute(sql: "PRAGMA cache_spill = OFF")
            }
            // The writer touches the hot pages of every index on each group commit; a
            // larger cache (32 MiB, a ceiling, filled only as pages are read) keeps them
            // in memory instead of reading them back. Readers keep SQLite's 2 MiB each.
            try db.execute(sql: "PRAGMA cache_size = -32768")
            // Checkpoints run beside the writer (WALCheckpointer). The group commit's writer
            // replaces SQLite's automatic checkpoint on this connection with its own rule
            // (WriteBatcher's LogRestart, whose backstop keeps SQLite's for other writes);
            // until its first batch the automatic one runs at 8,000 pages (32 MiB of log).
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 8000")
            // A read holding an old snapshot keeps the log from starting over, and it grows
            // meanwhile: 40 MiB (above the writer's rule) is what the file is cut back to when
            // the log next starts over, instead of keeping its largest size for good.
            try db.execute(sql: "PRAGMA journal_size_limit = \(40 << 20)")
        }
        var migrator = DatabaseMigrator()
        PlatformMigrations.register(in: &migrator)
        migrations(&migrator)
        try migrator.migrate(pool)
        // Whose database this is: a restore puts back only a backup of the same service.
        try pool.write { db in
            if try PlatformMeta.get(db, "service") != name { try PlatformMeta.set(db, "service", name) }
        }
        // Its files too, once SQLite has made them (processes also set umask 077).
        for suffix in ["", "-wal", "-shm"] {
            let file = directory.appendingPathComponent("\(name).sqlite\(suffix)").path
            if FileManager.default.fileExists(atPath: file) {
                try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
            }
        }
        return pool
    }

    /// SQLite's process-wide settings, made once before the process opens its first
    /// connection: no memory statistics (they take a global mutex on every allocation the
    /// writer makes; nothing here reads them).
    private static let sqliteTuned: Bool = backend_sqlite_memstatus_off() == SQLITE_OK

    /// The writer's `synchronous` setting as SQLite reports it (0 OFF, 1 NORMAL, 2 FULL).
    public static func synchronousSetting(of pool: DatabasePool) throws -> Int {
        try pool.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        }
    }
}

/// The tables every service has: the event outbox, the idempotency store, the
/// subscribers' cursors and a small key-value table for the platform's own state.
enum PlatformMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("platform-1") { db in
            // The outbox is also the event log that events.replay serves. AUTOINCREMENT
            // keeps seq from ever being reused; writes are serialized, so a rolled-back
            // transaction leaves no gap.
            try db.execute(sql: """
                CREATE TABLE platform_event (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    type TEXT NOT NULL,
                    at TEXT NOT NULL,
                    data TEXT NOT NULL
                );
                CREATE TABLE platform_idempotency (
                    scope TEXT NOT NULL,
                    key TEXT NOT NULL,
                    op TEXT NOT NULL,
                    request_hash TEXT NOT NULL,
                    reply TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    PRIMARY KEY (scope, key)
                );
                CREATE INDEX platform_idempotency_created ON platform_idempotency(created_at);
                CREATE TABLE platform_event_cursor (
                    source TEXT PRIMARY KEY,
                    seq INTEGER NOT NULL
                );
                CREATE TABLE platform_meta (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("platform-2") { db in
            // Sessions auth revoked: their access tokens are refused until they expire.
            try db.execute(sql: """
                CREATE TABLE platform_revoked_session (
                    session_id TEXT PRIMARY KEY,
                    revoked_at TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("platform-3-idempotency-by-rowid") { db in
            // Keys are pruned oldest first in rowid order (rows are appended as they are
            // written), so the index on created_at, one more b-tree written by every
            // write that carries a key, goes.
            try db.execute(sql: "DROP INDEX platform_idempotency_created")
        }
        DurableTimers.register(in: &migrator)
        // Uploaded images and who refers to them (Media/MediaCatalog.swift).
        migrator.registerMigration("platform-media-1", migrate: MediaCatalog.createTables)
        DeliveryOutbox.registerMigration(in: &migrator)
        ChangeFeed.registerMigration(in: &migrator)
        DeletedUsers.registerMigration(in: &migrator)
        UserChanges.registerMigration(in: &migrator)
    }
}

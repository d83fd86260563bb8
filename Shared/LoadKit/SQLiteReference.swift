import Foundation
import GRDB

/// The limit a one-commit-per-write design meets: SQLite committing one small row per
/// transaction, durably (WAL, `synchronous=FULL`), on the same disk as the services'
/// databases. Group commit is measured against it (`bench booking`).
public enum SQLiteReference {
    /// Commits one row per transaction for `seconds` on one thread; returns commits per second.
    public static func measure(directory: URL, seconds: Double) throws -> Double {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        let path = directory.appendingPathComponent("sqlite-reference.sqlite").path
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS reference (id INTEGER PRIMARY KEY, payload TEXT NOT NULL, at TEXT NOT NULL)")
        }
        let synchronous = try queue.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        guard synchronous == 2 else { throw CocoaError(.featureUnsupported) }
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let started = ContinuousClock.now
        var commits = 0
        while ContinuousClock.now < deadline {
            try queue.write { db in
                try db.execute(
                    sql: "INSERT INTO reference (payload, at) VALUES (?, ?)", arguments: ["bkg_0123456789abcdef0123", "2026-11-23T07:00:00.000Z"])
            }
            commits += 1
        }
        try? FileManager.default.removeItem(atPath: path)
        return Double(commits) / ((ContinuousClock.now - started).milliseconds / 1000)
    }
}

import ArgumentParser
import Foundation
import GRDB
import Histogram
import Platform

/// The changes feed at scale: what a stamp adds to a write, and how long a page takes
/// for one user among many, with deletion markers about.
struct ChangesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes", abstract: "Changes feed: stamped writes, first-sync and incremental pages among many users' rows.")

    @Option(help: "Rows, spread over the users.")
    var rows: Int = 1_000_000

    @Option(help: "Users owning them.")
    var users: Int = 10_000

    @Option(help: "Pages measured for each kind.")
    var pages: Int = 2_000

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-changes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try ServiceDatabase.open(directory: folder, name: "changes", durability: .full) { migrator in
            migrator.registerMigration("notes") { db in
                try db.execute(sql: """
                    CREATE TABLE note (id TEXT PRIMARY KEY, owner TEXT NOT NULL, body TEXT NOT NULL, change_version INTEGER NOT NULL);
                    CREATE INDEX note_owner_version ON note(owner, change_version);
                    CREATE TABLE plain (id TEXT PRIMARY KEY, owner TEXT NOT NULL, body TEXT NOT NULL);
                    CREATE INDEX plain_owner ON plain(owner);
                    """)
            }
        }
        // The same inserts with and without a stamp, in transactions of 1,000.
        func insert(stamped: Bool) async throws -> Double {
            let started = ContinuousClock.now
            for chunk in stride(from: 0, to: rows, by: 1_000) {
                try await pool.write { db in
                    for index in chunk..<min(chunk + 1_000, rows) {
                        let owner = "usr_\(index % users)"
                        if stamped {
                            try db.cachedStatement(sql: "INSERT INTO note (id, owner, body, change_version) VALUES (?, ?, ?, ?)")
                                .execute(arguments: ["n\(index)", owner, "a note of some length", try ChangeFeed.stamp(db)])
                        } else {
                            try db.cachedStatement(sql: "INSERT INTO plain (id, owner, body) VALUES (?, ?, ?)")
                                .execute(arguments: ["n\(index)", owner, "a note of some length"])
                        }
                    }
                }
            }
            let elapsed = ContinuousClock.now - started
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        let plain = try await insert(stamped: false)
        let stamped = try await insert(stamped: true)
        print(String(format: "inserts of %d rows: %.0f/s plain, %.0f/s stamped (%.2f µs more per row)",
                     rows, Double(rows) / plain, Double(rows) / stamped, (stamped - plain) / Double(rows) * 1e6))
        // A deletion marker for a tenth of the users.
        try await pool.write { db in
            for user in stride(from: 0, to: users, by: 10) {
                try ChangeFeed.recordDeletion(db, entity: "note", id: "gone\(user)", scope: ChangeViewer.user("usr_\(user)"))
            }
        }
        let source = ChangeSource(entity: "note") { db, query in
            try Row.fetchAll(
                db, sql: "SELECT * FROM note WHERE owner = ? AND change_version > ? ORDER BY change_version LIMIT ?",
                arguments: [query.viewer.userID, query.since, query.limit]
            ).map { Change(entity: "note", id: $0["id"], version: $0["change_version"], data: ["body": .string($0["body"])]) }
        }
        let last = try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT last FROM platform_change_state")! }
        for (name, since) in [("first sync, 100 of a user's rows", Int64(0)), ("incremental, nothing new", last - 10)] {
            var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
            for index in 0..<pages {
                let viewer = ChangeViewer(userID: "usr_\((index * 7_919) % users)", roles: [])
                let cursor = since == 0 ? ChangeCursor.start : ChangeCursor(position: since, safePoint: since, viewer: viewer.fingerprint)
                let started = ContinuousClock.now
                let page = try await pool.read { db in try ChangeFeed.page(db, sources: [source], viewer: viewer, since: cursor, limit: 100) }
                let elapsed = ContinuousClock.now - started
                histogram.record(UInt64(elapsed.components.attoseconds / 1_000_000_000_000 + elapsed.components.seconds * 1_000_000))
                precondition(!page.resync)
            }
            print(String(format: "page (%@): p50 %.2f ms, p99 %.2f ms", name,
                         Double(histogram.valueAtPercentile(50)) / 1000, Double(histogram.valueAtPercentile(99)) / 1000))
        }
    }
}

import Foundation
import Synchronization
import GRDB
import Platform
import SharedTesting
import Testing

/// A read thread's own connection over a real SQLite file: it sees every commit made
/// before each read (its snapshot does not stay where its first read left it), it
/// cannot write, and a pool that is gone does not keep its connection.
@Suite("ThreadReader")
struct ThreadReaderTests {
    private static func open(_ directory: TemporaryDirectory, name: String = "reader") throws -> DatabasePool {
        try ServiceDatabase.open(directory: directory.url, name: name, durability: .full) { migrator in
            migrator.registerMigration("items") { db in
                try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
            }
        }
    }

    /// One dedicated thread, as a read thread is: every read of a test runs on it, so it
    /// reuses the connection its first read made.
    private final class ReadThread: Sendable {
        private let thread = WorkerThreads(name: "thread-reader-test", count: 1)

        func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
            try await thread.run(body)
        }
    }

    @Test func eachReadSeesTheCommitsMadeBeforeIt() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.open(directory)
        let thread = ReadThread()
        let count: @Sendable () throws -> Int = { try ThreadReader.read(pool) { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? -1 } }
        #expect(try await thread.run(count) == 0)
        for expected in 1...3 {
            try await pool.write { db in try db.execute(sql: "INSERT INTO item (note) VALUES ('x')") }
            #expect(try await thread.run(count) == expected)
        }
        // A commit through the group-commit writer is seen too.
        _ = try await WriteBatcher(pool: pool).write { db in try db.execute(sql: "INSERT INTO item (note) VALUES ('batched')") }
        #expect(try await thread.run(count) == 4)
    }

    @Test func itCannotWrite() async throws {
        let directory = try TemporaryDirectory()
        let pool = try Self.open(directory)
        let thread = ReadThread()
        await #expect(throws: DatabaseError.self) {
            try await thread.run { try ThreadReader.read(pool) { db in try db.execute(sql: "INSERT INTO item (note) VALUES ('no')") } }
        }
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == 0)
    }

    @Test func aNewPoolGetsItsOwnConnection() async throws {
        let thread = ReadThread()
        for round in 1...3 {
            // Each round's pool is gone before the next opens (another folder, another file).
            let directory = try TemporaryDirectory()
            let pool = try Self.open(directory, name: "round\(round)")
            try await pool.write { db in
                for _ in 0..<round { try db.execute(sql: "INSERT INTO item (note) VALUES ('x')") }
            }
            let seen = try await thread.run { try ThreadReader.read(pool) { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } }
            #expect(seen == round)
        }
    }

    /// A remembered answer is given again only while none of its user's counted rows
    /// changed: an insert, update or delete of theirs (through a pool's writer, the group
    /// commit, or another connection to the file, as a tool would) makes the next read
    /// work it out again; another user's changes do not; a row moved from one user to
    /// another counts for both; keys keep answers apart; errors are not kept.
    @Test func rememberedAnswersLastWhileTheUsersRowsStand() async throws {
        let directory = try TemporaryDirectory()
        let pool = try ServiceDatabase.open(directory: directory.url, name: "remembered", durability: .full) { migrator in
            migrator.registerMigration("notes") { db in
                try db.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, text TEXT NOT NULL)")
                try db.execute(sql: UserChanges.triggers(on: "note"))
            }
        }
        let thread = ReadThread()
        let runs = Mutex(0)
        let notes: @Sendable (_ user: String, _ key: String) throws -> String = { user, key in
            let answer = try ThreadReader.read(pool, remembering: user + "/" + key, user: user) { db in
                runs.withLock { $0 += 1 }
                let texts = try String.fetchAll(db, sql: "SELECT text FROM note WHERE user_id = ? ORDER BY id", arguments: [user])
                return Data((key + ":" + texts.joined(separator: ",")).utf8)
            }
            return String(decoding: answer, as: UTF8.self)
        }
        func expect(_ user: String, _ expected: String, key: String = "all", runs expectedRuns: Int, _ location: SourceLocation = #_sourceLocation) async throws {
            #expect(try await thread.run { try notes(user, key) } == key + ":" + expected, sourceLocation: location)
            #expect(runs.withLock { $0 } == expectedRuns, sourceLocation: location)
        }
        try await expect("ann", "", runs: 1)
        try await expect("ann", "", runs: 1)
        try await expect("ann", "", key: "other", runs: 2)
        try await expect("bob", "", runs: 3)

        try await pool.write { db in try db.execute(sql: "INSERT INTO note (user_id, text) VALUES ('ann', 'one')") }
        try await expect("ann", "one", runs: 4)
        try await expect("ann", "one", runs: 4)
        try await expect("bob", "", runs: 4)

        _ = try await WriteBatcher(pool: pool).write { db in try db.execute(sql: "INSERT INTO note (user_id, text) VALUES ('ann', 'two')") }
        try await expect("ann", "one,two", runs: 5)

        // Another connection to the file, as a tool would write.
        let other = try DatabaseQueue(path: pool.path)
        try await other.write { db in try db.execute(sql: "UPDATE note SET text = 'ONE' WHERE text = 'one'") }
        try await expect("ann", "ONE,two", runs: 6)
        try await expect("bob", "", runs: 6)

        try await pool.write { db in try db.execute(sql: "UPDATE note SET user_id = 'bob' WHERE text = 'two'") }
        try await expect("ann", "ONE", runs: 7)
        try await expect("bob", "two", runs: 8)

        try await pool.write { db in try db.execute(sql: "DELETE FROM note WHERE user_id = 'ann'") }
        try await expect("ann", "", runs: 9)
        try await expect("ann", "", runs: 9)

        // A failing read is not kept: it runs again.
        let failures = Mutex(0)
        for _ in 0..<2 {
            await #expect(throws: DatabaseError.self) {
                try await thread.run {
                    try ThreadReader.read(pool, remembering: "broken", user: "ann") { db in
                        failures.withLock { $0 += 1 }
                        return Data(try String.fetchAll(db, sql: "SELECT nothing FROM note").joined().utf8)
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == 2)
    }
}

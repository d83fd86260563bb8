import Foundation
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
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Synchronization
import Testing

/// Group commit over a real SQLite file: requests queued together share a transaction,
/// and one request's failure never takes another's write with it, nor leaves its own.
@Suite("WriteBatcher")
struct WriteBatcherTests {
    private struct Refused: Error, Equatable {
        let index: Int
    }

    private enum Kind {
        case succeeds, refusesBeforeWriting, failsAfterWriting
    }

    private static func open() throws -> (TemporaryDirectory, DatabasePool) {
        let directory = try TemporaryDirectory()
        let pool = try ServiceDatabase.open(directory: directory.url, name: "batch", durability: .full) { migrator in
            migrator.registerMigration("items") { db in
                try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
            }
        }
        return (directory, pool)
    }

    /// Queues `kinds` while the writer is held by a slow first request, so they form one batch.
    private static func run(_ kinds: [Kind], on pool: DatabasePool) async throws -> [Swift.Result<Int, Refused>] {
        let batcher = WriteBatcher(pool: pool)
        let started = AsyncSignal()
        let holder = Task {
            try await batcher.write { db in
                started.fire()
                Thread.sleep(forTimeInterval: 0.2)
                try db.execute(sql: "INSERT INTO item (id, note) VALUES (0, 'holder')")
                return 0
            }
        }
        await started.wait()
        let results = await withTaskGroup(of: (Int, Swift.Result<Int, Refused>).self) { group in
            for (index, kind) in kinds.enumerated() {
                group.addTask {
                    do {
                        let value = try await batcher.write { db -> Int in
                            switch kind {
                            case .succeeds:
                                try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, 'ok')", arguments: [index + 1])
                                return index + 1
                            case .refusesBeforeWriting:
                                _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item")
                                throw Refused(index: index)
                            case .failsAfterWriting:
                                try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, 'half')", arguments: [index + 1])
                                try db.execute(sql: "UPDATE item SET note = 'half' WHERE id = 0")
                                throw Refused(index: index)
                            }
                        }
                        return (index, .success(value))
                    } catch let refused as Refused {
                        return (index, .failure(refused))
                    } catch {
                        Issue.record("unexpected error \(error)")
                        return (index, .failure(Refused(index: -1)))
                    }
                }
            }
            var results = [Swift.Result<Int, Refused>?](repeating: nil, count: kinds.count)
            for await (index, result) in group { results[index] = result }
            return results.compactMap { $0 }
        }
        #expect(try await holder.value == 0)
        return results
    }

    private static func expectOutcome(_ kinds: [Kind], _ results: [Swift.Result<Int, Refused>], pool: DatabasePool) async throws {
        for (index, kind) in kinds.enumerated() {
            switch kind {
            case .succeeds: #expect(results[index] == .success(index + 1))
            case .refusesBeforeWriting, .failsAfterWriting: #expect(results[index] == .failure(Refused(index: index)))
            }
        }
        let rows = try await pool.read { db in try Row.fetchAll(db, sql: "SELECT id, note FROM item ORDER BY id") }
        let expectedIDs = [0] + kinds.enumerated().compactMap { $0.element == .succeeds ? $0.offset + 1 : nil }
        #expect(rows.map { $0["id"] as Int } == expectedIDs)
        #expect(rows.allSatisfy { ($0["note"] as String) != "half" })
    }

    @Test("refusals before any write cost no undo and take nothing from the others")
    func refusalsBeforeWriting() async throws {
        let (directory, pool) = try Self.open()
        defer { _ = directory }
        let kinds: [Kind] = (0..<40).map { $0 % 3 == 0 ? .refusesBeforeWriting : .succeeds }
        let results = try await Self.run(kinds, on: pool)
        try await Self.expectOutcome(kinds, results, pool: pool)
    }

    @Test("a request that fails after writing leaves nothing; the rest of its batch commits")
    func failureAfterWriting() async throws {
        let (directory, pool) = try Self.open()
        defer { _ = directory }
        let kinds: [Kind] = (0..<40).map { index in
            index == 7 || index == 31 ? .failsAfterWriting : index % 5 == 0 ? .refusesBeforeWriting : .succeeds
        }
        let results = try await Self.run(kinds, on: pool)
        try await Self.expectOutcome(kinds, results, pool: pool)
    }

    @Test("a request alone in its batch that fails after writing leaves nothing")
    func loneFailureAfterWriting() async throws {
        let (directory, pool) = try Self.open()
        defer { _ = directory }
        let results = try await Self.run([.failsAfterWriting], on: pool)
        try await Self.expectOutcome([.failsAfterWriting], results, pool: pool)
    }

    @Test("the writer thread ends after a quiet spell and a later write starts it again; writes racing its end are not lost", .timeLimit(.minutes(1)))
    func writerThreadComesBack() async throws {
        let (directory, pool) = try Self.open()
        defer { _ = directory }
        let batcher = WriteBatcher(pool: pool, idleExit: .milliseconds(20))
        for round in 0..<20 {
            // Some writes land while the thread is ending, others after it ended.
            try await Task.sleep(for: .milliseconds(round % 2 == 0 ? 15 : 40))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        try await batcher.write { db in
                            try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, 'ok')", arguments: [round * 10 + index])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == 100)
    }
}

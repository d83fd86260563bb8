import Foundation
import GRDB
import Platform
import SQLiteWALBuffer
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

    /// How many log writes waited in the buffer, and how many flushes wrote them
    /// (process-wide: other tests running beside only add to both).
    private static func bufferCounts() -> (gathered: Int64, flushes: Int64) {
        var gathered: Int64 = 0
        var flushes: Int64 = 0
        backend_wal_buffer_counts(&gathered, &flushes)
        return (gathered, flushes)
    }

    @Test(
        "a fully synced log's writes wait for the commit's sync and reach the file in fewer writes; each commit is whole to other connections at once, and after reopening",
        .timeLimit(.minutes(1)), arguments: [Durability.full, .normal])
    func gatheredLogWrites(durability: Durability) async throws {
        let directory = try TemporaryDirectory()
        let pool = try ServiceDatabase.open(directory: directory.url, name: "gathered", durability: durability) { migrator in
            migrator.registerMigration("items") { db in
                try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, note TEXT NOT NULL)")
            }
        }
        let batcher = WriteBatcher(pool: pool)
        let before = Self.bufferCounts()
        // 20 writers, 25 writes each, every one read back by another connection as soon as
        // it is committed: a commit published before its frames reached the file would be
        // read short (an I/O error) or stale.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<20 {
                group.addTask {
                    for step in 0..<25 {
                        let id = writer * 100 + step
                        let note = String(repeating: Character(UnicodeScalar(UInt8(65 + (id % 26)))), count: 1_500)
                        try await batcher.write { db in
                            try db.execute(sql: "INSERT INTO item (id, writer, note) VALUES (?, ?, ?)", arguments: [id, writer, note])
                        }
                        let read = try await pool.read { db in
                            (try String.fetchOne(db, sql: "SELECT note FROM item WHERE id = ?", arguments: [id]),
                             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE writer = ?", arguments: [writer]))
                        }
                        #expect(read.0 == note && read.1 == step + 1)
                    }
                }
            }
            try await group.waitForAll()
        }
        // A transaction larger than the writer's cache spills pages to the log before its
        // commit, rewrites some of them and reads them back: all in order.
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA cache_size = 20; PRAGMA cache_spill = ON") }
        try await batcher.write { db in
            for id in 10_000..<10_400 {
                try db.execute(sql: "INSERT INTO item (id, writer, note) VALUES (?, -1, ?)", arguments: [id, String(repeating: "s", count: 2_000)])
            }
            try db.execute(sql: "UPDATE item SET note = 'rewritten' WHERE writer = -1 AND id % 3 = 0")
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE note = 'rewritten'")
        }
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA cache_size = -32768; PRAGMA cache_spill = OFF") }
        let after = Self.bufferCounts()
        if durability == .full {
            #expect(after.gathered - before.gathered > 1_000 && after.flushes - before.flushes < after.gathered - before.gathered)
        }
        #expect(try await pool.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
        try pool.close()
        // Opened again (its log gone with the last connection; opening writes under NORMAL),
        // and written again.
        let reopened = try ServiceDatabase.open(directory: directory.url, name: "gathered", durability: durability) { _ in }
        let counts = try await reopened.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item"), try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE note = 'rewritten'"))
        }
        #expect(counts.0 == 900 && counts.1 == 133)
        try await WriteBatcher(pool: reopened).write { db in try db.execute(sql: "INSERT INTO item (id, writer, note) VALUES (-1, -2, 'again')") }
        #expect(try await reopened.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == 901)
    }

    @Test("frames a gathering transaction spilled and then rolled back never land over another connection's commit", .timeLimit(.minutes(1)))
    func rolledBackFramesDropped() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("twowriters.sqlite").path
        let pool = try ServiceDatabase.open(directory: directory.url, name: "twowriters", durability: .full) { migrator in
            migrator.registerMigration("items") { db in
                try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
            }
        }
        // The log starts over (a full checkpoint), so the next frames go from its start.
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        // On a gathering thread, as the group commit's writer: a transaction spills pages
        // (cache spilling on, a tiny cache) and rolls back.
        struct Abandoned: Error {}
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            backend_wal_buffer_gather_on_this_thread(1)
            try? pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA cache_size = 10; PRAGMA cache_spill = ON")
                do {
                    try db.inTransaction {
                        for id in 0..<300 {
                            try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, ?)", arguments: [id, String(repeating: "r", count: 2_000)])
                        }
                        throw Abandoned()
                    }
                } catch {
                    _ = backend_wal_buffer_transaction_ended(0)
                }
                try db.execute(sql: "PRAGMA cache_size = -32768; PRAGMA cache_spill = OFF")
            }
            done.signal()
        }
        thread.start()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                done.wait()
                continuation.resume()
            }
        }
        // Another connection commits frames where the abandoned ones were.
        let other = try DatabaseQueue(path: path)
        try await other.write { db in try db.execute(sql: "INSERT INTO item (id, note) VALUES (1000, 'other')") }
        try other.close()
        // The pool's writer and readers go on; the other connection's commit stands.
        try await WriteBatcher(pool: pool).write { db in try db.execute(sql: "INSERT INTO item (id, note) VALUES (1001, 'pool')") }
        let notes = try await pool.read { db in try String.fetchAll(db, sql: "SELECT note FROM item ORDER BY id") }
        #expect(notes == ["other", "pool"])
        #expect(try await pool.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test("the writer starts the log over: past its limit even while writes keep coming, at a smaller one when it has nothing to do")
    func logRestartRule() {
        let rule = LogRestart(idleFrames: 100, busyFrames: 1_000)
        #expect(!rule.due(frames: 99, writesWaiting: false))
        #expect(rule.due(frames: 100, writesWaiting: false))
        #expect(!rule.due(frames: 999, writesWaiting: true))
        #expect(rule.due(frames: 1_000, writesWaiting: true))
        #expect(rule.due(frames: 1_000, writesWaiting: false))
    }

    /// The log's length in frames (another connection's passive checkpoint reports it).
    private static func logFrames(_ pool: DatabasePool) throws -> Int {
        let other = try DatabaseQueue(path: pool.path)
        defer { try? other.close() }
        return try other.writeWithoutTransaction { db in try db.checkpoint(.passive).walFrameCount }
    }

    /// `count` one-page writes queued at once (the writer always has more waiting), then
    /// one more after the writer has had nothing to do.
    private static func writePages(_ count: Int, restart: LogRestart) async throws -> Int {
        let (directory, pool) = try open()
        defer { _ = directory }
        let batcher = WriteBatcher(pool: pool, logRestart: restart)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<count {
                group.addTask {
                    try await batcher.write { db in
                        try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, hex(randomblob(1500)))", arguments: [id])
                    }
                }
            }
            try await group.waitForAll()
        }
        try await Task.sleep(for: .milliseconds(100))
        try await batcher.write { db in try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, 'last')", arguments: [count]) }
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == count + 1)
        return try logFrames(pool)
    }

    @Test("under a steady stream of writes the log starts over once it passes the writer's limit", .timeLimit(.minutes(1)))
    func logStartsOverUnderSteadyWrites() async throws {
        // Without the writer's checkpoint nothing starts the log over (the writer's commits
        // replace SQLite's automatic checkpoint): it holds every page written.
        #expect(try await Self.writePages(2_000, restart: LogRestart(idleFrames: .max, busyFrames: .max)) > 2_000)
        // With it, the log holds at most the limit and the batches written since.
        #expect(try await Self.writePages(2_000, restart: LogRestart(idleFrames: .max, busyFrames: 300)) < 1_000)
    }

    @Test("once the writer has nothing to do, a log past the smaller limit starts over at the next write", .timeLimit(.minutes(1)))
    func logStartsOverWhenIdle() async throws {
        // The last write comes after a quiet spell: the log before it was checkpointed, and
        // the write starts it over.
        #expect(try await Self.writePages(500, restart: LogRestart(idleFrames: 100, busyFrames: .max)) < 20)
    }

    @Test("writes on the pool outside the batcher, which SQLite's automatic checkpoint no longer covers, are still checkpointed at the backstop", .timeLimit(.minutes(1)))
    func backstopForOtherWrites() async throws {
        let (directory, pool) = try Self.open()
        defer { _ = directory }
        let restart = LogRestart(idleFrames: .max, busyFrames: 100)
        #expect(restart.backstopFrames == 200)
        // The batcher's first write puts its hook on the writer connection.
        try await WriteBatcher(pool: pool, logRestart: restart).write { db in try db.execute(sql: "INSERT INTO item (id, note) VALUES (0, 'first')") }
        for id in 1...1_000 {
            try await pool.write { db in try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, hex(randomblob(1500)))", arguments: [id]) }
        }
        #expect(try Self.logFrames(pool) < 250)
    }

    @Test("a log that grew behind a long read is cut back to 40 MiB once it starts over", .timeLimit(.minutes(2)))
    func logCutBackAfterLongRead() async throws {
        let (directory, pool) = try Self.open()
        defer { _ = directory }
        let batcher = WriteBatcher(pool: pool)
        try await batcher.write { db in try db.execute(sql: "INSERT INTO item (id, note) VALUES (0, 'first')") }
        let wal = pool.path + "-wal"
        func walBytes() throws -> Int { try (FileManager.default.attributesOfItem(atPath: wal)[.size] as? NSNumber)?.intValue ?? 0 }
        // A reader holds its snapshot while about 48 MiB of pages are written.
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true
        let reader = try DatabaseQueue(path: pool.path, configuration: holding)
        try await reader.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN DEFERRED")
            _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item")
        }
        for batch in 0..<120 {
            try await batcher.write { db in
                for row in 0..<100 {
                    try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, hex(randomblob(1500)))", arguments: [1 + batch * 100 + row])
                }
            }
        }
        #expect(try walBytes() > 40 << 20)
        try await reader.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
        try reader.close()
        // Quiet writes: the writer checkpoints the backlog, the next write starts the log over.
        for id in 20_000..<20_003 {
            try await Task.sleep(for: .milliseconds(50))
            try await batcher.write { db in try db.execute(sql: "INSERT INTO item (id, note) VALUES (?, 'after')", arguments: [id]) }
        }
        #expect(try walBytes() <= 40 << 20)
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } == 12_004)
    }
}

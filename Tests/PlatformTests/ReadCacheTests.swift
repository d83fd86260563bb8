import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// The read cache (goals' dashboard and calendar, stats' period statistics) against
/// commits that race with the read.
@Suite("Read cache")
struct ReadCacheTests {
    private func database(_ directory: TemporaryDirectory, cache: ReadCache) throws -> DatabasePool {
        let pool = try ServiceDatabase.open(directory: directory.url, name: "cache", durability: .normal) { migrator in
            migrator.registerMigration("t") { db in
                try db.execute(sql: "CREATE TABLE t (v INTEGER NOT NULL); INSERT INTO t (v) VALUES (1)")
            }
        }
        pool.add(transactionObserver: cache.observer, extent: .databaseLifetime)
        return pool
    }

    @Test("an answer read while a commit lands is returned but not kept; one read after it is kept")
    func commitDuringTheRead() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = ReadCache()
        let pool = try database(directory, cache: cache)

        let reading = AsyncSignal(), committed = AsyncSignal()
        let read = Task {
            try await cache.remember("k", from: pool) { db in
                let value = try Int.fetchOne(db, sql: "SELECT v FROM t") ?? 0
                reading.fire()
                while !committed.isFired { Thread.sleep(forTimeInterval: 0.005) }
                return .integer(Int64(value))
            }
        }
        await reading.wait()
        try await pool.write { db in try db.execute(sql: "UPDATE t SET v = 2") }
        committed.fire()
        // The read saw its snapshot, from before the commit: answered, never kept.
        #expect(try JSONParser.parse(try await read.value.bytes) == 1)
        #expect(cache.answer("k") == nil)

        let fresh = try await cache.remember("k", from: pool) { db in .integer(Int64(try Int.fetchOne(db, sql: "SELECT v FROM t") ?? 0)) }
        #expect(try JSONParser.parse(fresh.bytes) == 2)
        #expect(cache.answer("k") == fresh.bytes)
        // The next commit empties it.
        try await pool.write { db in try db.execute(sql: "UPDATE t SET v = 3") }
        #expect(cache.answer("k") == nil)
        try pool.close()
    }
}

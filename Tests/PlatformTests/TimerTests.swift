import Foundation
import GRDB
import Logging
import Platform
import SharedTesting
import Testing

/// Durable timers over a real SQLite file, with the worker running as it does in a service.
@Suite("Durable timers")
struct TimerTests {
    struct Note: Codable, Sendable, Equatable {
        var text: String
    }

    /// A database with a table the handlers write to, and a worker to run and stop.
    final class World: Sendable {
        let directory: TemporaryDirectory
        let pool: DatabasePool

        init() throws {
            directory = try TemporaryDirectory()
            pool = try ServiceDatabase.open(directory: directory.url, name: "timers", durability: .normal) { migrator in
                migrator.registerMigration("fired") { db in
                    try db.execute(sql: "CREATE TABLE fired (timer INTEGER, key TEXT, text TEXT, late INTEGER, attempts INTEGER, fired_at REAL, due_at REAL)")
                }
            }
        }

        /// Records each firing, or throws after writing when the payload says so.
        static let handler = TimerHandler(kind: "test.note") { db, timer in
            let note = try timer.payload(as: Note.self)
            try db.execute(
                sql: "INSERT INTO fired (timer, key, text, late, attempts, fired_at, due_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    timer.id, timer.key, note.text, timer.late, timer.attempts, Date().timeIntervalSince1970, timer.dueAt.timeIntervalSince1970,
                ])
            if note.text == "fail" { throw ServiceError.conflict("refused") }
        }

        /// Records each firing and sets itself again with the same key, three times in all
        /// (a recurring timer, as an installment reminder is).
        static let repeating = TimerHandler(kind: "test.repeat") { db, timer in
            try db.execute(sql: "INSERT INTO fired (timer, key, text) VALUES (?, ?, 'repeat')", arguments: [timer.id, timer.key])
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fired WHERE text = 'repeat'") ?? 0
            if count < 3, let key = timer.key {
                try DurableTimers.schedule(db, kind: "test.repeat", at: Date().addingTimeInterval(0.05), key: key)
            }
        }

        func startWorker(retry: BackoffPolicy = TimerWorker.defaultRetry, idleCheck: Duration = .seconds(5)) -> Task<Void, any Error> {
            var logger = Logger(label: "timers")
            logger.logLevel = .critical
            let worker = TimerWorker(pool: pool, handlers: [Self.handler, Self.repeating], retry: retry, logger: logger, idleCheck: idleCheck)
            return Task { try await worker.run() }
        }

        func fired() throws -> [Row] {
            try pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM fired ORDER BY rowid") }
        }

        func waitUntil(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if try condition() { return true }
                try await Task.sleep(for: .milliseconds(20))
            }
            return try condition()
        }
    }

    @Test("a handler may set its own kind and key again: the timer recurs, and stops when it does not")
    func recurs() async throws {
        let world = try World()
        let worker = world.startWorker()
        defer { worker.cancel() }
        try await world.pool.write { db in
            try DurableTimers.schedule(db, kind: "test.repeat", at: Date().addingTimeInterval(0.05), key: "plan-1")
        }
        #expect(try await world.waitUntil { try world.fired().count == 3 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(try world.fired().count == 3)
        #expect(try world.fired().map { $0["key"] as String } == ["plan-1", "plan-1", "plan-1"])
        #expect(try await world.pool.read { db in try DurableTimers.counts(db) } == (0, 0))
    }

    @Test("setting a keyed timer again as it stands writes nothing; a change of instant or payload moves it")
    func unchangedKey() async throws {
        let world = try World()
        let due = Date().addingTimeInterval(3_600)
        func row() async throws -> Row? {
            try await world.pool.read { db in try Row.fetchOne(db, sql: "SELECT id, due_ms, payload, created_at FROM platform_timer WHERE key = 'k'") }
        }
        let first = try await world.pool.write { db in try DurableTimers.schedule(db, kind: "test.note", at: due, key: "k", payload: Note(text: "a")) }
        let before = try #require(try await row())
        try await Task.sleep(for: .milliseconds(5))
        let again = try await world.pool.write { db in try DurableTimers.schedule(db, kind: "test.note", at: due, key: "k", payload: Note(text: "a")) }
        let after = try await row()
        #expect(again == first)
        #expect(after?["created_at"] as String? == before["created_at"] as String?)
        _ = try await world.pool.write { db in try DurableTimers.schedule(db, kind: "test.note", at: due, key: "k", payload: Note(text: "b")) }
        #expect(try await row()?["payload"] as String? == #"{"text":"b"}"#)
        _ = try await world.pool.write { db in try DurableTimers.schedule(db, kind: "test.note", at: due.addingTimeInterval(60), key: "k", payload: Note(text: "b")) }
        #expect(try await row()?["due_ms"] as Int64? == (before["due_ms"] as Int64) + 60_000)
    }

    @Test("a timer fires once after its instant, with its effects, and is gone")
    func firesOnce() async throws {
        let world = try World()
        let worker = world.startWorker()
        defer { worker.cancel() }
        let due = Date().addingTimeInterval(0.4)
        try await world.pool.write { db in
            try DurableTimers.schedule(db, kind: "test.note", at: due, payload: Note(text: "hello"))
        }
        #expect(try await world.waitUntil { try !world.fired().isEmpty })
        // Never before its instant (a loaded machine may make it later, not earlier).
        let firedAt: Double = try #require(world.fired().first?["fired_at"])
        #expect(firedAt >= due.timeIntervalSince1970)
        #expect(abs(try #require(world.fired().first?["due_at"] as Double?) - due.timeIntervalSince1970) < 0.002)
        try await Task.sleep(for: .milliseconds(300))
        let rows = try world.fired()
        #expect(rows.count == 1)
        #expect(rows.first?["text"] == "hello")
        #expect(rows.first?["late"] == false)
        #expect(try await world.pool.read { db in try DurableTimers.counts(db) } == (0, 0))
    }

    @Test("a rolled-back schedule leaves no timer")
    func rolledBackSchedule() async throws {
        let world = try World()
        await #expect(throws: ServiceError.self) {
            try await world.pool.write { db in
                try DurableTimers.schedule(db, kind: "test.note", at: Date(), payload: Note(text: "doomed"))
                throw ServiceError.conflict("abort")
            }
        }
        #expect(try await world.pool.read { db in try DurableTimers.counts(db) } == (0, 0))
    }

    @Test("scheduling a key again moves its timer; cancelling removes it")
    func keyedTimers() async throws {
        let world = try World()
        let far = Date().addingTimeInterval(3_600)
        try await world.pool.write { db in
            try DurableTimers.schedule(db, kind: "test.note", at: far, key: "a", payload: Note(text: "first"))
            try DurableTimers.schedule(db, kind: "test.note", at: far, key: "b", payload: Note(text: "cancelled"))
        }
        try await world.pool.write { db in
            try DurableTimers.schedule(db, kind: "test.note", at: Date().addingTimeInterval(0.2), key: "a", payload: Note(text: "moved"))
            #expect(try DurableTimers.cancel(db, kind: "test.note", key: "b"))
            #expect(try !DurableTimers.cancel(db, kind: "test.note", key: "missing"))
        }
        let worker = world.startWorker()
        defer { worker.cancel() }
        #expect(try await world.waitUntil { try !world.fired().isEmpty })
        try await Task.sleep(for: .milliseconds(300))
        #expect(try world.fired().map { $0["text"] as String } == ["moved"])
        #expect(try world.fired().map { $0["key"] as String } == ["a"])
        #expect(try await world.pool.read { db in try DurableTimers.counts(db) } == (0, 0))
    }

    @Test("a handler that throws leaves nothing, is tried again later, and is kept as dead after its last attempt")
    func failingHandler() async throws {
        let world = try World()
        let retry = BackoffPolicy(initial: .milliseconds(100), cap: .seconds(1), jitter: 0, maxAttempts: 3)
        try await world.pool.write { db in
            // The good one first: the batch's first run fires it, the bad one rolls that
            // back, and the run in savepoints fires it again, once in all.
            let now = Date()
            try DurableTimers.schedule(db, kind: "test.note", at: now, key: "good", payload: Note(text: "fine"))
            try DurableTimers.schedule(db, kind: "test.unknown", at: now, key: "orphan", payload: Note(text: "no handler"))
            try DurableTimers.schedule(db, kind: "test.note", at: now, key: "bad", payload: Note(text: "fail"))
        }
        let started = ContinuousClock.now
        let worker = world.startWorker(retry: retry)
        defer { worker.cancel() }
        #expect(try await world.waitUntil { try timerCounts(world).dead == 2 })
        // Three attempts, 100 ms then 200 ms apart.
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(try world.fired().map { $0["text"] as String } == ["fine"])
        let dead = try await world.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT key, attempts, last_error FROM platform_timer WHERE dead = 1 ORDER BY key")
        }
        #expect(dead.map { $0["key"] as String } == ["bad", "orphan"])
        #expect(dead.map { $0["attempts"] as Int } == [3, 1])
        #expect(dead.map { $0["last_error"] as String } == ["conflict", "no handler for this kind"])
        // Scheduling the key again revives it.
        try await world.pool.write { db in
            try DurableTimers.schedule(db, kind: "test.note", at: Date(), key: "bad", payload: Note(text: "fixed"))
        }
        #expect(try await world.waitUntil { try world.fired().count == 2 })
        #expect(try timerCounts(world) == (pending: 0, dead: 1))
    }

    @Test("timers that fell due while nothing ran fire at start-up, marked late")
    func lateTimers() async throws {
        let world = try World()
        try await world.pool.write { db in
            for index in 0..<3 {
                try DurableTimers.schedule(db, kind: "test.note", at: Date().addingTimeInterval(-60 + Double(index)), payload: Note(text: "missed \(index)"))
            }
        }
        let worker = world.startWorker()
        defer { worker.cancel() }
        #expect(try await world.waitUntil { try world.fired().count == 3 })
        try await world.pool.write { db in
            try DurableTimers.schedule(db, kind: "test.note", at: Date().addingTimeInterval(0.1), payload: Note(text: "on time"))
        }
        #expect(try await world.waitUntil { try world.fired().count == 4 })
        let rows = try world.fired()
        #expect(rows.map { $0["text"] as String } == ["missed 0", "missed 1", "missed 2", "on time"])
        #expect(rows.map { $0["late"] as Bool } == [true, true, true, false])
    }

    @Test("a worker that is cancelled while idle stops at once")
    func stopsWhenCancelled() async throws {
        let world = try World()
        // Idle for a minute unless woken: cancelling must not wait for that.
        let worker = world.startWorker(idleCheck: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        worker.cancel()
        _ = try? await worker.value
        #expect(ContinuousClock.now - started < .seconds(20))
    }
}

private func timerCounts(_ world: TimerTests.World) throws -> (pending: Int, dead: Int) {
    try world.pool.read { db in try DurableTimers.counts(db) }
}

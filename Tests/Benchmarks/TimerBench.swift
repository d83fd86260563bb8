import ArgumentParser
import Foundation
import GRDB
import Logging
import Platform

/// Durable timers at scale: a million pending, and a burst of 10,000 falling due at once
/// (Platform building blocks issue: the burst must fire within a second).
struct TimerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timers", abstract: "Durable timers: 1,000,000 pending, then 10,000 due at once fired by the worker.")

    @Option(help: "Timers pending in the future.")
    var pending: Int = 1_000_000

    @Option(help: "Timers due at once.")
    var burst: Int = 10_000

    @Option(help: "Durability of the database (full or normal).")
    var durability: String = "full"

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-timers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try ServiceDatabase.open(
            directory: folder, name: "timers", durability: durability == "normal" ? .normal : .full
        ) { migrator in
            migrator.registerMigration("effects") { db in
                try db.execute(sql: "CREATE TABLE effect (timer INTEGER NOT NULL, at TEXT NOT NULL)")
            }
        }
        let far = Date().addingTimeInterval(30 * 86_400)
        var started = ContinuousClock.now
        // Scheduled as services do (one call each), in transactions of 10,000.
        for chunk in stride(from: 0, to: pending, by: 10_000) {
            try await pool.write { db in
                for index in chunk..<min(chunk + 10_000, pending) {
                    try DurableTimers.schedule(
                        db, kind: "bench.tick", at: far.addingTimeInterval(Double(index % 86_400)), key: "p\(index)", payload: ["n": index])
                }
            }
        }
        let scheduling = ContinuousClock.now - started
        print("scheduled \(pending) pending timers in \(scheduling) (\(Int(Double(pending) / scheduling.inSeconds)) per second, in transactions of 10,000)")
        let fileMiB = Double((try? FileManager.default.attributesOfItem(atPath: pool.path)[.size] as? Int) ?? 0) / 1_048_576
        print(String(format: "database file: %.0f MiB", fileMiB))

        let due = Date().addingTimeInterval(-1)
        started = ContinuousClock.now
        try await pool.write { db in
            for index in 0..<burst {
                try DurableTimers.schedule(db, kind: "bench.tick", at: due, payload: ["n": index])
            }
        }
        print("scheduled \(burst) due timers in one transaction in \(ContinuousClock.now - started)")

        var logger = Logger(label: "bench-timers")
        logger.logLevel = .error
        let handler = TimerHandler(kind: "bench.tick") { db, timer in
            try db.cachedStatement(sql: "INSERT INTO effect (timer, at) VALUES (?, ?)").execute(arguments: [timer.id, Instant.format(timer.firedAt)])
        }
        let worker = TimerWorker(pool: pool, handlers: [handler], logger: logger)
        started = ContinuousClock.now
        let running = Task { try await worker.run() }
        var fired = 0
        while fired < burst {
            try await Task.sleep(for: .milliseconds(5))
            fired = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM effect") ?? 0 }
            if ContinuousClock.now - started > .seconds(60) { break }
        }
        let elapsed = ContinuousClock.now - started
        running.cancel()
        _ = try? await running.value
        let counts = try await pool.read { db in try DurableTimers.counts(db) }
        print(
            "burst: \(fired) of \(burst) due timers fired with their effects in \(elapsed) (target under 1 s) \(fired == burst && elapsed < .seconds(1) ? "PASS" : "FAIL"); \(counts.pending) still pending")
        try pool.close()
    }
}

extension Duration {
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

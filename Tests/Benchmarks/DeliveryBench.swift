import ArgumentParser
import Foundation
import GRDB
import Logging
import Platform
import SharedTesting
import Synchronization

/// The delivery outbox (`Shared/Platform/Delivery`): messages queued by many concurrent
/// requests (one message each, through the group commit as handlers do) and delivered
/// by the worker to a local fake transport that accepts at once, on a durable
/// (`synchronous=FULL`) database. The figure is the outbox's own cost: a real provider's
/// latency adds to each send, since one worker sends one message at a time.
struct DeliveryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delivery", abstract: "Messages queued and delivered per second to a local fake transport.")

    @Option(help: "Messages to queue.")
    var count = 20_000
    @Option(help: "Requests queueing at once.")
    var inFlight = 64

    /// Accepts every message, counting them.
    final class CountingTransport: DeliveryTransport {
        let channel: DeliveryChannel = "sms"
        let delivered = Atomic<Int>(0)
        func send(_ message: DeliveryMessage) throws -> DeliveryOutcome {
            delivered.add(1, ordering: .relaxed)
            return .delivered
        }
    }

    /// Hands out message numbers to the queueing tasks.
    final class Ticket: Sendable {
        private let last = Atomic<Int>(-1)
        func take() -> Int { last.add(1, ordering: .relaxed).newValue }
    }

    func run() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-delivery")
        defer { directory.remove() }
        let pool = try ServiceDatabase.open(directory: directory.url, name: "delivery", durability: .full, migrations: { _ in })
        let outbox = DeliveryOutbox(service: "bench")
        let transport = CountingTransport()
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let worker = DeliveryWorker(pool: pool, outbox: outbox, transports: [transport], logger: logger)
        let running = Task { try await worker.run() }
        let batcher = WriteBatcher(pool: pool)
        let payload: JSONValue = ["body": "WAKEPARKBY: your code is 123456. It is valid for 5 minutes."]

        print("Delivery outbox: \(self.count) messages, \(inFlight) requests queueing at once, each its own savepoint in the group commit")
        let (count, inFlight) = (self.count, self.inFlight)
        let started = ContinuousClock.now
        let next = Ticket()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    while true {
                        let index = next.take()
                        guard index < count else { return }
                        // Distinct numbers: the per-destination rate limit does not hold these back.
                        try await batcher.write { db in
                            try outbox.enqueue(db, channel: "sms", to: "+7916\(1_000_000 + index)", payload: payload)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let queued = ContinuousClock.now - started
        while transport.delivered.load(ordering: .relaxed) < count {
            try await Task.sleep(for: .milliseconds(1))
        }
        let delivered = ContinuousClock.now - started
        // Wait until every outcome is recorded too.
        while try await pool.read({ db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE status = 'sent'") }) ?? 0 < count {
            try await Task.sleep(for: .milliseconds(5))
        }
        let recorded = ContinuousClock.now - started
        running.cancel()
        _ = try? await running.value

        let seconds = { (duration: Duration) in duration.milliseconds / 1000 }
        print(String(format: "queued:    %8.0f messages/s  (%.2f s for all, one fsync per group commit)", Double(count) / seconds(queued), seconds(queued)))
        print(String(format: "delivered: %8.0f messages/s  (last one sent %.2f s after the first was queued)", Double(count) / seconds(delivered), seconds(delivered)))
        print(String(format: "recorded:  %8.0f messages/s  (every one marked sent, %.2f s)", Double(count) / seconds(recorded), seconds(recorded)))

        // A backlog (as after a provider's outage): everything queued first, then drained.
        try await pool.write { db in
            for index in 0..<count { try outbox.enqueue(db, channel: "sms", to: "+7917\(1_000_000 + index)", payload: payload) }
        }
        let backlog = CountingTransport()
        let drainer = DeliveryWorker(pool: pool, outbox: outbox, transports: [backlog], logger: logger)
        let drainStarted = ContinuousClock.now
        let draining = Task { try await drainer.run() }
        while try await pool.read({ db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE status = 'sent'") }) ?? 0 < 2 * count {
            try await Task.sleep(for: .milliseconds(5))
        }
        let drained = ContinuousClock.now - drainStarted
        draining.cancel()
        _ = try? await draining.value
        print(String(format: "backlog:   %8.0f messages/s  (%d queued beforehand, sent and recorded in %.2f s)", Double(count) / seconds(drained), count, seconds(drained)))
    }
}

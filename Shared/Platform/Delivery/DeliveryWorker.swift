import Foundation
import GRDB
import Logging
import ServiceLifecycle

/// Sends a service's queued messages (``DeliveryOutbox``) on a dedicated thread.
///
/// It wakes when a commit queued a message (or an admin retried one) and when the next
/// pending message falls due, and otherwise at least every few seconds. Each due message
/// passes the per-destination rate limit (or waits for it: it is not an attempt and is
/// never dropped), then goes to its channel's transport. Outcomes are written in one
/// transaction per small batch: sent (payload erased), failed (next attempt after the
/// backoff), or dead (after the last attempt or a permanent refusal).
///
/// Transports block, and SQLite is called synchronously: none of it runs on Swift's
/// cooperative pool.
public final class DeliveryWorker: Service, Sendable {
    private let pool: DatabasePool
    private let outbox: DeliveryOutbox
    private let transports: [DeliveryChannel: any DeliveryTransport]
    private let settings: DeliverySettings
    private let logger: Logger
    private let stopping = StopFlag()
    /// The longest sleep with nothing due: a safety net, since every commit wakes it.
    private let idleWakeMs: Int64 = 5_000
    /// Outcomes are recorded at least this often while sending, and after this many
    /// messages: a crash resends at most these (with their ids).
    private let recordEveryMs: Int64 = 100
    private let recordEveryCount = 64

    /// A worker for `outbox` in `pool`, with one transport per channel.
    public init(
        pool: DatabasePool, outbox: DeliveryOutbox, transports: [any DeliveryTransport], settings: DeliverySettings = DeliverySettings(),
        logger: Logger
    ) {
        self.pool = pool
        self.outbox = outbox
        self.transports = Dictionary(transports.map { ($0.channel, $0) }, uniquingKeysWith: { _, last in last })
        self.settings = settings
        self.logger = logger
    }

    public func run() async throws {
        let thread = SocketThread(name: "delivery-\(outbox.service)") { [self] in
            var limiter = DeliveryRateLimiter(fallback: settings.rateLimit)
            var nextPruneMs: Int64 = 0
            while !stopping.isRaised {
                let nextDue = drain(limiter: &limiter)
                let now = Instant.milliseconds(Date())
                if now >= nextPruneMs {
                    prune(nowMs: now)
                    nextPruneMs = now + 3_600_000
                }
                let wait = min(idleWakeMs, (nextDue ?? Int64.max) - now)
                if wait > 0 { outbox.wake.wait(milliseconds: wait) }
            }
        }
        await withTaskCancellationOrGracefulShutdownHandler {
            await thread.join()
        } onCancelOrGracefulShutdown: { [self] in
            stopping.raise()
            outbox.wake.signal()
        }
    }

    /// Sends every message due now and records the outcomes; returns when the next
    /// pending message is due (nil: none is pending).
    @discardableResult
    func drain(limiter: inout DeliveryRateLimiter) -> Int64? {
        while !stopping.isRaised {
            let now = Instant.milliseconds(Date())
            let due: [DeliveryMessage]
            do {
                due = try pool.read { db in try DeliveryQueue.due(db, nowMs: now, limit: settings.batchSize) }
            } catch {
                logger.error("cannot read the delivery queue", metadata: ["error": "\(error)"])
                return now + 1_000
            }
            var updates: [DeliveryQueue.Update] = []
            var lastRecordMs = now
            for message in due where !stopping.isRaised {
                updates.append(attempt(message, limiter: &limiter))
                let at = Instant.milliseconds(Date())
                if updates.count >= recordEveryCount || at - lastRecordMs >= recordEveryMs {
                    record(&updates)
                    lastRecordMs = at
                }
            }
            record(&updates)
            if due.count < settings.batchSize { break }
        }
        do {
            return try pool.read { db in try DeliveryQueue.nextDueMs(db) }
        } catch {
            return Instant.milliseconds(Date()) + 1_000
        }
    }

    /// One message through the rate limit and its transport.
    private func attempt(_ message: DeliveryMessage, limiter: inout DeliveryRateLimiter) -> DeliveryQueue.Update {
        let start = Instant.milliseconds(Date())
        if let allowedAt = limiter.reserve(message.channel, message.destination, nowMs: start) {
            return .deferred(id: message.id, untilMs: allowedAt)
        }
        let outcome: DeliveryOutcome
        if let transport = transports[message.channel] {
            do {
                outcome = try transport.send(message)
            } catch {
                outcome = .retry(reason: String(describing: error))
            }
        } else {
            outcome = .retry(reason: "no transport for the channel \(message.channel)")
        }
        let end = Instant.milliseconds(Date())
        let metadata: Logger.Metadata = ["id": "\(message.id)", "channel": "\(message.channel)", "ms": "\(end - start)"]
        switch outcome {
        case .delivered:
            logger.info("message sent", metadata: metadata)
            return .sent(id: message.id, atMs: end)
        case .retry(let reason), .permanent(let reason):
            // Reasons name the provider's answer, never the payload (see DeliveryTransport).
            let reason = String(reason.prefix(300))
            let attempts = message.attempts + 1
            let decision = settings.backoff.decide(attempts: attempts, permanent: outcome.isPermanent, random: Double.random(in: 0..<1))
            var details = metadata
            details["attempts"] = "\(attempts)"
            details["error"] = "\(reason)"
            switch decision {
            case .retry(let afterMs):
                details["retryInMs"] = "\(afterMs)"
                logger.warning("message not sent, will retry", metadata: details)
                return .failed(id: message.id, attempts: attempts, nextMs: end + afterMs, reason: reason, atMs: end)
            case .dead:
                logger.error("message not sent, given up (dead letter)", metadata: details)
                return .failed(id: message.id, attempts: attempts, nextMs: nil, reason: reason, atMs: end)
            }
        }
    }

    /// Writes and clears `updates`. If the write fails the messages stay pending and are
    /// sent again (with the same ids): at least once, never lost.
    private func record(_ updates: inout [DeliveryQueue.Update]) {
        guard !updates.isEmpty else { return }
        let batch = updates
        updates.removeAll(keepingCapacity: true)
        do {
            try pool.write { db in try DeliveryQueue.apply(db, batch) }
        } catch {
            logger.error("cannot record delivery outcomes", metadata: ["error": "\(error)", "count": "\(batch.count)"])
        }
    }

    private func prune(nowMs: Int64) {
        do {
            let removed = try pool.write { db in
                try DeliveryQueue.pruneSent(db, beforeMs: nowMs - Int64(settings.keepSent.wholeMilliseconds))
            }
            if removed > 0 { logger.info("pruned sent messages", metadata: ["count": "\(removed)"]) }
        } catch {
            logger.warning("cannot prune sent messages", metadata: ["error": "\(error)"])
        }
    }
}

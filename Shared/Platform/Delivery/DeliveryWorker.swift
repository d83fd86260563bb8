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

    /// Runs in the transaction that records outcomes (a failure is logged, and the
    /// outcomes are recorded all the same).
    let outcomeHook: (@Sendable (Database, [DeliveryResult]) throws -> Void)?

    /// A worker for `outbox` in `pool`, with one transport per channel.
    public init(
        pool: DatabasePool, outbox: DeliveryOutbox, transports: [any DeliveryTransport], settings: DeliverySettings = DeliverySettings(),
        logger: Logger, outcomeHook: (@Sendable (Database, [DeliveryResult]) throws -> Void)? = nil
    ) {
        self.outcomeHook = outcomeHook
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
            var pending = Pending()
            var lastRecordMs = now
            // Messages wait per channel until their transport's batch is full, then go in
            // one call; outcomes are recorded every few messages or milliseconds, and after
            // each batch, so a crash resends at most that much (with the same ids).
            var waiting: [DeliveryChannel: [DeliveryMessage]] = [:]
            func flush(_ channel: DeliveryChannel) {
                guard let batch = waiting.removeValue(forKey: channel), !batch.isEmpty else { return }
                send(batch, channel: channel, into: &pending)
                let at = Instant.milliseconds(Date())
                if pending.updates.count >= recordEveryCount || at - lastRecordMs >= recordEveryMs || batch.count > 1 {
                    record(&pending)
                    lastRecordMs = at
                }
            }
            for message in due where !stopping.isRaised {
                if let allowedAt = limiter.reserve(message.channel, message.destination, nowMs: Instant.milliseconds(Date())) {
                    pending.updates.append(.deferred(id: message.id, untilMs: allowedAt))
                    continue
                }
                waiting[message.channel, default: []].append(message)
                if waiting[message.channel]!.count >= max(1, transports[message.channel]?.batchLimit ?? 1) { flush(message.channel) }
            }
            for channel in Array(waiting.keys) where !stopping.isRaised { flush(channel) }
            record(&pending)
            if due.count < settings.batchSize { break }
        }
        do {
            return try pool.read { db in try DeliveryQueue.nextDueMs(db) }
        } catch {
            return Instant.milliseconds(Date()) + 1_000
        }
    }

    /// What is sent and not recorded yet.
    struct Pending {
        var updates: [DeliveryQueue.Update] = []
        var results: [DeliveryResult] = []
    }

    /// One batch of a channel through its transport.
    private func send(_ batch: [DeliveryMessage], channel: DeliveryChannel, into pending: inout Pending) {
        let start = Instant.milliseconds(Date())
        let outcomes: [DeliveryOutcome]
        if let transport = transports[channel] {
            let answered = transport.send(batch: batch)
            outcomes = answered.count == batch.count ? answered : Array(repeating: .retry(reason: "the transport answered \(answered.count) outcomes for \(batch.count) messages"), count: batch.count)
        } else {
            outcomes = Array(repeating: .retry(reason: "no transport for the channel \(channel)"), count: batch.count)
        }
        let end = Instant.milliseconds(Date())
        var sent = 0
        for (message, outcome) in zip(batch, outcomes) {
            let (update, result) = decide(message, outcome, atMs: end, batchMs: end - start, batched: batch.count > 1)
            pending.updates.append(update)
            pending.results.append(result)
            if result.state == .sent { sent += 1 }
        }
        if batch.count > 1 {
            logger.info("batch sent", metadata: ["channel": "\(channel)", "messages": "\(batch.count)", "delivered": "\(sent)", "ms": "\(end - start)"])
        }
    }

    /// What an outcome means for one message: its update and its result.
    private func decide(_ message: DeliveryMessage, _ outcome: DeliveryOutcome, atMs end: Int64, batchMs: Int64, batched: Bool)
        -> (DeliveryQueue.Update, DeliveryResult)
    {
        let metadata: Logger.Metadata = ["id": "\(message.id)", "channel": "\(message.channel)", "ms": "\(batchMs)"]
        switch outcome {
        case .delivered:
            if !batched { logger.info("message sent", metadata: metadata) }
            return (.sent(id: message.id, atMs: end), DeliveryResult(message: message, state: .sent, reason: nil, permanent: false))
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
                return (
                    .failed(id: message.id, attempts: attempts, nextMs: end + afterMs, reason: reason, atMs: end),
                    DeliveryResult(message: message, state: .retrying, reason: reason, permanent: false)
                )
            case .dead:
                logger.error("message not sent, given up (dead letter)", metadata: details)
                return (
                    .failed(id: message.id, attempts: attempts, nextMs: nil, reason: reason, atMs: end),
                    DeliveryResult(message: message, state: .dead, reason: reason, permanent: outcome.isPermanent)
                )
            }
        }
    }

    /// Writes and clears `updates`. If the write fails the messages stay pending and are
    /// sent again (with the same ids): at least once, never lost.
    private func record(_ pending: inout Pending) {
        guard !pending.updates.isEmpty else { return }
        let batch = pending.updates, results = pending.results
        pending = Pending()
        do {
            try pool.write { [outcomeHook, logger] db in
                try DeliveryQueue.apply(db, batch)
                guard let outcomeHook, !results.isEmpty else { return }
                // The service's bookkeeping must not undo the record of what was sent.
                do {
                    try db.inSavepoint {
                        try outcomeHook(db, results)
                        return .commit
                    }
                } catch {
                    logger.error("the delivery outcome hook failed", metadata: ["error": "\(error)"])
                }
            }
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

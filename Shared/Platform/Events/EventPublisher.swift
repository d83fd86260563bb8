import Foundation
import GRDB
import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// Drains the outbox onto the bus: after every commit that wrote events (``Outbox/append``
/// wakes it), and every second in case a wake-up was missed, it sends the events it has
/// not sent yet.
///
/// Publishing is at least once (a restart resends from the last saved position) and
/// pub/sub may drop messages; subscribers drop duplicates by `seq` and fill gaps with
/// `events.replay`, so no event is lost either way.
///
/// When the bus does not take messages (the gateway stopped or overwhelmed: its queue
/// of ``highWaterMark`` messages is full), the publisher does not queue more in memory
/// and does not skip anything: it stops, counts the stop in
/// `backend_bus_queue_full_total{service,side="publisher"}`, warns at most every ten
/// seconds, and resends from the first unsent event after ``fullBackoff``, doubled while
/// the queue stays full up to ``longestBackoff``. The events wait in the outbox, on disk.
/// (A backlog of 100,000 events, announced with a fixed 100 ms wait, took about 11 s to
/// cross the bus, and live events queued behind it; with waits from 5 ms, about 3 s.)
public final class EventPublisher: Service, Sendable {
    /// Messages queued for the bus in this process (`ZMQ_SNDHWM`).
    public static let highWaterMark: Int32 = 2_000
    /// The most of an event the bus carries: a longer one goes without its `data`
    /// (subscribers fetch events from the source anyway; the bus only announces them).
    public static let maxBusEventBytes = 16 << 10
    /// How long the publisher first waits after finding the bus's queue full.
    public static let fullBackoff: Duration = .milliseconds(5)
    /// The longest wait while the queue stays full (the gateway down or overwhelmed).
    public static let longestBackoff: Duration = .milliseconds(100)
    private let source: String
    private let pool: DatabasePool
    private let bus: Link
    private let logger: Logger
    private let wakeUps = Mailbox<Bool>()
    private let stopping = Atomic<Bool>(false)
    private let fullCounter: Counter

    /// Creates a publisher for `source`'s outbox, connecting to the bus's XSUB.
    public init(source: String, pool: DatabasePool, bus: Link, logger: Logger) {
        self.source = source
        self.pool = pool
        self.bus = bus
        self.logger = logger
        fullCounter = Counter(label: "backend_bus_queue_full_total", dimensions: [("service", source), ("side", "publisher")])
    }

    public func run() async throws {
        let wakeUps = self.wakeUps
        OutboxWakeups.register(ObjectIdentifier(self)) { wakeUps.post(true) }
        defer { OutboxWakeups.unregister(ObjectIdentifier(self)) }
        let thread = SocketThread(name: "\(source)-publisher") { [self] in publishLoop() }
        await withTaskCancellationOrGracefulShutdownHandler {
            await thread.join()
        } onCancelOrGracefulShutdown: { [self] in
            stop()
        }
    }

    /// Stops the loop after a last drain.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        wakeUps.wake()
    }

    private func publishLoop() {
        let socket: ZMQSocket
        do {
            socket = try ZMQSocket(type: .pub, options: .with { [bus] in $0.sendHighWaterMark = Self.highWaterMark; $0.lingerMs = 500; $0.curve = bus.curve })
            // A full queue answers EAGAIN instead of dropping the message unnoticed.
            try socket.setDropsWhenFull(false)
            try socket.connect(bus.endpoint)
        } catch {
            logger.critical("cannot connect the event publisher", metadata: ["endpoint": "\(bus.endpoint)", "error": "\(error)"])
            return
        }
        defer { socket.close() }
        var published = (try? pool.read { db in try PlatformMeta.get(db, "outbox.published").flatMap(Int64.init) }) ?? 0
        var savedPosition = published
        var lastSave = ContinuousClock.now
        var full = ReportThrottle()
        var poller = Poller()
        poller.add(fileDescriptor: wakeUps.fileDescriptor)
        var backoff = Self.fullBackoff
        while true {
            let stop = stopping.load(ordering: .relaxed)
            _ = wakeUps.drain()
            let (reached, wasFull) = publishPending(after: published, on: socket)
            // Progress starts the waits over: a backlog crossing a busy bus waits 5 ms at
            // each full queue, not the longest wait.
            if reached > published { backoff = Self.fullBackoff }
            published = reached
            if wasFull {
                fullCounter.increment()
                if let unreported = full.record() {
                    logger.warning(
                        "the event bus's queue is full: publishing waits (events stay in the outbox)",
                        metadata: ["times": "\(unreported)", "position": "\(published)"])
                }
                if !stop { Thread.sleep(forTimeInterval: backoff.milliseconds / 1_000) }
                backoff = min(backoff * 2, Self.longestBackoff)
            }
            // The position only saves work after a restart, so it is written at most once
            // a second rather than in every request's transaction.
            if published != savedPosition && (stop || ContinuousClock.now - lastSave > .seconds(1)) {
                let position = published
                do {
                    try pool.write { db in try PlatformMeta.set(db, "outbox.published", String(position)) }
                    savedPosition = position
                    lastSave = .now
                } catch {
                    logger.warning("cannot save the publisher position", metadata: ["error": "\(error)"])
                }
            }
            if stop { return }
            // After a full queue the backoff was the wait: the rest goes at once, not at
            // the next commit or a second later.
            if !wasFull { _ = try? poller.poll(timeoutMs: 1_000) }
        }
    }

    /// An event without its data (`"data": null`, `"truncated": true`), for the bus.
    static func announcement(of bytes: Data) -> Data {
        guard case .object(var members) = try? JSONParser.parse(bytes) else { return Data("{}".utf8) }
        members["data"] = .null
        members["truncated"] = true
        return (try? WireJSON.encode(JSONValue.object(members))) ?? Data("{}".utf8)
    }

    /// Sends what the outbox holds after `position`; returns how far it got, and whether
    /// it stopped at a full queue.
    private func publishPending(after position: Int64, on socket: ZMQSocket) -> (position: Int64, full: Bool) {
        var position = position
        while true {
            let after = position
            let batch: [(seq: Int64, type: String, bytes: Data)]
            do {
                batch = try pool.read { db in try Outbox.encodedEvents(db, source: source, after: after, limit: 500) }
            } catch {
                logger.error("cannot read the outbox", metadata: ["error": "\(error)"])
                return (position, false)
            }
            for event in batch {
                do {
                    let bytes = event.bytes.count <= Self.maxBusEventBytes ? event.bytes : Self.announcement(of: event.bytes)
                    guard try socket.send(multipart: [Data(event.type.utf8), bytes], dontWait: true) else { return (position, true) }
                } catch {
                    logger.warning("cannot publish an event", metadata: ["seq": "\(event.seq)", "error": "\(error)"])
                    return (position, false)
                }
                position = event.seq
            }
            if batch.count < 500 { return (position, false) }
        }
    }
}

/// Counts occurrences of something worth a warning (a full queue, a refused message) and
/// says when to warn: at most once per ``interval``, with the count since the last one.
public struct ReportThrottle: Sendable {
    public var interval: Duration
    private var unreported = 0
    private var lastReport: ContinuousClock.Instant?

    public init(interval: Duration = .seconds(10)) { self.interval = interval }

    /// Records one more; returns the count to report now, or `nil` to stay quiet.
    public mutating func record(now: ContinuousClock.Instant = .now) -> Int? {
        unreported += 1
        if let last = lastReport, now - last < interval { return nil }
        defer { unreported = 0; lastReport = now }
        return unreported
    }
}

import Foundation
import GRDB
import Logging
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
public final class EventPublisher: Service, Sendable {
    private let source: String
    private let pool: DatabasePool
    private let bus: Link
    private let logger: Logger
    private let wakeUps = Mailbox<Bool>()
    private let stopping = Atomic<Bool>(false)

    /// Creates a publisher for `source`'s outbox, connecting to the bus's XSUB.
    public init(source: String, pool: DatabasePool, bus: Link, logger: Logger) {
        self.source = source
        self.pool = pool
        self.bus = bus
        self.logger = logger
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
            socket = try ZMQSocket(type: .pub, options: .with { [bus] in $0.sendHighWaterMark = 100_000; $0.lingerMs = 500; $0.curve = bus.curve })
            try socket.connect(bus.endpoint)
        } catch {
            logger.critical("cannot connect the event publisher", metadata: ["endpoint": "\(bus.endpoint)", "error": "\(error)"])
            return
        }
        defer { socket.close() }
        var published = (try? pool.read { db in try PlatformMeta.get(db, "outbox.published").flatMap(Int64.init) }) ?? 0
        var savedPosition = published
        var lastSave = ContinuousClock.now
        var poller = Poller()
        poller.add(fileDescriptor: wakeUps.fileDescriptor)
        while true {
            let stop = stopping.load(ordering: .relaxed)
            _ = wakeUps.drain()
            published = publishPending(after: published, on: socket)
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
            _ = try? poller.poll(timeoutMs: 1_000)
        }
    }

    private func publishPending(after position: Int64, on socket: ZMQSocket) -> Int64 {
        var position = position
        while true {
            let after = position
            let batch: [(seq: Int64, type: String, bytes: Data)]
            do {
                batch = try pool.read { db in try Outbox.encodedEvents(db, source: source, after: after, limit: 500) }
            } catch {
                logger.error("cannot read the outbox", metadata: ["error": "\(error)"])
                return position
            }
            for event in batch {
                do {
                    try socket.send(multipart: [Data(event.type.utf8), event.bytes])
                } catch {
                    logger.warning("cannot publish an event", metadata: ["seq": "\(event.seq)", "error": "\(error)"])
                    return position
                }
                position = event.seq
            }
            if batch.count < 500 { return position }
        }
    }
}

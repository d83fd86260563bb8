import Foundation
import GRDB
import Logging
import Metrics
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// What a service does with another service's events.
public struct EventSubscription: Sendable {
    /// The publishing service, e.g. `auth`.
    public let source: String
    /// The event types to apply; the others only move the cursor.
    public let types: Set<String>
    /// Applies one event inside the transaction that also moves the cursor.
    public let apply: @Sendable (Database, Event) throws -> Void

    /// Subscribes to `types` of `source`.
    public init(source: String, types: Set<String>, apply: @escaping @Sendable (Database, Event) throws -> Void) {
        self.source = source
        self.types = types
        self.apply = apply
    }
}

/// Applies other services' events exactly once.
///
/// For each source the subscriber keeps a cursor, the last applied `seq`, in the
/// service's database; an event's effects and the new cursor commit in one transaction.
/// Messages on the bus (SUB socket, its own thread) only say "source X has reached seq
/// N": when N is past the cursor, the subscriber fetches the missing events from the
/// source itself with `<source>.events.replay` and applies them in order. So a lost
/// message only delays an event, a duplicate is ignored, and a forged bus message cannot
/// plant an event: what is applied always comes from the source. It also catches up at
/// start-up and every ``catchUpInterval`` whatever the traffic, so an event whose
/// publication was lost is applied within that interval.
public final class EventSubscriber: Service, Sendable {
    private let subscriptions: [String: [EventSubscription]]
    private let pool: DatabasePool
    private let bus: Link
    private let replayClients: [String: ServiceClient]
    private let logger: Logger
    private let catchUpInterval: Duration
    private let stopping = Atomic<Bool>(false)
    private let cursors = Mutex<[String: Int64]>([:])
    /// The restores of each source this subscriber followed (``rewind(_:to:followed:)``).
    private let followedRestores = Mutex<[String: [String]]>([:])
    /// What the bus has said of each source since its applier last looked: the highest
    /// `seq` announced and whether a periodic check is due. A few bytes per source however
    /// far the appliers fall behind: messages are folded into it, never queued.
    private let announced = Mutex<[String: (seq: Int64, tick: Bool)]>([:])
    /// `backend_event_lag_seconds{service,source}`: from an event's commit at its source
    /// to the commit of its effects here.
    private let lagTimers: [String: CoreMetrics.Timer]
    /// `backend_event_delivery_seconds{service,source}`: from the bus message announcing
    /// an event (just after its source committed it) to the commit of its effects here.
    private let deliveryTimers: [String: CoreMetrics.Timer]
    /// When each announced, not yet applied event was first heard of, oldest first, per
    /// source; at most ``heardCapacity`` (the oldest go: they are measured by the lag only).
    private let heard = Mutex<[String: [(seq: Int64, at: ContinuousClock.Instant)]]>([:])
    private static let heardCapacity = 20_000

    /// Creates a subscriber.
    /// - Parameters:
    ///   - bus: the bus's XPUB.
    ///   - sources: where each source service answers `events.replay`.
    public init(
        subscriptions: [EventSubscription], pool: DatabasePool, bus: Link, sources: [String: Link],
        serviceName: String, logger: Logger, catchUpInterval: Duration = .seconds(1)
    ) {
        self.subscriptions = Dictionary(grouping: subscriptions, by: \.source)
        self.pool = pool
        self.bus = bus
        self.logger = logger
        self.catchUpInterval = catchUpInterval
        var clients: [String: ServiceClient] = [:]
        for source in self.subscriptions.keys {
            if let link = sources[source] {
                clients[source] = ServiceClient(link: link, name: "\(serviceName)-replay-\(source)")
            }
        }
        replayClients = clients
        lagTimers = Dictionary(
            uniqueKeysWithValues: self.subscriptions.keys.map { source in
                (source, CoreMetrics.Timer(label: "backend_event_lag_seconds", dimensions: [("service", serviceName), ("source", source)]))
            })
        deliveryTimers = Dictionary(
            uniqueKeysWithValues: self.subscriptions.keys.map { source in
                (source, CoreMetrics.Timer(label: "backend_event_delivery_seconds", dimensions: [("service", serviceName), ("source", source)]))
            })
    }

    /// The last applied `seq` of each source.
    public var appliedCursors: [String: Int64] { cursors.withLock { $0 } }

    public func run() async throws {
        let stored = try await pool.read { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT source, seq FROM platform_event_cursor").map {
                    (row: Row) -> (String, Int64) in (row["source"], row["seq"])
                })
        }
        cursors.withLock { cursors in
            for source in subscriptions.keys { cursors[source] = stored[source] ?? 0 }
        }
        let sources = Array(subscriptions.keys)
        let followed = try await pool.read { db in
            try sources.reduce(into: [String: [String]]()) { followed, source in
                followed[source] = try RestoreHistory.followed(db, source: source)
            }
        }
        followedRestores.withLock { $0 = followed }
        // One applier per source, each woken through its own stream: a source that is
        // down (its replay waits for a timeout) delays only its own events. A stream holds
        // at most one wake-up; what woke it is in `announced`.
        var streams: [String: AsyncStream<Void>] = [:]
        var continuations: [String: AsyncStream<Void>.Continuation] = [:]
        for source in subscriptions.keys {
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            streams[source] = stream
            continuations[source] = continuation
        }
        let sinks = continuations
        let thread = SocketThread(name: "subscriber") { [self] in
            receiveLoop(into: sinks)
        }
        let sourceStreams = streams
        await withTaskCancellationOrGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for (source, stream) in sourceStreams {
                    group.addTask { [self] in
                        await catchUpRetrying(source)
                        for await _ in stream {
                            let news = announced.withLock { $0.removeValue(forKey: source) }
                            let cursor = cursors.withLock { $0[source] ?? 0 }
                            // A periodic tick checks the source for events whose message was lost.
                            if let news, news.tick || news.seq > cursor { await catchUpRetrying(source) }
                        }
                    }
                }
            }
        } onCancelOrGracefulShutdown: { [self] in
            stopping.store(true, ordering: .relaxed)
        }
        stopping.store(true, ordering: .relaxed)
        await thread.join()
        for client in replayClients.values { await client.close() }
    }

    private func receiveLoop(into continuations: [String: AsyncStream<Void>.Continuation]) {
        defer { for continuation in continuations.values { continuation.finish() } }
        let socket: ZMQSocket
        do {
            // Messages only announce how far a source has come: a short queue loses nothing
            // (the bus counts what it drops when this one is full; a tick catches up).
            socket = try ZMQSocket(type: .sub, options: .with { [bus] in $0.receiveHighWaterMark = 10_000; $0.curve = bus.curve })
            for source in subscriptions.keys { try socket.subscribe("\(source).") }
            try socket.connect(bus.endpoint)
        } catch {
            logger.critical("cannot connect the event subscriber", metadata: ["error": "\(error)"])
            return
        }
        defer { socket.close() }
        var poller = Poller()
        poller.add(socket)
        var malformed = ReportThrottle()
        var lastTick = ContinuousClock.now
        // The last seq heard from each source, and until when ticks come faster: a jump
        // in the seqs means the bus dropped messages to this socket (its queue was full,
        // as when a source announces a backlog), and the message of a live event may have
        // gone with them; it is then found within ``gapCatchUpInterval``, not a second,
        // until ``gapWatch`` after the last message heard in that state.
        var lastHeard: [String: Int64] = [:]
        var fastTicksUntil = ContinuousClock.now
        while !stopping.load(ordering: .relaxed) {
            _ = try? poller.poll(timeoutMs: 100)
            // At most a thousand messages between looks at the clock: a source publishing
            // a backlog must not hold up the periodic catch-up.
            var received = 0
            let now = ContinuousClock.now
            while received < 1_000, let frames = try? socket.receiveMultipart(dontWait: true, maxFrames: 3) {
                received += 1
                // The topic names the source (the bus lets each service's key publish only
                // its own), so an event claiming another source is not believed.
                guard frames.count == 2, let event = Self.announcement(frames[1]), frames[0].starts(with: Data("\(event.source).".utf8))
                else {
                    if let times = malformed.record() { logger.warning("dropped malformed event messages", metadata: ["times": "\(times)"]) }
                    continue
                }
                if let heard = lastHeard[event.source], event.seq > heard + 1 {
                    fastTicksUntil = now + Self.gapWatch
                } else if now < fastTicksUntil {
                    // Still hearing a backlog whose messages were dropped: the queue may be
                    // full yet, and the last live message of a burst may go with no later
                    // one to show the gap; the fast checks last until the bus is quiet.
                    fastTicksUntil = now + Self.gapWatch
                }
                lastHeard[event.source] = max(lastHeard[event.source] ?? 0, event.seq)
                guard let continuation = continuations[event.source] else { continue }
                announced.withLock { announced in
                    let known = announced[event.source] ?? (seq: 0, tick: false)
                    announced[event.source] = (max(known.seq, event.seq), known.tick)
                }
                heard.withLock { heard in
                    var list = heard[event.source] ?? []
                    guard event.seq > (list.last?.seq ?? 0) else { return }
                    if list.count >= Self.heardCapacity { list.removeFirst(list.count / 2) }
                    list.append((event.seq, .now))
                    heard[event.source] = list
                }
                continuation.yield()
            }
            let interval = ContinuousClock.now < fastTicksUntil ? min(catchUpInterval, Self.gapCatchUpInterval) : catchUpInterval
            if ContinuousClock.now - lastTick >= interval {
                for (source, continuation) in continuations {
                    announced.withLock { announced in announced[source] = (announced[source]?.seq ?? 0, true) }
                    continuation.yield()
                }
                lastTick = .now
            }
        }
    }

    /// How often sources are checked for a while after the bus dropped messages to this
    /// subscriber, and for how long after the last message heard since.
    static let gapCatchUpInterval: Duration = .milliseconds(100)
    static let gapWatch: Duration = .seconds(3)

    /// The source and seq a bus message announces, read without building its `data`
    /// (the subscriber thread reads every message of its sources, backlogs included);
    /// `nil` for anything that is not an event.
    public static func announcement(_ frame: Data) -> (source: String, seq: Int64)? {
        var ranges: [Range<Int>?] = []
        guard let slots = try? JSONParser.parseMemberSlots(of: frame, announcementMembers, ranges: &ranges) ?? nil,
            case .value(.string(let source))? = slots[0], case .value(.integer(let seq))? = slots[1],
            case .value(.string)? = slots[2], case .value(.string)? = slots[3]
        else { return nil }
        return (source, seq)
    }

    /// Slots 0 to 3 of ``announcement(_:)``.
    private static let announcementMembers = JSONParser.MemberNames(ordered: ["source", "seq", "type", "at"])

    /// ``catchUp(_:)``, tried again after 50, 100, 200 and 400 ms when the source answered
    /// with an error or a page could not be applied, rather than at the next periodic tick:
    /// one refused replay must not hold a live event back for a second (a stats overview
    /// showed a deposit after 1.09 s once in 100). A source that does not answer is left
    /// to the tick: each attempt already waited for its timeout.
    private func catchUpRetrying(_ source: String) async {
        var delay = Duration.milliseconds(50)
        while await catchUp(source) == .failedRetrySoon {
            guard delay <= .milliseconds(400), !stopping.load(ordering: .relaxed) else { return }
            try? await Task.sleep(for: delay)
            delay *= 2
        }
    }

    /// How a catch-up ended.
    private enum CatchUpOutcome {
        case done, unreachable, failedRetrySoon
    }

    /// Fetches and applies everything after the cursor of `source`.
    private func catchUp(_ source: String) async -> CatchUpOutcome {
        guard let client = replayClients[source] else { return .done }
        while !stopping.load(ordering: .relaxed) {
            let after = cursors.withLock { $0[source] ?? 0 }
            let reply: Reply.Parsed
            do {
                reply = try await client.call(
                    "\(source).events.replay", data: ["after": .integer(after), "limit": 500], idempotent: true,
                    timeout: .seconds(2), attempts: 1)
            } catch {
                logger.debug("replay source not reachable, will retry", metadata: ["source": "\(source)"])
                return .unreachable
            }
            guard reply.ok, case .array(let items)? = reply.data?["events"] else {
                logger.warning("replay failed", metadata: ["source": "\(source)", "error": "\(reply.error?.message ?? "malformed")"])
                return .failedRetrySoon
            }
            let last = reply.data?["last"]?.integerValue ?? 0
            // Restores the subscriber has not followed: every event of the source above
            // the lowest of their `resumedAfter` is new (a restore that moved seqs on
            // changes nothing; one that gave the same seqs again, the replaced file gone,
            // sends the cursor back), once per restore (`RestoreHistory`).
            var rewindTo: (seq: Int64, followed: [String]?)?
            if let restores = Self.restores(in: reply.data).map({ RestoreHistory.sane($0, last: last) }),
                let target = RestoreHistory.rewind(
                    cursor: after, followed: followedRestores.withLock { $0[source] ?? [] }, restores: restores)
            {
                if target.seq < after {
                    logger.error(
                        "an event source was restored from a backup and gave seqs again: applying its events after the restore",
                        metadata: ["source": "\(source)", "cursor": "\(after)", "from": "\(target.seq)"])
                }
                rewindTo = (target.seq, target.followed)
            } else if last < after {
                // The source is behind what we applied and says of no restore: its
                // database was recreated. Its next events are new ones, whatever their seqs.
                logger.error(
                    "an event source is behind this subscriber's cursor (its database recreated?): going on from its last event",
                    metadata: ["source": "\(source)", "cursor": "\(after)", "last": "\(last)"])
                rewindTo = (last, nil)
            }
            if let rewindTo {
                do {
                    try await rewind(source, to: rewindTo.seq, followed: rewindTo.followed)
                } catch {
                    logger.error("cannot move the cursor back", metadata: ["source": "\(source)", "error": "\(error)"])
                    return .failedRetrySoon
                }
                continue
            }
            let events = items.compactMap { try? Event(json: $0) }.filter { $0.seq > (cursors.withLock { $0[source] ?? 0 }) }
            // A page in one transaction (one commit, one fsync, for up to 500 events); if
            // one of them fails, one by one, so only the failing event waits.
            if await (try? applyPage(events, source: source)) == nil {
                for event in events where event.seq > (cursors.withLock { $0[source] ?? 0 }) {
                    do {
                        try await applyPage([event], source: source)
                    } catch {
                        logger.error(
                            "cannot apply an event; it will be retried",
                            metadata: ["source": "\(event.source)", "seq": "\(event.seq)", "type": "\(event.type)", "error": "\(error)"])
                        return .failedRetrySoon
                    }
                }
            }
            if events.isEmpty || (cursors.withLock { $0[source] ?? 0 }) >= last { return .done }
        }
        return .done
    }

    /// Sets the cursor of `source` to `seq` (not above where it was) and records the
    /// restores it has followed, in one transaction.
    private func rewind(_ source: String, to seq: Int64, followed: [String]?) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE platform_event_cursor SET seq = ? WHERE source = ? AND seq > ?", arguments: [seq, source, seq])
            if let followed { try RestoreHistory.storeFollowed(db, source: source, followed) }
        }
        cursors.withLock { $0[source] = min($0[source] ?? 0, seq) }
        if let followed { followedRestores.withLock { $0[source] = followed } }
    }

    /// A replay answer's restores: the history, or (from a source of an earlier version)
    /// its one latest restore, taken as having given seqs again.
    static func restores(in data: JSONValue?) -> [RestoreRecord]? {
        if case .array(let items)? = data?["restores"] {
            // Record by record: one that does not read is left out, not the history.
            return items.compactMap { try? JSONValueDecoder().decode(RestoreRecord.self, from: $0) }
        }
        guard let id = data?["restoreId"]?.stringValue else { return nil }
        let at = data?["restoredAt"]?.integerValue ?? 0
        return [RestoreRecord(id: id, restoredAt: at, resumedAfter: at)]
    }

    /// Applies events in order (those right after the stored cursor) and moves the cursor
    /// past them, in one transaction: their effects and the cursor commit together.
    private func applyPage(_ events: [Event], source: String) async throws {
        guard !events.isEmpty else { return }
        let handlers = subscriptions[source] ?? []
        let reached = try await pool.write { db -> Int64 in
            var stored = try Int64.fetchOne(db, sql: "SELECT seq FROM platform_event_cursor WHERE source = ?", arguments: [source]) ?? 0
            // Re-checked inside the transaction: the database, not memory, decides. Events
            // come in order from the source; a seq it skips (after a restore moved its
            // sequence on) never comes later, since seqs are given in commit order.
            for event in events where event.seq > stored {
                for handler in handlers where handler.types.contains(event.type) { try handler.apply(db, event) }
                stored = event.seq
            }
            try db.execute(
                sql: """
                    INSERT INTO platform_event_cursor (source, seq) VALUES (?, ?)
                    ON CONFLICT(source) DO UPDATE SET seq = excluded.seq
                    """, arguments: [source, stored])
            return stored
        }
        cursors.withLock { $0[source] = max($0[source] ?? 0, reached) }
        if let timer = lagTimers[source] {
            let now = Date()
            for event in events where event.seq <= reached {
                guard let at = Instant.parse(event.at) else { continue }
                timer.recordMicroseconds(max(0, Int64(now.timeIntervalSince(at) * 1e6)))
            }
        }
        let delivered = heard.withLock { heard -> [ContinuousClock.Instant] in
            guard let list = heard[source], let first = list.first, first.seq <= reached else { return [] }
            let done = list.prefix { $0.seq <= reached }
            heard[source] = Array(list.dropFirst(done.count))
            return done.map(\.at)
        }
        if let timer = deliveryTimers[source] {
            let now = ContinuousClock.now
            for at in delivered { timer.recordMicroseconds((now - at).wholeMicroseconds) }
        }
    }
}

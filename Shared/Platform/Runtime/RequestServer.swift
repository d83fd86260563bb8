import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// Limits and deadlines of a request socket.
public struct RequestLimits: Sendable {
    /// Requests larger than this get `payload_too_large` (CONTRACT.md: 1 MiB).
    public var maxRequestBytes = 1 << 20
    /// Frames larger than this make libzmq drop the connection (`ZMQ_MAXMSGSIZE`). libzmq
    /// allocates a frame's announced size as soon as its 9-byte header arrives, so each
    /// connection, even one that never finishes the CURVE handshake, may cost this much:
    /// kept just above what a service is ever sent (requests of at most 1 MiB, the
    /// gateway's limit, with their envelope).
    public var maxMessageBytes: Int64 = (1 << 20) + (256 << 10)
    /// How long a handler may run before the request is answered with `timeout`.
    public var deadline: Duration = .seconds(4)
    /// How long shutdown waits for requests in flight.
    public var shutdownGrace: Duration = .seconds(5)
    /// Requests handled at once; beyond this the socket is not read, so requests wait in
    /// libzmq's queue (bounded by its high-water mark) instead of in memory.
    public var maxInFlight = 2_048
    /// Request bytes handled at once (the frames of requests given to tasks); beyond this
    /// the socket is not read, as when ``maxInFlight`` is reached. 2,048 requests of 1 MiB
    /// would otherwise hold 2 GiB.
    public var maxInFlightBytes = 64 << 20
    /// Requests libzmq may queue per connected peer before it stops reading that peer's
    /// TCP connection (`ZMQ_RCVHWM`): at most 128 MiB of requests at the 1 MiB limit. The
    /// gateway, the main peer, never has more than its own in-flight budget outstanding.
    public var receiveHighWaterMark: Int32 = 128

    /// Defaults from the contract.
    public init() {}
}

/// The request socket of a service: a ROUTER on its own thread.
///
/// The thread receives, parses and answers; it never waits for SQLite. Inline operations
/// (health, describe) are answered right there; a read runs whole on one of the read
/// threads; a write whose preparation needs no waiting is checked and prepared here and
/// queued for the writer thread (``RequestDispatcher/startWrite(_:done:)``); every other
/// request becomes a task. Replies come back through a ``Mailbox``.
/// Each request has a deadline after which it is answered with `timeout` and its task is
/// cancelled (a read not started yet is dropped). On shutdown the socket stops
/// taking requests, finishes those in flight (up to the grace period), then closes.
public final class RequestServer: Service, Sendable {
    private let endpoint: String
    private let dispatcher: RequestDispatcher
    private let limits: RequestLimits
    private let logger: Logger
    private let curve: CurveRole?
    private let completions = Mailbox<Completion>()
    private let stopping = Atomic<Bool>(false)
    private let bound = AsyncSignal()
    private let boundEndpoint = Mutex<String?>(nil)
    private let metrics: RequestMetrics

    private struct Completion: Sendable {
        let tag: UInt64
        let result: Result

        enum Result: Sendable {
            /// The reply frame and the outcome for the log.
            case reply(Data, outcome: String)
            /// A write's outcome, made into the reply on the socket thread (not the writer's).
            case write(@Sendable () -> (reply: Data, outcome: String))
        }

        init(tag: UInt64, reply: Data, outcome: String) {
            self.tag = tag
            self.result = .reply(reply, outcome: outcome)
        }

        init(tag: UInt64, write: @escaping @Sendable () -> (reply: Data, outcome: String)) {
            self.tag = tag
            self.result = .write(write)
        }
    }

    /// Where a request is being handled, so it can be cancelled at its deadline.
    private enum Work {
        case task(Task<Void, Never>)
        case read(WorkerThreads.Ticket)
        /// Queued for the writer thread; once queued it is written (its late reply is dropped).
        case write

        func cancel() {
            switch self {
            case .task(let task): task.cancel()
            case .read(let ticket): ticket.cancel()
            case .write: break
            }
        }
    }

    /// The threads that run reads whole (``RequestDispatcher/runBlocking(_:)``), shared by
    /// the process's request sockets: two per core (so one waiting for the disk leaves
    /// the core to another), at least three, at most as many as a database has readers
    /// (``ServiceDatabase``). More cost more than they bring: on two cores, `bench
    /// reminders`' pages took 320–340 µs of the service's CPU each with three or four
    /// threads, 430–460 µs with eight (preempted mid-page, their caches cold).
    static let readThreads = WorkerThreads(name: "reads", count: min(8, max(3, 2 * ProcessInfo.processInfo.activeProcessorCount)))

    private struct InFlight {
        let envelope: [Data]
        /// Whether the request came as one packed frame (``PackedFrames``), as the reply goes.
        let packed: Bool
        let id: String
        let op: String
        let started: ContinuousClock.Instant
        let deadline: ContinuousClock.Instant
        let work: Work
        /// The request's size, counted against ``RequestLimits/maxInFlightBytes``.
        let bytes: Int
    }

    /// Creates a server that will bind `endpoint`.
    public init(endpoint: String, dispatcher: RequestDispatcher, limits: RequestLimits, logger: Logger, curve: CurveRole? = nil) {
        self.endpoint = endpoint
        self.dispatcher = dispatcher
        self.limits = limits
        self.logger = logger
        self.curve = curve
        self.metrics = RequestMetrics.of(service: dispatcher.service)
    }

    /// The endpoint actually bound (with the real port), once the socket is up.
    public func waitUntilBound() async -> String? {
        await bound.wait()
        return boundEndpoint.withLock { $0 }
    }

    public func run() async throws {
        let thread = SocketThread(name: "\(dispatcher.service)-requests") { [self] in serve() }
        await withTaskCancellationOrGracefulShutdownHandler {
            await thread.join()
        } onCancelOrGracefulShutdown: { [self] in
            stop()
        }
        if boundEndpoint.withLock({ $0 }) == nil {
            throw ServiceError.unavailable("cannot bind \(endpoint)")
        }
    }

    /// Stops taking requests and finishes those in flight.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        completions.wake()
    }

    private func serve() {
        let socket: ZMQSocket
        do {
            socket = try ZMQSocket(type: .router, options: .with {
                $0.maxMessageSize = limits.maxMessageBytes
                $0.receiveHighWaterMark = limits.receiveHighWaterMark
                // A full receive queue stops libzmq reading the gateway's connection; a
                // busy service must not drop it as dead meanwhile (SocketOptions).
                $0.heartbeatTimeoutMs = SocketOptions.patientHeartbeatTimeoutMs
                $0.curve = curve
            })
            try socket.bind(endpoint)
        } catch {
            logger.critical("cannot bind the request socket", metadata: ["endpoint": "\(endpoint)", "error": "\(error)"])
            bound.fire()
            return
        }
        boundEndpoint.withLock { $0 = socket.lastEndpoint }
        bound.fire()
        logger.info("serving", metadata: ["endpoint": "\(socket.lastEndpoint)"])

        var inFlight: [UInt64: InFlight] = [:]
        var inFlightBytes = 0
        var deadlines = DeadlineWatch()
        var nextTag: UInt64 = 0
        var poller = Poller()
        let socketItem = poller.add(socket)
        let mailboxItem = poller.add(fileDescriptor: completions.fileDescriptor)
        // While saturated, only completions are waited for.
        var saturatedPoller = Poller()
        saturatedPoller.add(fileDescriptor: completions.fileDescriptor)
        var drainUntil: ContinuousClock.Instant?
        var closeAt: ContinuousClock.Instant?

        func send(_ envelope: [Data], _ reply: Data, packed: Bool) {
            do {
                try socket.send(multipart: PackedFrames.reply(envelope: envelope, reply, packed: packed), dontWait: true)
            } catch {
                logger.warning("cannot send a reply", metadata: ["error": "\(error)"])
            }
        }

        func finish(_ request: InFlight, reply: Data, outcome: String) {
            inFlightBytes -= request.bytes
            send(request.envelope, reply, packed: request.packed)
            log(id: request.id, op: request.op, started: request.started, outcome: outcome)
        }

        func accept(_ frames: [Data], packed: Bool, caller: String?) {
            let started = ContinuousClock.now
            let message: (envelope: [Data], request: RequestEnvelope)
            switch IncomingRequest.read(frames, maxBytes: limits.maxRequestBytes) {
            case .failure(let rejected):
                send(rejected.envelope, Reply.failure(id: rejected.id, error: rejected.error), packed: packed)
                log(id: rejected.id, op: nil, started: started, outcome: rejected.error.code.rawValue)
                return
            case .success(let read):
                message = read
            }
            let request = message.request
            let client = ClientAddress.find(in: message.envelope)
            if dispatcher.isInline(request.op) {
                let (reply, outcome): (Data, String)
                do {
                    (reply, outcome) = dispatcher.runInline(try dispatcher.prepare(request, client: client, caller: caller))
                } catch {
                    (reply, outcome) = (Reply.failure(id: request.id, error: error), error.code.rawValue)
                }
                send(message.envelope, reply, packed: packed)
                log(id: request.id, op: request.op, started: started, outcome: outcome)
                return
            }
            func answer(_ reply: Data, outcome: String) {
                send(message.envelope, reply, packed: packed)
                log(id: request.id, op: request.op, started: started, outcome: outcome)
            }
            /// The request checked on this thread; `nil` for a token of a key not fetched
            /// yet (the task fetches it and tries again), after answering any other refusal.
            func prepareHere() -> (prepared: RequestDispatcher.Prepared?, answered: Bool) {
                do {
                    return (try self.dispatcher.prepare(request, client: client, caller: caller), false)
                } catch where error.isUnknownKey {
                    return (nil, false)
                } catch {
                    answer(Reply.failure(id: request.id, error: error), outcome: error.code.rawValue)
                    return (nil, true)
                }
            }
            var preparedHere: RequestDispatcher.Prepared?
            // A token seen for the first time is checked off this thread (a signature check
            // costs about 80 µs, and anyone may send forged ones): its request goes the
            // task's way, and the next ones with it are prepared here.
            let checksHere = dispatcher.checksAtOnce(request)
            if checksHere, dispatcher.hasFastPath(request.op) {
                // Public data cached in memory (e.g. a day's availability) is answered
                // right here; a token check is cheap once cached.
                let (prepared, answered) = prepareHere()
                if answered { return }
                if let prepared, let reply = dispatcher.answerFromMemory(prepared) {
                    answer(reply, outcome: "ok")
                    return
                }
                preparedHere = prepared
            }
            nextTag += 1
            let tag = nextTag
            let dispatcher = self.dispatcher, completions = self.completions
            var startedWrite = false
            if checksHere, dispatcher.startsWrites(request.op) {
                // A write whose preparation needs no waiting goes from here to the writer
                // thread, whose completion comes back through the mailbox: no task.
                var prepared = preparedHere
                if prepared == nil {
                    let checked = prepareHere()
                    if checked.answered { return }
                    prepared = checked.prepared
                }
                if let prepared {
                    switch dispatcher.startWrite(prepared, done: { completions.post(Completion(tag: tag, write: $0)) }) {
                    case .queued:
                        startedWrite = true
                    case .refused(let reply, let outcome):
                        answer(reply, outcome: outcome)
                        return
                    case .needsTask:
                        preparedHere = prepared
                    }
                }
            }
            let alreadyPrepared = preparedHere
            // Token checks and validation run in the task too, off the socket thread.
            @Sendable func startTask() -> Task<Void, Never> {
                Task {
                    let (reply, outcome): (Data, String)
                    do throws(ServiceError) {
                        let prepared: RequestDispatcher.Prepared
                        if let alreadyPrepared {
                            prepared = alreadyPrepared
                        } else {
                            prepared = try await dispatcher.prepareFetchingKeys(request, client: client, caller: caller)
                        }
                        (reply, outcome) = await dispatcher.run(prepared)
                    } catch {
                        (reply, outcome) = (Reply.failure(id: request.id, error: error), error.code.rawValue)
                    }
                    completions.post(Completion(tag: tag, reply: reply, outcome: outcome))
                }
            }
            let work: Work
            if startedWrite {
                work = .write
            } else if dispatcher.runsBlocking(request.op) {
                // A read runs whole on a read thread: checks, transaction, encoding.
                work = .read(
                    Self.readThreads.submit { cancelled in
                        // Cancelled: the socket thread answered `timeout` already.
                        guard !cancelled else { return }
                        let result: (reply: Data, outcome: String)
                        do throws(ServiceError) {
                            let prepared: RequestDispatcher.Prepared
                            if let alreadyPrepared {
                                prepared = alreadyPrepared
                            } else {
                                prepared = try dispatcher.prepare(request, client: client, caller: caller)
                            }
                            result = dispatcher.runBlocking(prepared)
                        } catch where error.isUnknownKey {
                            // A token of a key not fetched yet: the task fetches it first.
                            _ = startTask()
                            return
                        } catch {
                            result = (Reply.failure(id: request.id, error: error), error.code.rawValue)
                        }
                        completions.post(Completion(tag: tag, reply: result.reply, outcome: result.outcome))
                    })
            } else {
                work = .task(startTask())
            }
            let bytes = frames.reduce(0) { $0 + $1.count }
            inFlightBytes += bytes
            inFlight[tag] = InFlight(
                envelope: message.envelope, packed: packed, id: request.id, op: request.op, started: started,
                deadline: started + limits.deadline, work: work, bytes: bytes)
            deadlines.note(started + limits.deadline)
        }

        // While draining, new requests are answered at once instead of waiting unread.
        func refuse(_ frames: [Data], packed: Bool) {
            switch IncomingRequest.read(frames, maxBytes: limits.maxRequestBytes) {
            case .failure(let rejected):
                send(rejected.envelope, Reply.failure(id: rejected.id, error: rejected.error), packed: packed)
            case .success(let message):
                send(message.envelope, Reply.failure(id: message.request.id, error: .unavailable("the service is shutting down")), packed: packed)
                log(id: message.request.id, op: message.request.op, started: .now, outcome: "unavailable")
            }
        }

        while true {
            let now = ContinuousClock.now
            if stopping.load(ordering: .relaxed), drainUntil == nil {
                drainUntil = now + limits.shutdownGrace
                logger.info("stopping: finishing requests in flight", metadata: ["inFlight": "\(inFlight.count)"])
            }
            if let drainUntil, inFlight.isEmpty || now >= drainUntil {
                // Stay up a moment after the last reply so it leaves on a live
                // connection, refusing latecomers, then close.
                if closeAt == nil { closeAt = now + .milliseconds(200) }
                if let closeAt, now >= closeAt { break }
            }

            if deadlines.isDue(at: now) {
                for (tag, request) in inFlight {
                    if request.deadline <= now {
                        inFlight[tag] = nil
                        request.work.cancel()
                        finish(request, reply: Reply.failure(id: request.id, error: .timeout()), outcome: "timeout")
                    } else {
                        deadlines.note(request.deadline)
                    }
                }
            }
            let wait = deadlines.pollTimeout(at: now, atMost: closeAt == nil ? 250 : 20)
            // Saturated by count or by bytes: stop reading, so new requests wait in
            // libzmq's queue, which its high-water mark bounds.
            let saturated = inFlight.count >= limits.maxInFlight || inFlightBytes >= limits.maxInFlightBytes
            if saturated {
                guard (try? saturatedPoller.poll(timeoutMs: wait)) != nil else { break }
            } else {
                guard (try? poller.poll(timeoutMs: wait)) != nil else { break }
            }
            if saturated || poller.isReadable(mailboxItem) {
                for completion in completions.drain() {
                    // A request that timed out was already answered; its late reply is dropped.
                    guard let request = inFlight.removeValue(forKey: completion.tag) else { continue }
                    switch completion.result {
                    case .reply(let reply, let outcome):
                        finish(request, reply: reply, outcome: outcome)
                    case .write(let make):
                        let (reply, outcome) = make()
                        finish(request, reply: reply, outcome: outcome)
                    }
                }
            }
            if !saturated, poller.isReadable(socketItem) {
                // Take a batch bounded by count and by time (large requests take a while
                // to parse) so completions and deadlines are not starved.
                let batchEnd = ContinuousClock.now + .milliseconds(5)
                for _ in 0..<min(512, limits.maxInFlight - inFlight.count) {
                    guard inFlightBytes < limits.maxInFlightBytes,
                        let received = try? socket.receiveMultipartWithMetadata(dontWait: true, maxFrames: RoutedMessage.maxFrames + 1)
                    else { break }
                    let (frames, packed) = PackedFrames.open(received.frames)
                    if drainUntil == nil { accept(frames, packed: packed, caller: received.userID) } else { refuse(frames, packed: packed) }
                    if ContinuousClock.now >= batchEnd { break }
                }
            }
        }
        for (_, request) in inFlight {
            request.work.cancel()
            finish(request, reply: Reply.failure(id: request.id, error: .unavailable("the service is shutting down")), outcome: "unavailable")
        }
        // Give the last replies a moment to leave before the socket goes.
        try? socket.setLinger(milliseconds: 1_000)
        socket.close()
        logger.info("request socket closed")
    }

    private func log(id: String?, op: String?, started: ContinuousClock.Instant, outcome: String) {
        RequestLog.record(logger, label: dispatcher.service, id: id, op: op, started: started, outcome: outcome)
        // Health checks (the gateway's, every second) and scrapes would drown what people did.
        if let op, op.hasSuffix(".health") || op.hasSuffix(".metrics.prometheus") { return }
        metrics.record(micros: (ContinuousClock.now - started).wholeMicroseconds, outcome: outcome, op: op)
    }
}

import Foundation
import Logging
import Platform
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// The gateway: one ROUTER for clients, one DEALER per service, all on one thread.
///
/// Each request is checked (size, envelope, known service, not internal, within the
/// in-flight limits of ``GatewayLimits``) and forwarded to the service named by the op's
/// first segment, with a tag frame in front that brings the reply back to the right
/// client. The gateway reads only the envelope's `id`, `op`, `token` and `idem`; `data`
/// is validated as JSON and passed on untouched. A service that is not connected is
/// answered `unavailable` at once; one that does not answer within the deadline is
/// answered `unavailable` then. Sockets reconnect by themselves within
/// ``GatewayLimits/reconnectIntervalMax``, so a restarted service is served again without
/// any action here. `gateway.health` checks each service through these same sockets.
///
/// With `BACKEND_EDGE_SECRET` set, a second ROUTER on ``PlatformConfiguration/gatewayEdgeEndpoint``
/// serves the HTTP edge: CURVE with one admitted key (``EdgeTrust``), and the only socket
/// whose requests may name the app user's address (a top-level `client`). The edge is
/// one connection for many users, so its requests are budgeted per claimed address.
public final class Gateway: Service, Sendable {
    private let configuration: PlatformConfiguration
    private let links: Links?
    private let logger: Logger
    private let limits: GatewayLimits
    /// Wakes the socket thread to notice shutdown; nothing is ever posted.
    private let wakeUp = Mailbox<Never>()
    private let stopping = StopFlag()
    private let bound = AsyncSignal()
    private let boundEndpoint = Mutex<String?>(nil)
    private let startedAt = ContinuousClock.now
    /// `gateway.describe`'s answer, made once.
    private static let description = GatewayDescription.document.serialized
    /// The longest request frame the gateway's own operations take (they take no data).
    static let maxOwnRequestBytes = 16_384

    /// What the gateway is waiting for a service to answer.
    private struct Pending {
        enum Origin {
            /// A client's request, answered to `envelope`; `client` is its budget key (the
            /// connection's routing identity, or the edge's claimed address) and `bytes`
            /// what it counts against the budget.
            case client(envelope: ReturnPath, id: String, op: String, client: Data, bytes: Int)
            /// One service's check in a `gateway.health` round.
            case healthCheck(service: String)
        }

        let origin: Origin
        let started: ContinuousClock.Instant
        let deadline: ContinuousClock.Instant
    }

    /// Creates a gateway for the configured endpoints, with the default limits and the
    /// configured deadline; `links` by default those of `configuration` for `gateway`.
    public convenience init(configuration: PlatformConfiguration, links: Links? = nil, logger: Logger) {
        self.init(configuration: configuration, links: links, limits: GatewayLimits(configuration: configuration), logger: logger)
    }

    /// Creates a gateway with explicit limits.
    public init(configuration: PlatformConfiguration, links: Links? = nil, limits: GatewayLimits, logger: Logger) {
        self.configuration = configuration
        self.links = links
        self.logger = logger
        self.limits = limits
    }

    /// The endpoint actually bound, once the socket is up (`nil` if binding failed).
    public func waitUntilBound() async -> String? {
        await bound.wait()
        return boundEndpoint.withLock { $0 }
    }

    public func run() async throws {
        let thread = SocketThread(name: "gateway") { [self] in serve() }
        await withTaskCancellationOrGracefulShutdownHandler {
            await thread.join()
        } onCancelOrGracefulShutdown: { [self] in
            stopping.raise()
            wakeUp.wake()
        }
        if boundEndpoint.withLock({ $0 }) == nil {
            throw ServiceError.unavailable("cannot bind \(configuration.bind ?? configuration.gatewayEndpoint)")
        }
    }

    // MARK: The socket loop

    private func serve() {
        let endpoint = configuration.bind ?? configuration.gatewayEndpoint
        let frontend: ZMQSocket
        var edgeFrontend: ZMQSocket?
        var backends: [String: ZMQSocket] = [:]
        do {
            let links = try self.links ?? configuration.links(as: "gateway")
            // The public socket: plaintext on loopback by default (the contract's clients
            // connect with plain REQ or DEALER); CURVE with the gateway's key when asked.
            let publicCurve = configuration.gatewayPublicCurve ? try links.keyring?.publicServerRole() : nil
            frontend = try ZMQSocket(type: .router, options: .with {
                $0.maxMessageSize = limits.maxMessageBytes
                $0.receiveHighWaterMark = limits.frontendReceiveHighWaterMark
                $0.sendHighWaterMark = limits.frontendSendHighWaterMark
                // A full receive queue (a client pipelining large requests to a busy
                // gateway) stops libzmq reading that connection; it must not be dropped as
                // dead meanwhile, losing the replies to what it sent (SocketOptions).
                $0.heartbeatTimeoutMs = SocketOptions.patientHeartbeatTimeoutMs
                $0.curve = publicCurve
            })
            try frontend.bind(endpoint)
            if let secret = configuration.edgeSecret {
                // The ZAP handler admits the edge's key before the CURVE socket binds.
                let role = try EdgeTrust(secret: secret).gatewayRole()
                let socket = try ZMQSocket(type: .router, options: .with {
                    $0.maxMessageSize = limits.maxMessageBytes
                    $0.receiveHighWaterMark = limits.edgeReceiveHighWaterMark
                    $0.sendHighWaterMark = limits.backendSendHighWaterMark
                    $0.heartbeatTimeoutMs = SocketOptions.patientHeartbeatTimeoutMs
                    $0.curve = role
                })
                try socket.bind(configuration.gatewayEdgeEndpoint)
                edgeFrontend = socket
            }
            for (service, link) in try links.services() {
                // IMMEDIATE: nothing is queued for a service that is down, so the client
                // hears `unavailable` now instead of a stale delivery later. A short,
                // capped reconnect interval: a restarted service is reached at once.
                let backend = try ZMQSocket(type: .dealer, options: .with {
                    $0.immediate = true
                    $0.sendHighWaterMark = limits.backendSendHighWaterMark
                    $0.reconnectIntervalMs = Int32(clamping: limits.reconnectInterval.wholeMilliseconds)
                    $0.reconnectIntervalMaxMs = Int32(clamping: limits.reconnectIntervalMax.wholeMilliseconds)
                    $0.curve = link.curve
                })
                try backend.connect(link.endpoint)
                backends[service] = backend
            }
        } catch {
            logger.critical("gateway cannot start its sockets", metadata: ["endpoint": "\(endpoint)", "error": "\(error)"])
            bound.fire()
            return
        }
        boundEndpoint.withLock { $0 = frontend.lastEndpoint }
        bound.fire()
        logger.info("gateway serving", metadata: ["endpoint": "\(frontend.lastEndpoint)"])
        if let edgeFrontend { logger.info("gateway serving the edge", metadata: ["endpoint": "\(edgeFrontend.lastEndpoint)"]) }

        var pending: [UInt64: Pending] = [:]
        var deadlines = DeadlineWatch()
        func track(_ tag: UInt64, _ request: Pending) {
            pending[tag] = request
            deadlines.note(request.deadline)
        }
        var nextTag: UInt64 = 0
        var budget = InFlightBudget(limits: limits)
        let services = backends.keys.sorted()
        var health = HealthAggregator(services: services, startedAt: startedAt, lifetime: limits.healthAnswerLifetime)
        var poller = Poller()
        let frontendItem = poller.add(frontend)
        let edgeItem = edgeFrontend.map { poller.add($0) }
        let wakeUpItem = poller.add(fileDescriptor: wakeUp.fileDescriptor)
        let backendItems = services.compactMap { backends[$0].map { (poller.add($0), $0) } }

        func reply(_ path: ReturnPath, _ body: Data) {
            let socket = path.viaEdge ? (edgeFrontend ?? frontend) : frontend
            do {
                try socket.send(multipart: PackedFrames.reply(envelope: path.envelope, body, packed: path.packed), dontWait: true)
            } catch {
                logger.debug("cannot send a reply (client gone?)", metadata: ["error": "\(error)"])
            }
        }

        func fail(_ envelope: ReturnPath, id: String?, op: String?, _ error: ServiceError, started: ContinuousClock.Instant) {
            reply(envelope, Reply.failure(id: id, error: error))
            log(id: id, op: op, started: started, outcome: error.code.rawValue)
        }

        /// Sends `frames` to `backend` behind a new tag, packed into one frame
        /// (``PackedFrames``: one CURVE seal instead of one per frame); `nil` when the
        /// service is not connected (with IMMEDIATE and a queue that is never full, that is
        /// the only reason a send fails).
        func forward(_ frames: [Data], to backend: ZMQSocket) -> UInt64? {
            nextTag &+= 1
            var tag = nextTag
            let tagFrame = withUnsafeBytes(of: &tag) { Data($0) }
            let sent = (try? backend.send(multipart: [PackedFrames.pack([tagFrame] + frames)], dontWait: true)) == true
            return sent ? tag : nil
        }

        func answerHealth(_ body: JSONValue, _ waiters: [HealthAggregator.Waiter]) {
            let data = body.serialized
            for waiter in waiters {
                reply(waiter.envelope, Reply.success(id: waiter.id, data: data))
                log(id: waiter.id, op: "gateway.health", started: waiter.started, outcome: "ok")
            }
        }

        func recordHealth(_ service: String, _ status: JSONValue) {
            if let (body, waiters) = health.record(service, status: status, now: .now) {
                answerHealth(body, waiters)
            }
        }

        func askHealth(envelope: ReturnPath, id: String, started: ContinuousClock.Instant) {
            let waiter = HealthAggregator.Waiter(envelope: envelope, id: id, started: started)
            switch health.ask(waiter, now: started) {
            case .answer(let body):
                answerHealth(body, [waiter])
            case .wait:
                break
            case .checkServices(let services):
                for service in services {
                    guard let backend = backends[service],
                        let tag = forward([Data(), HealthAggregator.checkRequest(for: service)], to: backend)
                    else {
                        recordHealth(service, HealthAggregator.notConnected)
                        continue
                    }
                    let now = ContinuousClock.now
                    track(tag, Pending(origin: .healthCheck(service: service), started: now, deadline: now + limits.healthCheckTimeout))
                }
            }
        }

        /// A request from a client (`viaEdge: false`, `peer` its TCP address) or from the
        /// edge (`viaEdge: true`, the address it claims for its user in the envelope).
        func accept(_ received: [Data], peer: String?, viaEdge: Bool) {
            let started = ContinuousClock.now
            let (frames, packed) = PackedFrames.open(received)
            let message: (envelope: ReturnPath, head: RequestEnvelope.Head)
            switch IncomingRequest.readHead(frames, maxBytes: limits.maxRequestBytes) {
            case .failure(let rejected):
                return fail(ReturnPath(envelope: rejected.envelope, viaEdge: viaEdge, packed: packed), id: rejected.id, op: nil, rejected.error, started: started)
            case .success(let read):
                message = (ReturnPath(envelope: read.envelope, viaEdge: viaEdge, packed: packed), read.head)
            }
            let request = message.head
            let service = String(request.service)
            if service == "gateway" {
                guard request.op == "gateway.health" || request.op == "gateway.describe" else {
                    return fail(message.envelope, id: request.id, op: request.op, .unknownOp(request.op), started: started)
                }
                // Neither takes data: unknown members are refused, as every operation refuses
                // them. These are not counted against the client's budget, so a frame longer
                // than any such request needs is refused before it is parsed.
                if let last = frames.last, last.count > Self.maxOwnRequestBytes {
                    return fail(message.envelope, id: request.id, op: request.op, .payloadTooLarge(limit: Self.maxOwnRequestBytes), started: started)
                }
                if let data = (frames.last.flatMap { try? JSONParser.parse($0) })?["data"], data != .null {
                    let problems = JSONSchema.empty.validate(data)
                    if !problems.isEmpty {
                        return fail(message.envelope, id: request.id, op: request.op, .validationFailed(problems), started: started)
                    }
                }
                guard request.op == "gateway.health" else {
                    reply(message.envelope, Reply.success(id: request.id, data: Self.description))
                    return log(id: request.id, op: request.op, started: started, outcome: "ok")
                }
                return askHealth(envelope: message.envelope, id: request.id, started: started)
            }
            guard let backend = backends[service] else {
                return fail(message.envelope, id: request.id, op: request.op, .unknownOp(request.op), started: started)
            }
            if InternalOperations.contains(request.op) {
                return fail(
                    message.envelope, id: request.id, op: request.op,
                    .forbidden("\(request.op) is for services only"), started: started)
            }
            // Whom the request counts against: the client's connection (its routing
            // identity, the first frame), or through the edge the user's address.
            let address = viaEdge ? request.client : peer
            let client = viaEdge ? Data(("edge:" + (address ?? "")).utf8) : frames[0]
            let bytes = frames.reduce(0) { $0 + $1.count }
            if let refusal = budget.admit(client: client, bytes: bytes) {
                return fail(message.envelope, id: request.id, op: request.op, refusal, started: started)
            }
            // The client frame tells the service who is calling (for per-client limits).
            // A `client` member from anyone but the edge is ignored.
            let clientFrame = Data((ClientAddress.framePrefix + (address ?? "")).utf8)
            guard let tag = forward([clientFrame] + frames, to: backend) else {
                budget.release(client: client, bytes: bytes)
                return fail(
                    message.envelope, id: request.id, op: request.op,
                    .unavailable("the \(service) service is not reachable"), started: started)
            }
            track(
                tag,
                Pending(
                    origin: .client(envelope: message.envelope, id: request.id, op: request.op, client: client, bytes: bytes),
                    started: started, deadline: started + limits.deadline))
        }

        /// A service answered (`reply`) or the deadline passed (`nil`).
        func complete(_ request: Pending, reply body: Data?) {
            switch request.origin {
            case .client(let envelope, let id, let op, let client, let bytes):
                budget.release(client: client, bytes: bytes)
                if let body {
                    reply(envelope, body)
                    log(id: id, op: op, started: request.started, outcome: "forwarded")
                } else {
                    fail(
                        envelope, id: id, op: op,
                        .unavailable("\(op.prefix(while: { $0 != "." })) did not answer within \(configuration.gatewayDeadlineMs) ms"),
                        started: request.started)
                }
            case .healthCheck(let service):
                let status =
                    body.map { HealthAggregator.status(fromReply: $0, latency: ContinuousClock.now - request.started) }
                    ?? HealthAggregator.noAnswer
                recordHealth(service, status)
            }
        }

        /// Reads the requests waiting on a frontend socket: a batch bounded by count and by
        /// time (large requests take a while to read), so replies and deadlines are never
        /// kept waiting for long. The edge's peer address is its own, never a user's.
        func drain(_ socket: ZMQSocket, viaEdge: Bool) {
            let batchEnd = ContinuousClock.now + .milliseconds(5)
            for _ in 0..<512 {
                guard let (frames, peer) = try? socket.receiveMultipartWithPeer(dontWait: true, maxFrames: RoutedMessage.maxFrames + 1), !frames.isEmpty
                else { break }
                accept(frames, peer: viaEdge ? nil : peer, viaEdge: viaEdge)
                if ContinuousClock.now >= batchEnd { break }
            }
        }

        while !stopping.isRaised {
            let now = ContinuousClock.now
            if deadlines.isDue(at: now) {
                for (tag, request) in pending {
                    if request.deadline <= now {
                        pending[tag] = nil
                        complete(request, reply: nil)
                    } else {
                        deadlines.note(request.deadline)
                    }
                }
            }
            let wait = deadlines.pollTimeout(at: now, atMost: 250)
            guard (try? poller.poll(timeoutMs: wait)) != nil else { break }
            for (item, backend) in backendItems where poller.isReadable(item) {
                while let received = try? backend.receiveMultipart(dontWait: true) {
                    // Services answer packed as they were asked (a single frame); one that
                    // answers in the contract's frames (an older build) is understood too.
                    let frames = PackedFrames.openReply(received)
                    var tag: UInt64 = 0
                    guard frames.count >= 2, frames[0].count == 8, let body = frames.last else { continue }
                    _ = withUnsafeMutableBytes(of: &tag) { frames[0].copyBytes(to: $0) }
                    // Replies after the deadline were already answered; drop them.
                    guard let request = pending.removeValue(forKey: tag) else { continue }
                    complete(request, reply: body)
                }
            }
            if poller.isReadable(wakeUpItem) {
                _ = wakeUp.drain()
            }
            if poller.isReadable(frontendItem) { drain(frontend, viaEdge: false) }
            if let edgeFrontend, let edgeItem, poller.isReadable(edgeItem) { drain(edgeFrontend, viaEdge: true) }
        }
        for (_, request) in pending {
            if case .client(let envelope, let id, _, _, _) = request.origin {
                reply(envelope, Reply.failure(id: id, error: .unavailable("the gateway is shutting down")))
            }
        }
        for waiter in health.abandon() {
            reply(waiter.envelope, Reply.failure(id: waiter.id, error: .unavailable("the gateway is shutting down")))
        }
        try? frontend.setLinger(milliseconds: 1_000)
        frontend.close()
        try? edgeFrontend?.setLinger(milliseconds: 1_000)
        edgeFrontend?.close()
        for backend in backends.values { backend.close() }
        logger.info("gateway stopped")
    }

    private func log(id: String?, op: String?, started: ContinuousClock.Instant, outcome: String) {
        RequestLog.record(logger, label: "gateway", id: id, op: op, started: started, outcome: outcome)
    }
}

/// Where a reply goes: the routing frames of the request, and whether it came in on the
/// edge's socket or the clients' one.
struct ReturnPath {
    let envelope: [Data]
    let viaEdge: Bool
    /// Whether the request came packed (``PackedFrames``), as the reply then goes.
    let packed: Bool
}

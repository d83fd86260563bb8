import Foundation
import Logging
import Platform
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// The gateway: one ROUTER for clients, one DEALER per service, all on one thread.
///
/// Each request is checked (size, envelope, known service, not internal) and forwarded
/// to the service named by the op's first segment, with a tag frame in front that
/// brings the reply back to the right client. A service that is not connected is
/// answered `unavailable` at once; one that does not answer within the deadline is
/// answered `unavailable` then. Sockets reconnect by themselves, so a restarted service
/// is served again without any action here.
public final class Gateway: Service, Sendable {
    private let configuration: PlatformConfiguration
    private let logger: Logger
    private let limits: RequestLimits
    private let results = Mailbox<Result>()
    private let stopping = StopFlag()
    private let bound = AsyncSignal()
    private let boundEndpoint = Mutex<String?>(nil)
    private let healthClients: [String: ServiceClient]
    private let startedAt = ContinuousClock.now
    private let healthCache = HealthAggregator.Cache()

    private struct Result: Sendable {
        let envelope: [Data]
        let reply: Data
        let id: String
        let op: String
        let started: ContinuousClock.Instant
        let outcome: String
    }

    private struct Pending {
        let envelope: [Data]
        let id: String
        let op: String
        let started: ContinuousClock.Instant
        let deadline: ContinuousClock.Instant
    }

    /// Creates a gateway for the configured endpoints.
    public init(configuration: PlatformConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        var limits = RequestLimits()
        limits.deadline = .milliseconds(configuration.gatewayDeadlineMs)
        self.limits = limits
        healthClients = configuration.serviceEndpoints.mapValues { ServiceClient(endpoint: $0, name: "gateway-health") }
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
            results.wake()
        }
        for client in healthClients.values { await client.close() }
        if boundEndpoint.withLock({ $0 }) == nil {
            throw ServiceError.unavailable("cannot bind \(configuration.bind ?? configuration.gatewayEndpoint)")
        }
    }

    // MARK: The socket loop

    private func serve() {
        let endpoint = configuration.bind ?? configuration.gatewayEndpoint
        let frontend: ZMQSocket
        var backends: [String: ZMQSocket] = [:]
        do {
            frontend = try ZMQSocket(type: .router, options: .with { $0.maxMessageSize = limits.maxMessageBytes })
            try frontend.bind(endpoint)
            for (service, serviceEndpoint) in configuration.serviceEndpoints {
                // IMMEDIATE: nothing is queued for a service that is down, so the client
                // hears `unavailable` now instead of a stale delivery later.
                let backend = try ZMQSocket(type: .dealer, options: .with { $0.immediate = true; $0.sendHighWaterMark = 50_000 })
                try backend.connect(serviceEndpoint)
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

        var pending: [UInt64: Pending] = [:]
        var nextTag: UInt64 = 0
        var poller = Poller()
        let frontendItem = poller.add(frontend)
        let mailboxItem = poller.add(fileDescriptor: results.fileDescriptor)
        let services = backends.keys.sorted()
        let backendItems = services.map { poller.add(backends[$0]!) }

        func reply(_ envelope: [Data], _ body: Data) {
            do {
                try frontend.send(multipart: envelope + [body], dontWait: true)
            } catch {
                logger.debug("cannot send a reply (client gone?)", metadata: ["error": "\(error)"])
            }
        }

        func fail(_ envelope: [Data], id: String?, op: String?, _ error: ServiceError, started: ContinuousClock.Instant) {
            reply(envelope, Reply.failure(id: id, error: error))
            log(id: id, op: op, started: started, outcome: error.code.rawValue)
        }

        func accept(_ frames: [Data], peer: String?) {
            let started = ContinuousClock.now
            let message: (envelope: [Data], request: RequestEnvelope)
            switch IncomingRequest.read(frames, maxBytes: limits.maxRequestBytes) {
            case .failure(let rejected):
                return fail(rejected.envelope, id: rejected.id, op: nil, rejected.error, started: started)
            case .success(let read):
                message = read
            }
            let request = message.request
            let service = String(request.service)
            if service == "gateway" {
                return answerGatewayOperation(request, envelope: message.envelope, started: started)
            }
            guard let backend = backends[service] else {
                return fail(message.envelope, id: request.id, op: request.op, .unknownOp(request.op), started: started)
            }
            if InternalOperations.contains(request.op) {
                return fail(
                    message.envelope, id: request.id, op: request.op,
                    .forbidden("\(request.op) is for services only"), started: started)
            }
            nextTag &+= 1
            var tag = nextTag
            let tagFrame = withUnsafeBytes(of: &tag) { Data($0) }
            // The client frame tells the service who is calling (for per-client limits).
            let clientFrame = Data((ClientAddress.framePrefix + (peer ?? "")).utf8)
            let sent = (try? backend.send(multipart: [tagFrame, clientFrame] + frames, dontWait: true)) == true
            guard sent else {
                return fail(
                    message.envelope, id: request.id, op: request.op,
                    .unavailable("the \(service) service is not reachable"), started: started)
            }
            pending[tag] = Pending(
                envelope: message.envelope, id: request.id, op: request.op, started: started,
                deadline: started + limits.deadline)
        }

        while !stopping.isRaised {
            let now = ContinuousClock.now
            var wait = 250
            for (tag, request) in pending {
                if request.deadline <= now {
                    pending[tag] = nil
                    fail(
                        request.envelope, id: request.id, op: request.op,
                        .unavailable("\(request.op.prefix(while: { $0 != "." })) did not answer within \(configuration.gatewayDeadlineMs) ms"),
                        started: request.started)
                } else {
                    wait = min(wait, (request.deadline - now).wholeMilliseconds + 1)
                }
            }
            guard (try? poller.poll(timeoutMs: wait)) != nil else { break }
            for (index, item) in backendItems.enumerated() where poller.isReadable(item) {
                let backend = backends[services[index]]!
                while let frames = try? backend.receiveMultipart(dontWait: true) {
                    var tag: UInt64 = 0
                    guard frames.count >= 2, frames[0].count == 8, let body = frames.last else { continue }
                    _ = withUnsafeMutableBytes(of: &tag) { frames[0].copyBytes(to: $0) }
                    // Replies after the deadline were already answered; drop them.
                    guard let request = pending.removeValue(forKey: tag) else { continue }
                    reply(request.envelope, body)
                    log(id: request.id, op: request.op, started: request.started, outcome: "forwarded")
                }
            }
            if poller.isReadable(mailboxItem) {
                for result in results.drain() {
                    reply(result.envelope, result.reply)
                    log(id: result.id, op: result.op, started: result.started, outcome: result.outcome)
                }
            }
            if poller.isReadable(frontendItem) {
                for _ in 0..<512 {
                    guard let (frames, peer) = try? frontend.receiveMultipartWithPeer(dontWait: true) else { break }
                    accept(frames, peer: peer)
                }
            }
        }
        for (_, request) in pending {
            reply(request.envelope, Reply.failure(id: request.id, error: .unavailable("the gateway is shutting down")))
        }
        try? frontend.setLinger(milliseconds: 1_000)
        frontend.close()
        for backend in backends.values { backend.close() }
        logger.info("gateway stopped")
    }

    // MARK: The gateway's own operations

    private func answerGatewayOperation(_ request: RequestEnvelope, envelope: [Data], started: ContinuousClock.Instant) {
        guard request.op == "gateway.health" else {
            results.post(
                Result(envelope: envelope, reply: Reply.failure(id: request.id, error: .unknownOp(request.op)),
                    id: request.id, op: request.op, started: started, outcome: "unknown_op"))
            return
        }
        let health = self.health, results = self.results
        Task {
            let body = await health.current()
            results.post(
                Result(envelope: envelope, reply: Reply.success(id: request.id, data: body.serialized),
                    id: request.id, op: request.op, started: started, outcome: "ok"))
        }
    }

    private var health: HealthAggregator {
        HealthAggregator(clients: healthClients, startedAt: startedAt, cache: healthCache)
    }

    private func log(id: String?, op: String?, started: ContinuousClock.Instant, outcome: String) {
        guard logger.logLevel <= .info else { return }
        logger.info(RequestLog.line(id: id, op: op, started: started, outcome: outcome))
    }
}

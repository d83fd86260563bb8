import Foundation
import Logging
import Metrics
import Platform
import ServiceLifecycle
import ZeroMQ

/// The event bus: an XSUB socket where services publish and an XPUB socket where
/// subscribers connect, joined by `zmq_proxy_steerable` on its own thread.
///
/// The bus keeps nothing: events live in each source's outbox, and subscribers that
/// miss a message ask the source with `events.replay`.
///
/// Each service's key publishes only its own source's events, as two frames (topic,
/// event); other messages are refused, counted in
/// `backend_bus_refused_total{service="gateway",reason}` and logged (``runBusProxy``).
///
/// A slow or stopped subscriber costs the gateway at most ``highWaterMark`` messages.
/// When its queue fills, libzmq skips it (it misses messages) until it has read part of
/// its queue again; each time that happens (for one or several subscribers) is counted in
/// `backend_bus_queue_full_total{service="gateway",side="bus"}` and reported in a warning
/// at most every ``fullReportInterval`` (with the count since the last one). The
/// subscriber catches up from the sources when it reads again.
public final class EventBus: Service, Sendable {
    /// The largest frame the bus accepts (`ZMQ_MAXMSGSIZE`): events are a few KB, and
    /// libzmq allocates a frame's announced size as soon as its header arrives, so this
    /// is also what each connection may cost before it has proven a key.
    public static let maxMessageBytes: Int64 = 64 << 10
    /// Messages queued per subscriber (`ZMQ_SNDHWM` of the XPUB) and from all publishers
    /// (`ZMQ_RCVHWM` of the XSUB). Bus messages only tell subscribers how far a source
    /// has come, so a dropped one delays an event by at most a subscriber's catch-up
    /// interval. Publishers send at most 16 KiB of event (``EventPublisher``), so a
    /// stalled subscriber holds at most 32 MB, a few hundred KB in practice.
    public static let highWaterMark: Int32 = 2_000
    /// The least time between two warnings about full subscriber queues.
    public static let fullReportInterval: Duration = .seconds(10)

    private let inEndpoint: String
    private let outEndpoint: String
    private let curve: CurveRole?
    private let rules: BusRules
    private let logger: Logger
    private let controlEndpoint = "inproc://bus-control-\(UUID().uuidString)"
    private let ready = AsyncSignal()
    private let failed = StopFlag()

    /// Creates a bus binding `inEndpoint` (XSUB) and `outEndpoint` (XPUB); `curve` is the
    /// server role of both (``Links/serverRole()``), `nil` for plaintext; `publicKeys`
    /// (each component's CURVE public key, by name) make each service's key publish only
    /// its own events (`nil`: any publisher any topic, for plaintext).
    public init(inEndpoint: String, outEndpoint: String, curve: CurveRole? = nil, publicKeys: [String: String]? = nil, logger: Logger) {
        self.inEndpoint = inEndpoint
        self.outEndpoint = outEndpoint
        self.curve = curve
        rules = BusRules(sources: publicKeys.map { keys in Dictionary(keys.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first }) })
        self.logger = logger
    }

    /// Waits until both sockets are bound; `false` if binding failed.
    public func waitUntilReady() async -> Bool {
        await ready.wait()
        return !failed.isRaised
    }

    public func run() async throws {
        let thread = SocketThread(name: "bus") { [self] in proxy() }
        await withTaskCancellationOrGracefulShutdownHandler {
            await thread.join()
        } onCancelOrGracefulShutdown: { [self] in
            terminate()
        }
        if failed.isRaised { throw ServiceError.unavailable("the event bus could not bind its endpoints") }
    }

    private func proxy() {
        do {
            // Frames above 64 KiB (events are a few KB, at most 16 KiB on the bus) make libzmq drop the connection
            // before it buffers them: a peer announcing a huge frame cannot make the
            // gateway hold gigabytes (the bus sockets admit only deployment keys, and this
            // bounds even those).
            let publishers = try ZMQSocket(
                type: .xsub, options: .with { [curve] in $0.receiveHighWaterMark = Self.highWaterMark; $0.curve = curve; $0.maxMessageSize = Self.maxMessageBytes })
            // Subscribers send only subscriptions, a few bytes each.
            let subscribers = try ZMQSocket(
                type: .xpub, options: .with { [curve] in $0.sendHighWaterMark = Self.highWaterMark; $0.curve = curve; $0.maxMessageSize = BusRules.maxSubscriptionBytes })
            let control = try ZMQSocket(type: .pair)
            try control.bind(controlEndpoint)
            try publishers.bind(inEndpoint)
            try subscribers.bind(outEndpoint)
            logger.info("event bus up", metadata: ["in": "\(inEndpoint)", "out": "\(outEndpoint)"])
            ready.fire()
            let full = Counter(label: "backend_bus_queue_full_total", dimensions: [("service", "gateway"), ("side", "bus")])
            var fullReport = ReportThrottle(interval: Self.fullReportInterval)
            let refusedShape = Counter(label: "backend_bus_refused_total", dimensions: [("service", "gateway"), ("reason", BusRefusal.shape.rawValue)])
            let refusedSource = Counter(label: "backend_bus_refused_total", dimensions: [("service", "gateway"), ("reason", BusRefusal.source.rawValue)])
            var refusedShapeReport = ReportThrottle(interval: Self.fullReportInterval)
            var refusedSourceReport = ReportThrottle(interval: Self.fullReportInterval)
            let left = Counter(label: "backend_bus_subscribers_left_total", dimensions: [("service", "gateway")])
            var leftReport = ReportThrottle(interval: Self.fullReportInterval)
            try runBusProxy(
                publishers: publishers, subscribers: subscribers, control: control, rules: rules,
                onFull: {
                    full.increment()
                    if let times = fullReport.record() {
                        logger.warning(
                            "a subscriber's bus queue is full: messages to it are dropped until it reads again (it catches up from the sources)",
                            metadata: ["times": "\(times)", "highWaterMark": "\(Self.highWaterMark)"])
                    }
                },
                onRefused: { reason in
                    (reason == .shape ? refusedShape : refusedSource).increment()
                    let times = reason == .shape ? refusedShapeReport.record() : refusedSourceReport.record()
                    if let times {
                        logger.warning(
                            "the bus refused a publisher's message (not two frames, or another source's topic)",
                            metadata: ["times": "\(times)", "reason": "\(reason.rawValue)"])
                    }
                },
                onSubscriberLeft: {
                    left.increment()
                    if let times = leftReport.record() {
                        logger.notice(
                            "subscribers left the bus (ended, or dropped after 6 s without heartbeats: their queues are discarded; they catch up from the sources)",
                            metadata: ["times": "\(times)"])
                    }
                })
            logger.info("event bus stopped")
        } catch {
            logger.critical("event bus failed", metadata: ["error": "\(error)"])
            failed.raise()
            ready.fire()
        }
    }

    /// Sends TERMINATE to the proxy from a short-lived thread (sockets never run on the
    /// cooperative pool).
    private func terminate() {
        let endpoint = controlEndpoint
        _ = SocketThread(name: "bus-stop") {
            guard let socket = try? ZMQSocket(type: .pair) else { return }
            try? socket.connect(endpoint)
            try? socket.send(Data("TERMINATE".utf8), dontWait: true)
            try? socket.setLinger(milliseconds: 1_000)
            socket.close()
        }
    }
}

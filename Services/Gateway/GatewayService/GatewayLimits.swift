import Platform

/// What the gateway holds at once, and how it answers beyond that (README, "Where the
/// contract is silent").
///
/// A request counts as in flight from the moment it is forwarded until its service
/// answers or its deadline passes. Memory is bounded in three places: requests in flight
/// (per client and in all, by count and by bytes), libzmq's queue of each client
/// connection (``frontendReceiveHighWaterMark``), and the queue to each service, which
/// holds only requests in flight.
public struct GatewayLimits: Sendable {
    /// Requests larger than this get `payload_too_large` (CONTRACT.md: 1 MiB).
    public var maxRequestBytes = 1 << 20
    /// Frames larger than this make libzmq drop the connection (`ZMQ_MAXMSGSIZE`).
    public var maxMessageBytes: Int64 = 4 << 20
    /// A service that has not answered by then is answered `unavailable` for.
    public var deadline: Duration = .seconds(5)

    /// Requests one client connection may have in flight; more are `rate_limited`.
    public var maxInFlightPerClient = 256
    /// Request bytes one client connection may have in flight; more are `rate_limited`.
    /// Always room for one request: it is far above ``maxRequestBytes``.
    public var maxInFlightBytesPerClient = 16 << 20
    /// Requests in flight through the gateway in all; more are `rate_limited`.
    public var maxInFlight = 10_000
    /// Request bytes in flight through the gateway in all. Small requests may use all of
    /// it; large ones only ``maxLargeInFlightBytes``, so a flood of large requests cannot
    /// shut out the small calls of other clients.
    public var maxInFlightBytes = 64 << 20
    /// Requests above this size are large (see ``maxLargeInFlightBytes``).
    public var largeRequestBytes = 64 << 10
    /// Large requests are refused once the bytes in flight would pass this.
    public var maxLargeInFlightBytes = 48 << 20
    /// The `retryAfterMs` of a refusal: requests in flight are usually answered by then.
    public var retryAfter: Duration = .milliseconds(100)

    /// Messages libzmq queues per client connection before it stops reading that
    /// connection (`ZMQ_RCVHWM`): 16 MiB of requests at the 1 MiB limit.
    public var frontendReceiveHighWaterMark: Int32 = 16
    /// Messages libzmq queues from the edge's one connection (`ZMQ_RCVHWM`): it carries
    /// every HTTP user's requests, and the per-address budget applies once they are read.
    public var edgeReceiveHighWaterMark: Int32 = 1_000
    /// Replies libzmq queues per client connection (`ZMQ_SNDHWM`): as many as the
    /// connection may have in flight, so a burst of all its replies always fits (the
    /// gateway hands replies over faster than libzmq's I/O thread writes them); beyond
    /// that, replies to that connection are dropped. A reply is no longer in flight once
    /// handed over, so with libzmq's default (1,000) a client asking for images
    /// (`<service>.media.get`, about 700 KB each) and never reading them made the gateway
    /// hold 650 MiB from one connection; now at most 256 replies (about 180 MiB of images).
    public var frontendSendHighWaterMark: Int32 { Int32(clamping: maxInFlightPerClient) }
    /// Messages queued to one service (`ZMQ_SNDHWM`). Everything queued is in flight, so
    /// the bytes are bounded by ``maxInFlightBytes``; being at least ``maxInFlight``, the
    /// queue is never full, and a send that fails means the service is not connected.
    public var backendSendHighWaterMark: Int32 { Int32(clamping: maxInFlight) }
    /// First reconnection delay to a service (`ZMQ_RECONNECT_IVL`).
    public var reconnectInterval: Duration = .milliseconds(50)
    /// Longest reconnection delay (`ZMQ_RECONNECT_IVL_MAX`): a restarted service is
    /// reached within about this long of binding its socket.
    public var reconnectIntervalMax: Duration = .milliseconds(100)

    /// How long a `gateway.health` round waits for each service.
    public var healthCheckTimeout: Duration = .seconds(1)
    /// How long one round's answer serves every caller of `gateway.health`.
    public var healthAnswerLifetime: Duration = .seconds(1)

    /// The defaults above.
    public init() {}

    /// The defaults with the deadline from the configuration.
    public init(configuration: PlatformConfiguration) {
        deadline = .milliseconds(configuration.gatewayDeadlineMs)
    }
}

import CZeroMQ

/// Options applied to a socket when it is created. Defaults suit the services: no
/// lingering on close, bounded queues, and ZMTP heartbeats to notice dead peers.
public struct SocketOptions: Sendable, Equatable {
    /// Milliseconds to keep unsent messages after close (`ZMQ_LINGER`); 0 drops them.
    public var lingerMs: Int32 = 0
    /// Outgoing queue limit in messages (`ZMQ_SNDHWM`).
    public var sendHighWaterMark: Int32 = 10_000
    /// Incoming queue limit in messages (`ZMQ_RCVHWM`).
    public var receiveHighWaterMark: Int32 = 10_000
    /// Largest inbound message in bytes (`ZMQ_MAXMSGSIZE`); a peer sending more is
    /// disconnected. `nil` leaves libzmq's default (no limit).
    public var maxMessageSize: Int64? = nil
    /// ROUTER only: fail with `EHOSTUNREACH` instead of silently dropping messages to
    /// unknown identities (`ZMQ_ROUTER_MANDATORY`).
    public var routerMandatory: Bool = false
    /// Queue messages only to completed connections (`ZMQ_IMMEDIATE`), so a send to a
    /// peer that is down fails at once instead of waiting for it to come back.
    public var immediate: Bool = false
    /// TCP keepalive on the underlying connections (`ZMQ_TCP_KEEPALIVE`).
    public var tcpKeepalive: Bool = true
    /// ZMTP heartbeat interval in ms (`ZMQ_HEARTBEAT_IVL`); 0 disables heartbeats.
    public var heartbeatIntervalMs: Int32 = 2_000
    /// Time without traffic after a heartbeat before the peer is dropped (`ZMQ_HEARTBEAT_TIMEOUT`).
    ///
    /// libzmq counts this down even while it has stopped reading the connection because
    /// the socket's receive queue is full (its `ZMQ_RCVHWM`): a peer that is alive and
    /// sending is then dropped as dead, and the replies to what it sent before are lost
    /// (zeromq/libzmq#3937, #4767). A socket that bounds its receive queue on purpose, and
    /// may be too busy to read a connection for seconds, takes ``patientHeartbeatTimeoutMs``.
    public var heartbeatTimeoutMs: Int32 = 6_000
    /// Time without traffic after which the peer should drop this connection, sent in
    /// this socket's heartbeats (`ZMQ_HEARTBEAT_TTL`). The peer counts it down when it is
    /// not reading (as above), so it is long: a peer that is slow to read must not drop a
    /// live connection; a peer that is gone is noticed by this socket's own timeout.
    public var heartbeatTtlMs: Int32 = patientHeartbeatTimeoutMs

    /// The heartbeat timeout of a socket that stops reading a connection when its receive
    /// queue is full (the gateway's and the services' request sockets): far beyond how long
    /// a busy process leaves a connection unread, so only a peer that is gone is dropped.
    public static let patientHeartbeatTimeoutMs: Int32 = 60_000
    /// Reconnect interval in ms (`ZMQ_RECONNECT_IVL`).
    public var reconnectIntervalMs: Int32 = 100
    /// Upper bound of the exponential reconnect backoff (`ZMQ_RECONNECT_IVL_MAX`).
    public var reconnectIntervalMaxMs: Int32 = 1_000
    /// The socket's routing identity (`ZMQ_ROUTING_ID`), for DEALER/REQ peers of a ROUTER.
    public var routingID: [UInt8]? = nil
    /// CURVE security for this socket, `nil` for plain connections.
    public var curve: CurveRole? = nil

    /// Options with every default.
    public init() {}

    /// Options with every default and the given adjustments.
    public static func with(_ adjust: (inout SocketOptions) -> Void) -> SocketOptions {
        var options = SocketOptions()
        adjust(&options)
        return options
    }
}

/// The CURVE role of a socket (RFC 26, CurveZMQ).
public enum CurveRole: Sendable, Equatable {
    /// Accepts connections from clients that know the server's public key; the ZAP
    /// handler (``ZAPAuthenticator``) decides which client keys are allowed.
    case server(secretKey: String, domain: String = "backend")
    /// Connects to a server whose public key is known.
    case client(serverPublicKey: String, keys: CurveKeyPair)
}

import CZeroMQ
import Foundation

/// One ZeroMQ socket, confined to the thread that created it.
///
/// The class is deliberately not `Sendable`: libzmq sockets are not thread-safe, and
/// the compiler then refuses to move a socket to another thread. Create it inside the
/// thread that polls it (see `SocketThread` in Platform).
public final class ZMQSocket {
    let handle: UnsafeMutableRawPointer
    /// The socket type.
    public let type: SocketType
    private var closed = false

    /// Creates a socket and applies `options`.
    public init(_ context: ZMQContext = .shared, type: SocketType, options: SocketOptions = SocketOptions()) throws(ZMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZMQError.last("zmq_socket")
        }
        self.handle = handle
        self.type = type
        do {
            try apply(options)
        } catch {
            zmq_close(handle)
            closed = true
            throw error
        }
    }

    deinit {
        if !closed { zmq_close(handle) }
    }

    /// Closes the socket now. Unsent messages are kept for the linger period.
    public func close() {
        guard !closed else { return }
        closed = true
        zmq_close(handle)
    }

    // MARK: Endpoints

    /// Binds to an endpoint such as `tcp://127.0.0.1:5555` or `inproc://name`.
    public func bind(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_bind(\(endpoint))") { zmq_bind(handle, endpoint) }
    }

    /// Connects to an endpoint; the connection is made (and remade) in the background.
    public func connect(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_connect(\(endpoint))") { zmq_connect(handle, endpoint) }
    }

    /// Removes a bound endpoint.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_unbind") { zmq_unbind(handle, endpoint) }
    }

    /// Drops a connection made with ``connect(_:)``.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        _ = try zmqCall("zmq_disconnect") { zmq_disconnect(handle, endpoint) }
    }

    /// The endpoint last bound, with the real port when bound to `*` or `0`.
    public var lastEndpoint: String {
        var buffer = [CChar](repeating: 0, count: 512)
        var size = buffer.count
        guard zmq_getsockopt(handle, ZMQ_LAST_ENDPOINT, &buffer, &size) == 0 else { return "" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Sending

    /// Sends one frame. Returns `false` when `dontWait` is set and the message cannot be
    /// queued now (`EAGAIN`); every other failure throws.
    @discardableResult
    public func send(_ frame: some ContiguousBytes, more: Bool = false, dontWait: Bool = false) throws(ZMQError) -> Bool {
        var flags: Int32 = 0
        if more { flags |= ZMQ_SNDMORE }
        if dontWait { flags |= ZMQ_DONTWAIT }
        let result: Result<Bool, ZMQError> = frame.withUnsafeBytes { buffer in
            while true {
                let rc = zmq_send(handle, buffer.baseAddress, buffer.count, flags)
                if rc >= 0 { return .success(true) }
                let error = ZMQError.last("zmq_send")
                if error.code == EINTR { continue }
                if error.isWouldBlock && dontWait { return .success(false) }
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Sends a multipart message atomically: either every frame is queued or none.
    /// Returns `false` when `dontWait` is set and the first frame cannot be queued.
    @discardableResult
    public func send(multipart frames: [Data], dontWait: Bool = false) throws(ZMQError) -> Bool {
        guard !frames.isEmpty else { return true }
        for (index, frame) in frames.enumerated() {
            let more = index < frames.count - 1
            // libzmq queues multipart messages atomically once the first frame is
            // accepted, so only the first frame can report EAGAIN.
            let sent = try send(frame, more: more, dontWait: dontWait && index == 0)
            if !sent { return false }
        }
        return true
    }

    // MARK: Receiving

    /// Receives one whole multipart message, frame by frame, copying each frame once
    /// out of libzmq's buffer. Returns `nil` when `dontWait` is set and nothing is queued.
    /// Frames beyond `maxFrames` are received and dropped (a peer cannot make us hold a
    /// million of them): a caller that gets `maxFrames` frames back treats the message
    /// as too long.
    public func receiveMultipart(dontWait: Bool = false, maxFrames: Int = .max) throws(ZMQError) -> [Data]? {
        try receiveMultipartWithPeer(dontWait: dontWait, maxFrames: maxFrames)?.frames
    }

    /// ``receiveMultipart(dontWait:)`` that also reports the sending peer's address (the
    /// `Peer-Address` metadata libzmq attaches to messages from TCP peers).
    public func receiveMultipartWithPeer(dontWait: Bool = false, maxFrames: Int = .max) throws(ZMQError) -> (frames: [Data], peerAddress: String?)? {
        try receiveMultipartWithMetadata(dontWait: dontWait, maxFrames: maxFrames).map { ($0.frames, $0.peerAddress) }
    }

    /// A message with what libzmq knows of its sender.
    public struct Received {
        public var frames: [Data]
        /// `Peer-Address`: the TCP peer's address.
        public var peerAddress: String?
        /// `User-Id`: what the ZAP handler said the peer is (our handler: its CURVE public key, Z85).
        public var userID: String?
    }

    /// ``receiveMultipart(dontWait:)`` with the sender's `Peer-Address` and `User-Id`.
    public func receiveMultipartWithMetadata(dontWait: Bool = false, maxFrames: Int = .max) throws(ZMQError) -> Received? {
        var frames: [Data] = []
        var message = zmq_msg_t()
        zmq_msg_init(&message)
        defer { zmq_msg_close(&message) }
        while true {
            // Only the first frame may be absent; later frames of a message are
            // delivered atomically with it.
            let flags: Int32 = (dontWait && frames.isEmpty) ? ZMQ_DONTWAIT : 0
            let rc = zmq_msg_recv(&message, handle, flags)
            if rc < 0 {
                let error = ZMQError.last("zmq_msg_recv")
                if error.code == EINTR { continue }
                if error.isWouldBlock && frames.isEmpty && dontWait { return nil }
                throw error
            }
            let size = zmq_msg_size(&message)
            if frames.count >= maxFrames {
                // Dropped: the caller sees `maxFrames` frames and refuses the message.
            } else if size == 0 {
                frames.append(Data())
            } else {
                frames.append(Data(bytes: zmq_msg_data(&message), count: size))
            }
            if zmq_msg_more(&message) == 0 {
                let peer = zmq_msg_gets(&message, "Peer-Address").map { String(cString: $0) }
                let user = zmq_msg_gets(&message, "User-Id").map { String(cString: $0) }
                return Received(frames: frames, peerAddress: peer, userID: user.flatMap { $0.isEmpty ? nil : $0 })
            }
        }
    }

    // MARK: Subscriptions

    /// SUB only: receive messages whose first frame starts with `prefix` ("" for all).
    public func subscribe(_ prefix: String) throws(ZMQError) {
        try setOption(ZMQ_SUBSCRIBE, bytes: Array(prefix.utf8))
    }

    /// SUB only: stop receiving messages with this prefix.
    public func unsubscribe(_ prefix: String) throws(ZMQError) {
        try setOption(ZMQ_UNSUBSCRIBE, bytes: Array(prefix.utf8))
    }

    // MARK: Options

    /// Sets an integer option.
    public func setOption(_ option: Int32, _ value: Int32) throws(ZMQError) {
        var value = value
        _ = try zmqCall("zmq_setsockopt(\(option))") {
            zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size)
        }
    }

    /// Sets a 64-bit integer option such as `ZMQ_MAXMSGSIZE`.
    public func setOption(_ option: Int32, int64 value: Int64) throws(ZMQError) {
        var value = value
        _ = try zmqCall("zmq_setsockopt(\(option))") {
            zmq_setsockopt(handle, option, &value, MemoryLayout<Int64>.size)
        }
    }

    /// Sets a binary or string option.
    public func setOption(_ option: Int32, bytes: [UInt8]) throws(ZMQError) {
        _ = try zmqCall("zmq_setsockopt(\(option))") {
            bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        }
    }

    /// PUB and XPUB only: whether a message that would overflow a subscriber's queue is
    /// dropped for it without a word (libzmq's default) or refused with `EAGAIN` when sent
    /// with `dontWait` (`ZMQ_XPUB_NODROP`).
    public func setDropsWhenFull(_ drops: Bool) throws(ZMQError) {
        try setOption(ZMQ_XPUB_NODROP, drops ? 0 : 1)
    }

    /// Sets how long unsent messages are kept after ``close()`` (`ZMQ_LINGER`).
    public func setLinger(milliseconds: Int32) throws(ZMQError) {
        try setOption(ZMQ_LINGER, milliseconds)
    }

    /// Reads an integer option.
    public func intOption(_ option: Int32) throws(ZMQError) -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        _ = try zmqCall("zmq_getsockopt(\(option))") { zmq_getsockopt(handle, option, &value, &size) }
        return value
    }

    /// Reads a 64-bit integer option.
    public func int64Option(_ option: Int32) throws(ZMQError) -> Int64 {
        var value: Int64 = 0
        var size = MemoryLayout<Int64>.size
        _ = try zmqCall("zmq_getsockopt(\(option))") { zmq_getsockopt(handle, option, &value, &size) }
        return value
    }

    private func apply(_ options: SocketOptions) throws(ZMQError) {
        try setOption(ZMQ_LINGER, options.lingerMs)
        try setOption(ZMQ_SNDHWM, options.sendHighWaterMark)
        try setOption(ZMQ_RCVHWM, options.receiveHighWaterMark)
        if let max = options.maxMessageSize { try setOption(ZMQ_MAXMSGSIZE, int64: max) }
        if options.routerMandatory && type == .router { try setOption(ZMQ_ROUTER_MANDATORY, 1) }
        if options.immediate { try setOption(ZMQ_IMMEDIATE, 1) }
        try setOption(ZMQ_TCP_KEEPALIVE, options.tcpKeepalive ? 1 : 0)
        if options.heartbeatIntervalMs > 0 {
            try setOption(ZMQ_HEARTBEAT_IVL, options.heartbeatIntervalMs)
            try setOption(ZMQ_HEARTBEAT_TIMEOUT, options.heartbeatTimeoutMs)
            try setOption(ZMQ_HEARTBEAT_TTL, options.heartbeatTtlMs)
        }
        try setOption(ZMQ_RECONNECT_IVL, options.reconnectIntervalMs)
        try setOption(ZMQ_RECONNECT_IVL_MAX, options.reconnectIntervalMaxMs)
        if let identity = options.routingID { try setOption(ZMQ_ROUTING_ID, bytes: identity) }
        switch options.curve {
        case .none:
            break
        case .server(let secretKey, let domain):
            try setOption(ZMQ_CURVE_SERVER, 1)
            try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(secretKey.utf8))
            try setOption(ZMQ_ZAP_DOMAIN, bytes: Array(domain.utf8))
        case .client(let serverPublicKey, let keys):
            try setOption(ZMQ_CURVE_SERVERKEY, bytes: Array(serverPublicKey.utf8))
            try setOption(ZMQ_CURVE_PUBLICKEY, bytes: Array(keys.publicKey.utf8))
            try setOption(ZMQ_CURVE_SECRETKEY, bytes: Array(keys.secretKey.utf8))
        }
    }
}

import CZeroMQ
import Foundation

/// Why the bus refused a publisher's message.
public enum BusRefusal: String, Sendable {
    /// Not two frames (topic, event), or an event over ``BusRules/maxEventBytes``.
    case shape
    /// A topic of another source than the publisher's key names.
    case source
}

/// The rules of ``runBusProxy(publishers:subscribers:control:rules:onFull:onRefused:onSubscriberLeft:)``.
public struct BusRules: Sendable {
    /// The source each publisher may publish as, by its CURVE public key (Z85, the
    /// `User-Id` our ZAP handler gives): a message whose topic's first segment is another
    /// name is refused. `nil` (plaintext links): any.
    public var sources: [String: String]?

    /// Each key's topic prefix (`<source>.`), as bytes: worked out once, not per message.
    let topicPrefixes: [String: [UInt8]]?

    public init(sources: [String: String]?) {
        self.sources = sources
        topicPrefixes = sources?.mapValues { Array($0.utf8) + [UInt8(ascii: ".")] }
    }

    /// The longest frame a subscriber may send (`ZMQ_MAXMSGSIZE` of the XPUB), so the
    /// longest subscription: our topics are `<source>.<type>`; libzmq removes a long one
    /// recursively, one stack frame per byte, and 13 KB overflowed the thread's stack
    /// (5–11 KB did not), and each byte of a distinct subscription costs the XPUB's trie
    /// about 30 bytes. The limit also holds during the CURVE handshake, whose largest
    /// command (INITIATE, about 300 bytes) must fit.
    public static let maxSubscriptionBytes: Int64 = 512
    /// The longest event frame forwarded: publishers put at most 16 KiB of an event on
    /// the bus; a longer frame is refused (`shape`), so a stalled subscriber's queue of
    /// 2,000 messages holds at most about 34 MB whoever publishes.
    public static let maxEventBytes = 17 << 10
}

/// Runs the event bus between `publishers` (XSUB) and `subscribers` (XPUB) until a
/// `TERMINATE` command arrives on `control` (a PAIR socket). Blocks the calling thread,
/// which must own all three sockets.
///
/// Unlike `zmq_proxy`:
/// - The XSUB subscribes to everything and subscriptions are not passed on to the
///   publishers: subscribers' filters live in the XPUB only, so no subscriber can flood
///   the publishers' subscription queues (a flood of 20,000 once cut a restarted
///   publisher off the bus, its own subscription dropped).
/// - A publisher's message must be two frames and, with ``BusRules/sources``, carry a
///   topic of the publisher's own source; others are dropped and `onRefused` is called.
///   (libzmq holds a whole multipart message before anyone can read it, so the gateway
///   still holds a long one once; the subscribers never get it.)
/// - A message that finds a subscriber's queue full (its `ZMQ_SNDHWM`: a slow or stopped
///   subscriber) is not lost silently: `onFull` is called, then the message is sent again
///   in libzmq's lossy mode, so the subscribers with room still get it and only the full
///   ones miss it. libzmq then leaves the full subscriber out until it has read part of
///   its queue, so `onFull` is called once each time one or more queues fill. Memory
///   stays bounded by the high-water marks whatever the subscribers do.
///
/// `onSubscriberLeft` is called when a subscriber's connection ends: it left, or libzmq
/// dropped it after missed heartbeats (a stopped process), discarding its queue (libzmq's
/// monitor does not say which).
public func runBusProxy(
    publishers: ZMQSocket, subscribers: ZMQSocket, control: ZMQSocket, rules: BusRules,
    onFull: () -> Void, onRefused: (BusRefusal) -> Void, onSubscriberLeft: () -> Void = {}
) throws(ZMQError) {
    // ZMQ_XPUB_NODROP: a send that would overflow a matching subscriber's queue fails
    // with EAGAIN (with ZMQ_DONTWAIT) instead of skipping that subscriber unnoticed.
    try subscribers.setDropsWhenFull(false)
    try publishers.send(Data([1]))  // the XSUB's subscription to every topic
    // The XPUB's disconnections, through libzmq's socket monitor (a PAIR on inproc).
    let monitorEndpoint = "inproc://bus-monitor-\(UUID().uuidString)"
    guard zmq_socket_monitor(subscribers.handle, monitorEndpoint, ZMQ_EVENT_DISCONNECTED) == 0 else {
        throw ZMQError.last("zmq_socket_monitor")
    }
    let monitor = try ZMQSocket(type: .pair)
    defer {
        _ = zmq_socket_monitor(subscribers.handle, nil, 0)
        monitor.close()
    }
    try monitor.connect(monitorEndpoint)
    var poller = Poller()
    let fromPublishers = poller.add(publishers)
    let fromSubscribers = poller.add(subscribers)
    let commands = poller.add(control)
    let monitored = poller.add(monitor)
    var topic = zmq_msg_t(), event = zmq_msg_t(), extra = zmq_msg_t()
    zmq_msg_init(&topic)
    zmq_msg_init(&event)
    zmq_msg_init(&extra)
    defer {
        zmq_msg_close(&topic)
        zmq_msg_close(&event)
        zmq_msg_close(&extra)
    }

    /// Receives one frame into `message`; `false`: nothing waiting (first frame only).
    func receive(_ message: inout zmq_msg_t, from socket: ZMQSocket, first: Bool) throws(ZMQError) -> Bool {
        while zmq_msg_recv(&message, socket.handle, first ? ZMQ_DONTWAIT : 0) < 0 {
            let error = ZMQError.last("zmq_msg_recv")
            if error.isWouldBlock && first { return false }
            if error.code != EINTR { throw error }
        }
        return true
    }

    /// Sends one frame, moving it out of `message`.
    func send(_ message: inout zmq_msg_t, more: Bool, dontWait: Bool) throws(ZMQError) -> Bool {
        while zmq_msg_send(&message, subscribers.handle, (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)) < 0 {
            let error = ZMQError.last("zmq_msg_send")
            if error.isWouldBlock && dontWait { return false }
            if error.code != EINTR { throw error }
        }
        return true
    }

    /// Whether `topic`'s first segment is the source the sender's key is allowed.
    func fromItsSource(_ topic: inout zmq_msg_t) -> Bool {
        guard let prefixes = rules.topicPrefixes else { return true }
        guard let user = zmq_msg_gets(&topic, "User-Id").map({ String(cString: $0) }), let expected = prefixes[user] else { return false }
        let bytes = UnsafeRawBufferPointer(start: zmq_msg_data(&topic), count: zmq_msg_size(&topic))
        return bytes.starts(with: expected)
    }

    /// Moves up to `limit` messages from the publishers to the subscribers.
    func forwardEvents(limit: Int) throws(ZMQError) {
        for _ in 0..<limit {
            guard try receive(&topic, from: publishers, first: true) else { return }
            // The whole message is here (libzmq delivers messages whole): keep two frames,
            // count and discard the rest.
            var frames = 1
            if zmq_msg_more(&topic) != 0 {
                _ = try receive(&event, from: publishers, first: false)
                frames = 2
                var more = zmq_msg_more(&event) != 0
                while more {
                    _ = try receive(&extra, from: publishers, first: false)
                    frames += 1
                    more = zmq_msg_more(&extra) != 0
                }
            }
            guard frames == 2, zmq_msg_size(&event) <= BusRules.maxEventBytes else {
                onRefused(.shape)
                continue
            }
            guard fromItsSource(&topic) else {
                onRefused(.source)
                continue
            }
            if try !send(&topic, more: true, dontWait: true) {
                onFull()
                try subscribers.setDropsWhenFull(true)
                defer { try? subscribers.setDropsWhenFull(false) }
                _ = try send(&topic, more: true, dontWait: false)
                _ = try send(&event, more: false, dontWait: false)
            } else {
                _ = try send(&event, more: false, dontWait: false)
            }
        }
    }

    /// Reads up to `limit` subscription messages: the XPUB has applied them to its own
    /// filter; nothing goes upstream.
    func discardSubscriptions(limit: Int) throws(ZMQError) {
        for _ in 0..<limit {
            guard try receive(&extra, from: subscribers, first: true) else { return }
            while zmq_msg_more(&extra) != 0 { _ = try receive(&extra, from: subscribers, first: false) }
        }
    }

    while true {
        do {
            try poller.poll(timeoutMs: -1)
            if poller.isReadable(commands), let command = try control.receiveMultipart(dontWait: true), command.first.map({ Array($0) }) == Array("TERMINATE".utf8) {
                return
            }
            // At most a thousand messages each way per turn: neither direction starves the other.
            if poller.isReadable(monitored) {
                while let event = try monitor.receiveMultipart(dontWait: true, maxFrames: 2) {
                    // First frame: the event (16 bits, host order) and a 32-bit value.
                    if let first = event.first, first.count >= 2, first.withUnsafeBytes({ $0.loadUnaligned(as: UInt16.self) }) == UInt16(ZMQ_EVENT_DISCONNECTED) {
                        onSubscriberLeft()
                    }
                }
            }
            if poller.isReadable(fromSubscribers) { try discardSubscriptions(limit: 1_000) }
            if poller.isReadable(fromPublishers) { try forwardEvents(limit: 1_000) }
        } catch {
            if error.isTerminated { return }
            throw error
        }
    }
}

import CZeroMQ

/// Runs a pub/sub bus between `publishers` (XSUB) and `subscribers` (XPUB) until a
/// `TERMINATE` command arrives on `control` (a PAIR socket). Blocks the calling thread,
/// which must own all three sockets.
///
/// Messages go from publishers to subscribers and subscriptions the other way, as with
/// `zmq_proxy`, frames moved without copying. Unlike `zmq_proxy`, a message that finds a
/// subscriber's queue full (its `ZMQ_SNDHWM`: a slow or stopped subscriber) is not lost
/// silently: `onFull` is called, then the message is sent again in libzmq's lossy mode,
/// so the subscribers with room still get it and only the full ones miss it. (libzmq then
/// leaves the full subscriber out of every message until it has read part of its queue,
/// so `onFull` is called once each time a subscriber's queue fills.) Memory stays bounded
/// by the high-water marks whatever the subscribers do.
public func runBusProxy(publishers: ZMQSocket, subscribers: ZMQSocket, control: ZMQSocket, onFull: () -> Void) throws(ZMQError) {
    // ZMQ_XPUB_NODROP: a send that would overflow a matching subscriber's queue fails
    // with EAGAIN (with ZMQ_DONTWAIT) instead of skipping that subscriber unnoticed.
    try subscribers.setDropsWhenFull(false)
    var poller = Poller()
    let fromPublishers = poller.add(publishers)
    let fromSubscribers = poller.add(subscribers)
    let commands = poller.add(control)
    var message = zmq_msg_t()
    zmq_msg_init(&message)
    defer { zmq_msg_close(&message) }

    /// Moves up to `limit` whole messages from `source` to `target`; `false` when the
    /// context is terminating.
    func forward(from source: ZMQSocket, to target: ZMQSocket, limit: Int, countingFull: Bool) throws(ZMQError) -> Bool {
        for _ in 0..<limit {
            var first = true
            var lossy = false
            defer { if lossy { try? target.setDropsWhenFull(false) } }
            while true {
                // Only the first frame may be absent; the rest of a message is already here.
                if zmq_msg_recv(&message, source.handle, first ? ZMQ_DONTWAIT : 0) < 0 {
                    let error = ZMQError.last("zmq_msg_recv")
                    if error.isWouldBlock && first { return true }
                    if error.code == EINTR { continue }
                    if error.isTerminated { return false }
                    throw error
                }
                let more = zmq_msg_more(&message) != 0
                let flags = (more ? ZMQ_SNDMORE : 0) | (countingFull && first ? ZMQ_DONTWAIT : 0)
                var rc = zmq_msg_send(&message, target.handle, flags)
                if rc < 0, countingFull, first, zmq_errno() == EAGAIN {
                    onFull()
                    try target.setDropsWhenFull(true)
                    lossy = true
                    rc = zmq_msg_send(&message, target.handle, more ? ZMQ_SNDMORE : 0)
                }
                if rc < 0 {
                    let error = ZMQError.last("zmq_msg_send")
                    if error.isTerminated { return false }
                    throw error
                }
                first = false
                if !more { break }
            }
        }
        return true
    }

    while true {
        do {
            try poller.poll(timeoutMs: -1)
        } catch {
            if error.isTerminated { return }
            throw error
        }
        if poller.isReadable(commands), let command = try control.receiveMultipart(dontWait: true), command.first.map({ Array($0) }) == Array("TERMINATE".utf8) {
            return
        }
        // At most a thousand messages each way per turn: neither direction starves the other.
        if poller.isReadable(fromSubscribers), try !forward(from: subscribers, to: publishers, limit: 1_000, countingFull: false) { return }
        if poller.isReadable(fromPublishers), try !forward(from: publishers, to: subscribers, limit: 1_000, countingFull: true) { return }
    }
}

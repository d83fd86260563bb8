import CZeroMQ

/// Waits on several sockets and plain file descriptors at once (`zmq_poll`).
///
/// Build it once per loop, then call ``poll(timeoutMs:)`` and check each item with
/// ``isReadable(_:)``. The poller refers to sockets, so it lives on their thread.
public struct Poller {
    private var items: [zmq_pollitem_t] = []

    /// Creates an empty poller.
    public init() {}

    /// Watches a socket for input; returns the item's index.
    @discardableResult
    public mutating func add(_ socket: ZMQSocket, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: socket.handle, fd: -1, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Watches a file descriptor (an eventfd or pipe) for input; returns the item's index.
    @discardableResult
    public mutating func add(fileDescriptor: Int32, events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Waits until an item is ready or `timeoutMs` passes (-1 waits forever).
    /// Returns the number of ready items; an interrupted wait returns 0.
    @discardableResult
    public mutating func poll(timeoutMs: Int) throws(ZMQError) -> Int {
        let count = Int32(items.count)
        let rc = items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, count, timeoutMs) }
        if rc < 0 {
            let error = ZMQError.last("zmq_poll")
            if error.code == EINTR { return 0 }
            throw error
        }
        return Int(rc)
    }

    /// Whether the item at `index` has input after the last poll.
    public func isReadable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLIN) != 0
    }

    /// Whether the item at `index` can take output after the last poll.
    public func isWritable(_ index: Int) -> Bool {
        items[index].revents & Int16(ZMQ_POLLOUT) != 0
    }
}

/// The events a ``Poller`` item waits for.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    /// A message (or bytes, for a descriptor) can be read.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent without blocking.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
}

import Foundation
import Synchronization
import CBackendSystem

#if canImport(Glibc)
import Glibc
#endif

/// A queue other threads post to, which wakes a socket thread blocked in `zmq_poll`.
///
/// ZeroMQ sockets belong to one thread, so work finished elsewhere (a handler on a
/// task, a client call) comes back through a mailbox: the items go into a locked array
/// and an eventfd, watched by the thread's ``ZeroMQ/Poller``, becomes readable.
public final class Mailbox<Item: Sendable>: Sendable {
    private let items = Mutex<(queue: [Item], closed: Bool)>(([], false))
    /// The eventfd the owning thread polls for input.
    public let fileDescriptor: Int32

    /// Creates a mailbox with its own eventfd.
    public init() {
        fileDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        precondition(fileDescriptor >= 0, "eventfd failed: \(errno)")
    }

    deinit {
        Glibc.close(fileDescriptor)
    }

    /// Adds an item and wakes the owning thread (only when it was not already woken).
    /// Returns `false`, dropping the item, once the mailbox is closed.
    @discardableResult
    public func post(_ item: Item) -> Bool {
        let (accepted, wasEmpty) = items.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.queue.append(item)
            return (true, state.queue.count == 1)
        }
        if wasEmpty { wake() }
        return accepted
    }

    /// Refuses every later post and returns what was still queued, so the owner can
    /// answer it: nothing posted is ever left unread.
    public func close() -> [Item] {
        items.withLock { state in
            state.closed = true
            let taken = state.queue
            state.queue.removeAll()
            return taken
        }
    }

    /// Wakes the owning thread without posting anything (e.g. to notice shutdown).
    public func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fileDescriptor, $0.baseAddress, 8) }
    }

    /// Takes every queued item, oldest first, and resets the wake-up.
    public func drain() -> [Item] {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { read(fileDescriptor, $0.baseAddress, 8) }
        return items.withLock { state in
            let taken = state.queue
            state.queue.removeAll(keepingCapacity: true)
            return taken
        }
    }
}

import CZeroMQ

/// A ZeroMQ context: the container of a process's sockets and I/O threads.
///
/// Contexts are thread-safe in libzmq, so this type is `Sendable`; sockets are not, and
/// ``ZMQSocket`` is confined to the thread that created it.
public final class ZMQContext: Sendable {
    // libzmq documents a context as safe to use from any thread; the pointer is never
    // mutated after init, so sharing it is safe.
    nonisolated(unsafe) let handle: UnsafeMutableRawPointer

    /// The process-wide context used by the services and tools.
    public static let shared: ZMQContext = {
        // A context that cannot be created means libzmq itself is unusable.
        guard let context = try? ZMQContext() else { preconditionFailure("zmq_ctx_new failed") }
        return context
    }()

    /// Creates a context with the given number of I/O threads.
    public init(ioThreads: Int32 = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        self.handle = handle
        _ = zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        // Many short-lived sockets in tests and tools: keep the limit generous.
        _ = zmq_ctx_set(handle, ZMQ_MAX_SOCKETS, 4096)
    }

    /// Shuts the context down: blocking calls on its sockets fail with `ETERM`.
    public func shutdown() {
        _ = zmq_ctx_shutdown(handle)
    }

    /// The libzmq version as `major.minor.patch`.
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// Whether libzmq was built with a capability, e.g. `curve`.
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }
}

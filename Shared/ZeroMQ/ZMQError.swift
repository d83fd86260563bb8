import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An error reported by libzmq, carrying the errno value and its symbolic name.
///
/// A struct rather than an enum so new cases never break callers; compare with the
/// static members (`error.code == ZMQError.again.code`) or use the `is...` helpers.
public struct ZMQError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The errno value (`zmq_errno()` at the time of the failure).
    public let code: Int32
    /// The libzmq call that failed, e.g. `zmq_bind`.
    public let call: String

    /// Creates an error from an errno value.
    public init(code: Int32, call: String) {
        self.code = code
        self.call = call
    }

    /// Captures `zmq_errno()` for a failed call.
    static func last(_ call: String) -> ZMQError {
        ZMQError(code: zmq_errno(), call: call)
    }

    /// The symbolic errno name (`EAGAIN`, `ETERM`, `EHOSTUNREACH`, ...).
    public var name: String {
        switch code {
        case EAGAIN: return "EAGAIN"
        case EINTR: return "EINTR"
        case EINVAL: return "EINVAL"
        case EFAULT: return "EFAULT"
        case ENOMEM: return "ENOMEM"
        case ENODEV: return "ENODEV"
        case ENOENT: return "ENOENT"
        case EADDRINUSE: return "EADDRINUSE"
        case EADDRNOTAVAIL: return "EADDRNOTAVAIL"
        case EPROTONOSUPPORT: return "EPROTONOSUPPORT"
        case EHOSTUNREACH: return "EHOSTUNREACH"
        case EMFILE: return "EMFILE"
        case ENOTSOCK: return "ENOTSOCK"
        case ENOTSUP: return "ENOTSUP"
        case ECONNREFUSED: return "ECONNREFUSED"
        case EMSGSIZE: return "EMSGSIZE"
        case Int32(ZMQ_HAUSNUMERO) + 51: return "EFSM"
        case Int32(ZMQ_HAUSNUMERO) + 52: return "ENOCOMPATPROTO"
        case Int32(ZMQ_HAUSNUMERO) + 53: return "ETERM"
        case Int32(ZMQ_HAUSNUMERO) + 54: return "EMTHREAD"
        default: return "E\(code)"
        }
    }

    /// The operation would block (non-blocking call, or a timeout elapsed).
    public var isWouldBlock: Bool { code == EAGAIN }
    /// The context was terminated; the socket must be closed.
    public var isTerminated: Bool { code == Int32(ZMQ_HAUSNUMERO) + 53 }
    /// A ROUTER with `ZMQ_ROUTER_MANDATORY` could not route to the identity.
    public var isHostUnreachable: Bool { code == EHOSTUNREACH }

    public var description: String {
        "\(call) failed: \(name) (\(String(cString: zmq_strerror(code))))"
    }
}

/// Calls a libzmq function returning an `Int32`, retrying on `EINTR` and turning any
/// other failure (`-1`) into a ``ZMQError``.
@inline(__always)
func zmqCall(_ name: String, _ body: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let rc = body()
        if rc != -1 { return rc }
        let error = ZMQError.last(name)
        if error.code == EINTR { continue }
        throw error
    }
}

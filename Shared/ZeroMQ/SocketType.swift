import CZeroMQ

/// The ZeroMQ socket types the system uses.
public struct SocketType: Sendable, Hashable, CustomStringConvertible {
    /// The libzmq constant (`ZMQ_ROUTER`, ...).
    public let rawValue: Int32
    public let description: String

    public static let pair = SocketType(rawValue: ZMQ_PAIR, description: "PAIR")
    public static let pub = SocketType(rawValue: ZMQ_PUB, description: "PUB")
    public static let sub = SocketType(rawValue: ZMQ_SUB, description: "SUB")
    public static let req = SocketType(rawValue: ZMQ_REQ, description: "REQ")
    public static let rep = SocketType(rawValue: ZMQ_REP, description: "REP")
    public static let dealer = SocketType(rawValue: ZMQ_DEALER, description: "DEALER")
    public static let router = SocketType(rawValue: ZMQ_ROUTER, description: "ROUTER")
    public static let pull = SocketType(rawValue: ZMQ_PULL, description: "PULL")
    public static let push = SocketType(rawValue: ZMQ_PUSH, description: "PUSH")
    public static let xpub = SocketType(rawValue: ZMQ_XPUB, description: "XPUB")
    public static let xsub = SocketType(rawValue: ZMQ_XSUB, description: "XSUB")
}

import Foundation
import NIOCore
import Synchronization

/// How many connections an HTTP listener holds at once, in all and from one address.
///
/// Each open connection costs a file descriptor; a listener that accepts without bound lets
/// one client hold idle connections until the process has no descriptor left, and then
/// everything that opens one (a database connection, a socket, a timer's event file) fails:
/// an attacker's 20,000 idle connections stopped the edge and booking that way. A new
/// connection over either bound is closed as soon as it is accepted, costing a moment of
/// a descriptor. Addresses `exempt` says yes to (trusted proxies, which carry many users)
/// have only the overall bound.
public final class ConnectionLimits: Sendable {
    /// The most connections held at once.
    public let total: Int
    /// The most from one peer address.
    public let perAddress: Int
    private let exempt: @Sendable (String) -> Bool
    private struct Counts {
        var total = 0
        var byAddress: [String: Int] = [:]
    }
    private let counts = Mutex(Counts())

    /// Bounds of `total` (at most a share of the process's descriptors: ``descriptorShare``)
    /// and `perAddress`.
    public init(total: Int, perAddress: Int, exempt: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.total = max(1, min(total, Self.descriptorShare))
        self.perAddress = max(1, perAddress)
        self.exempt = exempt
    }

    /// Half the descriptors the process may open (`RLIMIT_NOFILE`), less a reserve: the most
    /// connections any listener keeps, so the rest of the process always has descriptors.
    public static var descriptorShare: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < 1 << 30 else { return 10_000 }
        return max(16, (Int(limit.rlim_cur) - 256) / 2)
    }

    /// Connections held now.
    public var open: Int { counts.withLock { $0.total } }

    /// Takes a place for a connection from `address`; false when a bound is reached.
    public func admit(_ address: String) -> Bool {
        let bounded = !exempt(address)
        return counts.withLock { counts in
            guard counts.total < total else { return false }
            if bounded {
                guard counts.byAddress[address, default: 0] < perAddress else { return false }
                counts.byAddress[address, default: 0] += 1
            }
            counts.total += 1
            return true
        }
    }

    /// Gives back the place of a connection from `address`.
    public func release(_ address: String) {
        counts.withLock { counts in
            counts.total -= 1
            guard let held = counts.byAddress[address] else { return }
            counts.byAddress[address] = held > 1 ? held - 1 : nil
        }
    }

    /// The handler that keeps these bounds for one new connection (first in its pipeline's
    /// additional handlers).
    public func gate() -> ConnectionGate { ConnectionGate(limits: self) }
}

/// Admits one connection under its listener's ``ConnectionLimits`` when it opens, closes it
/// at once if over, and gives its place back when it closes.
public final class ConnectionGate: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = NIOAny

    private let limits: ConnectionLimits
    /// The peer it holds a place for, once admitted.
    private var admitted: String?
    private var decided = false

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { decide(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        decide(context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        giveBack()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        giveBack()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Nothing is read from a connection refused a place.
        if admitted != nil { context.fireChannelRead(data) }
    }

    private func decide(_ context: ChannelHandlerContext) {
        guard !decided else { return }
        decided = true
        let address = context.channel.remoteAddress?.ipAddress ?? ""
        if limits.admit(address) {
            admitted = address
        } else {
            context.close(promise: nil)
        }
    }

    private func giveBack() {
        if let address = admitted {
            admitted = nil
            limits.release(address)
        }
    }
}

/// The bytes of request bodies a listener holds in memory at once, across connections.
///
/// Each request's body is bounded; without a bound on their sum, clients that send almost
/// a whole body and stop hold that much each until the body's timeout (900 such bodies
/// took the edge to 1.3 GB). A body takes its bytes from the budget as they arrive and
/// gives them back when its request is answered; a body that finds the budget spent is
/// refused (`unavailable`, 503) instead of waiting.
public final class BodyBudget: Sendable {
    /// The most bytes of bodies held at once.
    public let capacity: Int
    private let used = Mutex(0)

    public init(capacity: Int) {
        self.capacity = capacity
    }

    /// Bytes held now.
    public var held: Int { used.withLock { $0 } }

    /// Takes `bytes`; false (taking nothing) when fewer are left.
    public func take(_ bytes: Int) -> Bool {
        used.withLock { used in
            guard used + bytes <= capacity else { return false }
            used += bytes
            return true
        }
    }

    /// Gives back `bytes` taken before.
    public func give(_ bytes: Int) {
        used.withLock { $0 = max(0, $0 - bytes) }
    }
}

/// The handlers each connection of an HTTP listener gets first: its place under the
/// listener's ``ConnectionLimits``, then the ``SlowClientGuard``'s clocks.
public enum HTTPDoor {
    public static func handlers(
        limits: ConnectionLimits, headerTimeout: TimeAmount = .seconds(10), bodyTimeout: TimeAmount = .seconds(30),
        idleTimeout: TimeAmount = .seconds(75)
    ) -> [any RemovableChannelHandler] {
        [limits.gate(), SlowClientGuard(headerTimeout: headerTimeout, bodyTimeout: bodyTimeout, idleTimeout: idleTimeout)]
    }
}

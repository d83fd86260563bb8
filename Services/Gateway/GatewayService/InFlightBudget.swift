import Foundation
import Platform

/// The gateway's account of requests in flight, per client connection and in all,
/// checked against ``GatewayLimits`` before each request is forwarded.
///
/// It lives on the gateway's socket thread; a client is its ROUTER routing identity.
struct InFlightBudget {
    /// Requests and bytes in flight.
    struct Usage: Equatable {
        var count = 0
        var bytes = 0
    }

    private let limits: GatewayLimits
    private var clients: [Data: Usage] = [:]
    /// Everything in flight.
    private(set) var total = Usage()

    init(limits: GatewayLimits) {
        self.limits = limits
    }

    /// What `client` has in flight.
    func usage(of client: Data) -> Usage {
        clients[client] ?? Usage()
    }

    /// Takes a request of `bytes` into account, or returns the `rate_limited` error to
    /// answer it with when it does not fit.
    mutating func admit(client: Data, bytes: Int) -> ServiceError? {
        let own = usage(of: client)
        if own.count >= limits.maxInFlightPerClient || own.bytes + bytes > limits.maxInFlightBytesPerClient {
            return refusal("this client has too many requests in flight")
        }
        let byteLimit = bytes > limits.largeRequestBytes ? limits.maxLargeInFlightBytes : limits.maxInFlightBytes
        if total.count >= limits.maxInFlight || total.bytes + bytes > byteLimit {
            return refusal("the gateway has too many requests in flight")
        }
        clients[client, default: Usage()].count += 1
        clients[client, default: Usage()].bytes += bytes
        total.count += 1
        total.bytes += bytes
        return nil
    }

    /// Gives back what ``admit(client:bytes:)`` took, once the request is answered.
    mutating func release(client: Data, bytes: Int) {
        total.count -= 1
        total.bytes -= bytes
        guard var own = clients[client] else { return }
        own.count -= 1
        own.bytes -= bytes
        // Forget idle clients, so connections that come and go leave nothing behind.
        clients[client] = own.count > 0 ? own : nil
    }

    private func refusal(_ message: String) -> ServiceError {
        .rateLimited(retryAfterMs: Int64(limits.retryAfter.wholeMilliseconds), message)
    }
}

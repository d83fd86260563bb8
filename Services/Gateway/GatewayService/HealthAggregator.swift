import Foundation
import Platform

/// `gateway.health`: a round of `<service>.health` checks, summarized.
///
/// The gateway sends the checks through the very sockets it forwards requests on, so a
/// service reported `ok` is one a request sent now reaches (a separate connection could
/// be up while the forwarding one is not yet). The aggregator itself does no I/O and
/// lives on the gateway's socket thread: the gateway asks it what to do for each caller,
/// sends the checks it asks for, and reports each result.
///
/// One round's answer serves every caller for ``GatewayLimits/healthAnswerLifetime`` and
/// only one round runs at a time, so however many clients ask, each service gets at most
/// one health check per second from here. Errors are in plain words, without addresses.
struct HealthAggregator {
    /// A caller of `gateway.health`, answered when the round ends.
    struct Waiter {
        let envelope: ReturnPath
        let id: String
        let started: ContinuousClock.Instant
    }

    /// What to do for a caller.
    enum Step {
        /// Answer at once with this body (the last round is recent enough).
        case answer(JSONValue)
        /// Send a health check to each of these services (a round has begun); the
        /// caller waits for it.
        case checkServices([String])
        /// A round is already running; the caller waits for it.
        case wait
    }

    /// The health check sent to every service; replies are matched by the gateway's tag.
    static func checkRequest(for service: String) -> Data {
        RequestEnvelope(id: "gateway.health", op: "\(service).health").encoded
    }

    /// A service the gateway has no connection to.
    static let notConnected: JSONValue = ["status": "unavailable", "error": "the gateway has no connection to the service"]
    /// A service that did not answer in time.
    static let noAnswer: JSONValue = ["status": "unavailable", "error": "the service did not answer its health check"]

    private let services: [String]
    private let startedAt: ContinuousClock.Instant
    private let lifetime: Duration
    private var last: (statuses: [String: JSONValue], at: ContinuousClock.Instant)?
    private var round: (statuses: [String: JSONValue], waiters: [Waiter])?

    init(services: [String], startedAt: ContinuousClock.Instant, lifetime: Duration) {
        self.services = services.sorted()
        self.startedAt = startedAt
        self.lifetime = lifetime
    }

    /// Decides how `waiter` is answered.
    mutating func ask(_ waiter: Waiter, now: ContinuousClock.Instant) -> Step {
        if let last, now - last.at < lifetime {
            return .answer(body(last.statuses, now: now))
        }
        if round != nil {
            round?.waiters.append(waiter)
            return .wait
        }
        round = ([:], [waiter])
        return .checkServices(services)
    }

    /// Records one service's status. When it was the last the round waited for, the
    /// round ends: its answer and the callers to send it to are returned.
    mutating func record(_ service: String, status: JSONValue, now: ContinuousClock.Instant) -> (body: JSONValue, waiters: [Waiter])? {
        guard var current = round else { return nil }
        current.statuses[service] = status
        guard current.statuses.count == services.count else {
            round = current
            return nil
        }
        round = nil
        last = (current.statuses, now)
        return (body(current.statuses, now: now), current.waiters)
    }

    /// Ends a round without an answer (the gateway is stopping); returns its callers.
    mutating func abandon() -> [Waiter] {
        defer { round = nil }
        return round?.waiters ?? []
    }

    /// A service's status from its health reply, or why it is unavailable.
    static func status(fromReply reply: Data, latency: Duration) -> JSONValue {
        guard let parsed = try? Reply.parse(reply) else {
            return ["status": "unavailable", "error": "the service's health reply is not valid"]
        }
        guard parsed.ok, case .object(var members)? = parsed.data else {
            let code = parsed.error?.code.rawValue ?? "no data"
            return ["status": "unavailable", "error": .string("the service answered its health check with \(code)")]
        }
        members["latencyMs"] = .number(latency.milliseconds)
        return .object(members)
    }

    private func body(_ statuses: [String: JSONValue], now: ContinuousClock.Instant) -> JSONValue {
        let healthy = statuses.values.allSatisfy { $0["status"] == "ok" }
        return [
            "status": .string(healthy ? "ok" : "degraded"), "version": .string(BuildInfo.version),
            "uptimeMs": .integer(Int64((now - startedAt).wholeMilliseconds)), "services": .object(statuses),
        ]
    }
}

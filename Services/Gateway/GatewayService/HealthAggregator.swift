import Foundation
import Platform
import Synchronization

/// `gateway.health`: asks every service for its health at once and summarizes.
///
/// The answer is shared for a second: however many clients ask, the services get at most
/// one round of health calls per second, and only one round runs at a time. Errors are
/// reported in plain words, never with internal addresses.
struct HealthAggregator: Sendable {
    let clients: [String: ServiceClient]
    let startedAt: ContinuousClock.Instant
    let cache: Cache

    /// The last answer and the round in progress.
    final class Cache: Sendable {
        fileprivate let state = Mutex<(answer: JSONValue?, at: ContinuousClock.Instant, round: Task<JSONValue, Never>?)>(
            (nil, .now, nil))
    }

    /// The current health: cached if under a second old, else from one shared round.
    func current() async -> JSONValue {
        let round = cache.state.withLock { state -> Task<JSONValue, Never> in
            if let answer = state.answer, ContinuousClock.now - state.at < .seconds(1) {
                return Task { answer }
            }
            if let round = state.round { return round }
            let round = Task { await self.ask() }
            state.round = round
            return round
        }
        let answer = await round.value
        cache.state.withLock { state in
            if state.round == round {
                state = (answer, .now, nil)
            }
        }
        return withUptime(answer)
    }

    private func withUptime(_ answer: JSONValue) -> JSONValue {
        guard case .object(var members) = answer else { return answer }
        members["uptimeMs"] = .integer(Int64((ContinuousClock.now - startedAt).wholeMilliseconds))
        return .object(members)
    }

    private func ask() async -> JSONValue {
        let statuses = await withTaskGroup(of: (String, JSONValue).self) { group in
            for (service, client) in clients {
                group.addTask {
                    let started = ContinuousClock.now
                    let reply = try? await client.call("\(service).health", idempotent: true, timeout: .seconds(1), attempts: 1)
                    guard let reply, reply.ok, case .object(var members)? = reply.data else {
                        return (service, ["status": "unavailable", "error": "the service did not answer its health check"])
                    }
                    members["latencyMs"] = .number((ContinuousClock.now - started).milliseconds)
                    return (service, .object(members))
                }
            }
            var statuses: [String: JSONValue] = [:]
            for await (service, status) in group { statuses[service] = status }
            return statuses
        }
        let healthy = statuses.values.allSatisfy { $0["status"] == "ok" }
        return [
            "status": .string(healthy ? "ok" : "degraded"), "version": .string(BuildInfo.version),
            "uptimeMs": 0, "services": .object(statuses),
        ]
    }
}

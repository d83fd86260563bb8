import Platform

/// Anything that calls operations and returns parsed replies: a ``CheckedClient`` in
/// tests, a plain `ServiceClient` in benchmarks. Fixtures such as ``AuthFixtures`` take
/// either.
public protocol OperationCalling: Sendable {
    /// Calls `op` (see `ServiceClient.call` for the parameters).
    func call(
        _ op: String, data: JSONValue, token: String?, idem: String?, idempotent: Bool?, timeout: Duration, attempts: Int
    ) async throws -> Reply.Parsed
}

extension ServiceClient: OperationCalling {}

/// A call that had to succeed and did not: the op and the error, for the test's report.
public struct UnexpectedFailure: Error, CustomStringConvertible {
    public let description: String
}

extension OperationCalling {
    /// Calls `op` and returns its `data`; an error reply throws ``UnexpectedFailure``
    /// naming the op, the code, the message and the fields.
    @discardableResult
    public func ok(_ op: String, _ data: JSONValue = [:], token: String? = nil, idem: String? = nil) async throws -> JSONValue {
        let reply = try await call(op, data: data, token: token, idem: idem, idempotent: nil, timeout: .seconds(5), attempts: 3)
        guard reply.ok else {
            throw UnexpectedFailure(
                description: "\(op): \(reply.error?.code.rawValue ?? "no reply") \(reply.error?.message ?? "") \(reply.error?.fields ?? [:])")
        }
        return reply.data ?? .null
    }
}

/// Waiting for what other processes do asynchronously (events applied, timers fired).
public enum Poll {
    /// Whether `condition` came to hold within `timeout`, asked every `interval`.
    public static func until(
        timeout: Duration = .seconds(10), interval: Duration = .milliseconds(100), _ condition: () async throws -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: interval)
        }
        return try await condition()
    }
}

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

import Foundation
import Platform

/// Something tests call operations through: a plain ``ServiceClient``, or a
/// ``SchemaCheckedClient`` that also checks every reply against its declared schema.
public protocol OperationCaller: Sendable {
    /// Calls an operation (see ``ServiceClient/call(_:data:token:idem:idempotent:timeout:attempts:)``).
    func callOperation(
        _ op: String, data: JSONValue, token: String?, idem: String?, idempotent: Bool?, timeout: Duration, attempts: Int
    ) async throws -> Reply.Parsed
}

extension OperationCaller {
    /// Calls an operation, with the defaults of ``ServiceClient``.
    public func call(
        _ op: String, data: JSONValue = .object([:]), token: String? = nil, idem: String? = nil, idempotent: Bool? = nil,
        timeout: Duration = .seconds(5), attempts: Int = 3
    ) async throws -> Reply.Parsed {
        try await callOperation(op, data: data, token: token, idem: idem, idempotent: idempotent, timeout: timeout, attempts: attempts)
    }
}

extension ServiceClient: OperationCaller {
    public func callOperation(
        _ op: String, data: JSONValue, token: String?, idem: String?, idempotent: Bool?, timeout: Duration, attempts: Int
    ) async throws -> Reply.Parsed {
        try await call(op, data: data, token: token, idem: idem, idempotent: idempotent, timeout: timeout, attempts: attempts)
    }
}

import Foundation
import Platform
import Synchronization

/// A reply whose `data` breaks its operation's declared response schema.
public struct ReplySchemaMismatch: Error, CustomStringConvertible {
    /// The operation.
    public let op: String
    /// The problems, by path.
    public let problems: [String: String]
    /// The reply's data.
    public let data: JSONValue

    public var description: String {
        "\(op) answered data that breaks its declared response schema: \(problems.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")) in \(String(decoding: data.serialized, as: UTF8.self).prefix(500))"
    }
}

/// A client that checks every successful reply against the response schema its service
/// declares in `describe`, so documentation cannot drift from behaviour: a mismatch is
/// thrown as ``ReplySchemaMismatch`` and fails the test that made the call.
///
/// Each service's `describe` is fetched once, through the same endpoint (the gateway or
/// the service itself).
public final class SchemaCheckedClient: OperationCaller {
    /// The client underneath.
    public let client: ServiceClient
    private let schemas = Mutex<[String: [String: JSONSchema]]>([:])

    /// Wraps a client.
    public init(_ client: ServiceClient) {
        self.client = client
    }

    /// Closes the client underneath.
    public func close() async {
        await client.close()
    }

    public func callOperation(
        _ op: String, data: JSONValue, token: String?, idem: String?, idempotent: Bool?, timeout: Duration, attempts: Int
    ) async throws -> Reply.Parsed {
        let reply = try await client.call(op, data: data, token: token, idem: idem, idempotent: idempotent, timeout: timeout, attempts: attempts)
        guard reply.ok, let replyData = reply.data else { return reply }
        let service = String(op.prefix { $0 != "." })
        guard service != "gateway", let schema = try await responseSchema(of: op, service: service) else { return reply }
        let problems = schema.validate(replyData)
        guard problems.isEmpty else { throw ReplySchemaMismatch(op: op, problems: problems, data: replyData) }
        return reply
    }

    /// The declared response schema of `op`; `nil` for the built-in operations that have none to check.
    private func responseSchema(of op: String, service: String) async throws -> JSONSchema? {
        if let known = schemas.withLock({ $0[service] }) { return known[op] }
        let described = try await client.call("\(service).describe", idempotent: true)
        guard described.ok, let operations = described.data?["operations"]?.arrayValue else { return nil }
        var table: [String: JSONSchema] = [:]
        for operation in operations {
            guard let name = operation["op"]?.stringValue, let json = operation["response"] else { continue }
            guard let schema = JSONSchema(json: json) else {
                throw ReplySchemaMismatch(op: name, problems: ["response": "the declared schema cannot be read back"], data: json)
            }
            table[name] = schema
        }
        schemas.withLock { $0[service] = table }
        return table[op]
    }
}

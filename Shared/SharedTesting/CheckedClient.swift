import Foundation
import Platform
import Synchronization

/// A `ServiceClient` for tests that checks every successful reply against the response
/// schema its operation declares, and throws ``ReplySchemaMismatch`` when they disagree,
/// so a drift between `describe` and what a handler really returns fails the test that
/// saw it.
///
/// The schemas come from the operations themselves (``InProcessService``) or, over the
/// wire, from `<service>.describe`, asked once per service when its first successful
/// reply arrives. Operations of a target without `describe` (`gateway.health`) are not
/// checked.
public final class CheckedClient: OperationCalling, Sendable {
    /// The client underneath, for requests that must not be checked (raw frames).
    public let unchecked: ServiceClient
    private let fixed: ResponseSchemas?
    /// Schemas by service, from `describe`; `nil` for a service that has none.
    private let described = Mutex<[String: ResponseSchemas?]>([:])

    /// A client of `endpoint` (a gateway or a service). With `schemas`, replies are checked
    /// against them; without, against each service's `describe`.
    public convenience init(endpoint: String, name: String = "test", schemas: ResponseSchemas? = nil) {
        self.init(link: Link(endpoint), name: name, schemas: schemas)
    }

    /// A client through `link` (CURVE when it has a role).
    public init(link: Link, name: String = "test", schemas: ResponseSchemas? = nil) {
        unchecked = ServiceClient(link: link, name: name)
        fixed = schemas
    }

    /// The endpoint it connects to.
    public var endpoint: String { unchecked.endpoint }

    /// Calls an operation (see `ServiceClient.call`) and checks a successful reply's `data`
    /// against the operation's response schema.
    ///
    /// - Throws: ``ReplySchemaMismatch`` when they disagree, and what the call throws.
    public func call(
        _ op: String, data: JSONValue = .object([:]), token: String? = nil, idem: String? = nil,
        idempotent: Bool? = nil, timeout: Duration = .seconds(5), attempts: Int = 3
    ) async throws -> Reply.Parsed {
        let reply = try await unchecked.call(op, data: data, token: token, idem: idem, idempotent: idempotent, timeout: timeout, attempts: attempts)
        if reply.ok, let schemas = try await schemas(of: op) {
            try schemas.check(reply, of: op)
        }
        return reply
    }

    /// Closes the connection.
    public func close() async {
        await unchecked.close()
    }

    private func schemas(of op: String) async throws -> ResponseSchemas? {
        if let fixed { return fixed }
        let service = String(op.prefix { $0 != "." })
        if let known = described.withLock({ $0[service] }) { return known }
        // The service just answered, so its describe answers too; when it does not (it was
        // stopped meanwhile), the reply goes unchecked rather than failing a fault test.
        guard let reply = try? await unchecked.call("\(service).describe", idempotent: true, timeout: .seconds(5)) else { return nil }
        let schemas: ResponseSchemas?
        if reply.ok {
            schemas = try ResponseSchemas(describe: reply.data ?? .null)
        } else if reply.error?.code == .unknownOp {
            schemas = nil
        } else {
            return nil
        }
        described.withLock { $0[service] = .some(schemas) }
        return schemas
    }
}

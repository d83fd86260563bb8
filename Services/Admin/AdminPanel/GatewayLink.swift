import Foundation
import Platform
import Synchronization

/// The panel's way to the services: operations through the gateway, with the signed-in
/// person's token, like any app.
///
/// With the edge secret (`BACKEND_EDGE_SECRET`) the panel speaks on the gateway's edge
/// socket (CURVE) and passes the browser's address as `client`, so auth limits wrong
/// passwords per browser and the audit log names the admin's address. Without it, it uses
/// the public request socket, where every call comes from the panel's own address.
public final class GatewayLink: Sendable {
    private let client: ServiceClient
    private let passesClientAddress: Bool
    private let counter = IDCounter()

    public init(configuration: PlatformConfiguration) throws {
        if let secret = configuration.edgeSecret {
            let trust = try EdgeTrust(secret: secret)
            client = ServiceClient(endpoint: configuration.gatewayEdgeEndpoint, name: "admin", curve: trust.edgeRole)
            passesClientAddress = true
        } else {
            client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "admin")
            passesClientAddress = false
        }
    }

    /// Calls `op`; a missing reply becomes `unavailable` (the page says the backend is
    /// not reachable rather than failing).
    public func call(
        _ op: String, _ data: JSONValue = [:], token: String? = nil, idem: String? = nil, client address: String? = nil
    ) async -> Result<JSONValue, ServiceError> {
        var envelope: [String: JSONValue] = ["id": .string("admin-\(counter.next())"), "op": .string(op), "data": data]
        if let token { envelope["token"] = .string(token) }
        if let idem { envelope["idem"] = .string(idem) }
        if passesClientAddress { envelope["client"] = .string(address ?? "admin-panel") }
        let frame = JSONValue.object(envelope).serialized
        // Reads and writes with an idem key may be sent again when no reply came.
        let attempts = idem != nil ? 2 : 1
        for attempt in 1...attempts {
            do {
                let reply = try Reply.parse(try await client.send(frame, timeout: .seconds(8)))
                if let error = reply.error { return .failure(error) }
                return .success(reply.data ?? .null)
            } catch let error as ClientError where error.reason == .timeout || error.reason == .unavailable {
                if attempt == attempts { return .failure(.unavailable("the backend did not answer; try again in a moment")) }
            } catch {
                return .failure(.unavailable("the backend did not answer; try again in a moment"))
            }
        }
        return .failure(.unavailable("the backend did not answer"))
    }

    public func close() async { await client.close() }
}

/// Request ids for the panel's calls.
final class IDCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    func next() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}

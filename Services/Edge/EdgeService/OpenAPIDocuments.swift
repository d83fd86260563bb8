import Foundation
import Logging
import Platform
import ServiceLifecycle
import Synchronization

/// The edge's OpenAPI document, made at start-up from each service's `describe` through
/// the gateway.
///
/// A service that does not answer yet (the stack starts everything at once) is asked again
/// every second until it does; meanwhile the document lists the services that answered.
/// Operations do not change while a service runs, so once every service answered the
/// document is fixed (a new version of a service arrives with a restart of the edge too).
public final class OpenAPIDocuments: Service, Sendable {
    private struct State {
        var describes: [String: JSONValue] = [:]
        var document = Data()
    }

    private let state = Mutex(State())
    private let gateway: ServiceClient
    private let services: [String]
    private let serverURL: String?
    private let logger: Logger

    public init(gateway: ServiceClient, services: [String] = PlatformConfiguration.serviceNames, serverURL: String?, logger: Logger) {
        self.gateway = gateway
        self.services = services
        self.serverURL = serverURL
        self.logger = logger
        let empty = OpenAPIDocument.build(describes: [], version: BuildInfo.version, serverURL: serverURL).serialized
        state.withLock { $0.document = empty }
    }

    /// The document as it stands.
    public func current() -> Data {
        state.withLock { $0.document }
    }

    /// The services whose `describe` is in the document.
    public var describedServices: Set<String> {
        state.withLock { Set($0.describes.keys) }
    }

    /// Whether `service` may have a media store: not once its `describe` is known to list
    /// no `<service>.media.get`.
    public func mightOfferMedia(_ service: String) -> Bool {
        guard let describe = state.withLock({ $0.describes[service] }), case .array(let operations)? = describe["operations"] else { return true }
        return operations.contains { $0["op"]?.stringValue == "\(service).media.get" }
    }

    /// Adds one service's `describe` answer and rebuilds the document.
    func add(_ service: String, describe: JSONValue) {
        state.withLock { state in
            state.describes[service] = describe
            state.document = OpenAPIDocument.build(
                describes: Array(state.describes.values), version: BuildInfo.version, serverURL: serverURL
            ).serialized
        }
    }

    /// Asks every service not yet described, once a second, until all answered; then waits
    /// for shutdown (which also ends the asking).
    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                for service in self.services where !self.describedServices.contains(service) {
                    let frame = RequestEnvelope(id: "edge-describe-\(service)", op: "\(service).describe").encoded
                    guard let reply = try? await self.gateway.send(frame, timeout: .seconds(2)), let parsed = try? Reply.parse(reply),
                        let describe = parsed.data, parsed.ok
                    else { continue }
                    self.add(service, describe: describe)
                    self.logger.info("openapi: described", metadata: ["service": "\(service)"])
                }
                if self.services.allSatisfy({ self.describedServices.contains($0) }) { break }
                try await Task.sleep(for: .seconds(1))
            }
            try await gracefulShutdown()
        }
    }
}

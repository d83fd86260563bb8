// The HTTP edge: HTTPS (or plain HTTP on loopback) in front of the gateway, until
// SIGTERM/SIGINT. See README, "HTTP edge".
import EdgeService
import Foundation
import NIOCore
import NIOPosix
import Platform
import ServiceLifecycle

let configuration = ProcessSetup.configuration(PlatformOptions.parseOrExit())
let logger = ProcessSetup.start(label: "edge", configuration: configuration)
do {
    let settings = try EdgeSettings(configuration: configuration)
    guard let secret = configuration.edgeSecret else {
        throw ConfigurationError("BACKEND_EDGE_SECRET is not set: the edge and the gateway need the same secret (README, \"HTTP edge\")")
    }
    let trust = try EdgeTrust(secret: secret)
    let gateway = ServiceClient(endpoint: configuration.gatewayEdgeEndpoint, name: "edge", curve: trust.edgeRole)
    let documents = OpenAPIDocuments(
        gateway: gateway, serverURL: ProcessInfo.processInfo.environment["BACKEND_EDGE_PUBLIC_URL"], logger: logger)
    let edge = EdgeServer(settings: settings, gateway: gateway, documents: documents, logger: logger)
    // The event loops that serve the connections also run their handlers
    // (EventLoopExecutor): no request crosses to Swift's pool and back.
    let loops = MultiThreadedEventLoopGroup(numberOfThreads: settings.eventLoops)
    let executor = EventLoopExecutor(loops)
    let application = try edge.application(eventLoopGroup: loops) { port in
        logger.notice("edge serving", metadata: ["url": "\(settings.usesTLS ? "https" : "http")://\(settings.bind.host):\(port)"])
    }
    let group = ServiceGroup(
        configuration: .init(
            services: [.init(service: application), .init(service: documents)], gracefulShutdownSignals: [.sigterm, .sigint],
            cancellationSignals: [], logger: logger))
    try await withTaskExecutorPreference(executor) { try await group.run() }
    await gateway.close()
} catch {
    logger.critical("edge stopped with an error", metadata: ["error": "\(error)"])
    exit(1)
}

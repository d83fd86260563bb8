// The gateway process: the client-facing ROUTER and the event bus, until SIGTERM/SIGINT.
import Foundation
import GatewayService
import Platform
import ServiceLifecycle

let configuration = ProcessSetup.configuration(PlatformOptions.parseOrExit())
let logger = ProcessSetup.start(label: "gateway", configuration: configuration)
let links = ProcessSetup.links(configuration, as: "gateway", logger: logger)
do {
    let bus = EventBus(
        inEndpoint: configuration.busInEndpoint, outEndpoint: configuration.busOutEndpoint, curve: try links.serverRole(),
        publicKeys: links.keyring?.publicKeys, logger: logger)
    let gateway = Gateway(configuration: configuration, links: links, logger: logger)
    var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: bus), .init(service: gateway)]
    if let bind = configuration.metricsBind {
        services.append(.init(service: try MetricsEndpoint(bind: try HostAndPort(bind, name: "BACKEND_METRICS_BIND"), links: links, logger: logger)))
    }
    let group = ServiceGroup(
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger))
    try await group.run()
} catch {
    logger.critical("gateway stopped with an error", metadata: ["error": "\(error)"])
    exit(1)
}

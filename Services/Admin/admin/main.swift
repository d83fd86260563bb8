// The admin panel: a web application for administrators and the park's staff, served
// over HTTP until SIGTERM/SIGINT. See README, "Admin panel".
import AdminPanel
import Foundation
import Platform
import ServiceLifecycle

let configuration = ProcessSetup.configuration(PlatformOptions.parseOrExit())
let logger = ProcessSetup.start(label: "admin", configuration: configuration)
do {
    let settings = try AdminSettings(configuration: configuration)
    let gateway = try GatewayLink(configuration: configuration)
    let panel = try AdminPanel(settings: settings, gateway: gateway, logger: logger)
    let application = panel.application { port in
        let host = settings.bind.host.contains(":") ? "[\(settings.bind.host)]" : settings.bind.host
        logger.notice("admin panel serving", metadata: ["url": "http://\(host):\(port)"])
    }
    let group = ServiceGroup(
        configuration: .init(
            services: [.init(service: application)], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger))
    try await group.run()
    await gateway.close()
} catch {
    logger.critical("admin panel stopped with an error", metadata: ["error": "\(error)"])
    exit(1)
}

import Foundation
import HTTPDoor
import Hummingbird
import Logging
import Platform
import ServiceLifecycle

/// The operators' Prometheus endpoint (`BACKEND_METRICS_BIND`; README, "Metrics"): on each
/// `GET /metrics` the gateway asks every service for its figures
/// (`<service>.metrics.prometheus`, an internal operation, over the gateway's own CURVE
/// links) and answers them merged into one exposition with the gateway's own figures (the
/// event bus's `backend_bus_queue_full_total`, its memory), `backend_service_up` saying
/// which services answered. Services are asked at the same time, each for at most two
/// seconds, so a service that is down costs a scrape two seconds, not a failure. Scrapes
/// at the same time share one round of questions, and an answer serves for a second
/// (``ScrapeCache``): a flood of `GET /metrics` costs the services one question a second.
public struct MetricsEndpoint: Service {
    private let bind: HostAndPort
    private let clients: [String: ServiceClient]
    private let logger: Logger

    /// An endpoint on `bind` reading the services of `links`.
    public init(bind: HostAndPort, links: Links, logger: Logger) throws {
        self.bind = bind
        var clients: [String: ServiceClient] = [:]
        for (name, link) in try links.services() { clients[name] = ServiceClient(link: link, name: "metrics-\(name)") }
        self.clients = clients
        self.logger = logger
    }

    public func run() async throws {
        let router = Router()
        let clients = self.clients
        let cache = ScrapeCache { await Self.scrape(clients) }
        router.get("/metrics") { _, _ -> Response in
            let text = await cache.text()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
        // Scrapers: a few connections; more are refused before they cost anything.
        let limits = ConnectionLimits(total: 64, perAddress: 16)
        let application = Application(
            router: router, server: .http1(configuration: .init(additionalChannelHandlers: HTTPDoor.handlers(limits: limits))),
            configuration: .init(address: .hostname(bind.host, port: bind.port), serverName: nil), logger: logger)
        logger.info("metrics served", metadata: ["address": "http://\(bind.host):\(bind.port)/metrics"])
        defer { for client in clients.values { Task { await client.close() } } }
        try await application.runService()
    }

    /// Every service's text, merged, and whether each answered.
    static func scrape(_ clients: [String: ServiceClient]) async -> String {
        let answers = await withTaskGroup(of: (String, String?).self) { group in
            for (name, client) in clients {
                group.addTask {
                    let reply = try? await client.call(
                        "\(name).metrics.prometheus", idempotent: true, timeout: .seconds(2), attempts: 1)
                    return (name, reply?.data?["text"]?.stringValue)
                }
            }
            var answers: [String: String?] = [:]
            for await (name, text) in group { answers[name] = text }
            return answers
        }
        let up =
            "# HELP backend_service_up Whether the service answered the gateway's scrape (1) or not (0).\n"
            + "# TYPE backend_service_up gauge\n"
            + answers.keys.sorted().map { "backend_service_up{service=\"\($0)\"} \(answers[$0]! == nil ? 0 : 1)\n" }.joined()
        RequestMetrics.recordMemory(service: "gateway")
        let own = RequestMetrics.prometheus.emitToString()
        return PrometheusText.merge([up, own] + answers.keys.sorted().compactMap { answers[$0] ?? nil })
    }
}

/// One scrape at a time, its answer shared by every request that arrives meanwhile and
/// reused for ``maximumAge``.
actor ScrapeCache {
    static let maximumAge: Duration = .seconds(1)
    private let scrape: @Sendable () async -> String
    private var last: (at: ContinuousClock.Instant, text: String)?
    private var running: Task<String, Never>?

    init(_ scrape: @escaping @Sendable () async -> String) {
        self.scrape = scrape
    }

    func text() async -> String {
        if let last, ContinuousClock.now - last.at < Self.maximumAge { return last.text }
        if let running { return await running.value }
        let task = Task { await scrape() }
        running = task
        let text = await task.value
        last = (.now, text)
        running = nil
        return text
    }
}

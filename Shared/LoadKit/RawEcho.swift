import Foundation
import ZeroMQ

/// The physical limit of our topology: a client, a ROUTER/DEALER proxy and a ROUTER that
/// echoes every message, with no JSON and no SQLite. Each runs in a process of its own
/// (`loadgen raw-service`, `loadgen raw-proxy`), as the gateway and a service do.
public enum RawEcho {
    /// A ROUTER at `endpoint` sending every message back as it came; returns when the
    /// socket fails. `bound` is called with the endpoint bound (a port `*` resolved).
    public static func serve(endpoint: String, bound: (String) -> Void = { _ in }) throws {
        let socket = try ZMQSocket(type: .router, options: .with { $0.sendHighWaterMark = 100_000; $0.receiveHighWaterMark = 100_000 })
        try socket.bind(endpoint)
        bound(socket.lastEndpoint)
        while let frames = try socket.receiveMultipart() {
            _ = try socket.send(multipart: frames)
        }
    }

    /// A ROUTER at `front` and a DEALER connected to `back` on one thread, forwarding
    /// frames both ways without reading them (the gateway's topology without its work).
    public static func proxy(front: String, back: String, bound: (String) -> Void = { _ in }) throws {
        let options = SocketOptions.with { $0.sendHighWaterMark = 100_000; $0.receiveHighWaterMark = 100_000 }
        let frontend = try ZMQSocket(type: .router, options: options)
        try frontend.bind(front)
        bound(frontend.lastEndpoint)
        let backend = try ZMQSocket(type: .dealer, options: options)
        try backend.connect(back)
        var poller = Poller()
        let frontItem = poller.add(frontend)
        let backItem = poller.add(backend)
        while true {
            _ = try poller.poll(timeoutMs: -1)
            if poller.isReadable(frontItem) {
                while let frames = try frontend.receiveMultipart(dontWait: true) { _ = try backend.send(multipart: frames) }
            }
            if poller.isReadable(backItem) {
                while let frames = try backend.receiveMultipart(dontWait: true) { _ = try frontend.send(multipart: frames) }
            }
        }
    }
}

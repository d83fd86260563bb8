import Foundation
import Platform
import Synchronization
import ZeroMQ

/// Listens to the event bus on a thread of its own and keeps each event whose topic
/// starts with `prefix`, with the moment it arrived, until ``stop()``.
public final class BusTap: Sendable {
    /// One event as it arrived.
    public struct Arrival: Sendable {
        public var at: Date
        public var event: Data
    }

    /// What the listening thread shares with callers.
    private final class Shared: Sendable {
        let arrivals = Mutex<[Arrival]>([])
        let ready = Mutex(false)
        let stopping = StopFlag()
    }

    private let shared = Shared()
    private let thread: SocketThread

    /// Subscribes to `prefix` on `bus` (CURVE when the link has it).
    public init(bus: Link, prefix: String) {
        let shared = self.shared
        thread = SocketThread(name: "bus-tap") {
            do {
                let socket = try ZMQSocket(type: .sub, options: .with { $0.curve = bus.curve; $0.receiveHighWaterMark = 1_000_000 })
                defer { socket.close() }
                try socket.subscribe(prefix)
                try socket.connect(bus.endpoint)
                shared.ready.withLock { $0 = true }
                var poller = Poller()
                poller.add(socket)
                while !shared.stopping.isRaised {
                    _ = try poller.poll(timeoutMs: 50)
                    while let frames = try socket.receiveMultipart(dontWait: true) {
                        guard frames.count == 2 else { continue }
                        let arrival = Arrival(at: Date(), event: frames[1])
                        shared.arrivals.withLock { $0.append(arrival) }
                    }
                }
            } catch {
                FileHandle.standardError.write(Data("bus tap: \(error)\n".utf8))
            }
        }
    }

    /// Whether the subscription is connected (a SUB misses what is published before it joins).
    public var isReady: Bool { shared.ready.withLock { $0 } }

    /// What arrived so far.
    public var received: [Arrival] { shared.arrivals.withLock { $0 } }

    /// Stops listening and returns everything that arrived.
    public func stop() async -> [Arrival] {
        shared.stopping.raise()
        await thread.join()
        return received
    }
}

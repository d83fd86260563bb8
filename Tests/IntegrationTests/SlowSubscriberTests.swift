import Foundation
import Platform
import SharedTesting
import Synchronization
import Testing
import ZeroMQ

/// A subscriber that stops reading (a hung or SIGSTOPped process) against the real
/// gateway's event bus: the gateway holds at most its queue for it, the messages it misses
/// are counted and logged, and the subscribers that keep reading miss nothing.
@Suite("Slow subscriber", .serialized)
struct SlowSubscriberTests {
    /// Messages through the bus: six times its queue per subscriber.
    static let flood = 60_000
    /// A kilobyte each, so a queue that grew with them would show in the gateway's memory.
    static let payload = Data(repeating: UInt8(ascii: "x"), count: 1_024)

    @Test("a subscriber that stops reading costs the gateway a bounded queue; what it misses is counted and logged; the others get everything")
    func boundedAndCounted() async throws {
        let stack = try TestStack()
        do {
            let metricsBind = "127.0.0.1:\(TestEnvironment.freePort())"
            let gateway = try stack.start("gateway", environment: ["BACKEND_METRICS_BIND": metricsBind])
            let links = try stack.configuration.links(as: "operator")
            let busIn = try links.busIn, busOut = try links.busOut
            let fastReceived = Atomic<Int>(0)
            let fastSawProbe = Atomic<Bool>(false)
            let stopFast = StopFlag()
            // The subscriber that keeps reading, on a thread of its own.
            let fast = SocketThread(name: "fast-sub") {
                guard let socket = try? ZMQSocket(type: .sub, options: .with { $0.curve = busOut.curve; $0.receiveHighWaterMark = 100_000 }) else { return }
                defer { socket.close() }
                try? socket.subscribe("")
                try? socket.connect(busOut.endpoint)
                var poller = Poller()
                poller.add(socket)
                while !stopFast.isRaised {
                    _ = try? poller.poll(timeoutMs: 50)
                    while let frames = try? socket.receiveMultipart(dontWait: true) {
                        if frames.first == Data("probe".utf8) { fastSawProbe.store(true, ordering: .relaxed) } else { fastReceived.add(1, ordering: .relaxed) }
                    }
                }
            }
            let memoryBefore = Mutex<Int?>(nil), memoryAfter = Mutex<Int?>(nil)
            // The publisher and the subscriber that stops reading after its first message.
            let flooding = try await SocketThread.value(name: "flood") { () -> Bool in
                let slow = try ZMQSocket(type: .sub, options: .with { $0.curve = busOut.curve; $0.receiveHighWaterMark = 100 })
                defer { slow.close() }
                try slow.subscribe("")
                try slow.connect(busOut.endpoint)
                let publisher = try ZMQSocket(type: .pub, options: .with { $0.curve = busIn.curve; $0.sendHighWaterMark = 1_000 })
                defer { publisher.close() }
                try publisher.setDropsWhenFull(false)  // this test's publisher waits rather than drops
                try publisher.connect(busIn.endpoint)
                // Probes until both subscribers are connected through the bus.
                var slowSawProbe = false
                let ready = ContinuousClock.now + .seconds(20)
                while !(slowSawProbe && fastSawProbe.load(ordering: .relaxed)) {
                    guard ContinuousClock.now < ready else { return false }
                    try publisher.send(multipart: [Data("probe".utf8), Data()])
                    usleep(20_000)
                    while let frames = try slow.receiveMultipart(dontWait: true) { slowSawProbe = slowSawProbe || frames.first == Data("probe".utf8) }
                }
                usleep(100_000)
                while try slow.receiveMultipart(dontWait: true) != nil {}
                memoryBefore.withLock { $0 = gateway.memory?.resident }
                // Every 2,000 messages the publisher lets the fast subscriber catch up, so
                // only the slow one's queue fills.
                var sent = 0
                func flood(_ count: Int) throws {
                    for _ in 0..<count {
                        try publisher.send(multipart: [Data("flood.item".utf8), Self.payload])
                        sent += 1
                        if sent % 2_000 == 0 {
                            let deadline = ContinuousClock.now + .seconds(20)
                            while fastReceived.load(ordering: .relaxed) < sent, ContinuousClock.now < deadline { usleep(1_000) }
                        }
                    }
                }
                // The slow one reads nothing during the flood; then it reads what it was
                // kept (its queue works again), and a second flood fills it a second time.
                try flood(Self.flood)
                memoryAfter.withLock { $0 = gateway.memory?.resident }
                var quiet = 0
                while quiet < 20 {
                    if try slow.receiveMultipart(dontWait: true) != nil { quiet = 0 } else { quiet += 1; usleep(10_000) }
                }
                try flood(Self.flood / 2)
                return true
            }
            #expect(flooding, "the subscribers never connected through the bus")
            let total = Self.flood + Self.flood / 2
            #expect(try await Poll.until(timeout: .seconds(20)) { fastReceived.load(ordering: .relaxed) >= total })
            stopFast.raise()
            await fast.join()
            #expect(fastReceived.load(ordering: .relaxed) == total, "the subscriber that kept reading missed messages")

            // Bounded: the queue is 10,000 messages (about 11 MB of these), not all 60 MB.
            let before = try #require(memoryBefore.withLock { $0 })
            let after = try #require(memoryAfter.withLock { $0 })
            #expect(after - before < 32 << 20, "the gateway grew by \((after - before) >> 20) MiB")
            // Counted (each time the queue filled: libzmq then skips the subscriber until it
            // reads again) and logged.
            let text = String(decoding: try await HTTPTestClient.send("GET", "http://\(metricsBind)/metrics").body, as: UTF8.self)
            let full = PrometheusText.samples(text).first { $0.name == "backend_bus_queue_full_total" && $0.labels["side"] == "bus" }?.value
            #expect(full == 2, "\(text.split(separator: "\n").filter { $0.contains("bus_queue") })")
            #expect(try await Poll.until(timeout: .seconds(5)) { gateway.output.contains("bus queue is full") }, "\(gateway.output.suffix(2_000))")
            await stack.stop()
        } catch {
            await stack.stop()
            throw error
        }
    }
}

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
    /// Messages through the bus: thirty times its queue per subscriber.
    static let flood = 60_000
    /// A kilobyte each, so a queue that grew with them would show in the gateway's memory.
    static let payload = Data(repeating: UInt8(ascii: "x"), count: 1_024)

    /// A gateway alone (its bus) with metrics, and the operator's links to the bus; stops it
    /// whether `body` succeeds or not.
    static func withBus(_ body: (_ gateway: ChildProcess, _ metrics: String, _ busIn: Link, _ busOut: Link) async throws -> Void) async throws {
        let stack = try TestStack()
        do {
            let metricsBind = "127.0.0.1:\(TestEnvironment.freePort())"
            let gateway = try stack.start("gateway", environment: ["BACKEND_METRICS_BIND": metricsBind])
            let links = try stack.configuration.links(as: "operator")
            try await body(gateway, "http://\(metricsBind)/metrics", try links.busIn, try links.busOut)
            await stack.stop()
        } catch {
            await stack.stop()
            throw error
        }
    }

    /// The gateway's samples of `name`.
    static func samples(_ name: String, at metrics: String) async throws -> [PrometheusText.Sample] {
        let text = String(decoding: try await HTTPTestClient.send("GET", metrics).body, as: UTF8.self)
        return PrometheusText.samples(text).filter { $0.name == name }
    }

    @Test("a subscriber that stops reading costs the gateway a bounded queue; what it misses is counted and logged; the others get everything")
    func boundedAndCounted() async throws {
        try await Self.withBus { gateway, metrics, busIn, busOut in
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
                        if frames.first == Data("operator.probe".utf8) { fastSawProbe.store(true, ordering: .relaxed) } else { fastReceived.add(1, ordering: .relaxed) }
                    }
                }
            }
            let memoryBefore = Mutex<Int?>(nil), memoryAfter = Mutex<Int?>(nil)
            // The publisher and the subscribers that stop reading after their first message.
            // (A subscriber whose queue was full is never read again here: libzmq 4.3.4
            // can abort on `_input_stopped` when a stopped connection's input restarts,
            // a known bug, zeromq/libzmq#3937.)
            let flooding = try await SocketThread.value(name: "flood") { () -> Bool in
                let publisher = try ZMQSocket(type: .pub, options: .with { $0.curve = busIn.curve; $0.sendHighWaterMark = 1_000 })
                defer { publisher.close() }
                try publisher.setDropsWhenFull(false)  // this test's publisher waits rather than drops
                try publisher.connect(busIn.endpoint)
                /// A subscriber connected through the bus (it has read a probe) that reads nothing more.
                func stalledSubscriber() throws -> ZMQSocket? {
                    let slow = try ZMQSocket(type: .sub, options: .with { $0.curve = busOut.curve; $0.receiveHighWaterMark = 100 })
                    try slow.subscribe("")
                    try slow.connect(busOut.endpoint)
                    var slowSawProbe = false
                    let ready = ContinuousClock.now + .seconds(20)
                    while !(slowSawProbe && fastSawProbe.load(ordering: .relaxed)) {
                        guard ContinuousClock.now < ready else {
                            slow.close()
                            return nil
                        }
                        // The operator's key publishes only the operator's topics.
                        try publisher.send(multipart: [Data("operator.probe".utf8), Data()])
                        usleep(20_000)
                        while let frames = try slow.receiveMultipart(dontWait: true) { slowSawProbe = slowSawProbe || frames.first == Data("operator.probe".utf8) }
                    }
                    usleep(100_000)
                    while try slow.receiveMultipart(dontWait: true) != nil {}
                    return slow
                }
                // Every 500 messages (the bus queues 2,000 per subscriber) the publisher
                // lets the fast subscriber catch up, so only the stalled one's queue fills.
                var sent = 0
                func flood(_ count: Int) throws {
                    for _ in 0..<count {
                        try publisher.send(multipart: [Data("operator.flood".utf8), Self.payload])
                        sent += 1
                        if sent % 500 == 0 {
                            let deadline = ContinuousClock.now + .seconds(20)
                            while fastReceived.load(ordering: .relaxed) < sent, ContinuousClock.now < deadline { usleep(1_000) }
                        }
                    }
                }
                guard let first = try stalledSubscriber() else { return false }
                defer { first.close() }
                memoryBefore.withLock { $0 = gateway.memory?.resident }
                try flood(Self.flood)
                memoryAfter.withLock { $0 = gateway.memory?.resident }
                // A second stalled subscriber: its queue filling is counted a second time.
                guard let second = try stalledSubscriber() else { return false }
                defer { second.close() }
                try flood(Self.flood / 2)
                return true
            }
            #expect(flooding, "the subscribers never connected through the bus")
            let total = Self.flood + Self.flood / 2
            #expect(try await Poll.until(timeout: .seconds(20)) { fastReceived.load(ordering: .relaxed) >= total })
            stopFast.raise()
            await fast.join()
            #expect(fastReceived.load(ordering: .relaxed) == total, "the subscriber that kept reading missed messages")

            // Bounded: the queue is 2,000 messages (about 2 MB of these), not all 60 MB.
            let before = try #require(memoryBefore.withLock { $0 })
            let after = try #require(memoryAfter.withLock { $0 })
            #expect(after - before < 32 << 20, "the gateway grew by \((after - before) >> 20) MiB")
            // Counted (each time the queue filled: libzmq then skips the subscriber until it
            // reads again) and logged.
            let full = try await Self.samples("backend_bus_queue_full_total", at: metrics)
            #expect(full.first { $0.labels["side"] == "bus" }?.value == 2, "\(full)")
            #expect(try await Poll.until(timeout: .seconds(5)) { gateway.output.contains("bus queue is full") }, "\(gateway.output.suffix(2_000))")
        }
    }

    @Test("hostile bus clients: a long subscription, a subscription flood, another source's topic and a message of many frames change nothing for the others")
    func hostileClients() async throws {
        try await Self.withBus { gateway, metrics, busIn, busOut in
            let outcome = try await SocketThread.value(name: "hostile-bus") { () -> [String] in
                var findings: [String] = []
                let listener = try ZMQSocket(type: .sub, options: .with { $0.curve = busOut.curve })
                defer { listener.close() }
                try listener.subscribe("")
                try listener.connect(busOut.endpoint)
                func publisher() throws -> ZMQSocket {
                    let socket = try ZMQSocket(type: .pub, options: .with { $0.curve = busIn.curve; $0.lingerMs = 1_000 })
                    try socket.connect(busIn.endpoint)
                    return socket
                }
                /// Publishes `frames` until the listener gets something (or 3 s pass); returns what it got.
                func heard(_ frames: [Data], from socket: ZMQSocket, probe: [Data]? = nil) throws -> [[Data]] {
                    var got: [[Data]] = []
                    let deadline = ContinuousClock.now + .seconds(3)
                    while ContinuousClock.now < deadline {
                        try socket.send(multipart: frames)
                        if let probe { try socket.send(multipart: probe) }
                        usleep(50_000)
                        while let message = try listener.receiveMultipart(dontWait: true) { got.append(message) }
                        if !got.isEmpty { break }
                    }
                    return got
                }
                let ours = try publisher()
                defer { ours.close() }
                let probe = [Data("operator.probe".utf8), Data("{}".utf8)]
                if try heard(probe, from: ours).isEmpty { findings.append("the listener never heard the operator's own topic") }
                // Another source's topic, and three frames, both refused; the probe behind them arrives.
                let forged = try heard([Data("savings.deposit.recorded".utf8), Data("{}".utf8)], from: ours, probe: probe)
                if forged.contains(where: { $0.first == Data("savings.deposit.recorded".utf8) }) { findings.append("another source's topic went through") }
                let long = try heard([Data("operator.x".utf8), Data("a".utf8), Data("b".utf8)], from: ours, probe: probe)
                if long.contains(where: { $0.count != 2 }) { findings.append("a message of three frames went through") }
                // A subscription of 13 KB (it once overflowed libzmq's stack on disconnect).
                let greedy = try ZMQSocket(type: .sub, options: .with { $0.curve = busOut.curve })
                try greedy.subscribe(String(repeating: "a", count: 13_000))
                try greedy.connect(busOut.endpoint)
                usleep(300_000)
                greedy.close()
                // Twenty thousand subscriptions, then a publisher that connects afterwards: still heard.
                let flood = try ZMQSocket(type: .sub, options: .with { $0.curve = busOut.curve })
                defer { flood.close() }
                for index in 0..<20_000 { try flood.subscribe("a\(index)") }
                try flood.connect(busOut.endpoint)
                usleep(500_000)
                let late = try publisher()
                defer { late.close() }
                if try heard([Data("operator.late".utf8), Data("{}".utf8)], from: late).isEmpty {
                    findings.append("a publisher that connected after a subscription flood was not heard")
                }
                return findings
            }
            #expect(outcome.isEmpty, "\(outcome)")
            #expect(gateway.isRunning, "the gateway died: \(gateway.output.suffix(2_000))")
            let refused = try await Self.samples("backend_bus_refused_total", at: metrics)
            #expect((refused.first { $0.labels["reason"] == "source" }?.value ?? 0) >= 1, "\(refused)")
            #expect((refused.first { $0.labels["reason"] == "shape" }?.value ?? 0) >= 1, "\(refused)")
            #expect(gateway.output.contains("the bus refused a publisher's message"))
            // Subscribers that left (the greedy one, dropped for its subscription, and the
            // others at the end) are counted and reported.
            let left = try await Self.samples("backend_bus_subscribers_left_total", at: metrics)
            #expect((left.first?.value ?? 0) >= 1, "\(left)")
            #expect(gateway.output.contains("subscribers left the bus"))
        }
    }
}

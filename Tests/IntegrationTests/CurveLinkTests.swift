import Foundation
import Platform
import Synchronization
import SharedTesting
import Testing
import ZeroMQ

/// The internal links speak CURVE with the deployment's keys (README, "Encrypted links"): a
/// client without one of its keys reaches neither a service nor the bus, and a request that
/// crosses the gateway-to-service link is not readable on the wire (captured with tshark).
@Suite("Encrypted links", .serialized)
struct CurveLinkTests {
    static let fastAuth = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4"]

    @Test("a service and the bus refuse plaintext and unknown keys; the deployment's operator key is served")
    func unknownKeysRefused() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: Self.fastAuth) { stack in
            let configuration = stack.configuration
            let endpoint = try configuration.endpoint(of: "auth")
            let serverKey = try configuration.links(as: "operator").keyring!.serverKey(of: "auth")
            let health = Data(#"{"id":"k","op":"auth.health"}"#.utf8)

            // The operator's key pair is one of the deployment's: served.
            let served = await RawClient.request(health, link: try configuration.operatorLink(to: "auth"))
            #expect(served?.ok == true)
            // Plaintext, and a stranger's key pair that knows auth's public key: no answer.
            #expect(await RawClient.request(health, link: Link(endpoint), timeout: .seconds(1)) == nil)
            let stranger = Link(endpoint, curve: .client(serverPublicKey: serverKey, keys: try CurveKeyPair.generate()))
            #expect(await RawClient.request(health, link: stranger, timeout: .seconds(1)) == nil)
            // The gateway's own key pair is known, but not a service's secret: a client that
            // guesses the wrong server key fails the handshake too.
            let wrongServer = Link(endpoint, curve: .client(serverPublicKey: try CurveKeyPair.generate().publicKey, keys: try configuration.links(as: "operator").keyring!.keys))
            #expect(await RawClient.request(health, link: wrongServer, timeout: .seconds(1)) == nil)

            // The bus: a stranger's subscription hears nothing, the operator's hears the event.
            let busOut = try configuration.links(as: "operator").busOut
            let strangerBus = Link(busOut.endpoint, curve: .client(serverPublicKey: try configuration.links(as: "operator").keyring!.serverKey(of: "gateway"), keys: try CurveKeyPair.generate()))
            async let known = Self.firstEvent(on: busOut, within: .seconds(8))
            async let unknown = Self.firstEvent(on: strangerBus, within: .seconds(8))
            async let plain = Self.firstEvent(on: Link(busOut.endpoint), within: .seconds(8))
            try await Task.sleep(for: .milliseconds(500))
            _ = try await AuthFixtures.signUp(stack.client, email: "bus@links.example")
            let (heard, strangerHeard, plainHeard) = await (known, unknown, plain)
            #expect(heard?.hasPrefix("auth.") == true, "the operator heard \(heard ?? "nothing")")
            #expect(strangerHeard == nil)
            #expect(plainHeard == nil)
        }
    }

    @Test("operator-only operations: another service's key is refused, the operator's is served")
    func operatorOnlyOperations() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: Self.fastAuth) { stack in
            _ = try await AuthFixtures.signUp(stack.client, email: "someone@links.example")
            let grant = Data(#"{"id":"g","op":"auth.internal.admin.grant","data":{"email":"someone@links.example"}}"#.utf8)
            // A compromised stats container holds stats' key: internal, but not the operator's.
            let asStats = await RawClient.request(grant, link: try stack.configuration.links(as: "stats").service("auth"))
            #expect(asStats?.error?.code == .forbidden, "\(String(describing: asStats))")
            // Other internal operations stay open to services (subscribers replay events).
            let replay = Data(#"{"id":"r","op":"auth.events.replay","data":{"after":0}}"#.utf8)
            #expect(await RawClient.request(replay, link: try stack.configuration.links(as: "stats").service("auth"))?.ok == true)
            let asOperator = await RawClient.request(grant, link: try stack.configuration.operatorLink(to: "auth"))
            #expect(asOperator?.ok == true, "\(String(describing: asOperator))")
        }
    }

    @Test("a request through the gateway is plaintext on the public socket and encrypted on the link to the service (tshark)")
    func encryptedOnTheWire() async throws {
        try #require(Capture.available, "tshark is needed (deploy/test.sh installs it)")
        try await TestStack.with(services: ["auth"]) { stack in
            let configuration = stack.configuration
            let gatewayPort = try #require(Capture.port(of: configuration.gatewayEndpoint))
            let authPort = try #require(Capture.port(of: try configuration.endpoint(of: "auth")))
            let publicCapture = try await Capture.start(port: gatewayPort, in: stack.directory)
            let linkCapture = try await Capture.start(port: authPort, in: stack.directory)
            // tshark says it is capturing a little before its filter is in place.
            try await Task.sleep(for: .seconds(1))
            let marker = "MARKER-\(UUID().uuidString)"
            // The id travels in the envelope the gateway forwards to auth unchanged.
            for attempt in 0..<3 {
                let body = Data(#"{"id":"\#(marker)-\#(attempt)","op":"auth.health"}"#.utf8)
                let reply = await RawClient.request(body, endpoint: configuration.gatewayEndpoint)
                #expect(reply?.ok == true, "\(String(describing: reply))")
            }
            try await Task.sleep(for: .milliseconds(500))
            let publicBytes = try await publicCapture.finish()
            let linkBytes = try await linkCapture.finish()
            // The capture works: the public socket (plaintext by default) shows the marker.
            #expect(publicBytes.range(of: Data(marker.utf8)) != nil, "the capture of the public socket did not see the request")
            // The service link carried the requests as CurveZMQ MESSAGE commands, and the
            // marker never appears in clear.
            #expect(linkBytes.range(of: Data("\u{07}MESSAGE".utf8)) != nil, "no CURVE message on the service link")
            #expect(linkBytes.range(of: Data(marker.utf8)) == nil, "the request crossed the service link in plaintext")
            #expect(linkBytes.range(of: Data("auth.health".utf8)) == nil)
        }
    }

    /// The topic of the first event `link` hears within `timeout`, on a socket thread.
    static func firstEvent(on link: Link, within timeout: Duration) async -> String? {
        let heard = Mutex<String?>(nil)
        let thread = SocketThread(name: "bus-listener") {
            guard let socket = try? ZMQSocket(type: .sub, options: .with { $0.curve = link.curve }) else { return }
            defer { socket.close() }
            guard (try? socket.subscribe("")) != nil, (try? socket.connect(link.endpoint)) != nil else { return }
            var poller = Poller()
            poller.add(socket)
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if (try? poller.poll(timeoutMs: 100)) ?? 0 > 0, let frames = try? socket.receiveMultipart(dontWait: true), let topic = frames.first {
                    heard.withLock { $0 = String(decoding: topic, as: UTF8.self) }
                    return
                }
            }
        }
        await thread.join()
        return heard.withLock { $0 }
    }
}

/// A packet capture of one loopback TCP port with tshark.
struct Capture {
    let process: ChildProcess
    let file: URL

    /// Whether tshark is installed.
    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark") }

    /// The port of a `tcp://host:port` endpoint.
    static func port(of endpoint: String) -> Int? {
        endpoint.split(separator: ":").last.flatMap { Int($0) }
    }

    /// Starts capturing `port` on the loopback interface; returns once tshark captures.
    static func start(port: Int, in directory: TemporaryDirectory) async throws -> Capture {
        let file = directory.url.appendingPathComponent("capture-\(port).pcapng")
        let process = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/tshark"), arguments: ["-i", "lo", "-f", "tcp port \(port)", "-w", file.path],
            environment: ProcessInfo.processInfo.environment, logFile: directory.url.appendingPathComponent("tshark-\(port).log"))
        do {
            _ = try await process.waitForOutput("Capturing on", timeout: .seconds(20))
        } catch {
            await process.stop(grace: .seconds(2))
            throw error
        }
        return Capture(process: process, file: file)
    }

    /// Stops the capture and returns the file's bytes.
    func finish() async throws -> Data {
        process.kill(signal: SIGINT)
        if await process.waitForExit(timeout: .seconds(10)) == nil { await process.stop(grace: .seconds(2)) }
        return try Data(contentsOf: file)
    }
}

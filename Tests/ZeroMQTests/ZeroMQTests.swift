import Foundation
import Testing
import ZeroMQ

/// Each test runs its sockets on one dedicated thread, as production code does.
private func onSocketThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

private func uniqueInproc() -> String { "inproc://test-\(UUID().uuidString)" }

@Suite("ZeroMQ wrapper")
struct ZeroMQTests {
    @Test("multipart messages keep their frames, empty ones included")
    func multipartRoundTrip() async throws {
        let frames = try await onSocketThread { () -> [Data] in
            let endpoint = uniqueInproc()
            let server = try ZMQSocket(type: .pair)
            try server.bind(endpoint)
            let client = try ZMQSocket(type: .pair)
            try client.connect(endpoint)
            try client.send(multipart: [Data("a".utf8), Data(), Data(repeating: 7, count: 100_000)])
            return try server.receiveMultipart() ?? []
        }
        #expect(frames.count == 3)
        #expect(frames[0] == Data("a".utf8))
        #expect(frames[1].isEmpty)
        #expect(frames[2] == Data(repeating: 7, count: 100_000))
    }

    @Test("errors are typed and carry the errno name")
    func typedErrors() async throws {
        let names = try await onSocketThread { () -> [String] in
            var names: [String] = []
            let socket = try ZMQSocket(type: .router)
            do { try socket.bind("nonsense://x") } catch let error as ZMQError { names.append(error.name) }
            try socket.bind("tcp://127.0.0.1:*")
            let taken = socket.lastEndpoint
            let other = try ZMQSocket(type: .router)
            do { try other.bind(taken) } catch let error as ZMQError { names.append(error.name) }
            // Nothing queued: a non-blocking receive reports "nothing" rather than failing.
            names.append(try other.receiveMultipart(dontWait: true) == nil ? "nil" : "message")
            return names
        }
        #expect(names == ["EPROTONOSUPPORT", "EADDRINUSE", "nil"])
    }

    @Test("options are applied and read back")
    func optionsApplied() async throws {
        let values = try await onSocketThread { () -> [Int64] in
            let socket = try ZMQSocket(type: .dealer, options: .with {
                $0.lingerMs = 250
                $0.sendHighWaterMark = 123
                $0.maxMessageSize = 4096
                $0.immediate = true
            })
            return [
                Int64(try socket.intOption(17)),  // ZMQ_LINGER
                Int64(try socket.intOption(23)),  // ZMQ_SNDHWM
                try socket.int64Option(22),  // ZMQ_MAXMSGSIZE
                Int64(try socket.intOption(39)),  // ZMQ_IMMEDIATE
            ]
        }
        #expect(values == [250, 123, 4096, 1])
    }

    @Test("the poller reports sockets and file descriptors that are ready")
    func pollerReadiness() async throws {
        let result = try await onSocketThread { () -> [Bool] in
            let endpoint = uniqueInproc()
            let server = try ZMQSocket(type: .pull)
            try server.bind(endpoint)
            let client = try ZMQSocket(type: .push)
            try client.connect(endpoint)
            var pipeEnds: [Int32] = [0, 0]
            pipe(&pipeEnds)
            defer { close(pipeEnds[0]); close(pipeEnds[1]) }
            var poller = Poller()
            let socketItem = poller.add(server)
            let pipeItem = poller.add(fileDescriptor: pipeEnds[0])
            let idle = try poller.poll(timeoutMs: 10)
            try client.send(Data("x".utf8))
            _ = try poller.poll(timeoutMs: 1_000)
            let socketReady = poller.isReadable(socketItem)
            let pipeReadyBefore = poller.isReadable(pipeItem)
            _ = write(pipeEnds[1], "z", 1)
            _ = try poller.poll(timeoutMs: 1_000)
            return [idle == 0, socketReady, !pipeReadyBefore, poller.isReadable(pipeItem)]
        }
        #expect(result == [true, true, true, true])
    }

    @Test("ROUTER_MANDATORY reports an unknown identity as EHOSTUNREACH")
    func routerMandatory() async throws {
        let name = try await onSocketThread { () -> String in
            let router = try ZMQSocket(type: .router, options: .with { $0.routerMandatory = true })
            try router.bind(uniqueInproc())
            do {
                try router.send(multipart: [Data("nobody".utf8), Data(), Data("x".utf8)])
                return "sent"
            } catch let error as ZMQError {
                return error.isHostUnreachable ? error.name : "other \(error)"
            }
        }
        #expect(name == "EHOSTUNREACH")
    }

    @Test("a frame over ZMQ_MAXMSGSIZE is not delivered")
    func maxMessageSize() async throws {
        let received = try await onSocketThread { () -> [Int] in
            let server = try ZMQSocket(type: .pull, options: .with { $0.maxMessageSize = 1_000 })
            try server.bind("tcp://127.0.0.1:*")
            let endpoint = server.lastEndpoint
            let small = try ZMQSocket(type: .push)
            try small.connect(endpoint)
            let big = try ZMQSocket(type: .push)
            try big.connect(endpoint)
            try big.send(Data(count: 5_000))
            try small.send(Data(count: 10))
            var poller = Poller()
            poller.add(server)
            var sizes: [Int] = []
            while try poller.poll(timeoutMs: 300) > 0, let frames = try server.receiveMultipart(dontWait: true) {
                sizes.append(frames[0].count)
            }
            return sizes
        }
        #expect(received == [10])
    }

    /// The gateway and the services bound their receive queues (`ZMQ_RCVHWM`); when one is
    /// full, libzmq stops reading that connection, and its heartbeat timers run on
    /// regardless (zeromq/libzmq#3937). A client pipelining large requests to a busy
    /// gateway was dropped as dead after 6 s and the replies to what it had sent were lost
    /// (CI, `GatewayMemoryTests`). A server that reads nothing for 9 s (past the default
    /// 6 s timeout and 2 s interval) keeps a default client's connection when its timeout is
    /// the patient one, and answers every request; with heartbeats that give up sooner than
    /// the pause, the same exchange loses requests, so the check would catch the bug.
    @Test("a server too busy to read a client for 9 s keeps the connection with patient heartbeats, and answers everything")
    func patientHeartbeatsOutlastAReadingPause() async throws {
        async let patient = onSocketThread {
            try Self.repliesAfterReadingPause(server: .with {
                $0.receiveHighWaterMark = 1
                $0.heartbeatTimeoutMs = SocketOptions.patientHeartbeatTimeoutMs
            }, client: SocketOptions())
        }
        async let hasty = onSocketThread {
            try Self.repliesAfterReadingPause(server: .with {
                $0.receiveHighWaterMark = 1
                $0.heartbeatIntervalMs = 500
                $0.heartbeatTimeoutMs = 1_500
            }, client: SocketOptions())
        }
        let (kept, dropped) = try await (patient, hasty)
        #expect(kept == Self.pipelined, "answered \(kept) of \(Self.pipelined)")
        #expect(dropped < Self.pipelined, "answered \(dropped) of \(Self.pipelined) despite a heartbeat timeout shorter than the pause")
    }

    /// 24 requests of 1 MB: far more than loopback's socket buffers and a one-message queue.
    static let pipelined = 24

    /// Sends ``pipelined`` requests from a DEALER, leaves them unread for 9 s, then serves
    /// them; returns how many distinct requests were answered.
    static func repliesAfterReadingPause(server serverOptions: SocketOptions, client clientOptions: SocketOptions) throws -> Int {
        let server = try ZMQSocket(type: .router, options: serverOptions)
        defer { server.close() }
        try server.bind("tcp://127.0.0.1:*")
        let client = try ZMQSocket(type: .dealer, options: clientOptions)
        defer { client.close() }
        try client.connect(server.lastEndpoint)
        let body = Data(repeating: 0x61, count: 1 << 20)
        for index in 0..<pipelined {
            try client.send(multipart: [Data([UInt8(index)]), body])
        }
        usleep(9_000_000)
        var answered = Set<UInt8>()
        var poller = Poller()
        poller.add(server)
        poller.add(client)
        let deadline = ContinuousClock.now + .seconds(4)
        while answered.count < pipelined, ContinuousClock.now < deadline {
            _ = try poller.poll(timeoutMs: 100)
            while let frames = try server.receiveMultipart(dontWait: true) {
                try server.send(multipart: [frames[0], frames[1]], dontWait: true)
            }
            while let frames = try client.receiveMultipart(dontWait: true) {
                if let tag = frames.first?.first { answered.insert(tag) }
            }
        }
        return answered.count
    }

    @Test("Z85 round trip and CURVE key pairs")
    func z85AndKeys() throws {
        let bytes: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(Z85.encode(bytes) == "HelloWorld")
        #expect(Z85.decode("HelloWorld") == bytes)
        #expect(Z85.encode([1, 2, 3]) == nil)
        let keys = try CurveKeyPair.generate()
        #expect(keys.publicKey.count == 40 && keys.secretKey.count == 40)
        #expect(try CurveKeyPair.publicKey(forSecret: keys.secretKey) == keys.publicKey)
        #expect(throws: ZMQError.self) { try CurveKeyPair(publicKey: "short", secretKey: keys.secretKey) }
    }

    @Test("CURVE with ZAP: a known client key is served, an unknown one is refused")
    func curveWithZAP() async throws {
        try #require(ZMQContext.has("curve"))
        let context = try ZMQContext()
        let server = try CurveKeyPair.generate()
        let allowed = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let zap = try ZAPAuthenticator(context: context, allowedClientKeys: [allowed.publicKey])
        defer { zap.stop() }
        let replies = try await onSocketThread { () -> [String?] in
            let router = try ZMQSocket(context, type: .router, options: .with { $0.curve = .server(secretKey: server.secretKey) })
            try router.bind("tcp://127.0.0.1:*")
            let endpoint = router.lastEndpoint
            var results: [String?] = []
            for keys in [allowed, stranger] {
                let client = try ZMQSocket(
                    context, type: .dealer, options: .with { $0.curve = .client(serverPublicKey: server.publicKey, keys: keys) })
                try client.connect(endpoint)
                try client.send(multipart: [Data(), Data("ping".utf8)])
                var poller = Poller()
                poller.add(router)
                var answer: String?
                if try poller.poll(timeoutMs: 1_000) > 0, let frames = try router.receiveMultipart(dontWait: true) {
                    try router.send(multipart: [frames[0], Data(), Data("pong".utf8)])
                    var clientPoller = Poller()
                    clientPoller.add(client)
                    if try clientPoller.poll(timeoutMs: 1_000) > 0, let reply = try client.receiveMultipart(dontWait: true) {
                        answer = String(decoding: reply.last ?? Data(), as: UTF8.self)
                    }
                }
                results.append(answer)
                client.close()
            }
            router.close()
            return results
        }
        #expect(replies == ["pong", nil])
    }
}

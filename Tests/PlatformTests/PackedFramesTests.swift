import Foundation
import Platform
import SharedTesting
import Testing
import ZeroMQ

@Suite("Packed frames on internal links")
struct PackedFramesTests {
    @Test(
        "frames come back as they were packed, empty and large ones included",
        arguments: [
            [Data()],
            [Data("body".utf8)],
            [Data(repeating: 1, count: 8), Data("client:127.0.0.1".utf8), Data([0, 1, 2]), Data(), Data("{\"id\":\"1\"}".utf8)],
            [Data(), Data(), Data()],
            [Data(repeating: 0xFF, count: 70_000), Data(repeating: 9, count: 1_048_577)],
        ])
    func roundTrip(frames: [Data]) throws {
        let packed = PackedFrames.pack(frames)
        #expect(packed.first == PackedFrames.marker)
        let unpacked = try #require(PackedFrames.unpack(packed))
        #expect(unpacked == frames)
        // Every frame starts at index 0, as code reading frames by offset expects.
        #expect(unpacked.allSatisfy { $0.startIndex == 0 })
    }

    @Test(
        "anything that is not a whole packed message is refused, never read past its end",
        arguments: [
            Data(),
            Data([0xFF]),
            Data("{\"id\":\"1\"}".utf8),
            Data([0xFE, 1, 0x7B]),
            Data([0xFF, 0]),
            Data([0xFF, 33]) + Data(repeating: 0, count: 200),
            Data([0xFF, 2, 5, 0, 0]),
            Data([0xFF, 2, 5, 0, 0, 0, 1, 2, 3, 4]),
            Data([0xFF, 3, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]),
        ])
    func refusesMalformed(bytes: Data) {
        #expect(PackedFrames.unpack(bytes) == nil)
    }

    @Test("a ROUTER opens [identity, packed] and answers in the framing it was asked in")
    func openAndReply() {
        let identity = Data([0, 1, 2, 3, 4])
        let inner = [Data("tag".utf8), Data(), Data("{}".utf8)]
        let opened = PackedFrames.open([identity, PackedFrames.pack(inner)])
        #expect(opened.packed)
        #expect(opened.frames == [identity] + inner)
        let reply = PackedFrames.reply(envelope: Array(opened.frames.dropLast()), Data("r".utf8), packed: true)
        #expect(reply.count == 2 && reply[0] == identity)
        #expect(PackedFrames.unpack(reply[1]) == [Data("tag".utf8), Data(), Data("r".utf8)])

        // The contract's framing, and a broken packed frame, pass through untouched.
        let contract = [identity, Data(), Data("{}".utf8)]
        #expect(PackedFrames.open(contract).frames == contract && !PackedFrames.open(contract).packed)
        let broken = [identity, Data([0xFF, 2, 9, 0, 0, 0])]
        #expect(PackedFrames.open(broken).frames == broken && !PackedFrames.open(broken).packed)
        // A well-formed packed frame without a delimiter inside is a malformed contract
        // request, answered in the contract's frames.
        let undelimited = [identity, PackedFrames.pack([Data("{}".utf8)])]
        #expect(!PackedFrames.open(undelimited).packed)
        #expect(PackedFrames.reply(envelope: [identity, Data()], Data("r".utf8), packed: false) == [identity, Data(), Data("r".utf8)])
    }

    @Test("a service answers packed requests packed and the contract's frames as before, over CURVE")
    func serviceAnswersBothFramings() async throws {
        try await InProcessService.with(TestService.definition()) { service in
            let link = try service.configuration.operatorLink(to: "test")
            let replies = try await onOwnThread { () -> [[Data]] in
                let socket = try ZMQSocket(type: .dealer, options: .with { $0.curve = link.curve })
                defer { socket.close() }
                try socket.connect(link.endpoint)
                let request = Data(#"{"id":"p1","op":"test.health","data":{}}"#.utf8)
                var replies: [[Data]] = []
                for message in [
                    [PackedFrames.pack([Data("tag-1".utf8), Data(), request])],
                    [Data(), request],
                    [Data([0xFF, 3, 1, 0])],
                ] {
                    try socket.send(multipart: message)
                    var poller = Poller()
                    poller.add(socket)
                    _ = try poller.poll(timeoutMs: 10_000)
                    replies.append(try socket.receiveMultipart(dontWait: true) ?? [])
                }
                return replies
            }
            // Packed in, packed out, with the tag in place.
            #expect(replies[0].count == 1)
            let unpacked = try #require(PackedFrames.unpack(replies[0][0]))
            #expect(unpacked.count == 3 && unpacked[0] == Data("tag-1".utf8) && unpacked[1].isEmpty)
            #expect(try Reply.parse(unpacked[2]).ok)
            // The contract's DEALER framing is unchanged.
            #expect(replies[1].count == 2 && replies[1][0].isEmpty)
            #expect(try Reply.parse(replies[1][1]).ok)
            // A truncated packed frame is a bad request, answered in plain frames.
            #expect(replies[2].count == 2)
            #expect(try Reply.parse(replies[2][1]).error?.code == .badRequest)
        }
    }
}

/// Runs `body` on a thread of its own: a ZeroMQ socket lives on one thread.
private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

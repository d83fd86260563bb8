import Foundation
import Platform
import Synchronization
import ZeroMQ

/// A DEALER client that sends many requests without waiting for replies, as load tools
/// and impatient apps do, and reports what came back for each.
///
/// Each request goes out as `[tag, "", body]` and its reply is matched by the tag, so the
/// bodies may all be the same. The socket is not `ZMQ_IMMEDIATE`: requests sent before
/// the connection is up wait for it, so every answer is the server's, never the client's.
public enum PipeliningClient {
    /// A context of its own, so a flood's traffic does not go through the I/O thread
    /// that in-process tests share (`ZMQContext.shared`).
    private static let context: ZMQContext = (try? ZMQContext()) ?? .shared

    /// What came back for one request.
    public struct Outcome: Sendable {
        /// The reply, or `nil` if none came in time (or it was not a reply).
        public var reply: Reply.Parsed?
        /// From sending the request to receiving its reply.
        public var latency: Duration?
    }

    /// Sends every body as fast as the socket takes it and collects the replies, for at
    /// most `timeout` in all and, when `stallTimeout` is given, only while the server
    /// keeps taking requests or answering: it gives up once neither has happened for that
    /// long (a starved server is slow but answers; a lost reply stalls). The outcomes are
    /// in the order of `bodies`.
    ///
    /// At most `sendHighWaterMark` messages wait in this process (`ZMQ_SNDHWM`); beyond
    /// that the client waits for the server to read, as a real client's socket would, so
    /// a flood of large bodies does not pile up here. A positive `niceness` lowers the
    /// client thread's scheduling priority (see ``ChildProcess/lowerPriority(niceness:)``).
    public static func run(
        _ bodies: [Data], endpoint: String, timeout: Duration, stallTimeout: Duration? = nil, sendHighWaterMark: Int32 = 16,
        niceness: Int32 = 0
    ) async -> [Outcome] {
        let outcomes = Mutex<[Outcome]>(Array(repeating: Outcome(), count: bodies.count))
        let thread = SocketThread(name: "pipelining-client") {
            if niceness != 0 { ChildProcess.lowerPriorityOfCurrentThread(niceness: niceness) }
            do {
                let socket = try ZMQSocket(context, type: .dealer, options: .with {
                    $0.sendHighWaterMark = sendHighWaterMark
                    $0.receiveHighWaterMark = Int32(clamping: bodies.count + 1)
                })
                defer { socket.close() }
                try socket.connect(endpoint)
                var poller = Poller()
                poller.add(socket)
                var sentAt: [ContinuousClock.Instant?] = Array(repeating: nil, count: bodies.count)
                var next = 0, received = 0
                let deadline = ContinuousClock.now + timeout
                var lastProgress = ContinuousClock.now
                while received < bodies.count, ContinuousClock.now < deadline {
                    if let stallTimeout, ContinuousClock.now - lastProgress > stallTimeout { break }
                    while next < bodies.count {
                        var tag = UInt32(next)
                        let tagFrame = withUnsafeBytes(of: &tag) { Data($0) }
                        guard try socket.send(multipart: [tagFrame, Data(), bodies[next]], dontWait: true) else { break }
                        sentAt[next] = .now
                        next += 1
                        lastProgress = .now
                    }
                    // While requests wait to be sent, come back soon to send more.
                    let wait = next < bodies.count ? 2 : max(1, min(1_000, (deadline - .now).wholeMilliseconds))
                    _ = try poller.poll(timeoutMs: wait)
                    while let frames = try socket.receiveMultipart(dontWait: true) {
                        guard frames.count == 3, frames[0].count == 4 else { continue }
                        let index = Int(frames[0].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
                        guard index < bodies.count, let sent = sentAt[index] else { continue }
                        let outcome = Outcome(reply: try? Reply.parse(frames[2]), latency: .now - sent)
                        outcomes.withLock { $0[index] = outcome }
                        received += 1
                        lastProgress = .now
                    }
                }
            } catch {
                // A socket error leaves the remaining outcomes empty, which the test sees.
            }
        }
        await thread.join()
        return outcomes.withLock { $0 }
    }
}

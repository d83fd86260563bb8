import Foundation
import Platform
import Synchronization
import ZeroMQ

/// Sends exactly the frames a test gives, on a fresh REQ or DEALER socket owned by its
/// own thread, and returns the frames that come back: for bad-input tests that must
/// send what a well-behaved client never would.
public enum RawClient {
    /// Sends `frames` (a DEALER should start them with an empty delimiter) and waits up
    /// to `timeout` for one reply message; `nil` if none came.
    public static func exchange(
        _ frames: [Data], endpoint: String, type: SocketType = .dealer, timeout: Duration = .seconds(3)
    ) async -> [Data]? {
        await exchange(frames, link: Link(endpoint), type: type, timeout: timeout)
    }

    /// ``exchange(_:endpoint:type:timeout:)`` through `link` (CURVE when it has a role).
    public static func exchange(
        _ frames: [Data], link: Link, type: SocketType = .dealer, timeout: Duration = .seconds(3)
    ) async -> [Data]? {
        let result = ResultBox()
        let thread = SocketThread(name: "raw-client") {
            do {
                let socket = try ZMQSocket(type: type, options: .with { $0.curve = link.curve })
                defer { socket.close() }
                try socket.connect(link.endpoint)
                try socket.send(multipart: frames)
                var poller = Poller()
                poller.add(socket)
                let deadline = ContinuousClock.now + timeout
                while ContinuousClock.now < deadline {
                    if try poller.poll(timeoutMs: max(1, (deadline - ContinuousClock.now).wholeMilliseconds)) > 0,
                        let reply = try socket.receiveMultipart(dontWait: true)
                    {
                        result.set(reply)
                        return
                    }
                }
            } catch {
                result.set(nil)
            }
        }
        await thread.join()
        return result.get()
    }

    /// Sends one request body as a DEALER client (`["", body]`) and parses the reply.
    public static func request(_ body: Data, endpoint: String, timeout: Duration = .seconds(3)) async -> Reply.Parsed? {
        await request(body, link: Link(endpoint), timeout: timeout)
    }

    /// ``request(_:endpoint:timeout:)`` through `link`.
    public static func request(_ body: Data, link: Link, timeout: Duration = .seconds(3)) async -> Reply.Parsed? {
        guard let frames = await exchange([Data(), body], link: link, timeout: timeout),
            frames.count == 2, frames[0].isEmpty
        else { return nil }
        return try? Reply.parse(frames[1])
    }
}

/// A value written by a socket thread and read after it is joined.
private final class ResultBox: Sendable {
    private let value = Mutex<[Data]?>(nil)
    func set(_ value: [Data]?) { self.value.withLock { $0 = value } }
    func get() -> [Data]? { value.withLock { $0 } }
}

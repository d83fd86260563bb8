import Foundation
import Platform
import ZeroMQ

/// Carries requests of a load run to the system and brings replies back. Lives on the
/// driver's thread (its sockets are used there only).
public protocol LoadTransport: AnyObject {
    /// Requests it can carry at once (HTTP: its connections; ZeroMQ: many).
    var capacity: Int { get }
    /// Sends `request` under `tag` (the reply comes back with it).
    func send(_ request: LoadRequest, tag: UInt64) throws
    /// Waits up to `timeoutMs` for replies and hands each one over.
    func receive(timeoutMs: Int, _ handle: (UInt64, LoadReply) -> Void) throws
    /// Gives up on `tag` (its reply, if one comes, is ignored).
    func abandon(tag: UInt64)
    func close()
}

extension LoadReply {
    /// Reads a contract reply: success or error code, and the data when it is wanted.
    /// A success whose data is not wanted is told from its first bytes: the load
    /// generator shares the machine with what it measures, and parsing a 57 KB reply
    /// it throws away cost it more CPU than the service spent making it.
    public static func parse(envelope: Data, wantsData: Bool) -> LoadReply {
        if !wantsData, isPlainSuccess(envelope) { return LoadReply(ok: true) }
        guard let parsed = try? Reply.parse(envelope) else { return LoadReply(ok: false, code: "malformed_reply") }
        if parsed.ok { return LoadReply(ok: true, data: wantsData ? parsed.data : nil) }
        return LoadReply(ok: false, code: parsed.error?.code.rawValue ?? "malformed_reply")
    }

    /// Whether `envelope` starts as our replies' successes do: `{"id":"<id>","ok":true`
    /// with an id without escapes (anything else is parsed whole).
    public static func isPlainSuccess(_ envelope: Data) -> Bool {
        envelope.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            let head = Array(#"{"id":""#.utf8), tail = Array(#","ok":true"#.utf8)
            guard bytes.count >= head.count + tail.count + 1, bytes.starts(with: head) else { return false }
            var index = head.count
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            index += 1
            guard bytes.count - index > tail.count, bytes[index..<index + tail.count].elementsEqual(tail) else { return false }
            // `true` ends there: the next byte closes the value.
            let next = bytes[index + tail.count]
            return next == UInt8(ascii: ",") || next == UInt8(ascii: "}")
        }
    }
}

/// Requests as contract envelopes on one DEALER socket, to the gateway's request socket
/// or straight to a service (with CURVE when the link has it). Replies are matched by a
/// routing frame carrying the tag.
public final class ZeroMQLoadTransport: LoadTransport {
    private let socket: ZMQSocket
    private var poller = Poller()
    private var wanted: Set<UInt64> = []
    private let echo: Bool
    public let capacity: Int

    /// `echo`: the peer sends each message back as it came (the raw limit): any reply is a success.
    public init(link: Link, capacity: Int = 100_000, echo: Bool = false) throws {
        self.echo = echo
        socket = try ZMQSocket(
            type: .dealer,
            options: .with {
                $0.curve = link.curve
                $0.sendHighWaterMark = 200_000
                $0.receiveHighWaterMark = 200_000
            })
        try socket.connect(link.endpoint)
        poller.add(socket)
        self.capacity = capacity
    }

    public func send(_ request: LoadRequest, tag: UInt64) throws {
        var value = tag
        let tagFrame = withUnsafeBytes(of: &value) { Data($0) }
        if request.wantsReply { wanted.insert(tag) }
        _ = try socket.send(multipart: [tagFrame, Data(), request.envelope])
    }

    public func receive(timeoutMs: Int, _ handle: (UInt64, LoadReply) -> Void) throws {
        _ = try poller.poll(timeoutMs: timeoutMs)
        while let frames = try socket.receiveMultipart(dontWait: true) {
            guard frames.count == 3, frames[0].count == 8 else { continue }
            let tag = frames[0].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let wantsData = wanted.remove(tag) != nil
            handle(tag, echo ? LoadReply(ok: true) : LoadReply.parse(envelope: frames[2], wantsData: wantsData))
        }
    }

    public func abandon(tag: UInt64) { wanted.remove(tag) }

    public func close() { socket.close() }
}

import Foundation
import NIOCore
import NIOHTTP1
import Platform
import Synchronization

/// What HTTP/1.x asks of a server that the parser and Hummingbird leave to it (README,
/// "HTTP edge"), read where the request's version is still known (before the conversion
/// to HTTP types):
///
/// - an HTTP/1.1 request without exactly one `Host`, an HTTP/1.0 one with
///   `Transfer-Encoding` (RFC 9112, 3.2 and 6.1) are refused: ``RefusedRequest``, answered
///   by ``MalformedRequestAnswer`` after the answers of the requests before it, then the
///   connection closes; `CONNECT` (no tunnels here) closes the connection at once;
/// - a transfer coding other than `chunked` alone is refused (RFC 9112, 6.1: the server
///   decodes none);
/// - a request that does not keep the connection alive (HTTP/1.0 without `keep-alive`,
///   or `Connection: close`), or asks to upgrade the protocol, gets `Connection: close` on
///   its answer and the connection closes after it (RFC 9112, 9.3);
/// - `Expect: 100-continue` is answered `100 Continue` at once, so a client waiting for it
///   sends its body without waiting out its timer (RFC 9110, 10.1.1); behind pipelined
///   requests not yet answered, once their answers are out (answers go in order, RFC 9112,
///   9.3: an early `100` would be read as the earlier request's); not when its declared
///   `Content-Length` is over the body limit of its path (its final answer, 413, comes
///   instead, and the client need not send the body at all);
/// - a request in another major version than 1 is answered 505 (RFC 9110, 15.6.6);
/// - an answer that says `Connection: close` (``OperationCalls``' refusal of a request
///   before its body) closes the connection after it;
/// - an HTTP/1.0 request that asked to keep the connection alive has its answer say
///   `Connection: keep-alive` (RFC 9112, C.2.2: without it the client takes the answer as
///   the connection's last).
final class HTTP1Strictness: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// For each request passed on and not yet answered, in order: whether the connection
    /// closes after its answer.
    private var closeAfter: [Bool] = []
    /// Beside each of them: whether it is HTTP/1.0 keeping the connection alive.
    private var keepAlive10: [Bool] = []
    /// The largest body a request to a path (its URI) may have.
    private let bodyLimit: (String) -> Int

    init(bodyLimit: @escaping (String) -> Int) {
        self.bodyLimit = bodyLimit
    }
    /// Beside each of them: the version to answer `100 Continue` in once it is the first
    /// not answered, when it asked for one that has not gone yet.
    private var continueWanted: [HTTPVersion?] = []
    /// Nothing more is read: a request was refused, or the connection closes after an answer.
    private var stopped = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !stopped else { return }
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        // No tunnels: after CONNECT the parser reads the rest as the tunnel's bytes, and an
        // answer without a length would hold the client until the idle timeout.
        if head.method == .CONNECT {
            stopped = true
            context.close(promise: nil)
            return
        }
        if let refused = Self.refusal(head) {
            stopped = true
            context.fireErrorCaught(refused)
            return
        }
        let close = !head.isKeepAlive || Self.asksToUpgrade(head) || Self.connectionOptions(head).contains("close")
        closeAfter.append(close)
        keepAlive10.append(!close && head.version.minor == 0)
        // No 100 for a body that will be refused unread: over the limit (413), or in a
        // content coding (415).
        // (A length past Int's range is over any limit.)
        let tooLong = head.headers["content-length"].first.map { (Int($0) ?? .max) > bodyLimit(head.uri) } ?? false
        let coded = EdgeAnswer.contentCodings(head.headers["content-encoding"]) != nil
        let wantsContinue = head.version.major == 1 && head.version.minor >= 1 && !tooLong && !coded
            && head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" })
        continueWanted.append(wantsContinue ? head.version : nil)
        if closeAfter.count == 1 { sendContinueIfWanted(context) }
        context.fireChannelRead(data)
    }

    /// Answers `100 Continue` for the first request not answered, if it asked and has not had it.
    private func sendContinueIfWanted(_ context: ChannelHandlerContext) {
        guard let version = continueWanted.first ?? nil else { return }
        continueWanted[0] = nil
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .continue))), promise: nil)
    }

    /// Why a request head is refused, if it is.
    static func refusal(_ head: HTTPRequestHead) -> RefusedRequest? {
        if head.version.major != 1 {
            return RefusedRequest(message: "HTTP/\(head.version.major).\(head.version.minor) is not served here: send HTTP/1.1", status: .httpVersionNotSupported)
        }
        return refusal1x(head).map { RefusedRequest(message: $0) }
    }

    private static func refusal1x(_ head: HTTPRequestHead) -> String? {
        let hosts = head.headers["host"].count
        if head.version.major == 1, head.version.minor >= 1, hosts != 1 {
            return hosts == 0 ? "an HTTP/1.1 request needs a Host header" : "a request must have only one Host header"
        }
        if head.version.major == 1, head.version.minor == 0, head.headers.contains(name: "transfer-encoding") {
            return "an HTTP/1.0 request cannot have Transfer-Encoding"
        }
        let codings = head.headers["transfer-encoding"].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if !codings.isEmpty, codings != ["chunked"] {
            return "Transfer-Encoding \(codings.joined(separator: ", ")) is not supported: send the body chunked or with a Content-Length"
        }
        return nil
    }

    /// Whether a request asks to switch protocols (`Connection: upgrade` with `Upgrade`,
    /// RFC 9110, 7.8). None is offered, so it is answered in HTTP/1.1; but the parser reads
    /// nothing after such a request, so the connection closes after its answer (the
    /// client's next request then comes on a new one, instead of waiting for nothing).
    static func asksToUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.headers.contains(name: "upgrade") && connectionOptions(head).contains("upgrade")
    }

    /// The options of the request's `Connection` headers, lowercased.
    static func connectionOptions(_ head: HTTPRequestHead) -> [String] {
        head.headers["connection"].flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200 && !closeAfter.isEmpty:
            // An answer that says `Connection: close` itself (a request refused before its
            // body, which the client may never send: ``OperationCalls``) ends the connection too.
            if head.headers["connection"].contains(where: { $0.lowercased() == "close" }) { closeAfter[0] = true }
            if closeAfter[0] {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            } else if keepAlive10[0] {
                head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where !closeAfter.isEmpty:
            let close = closeAfter.removeFirst()
            keepAlive10.removeFirst()
            continueWanted.removeFirst()
            guard close else {
                context.write(data, promise: promise)
                // The next request's turn: its `100 Continue` may go now.
                return sendContinueIfWanted(context)
            }
            stopped = true
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.whenComplete { _ in context.close(promise: nil) }
            context.writeAndFlush(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }
}

/// A request ``HTTP1Strictness`` refuses, with the reason given to the client.
struct RefusedRequest: Error {
    var message: String
    /// 400, or what else the refusal is (505 for another major version).
    var status: HTTPResponseStatus = .badRequest
}

/// The `Date` header's form (RFC 9110, 5.6.7: IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`).
enum HTTPDate {
    static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        let (year, month, day) = Instant.civil(fromDays: days)
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][Int(((days % 7) + 7) % 7)]
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][Int(month) - 1]
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(day)) \(monthName) \(year) \(two(second / 3_600)):\(two(second / 60 % 60)):\(two(second % 60)) GMT"
    }

    /// Now, formatted once a second (answers are many; seconds are few).
    static var current: String { cache.current }

    private static let cache = Cache()

    private final class Cache: Sendable {
        private let value = Mutex<(second: Int64, text: String)>((-1, ""))

        var current: String {
            let now = Date()
            let second = Int64(now.timeIntervalSince1970.rounded(.down))
            return value.withLock { value in
                if value.second != second { value = (second, HTTPDate.format(now)) }
                return value.text
            }
        }
    }
}

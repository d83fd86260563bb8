import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Platform

/// Answers a request the HTTP parser refuses (two `Content-Length`s, `Content-Length`
/// beside `Transfer-Encoding`, bare LF line ends, over-long or too many headers) like
/// any other error: 400 (431 for a head over the parser's limit) with the error object and
/// the security headers, then closes the connection. (Hummingbird's own answer was a bare 400 with an empty body.) Requests
/// pipelined before the refused one are answered first, in order: the refusal waits for
/// their answers to end. What ``HTTP1Strictness`` refuses (it puts itself before the
/// conversion to HTTP types when this is added) is answered the same way, with its reason.
final class MalformedRequestAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let tls: Bool
    /// Requests whose head was read, and answers that ended (an answer always follows its
    /// request's head, sometimes before the request's end: a refusal before the body).
    private var requests = 0
    private var answers = 0
    /// A request's head was read and its end not yet.
    private var inRequest = false
    /// Once the parser refused a request: how many answers end before the refusal's.
    private var answersBeforeRefusal: Int?
    private var answered = false
    /// The last answer's end written, done when it has gone to the socket.
    private var lastEnd: EventLoopFuture<Void>?
    /// What the refusal says.
    private var reason = "the request is not valid HTTP/1.1"
    /// Its status: 400, or 431 when the request's line and headers are over the parser's
    /// limit (RFC 6585, 5; the code in the body stays `bad_request`).
    private var status = HTTPResponse.Status.badRequest

    /// A request id for the refusal (its request's own was not read).
    private let requestID: () -> String

    /// The largest body a request to a path may have (``HTTP1Strictness``'s `Expect` rule).
    private let bodyLimit: (String) -> Int

    init(tls: Bool, bodyLimit: @escaping (String) -> Int, requestID: @escaping () -> String) {
        self.tls = tls
        self.bodyLimit = bodyLimit
        self.requestID = requestID
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The strict reading needs the request's version, which the conversion drops.
        guard let codec = try? context.pipeline.syncOperations.handler(type: HTTP1ToHTTPServerCodec.self) else { return }
        try? context.pipeline.syncOperations.addHandler(HTTP1Strictness(bodyLimit: bodyLimit), position: .before(codec))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Nothing after a refused request is read (the parser stops there anyway).
        guard answersBeforeRefusal == nil else { return }
        switch unwrapInboundIn(data) {
        case .head:
            requests += 1
            inRequest = true
        case .body: break
        case .end: inRequest = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        context.write(data, promise: written)
        lastEnd = written.futureResult
        answers += 1
        if let before = answersBeforeRefusal, answers >= before { answer(context) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is RefusedRequest || error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        // The first refusal is the one answered: what the parser says of bytes after it
        // (it reads on while that refusal waits its turn) does not change it.
        guard answersBeforeRefusal == nil else { return }
        if let refused = error as? RefusedRequest {
            reason = refused.message
            status = HTTPResponse.Status(code: Int(refused.status.code), reasonPhrase: refused.status.reasonPhrase)
        } else if let parser = error as? HTTPParserError, parser == .invalidVersion {
            reason = "the request line's HTTP version is not served here: send HTTP/1.1"
            status = .httpVersionNotSupported
        } else if let parser = error as? HTTPParserError, parser == .headerOverflow {
            reason = "the request line and headers are longer than the edge takes"
            status = HTTPResponse.Status(code: 431, reasonPhrase: "Request Header Fields Too Large")
        }
        // A request refused in its body that was already answered (refused on its head, a
        // 401 or 413 before its body): one request gets one final answer (RFC 9112, 9.3), so
        // that one stands and the connection closes once it has gone out.
        if inRequest && answers >= requests {
            answered = true
            answersBeforeRefusal = requests
            context.flush()
            guard let lastEnd else { return context.close(promise: nil) }
            lastEnd.whenComplete { _ in context.close(promise: nil) }
            return
        }
        // The answers of the requests before the refused one go first, in order; a request
        // refused in its body (its head read) is the refused one, not waited for.
        let before = inRequest ? requests - 1 : requests
        answersBeforeRefusal = before
        if answers >= before { answer(context) }
    }

    private func answer(_ context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        let answer = EdgeAnswer.error(ServiceError.badRequest(reason))
        var headers = answer.headers
        headers[.date] = HTTPDate.current
        headers[.contentType] = answer.contentType
        headers[.contentLength] = String(answer.body.count)
        headers[.connection] = "close"
        headers[.requestID] = requestID()
        EdgeServer.addSecurityHeaders(to: &headers, cacheable: false, tls: tls)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: answer.body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}

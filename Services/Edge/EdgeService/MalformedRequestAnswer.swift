import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Platform

/// Answers a request the HTTP parser refuses (two `Content-Length`s, `Content-Length`
/// beside `Transfer-Encoding`, bare LF line ends, over-long or too many headers) like
/// any other error: 400 with the error object and the security headers, then closes the
/// connection. (Hummingbird's own answer was a bare 400 with an empty body.)
final class MalformedRequestAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let tls: Bool
    private var answered = false

    init(tls: Bool) {
        self.tls = tls
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        let answer = EdgeAnswer.error(ServiceError.badRequest("the request is not valid HTTP/1.1"))
        var headers = answer.headers
        headers[.contentType] = answer.contentType
        headers[.contentLength] = String(answer.body.count)
        headers[.connection] = "close"
        EdgeServer.addSecurityHeaders(to: &headers, cacheable: false, tls: tls)
        context.write(NIOAny(HTTPResponsePart.head(HTTPResponse(status: answer.status, headerFields: headers))), promise: nil)
        context.write(NIOAny(HTTPResponsePart.body(ByteBuffer(bytes: answer.body))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}

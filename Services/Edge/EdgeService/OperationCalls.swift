import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Platform

/// Serves `POST /v1/{op}`, the apps' calls, on the connection's event loop (README, "HTTP
/// edge"); every other request goes on to Hummingbird's router.
///
/// A call is the edge's hot path, and Hummingbird's async layer (the request stream, the
/// handler's task and its resumptions, the response writer) cost more per request than
/// all the rest of the edge: 42-47 µs of the edge's 90-120 µs of CPU per `auth.health` at
/// 64 connections, measured against this same handler answering locally (README, "HTTP
/// edge"). Here the request's parts are read as they come, the envelope goes to the
/// gateway client's socket thread, and its reply comes back to this loop, which writes the
/// answer: no task, no stream.
///
/// A call passes the same door as a routed request (the client's address, its rate limit,
/// CORS) and the same checks of its head (``EdgeServer/callHead(_:op:client:)``).
/// Answers go in the order the requests came (HTTP/1.1 pipelining): a call answered before
/// an earlier request waits for it, and a routed request behind an unanswered call is
/// handed to the router only once that call is answered (held here meanwhile, and no more
/// of the connection read). At most ``maxWaiting`` requests of one connection wait for
/// their answers, and none is read while the client leaves its answers unread (the channel
/// is not writable); reading stops until then.
final class OperationCalls: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests of one connection that may wait for their answers at once.
    static let maxWaiting = 16

    /// Requests one connection may have waiting at all: a read may bring many pipelined
    /// requests at once (64 KiB of them), read before ``maxWaiting`` stops the next read.
    /// Calls beyond this are answered `rate_limited` at once, in their turn.
    static let maxPipelined = 64

    /// One request of the connection, in arrival order.
    private final class Exchange {
        enum Route {
            /// Served here; `answer` once it is made.
            case call
            /// Handed to the router; `parts` held until every request before it is answered.
            case router
        }

        let route: Route
        var answer: (head: HTTPTypes.HTTPResponse, body: ByteBuffer)?
        var parts: [HTTPRequestPart] = []
        var handedOn = false

        init(route: Route) { self.route = route }
    }

    /// The call whose parts are being read.
    private struct Reading {
        let exchange: Exchange
        let head: EdgeServer.CallHead
        var body: ByteBuffer?
        /// Bytes taken from the edge's body budget.
        var held = 0
        /// Answered before its end (refused): the rest of its body is dropped.
        var answered = false
        /// It asked `Expect: 100-continue` for a body: refused before that body, its client
        /// may never send it (RFC 9110, 10.1.1), and may send its next request instead, which
        /// would be read as the body: the refusal closes the connection.
        var awaitsContinue = false
    }

    private let edge: EdgeServer
    /// The TCP peer's address.
    private var peer: String?
    /// The client's address the last call's `X-Forwarded-For` values gave.
    private var lastClient: (forwardedFor: [String], client: String)?
    private var waiting = CircularBuffer<Exchange>()
    /// The request whose parts are being read, if any.
    private var current: Exchange?
    private var reading: Reading?
    private var readHeld = false
    /// Whether the channel takes more writes without buffering past its high-water mark.
    private var writable = true
    private var closed = false
    /// A graceful shutdown's event, held while calls wait for their answers (the router's
    /// connection handler behind this one would close the connection under them).
    private var heldQuiesce: Any?
    /// The shutdown's event went on to the router's connection handler, which closes the
    /// connection after the answers it knows of: nothing more is read or started here.
    private var quiesced = false
    /// The parts of a request that arrived after that are dropped, up to its end.
    private var dropping = false
    /// The connection's output is closed; what still comes in is read and dropped.
    private var draining = false
    /// The last answer's end written, done when it has gone to the socket.
    private var lastWrite: EventLoopFuture<Void>?
    /// The request after which the connection ends, its answer saying `Connection: close`:
    /// a call refused before a body its client may not send, or a routed request whose
    /// body may never come. Nothing read after its end is
    /// started (RFC 9112, 9.6), and the connection closes gently after its answer
    /// (``routedRequestEndsConnection(_:limits:)``).
    private var lastExchange: Exchange?
    /// `lastExchange`'s end was read: every later part is dropped.
    private var ending = false
    /// The client closed its side (a half-close after its last request): held while a
    /// request it sent still waits for its answer, since the router's connection handler
    /// behind this one closes the connection when its input ends and knows nothing of calls.
    private var heldInputClosed = false

    init(edge: EdgeServer) {
        self.edge = edge
    }

    /// The op of a call, `POST /v1/{op}` (``EdgePaths/segments(_:)``); `nil` for any other
    /// request.
    static func callOp(_ request: HTTPTypes.HTTPRequest) -> Substring? {
        guard request.method == .post, let path = request.path else { return nil }
        let segments = EdgePaths.segments(path)
        // The OpenAPI document's path is the router's (POST there is 405), not an op's.
        guard segments.count == 2, segments[0] == "v1", segments[1] != "openapi.json" else { return nil }
        return segments[1]
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        // Requests decoded after the shutdown's event came would be cut off by the close it
        // brings: they are not started (the client sends them again on a new connection).
        if dropping {
            if case .end = part, !draining { dropping = false }
            return
        }
        if ending { return }
        switch part {
        case .head(let request):
            if quiesced || heldQuiesce != nil {
                dropping = true
            } else if let op = Self.callOp(request) {
                startCall(request, op: String(op), context: context)
            } else {
                let exchange = Exchange(route: .router)
                waiting.append(exchange)
                current = exchange
                if Self.routedRequestEndsConnection(request, limits: edge.settings) { lastExchange = exchange }
                pass(part, of: exchange, context: context)
            }
        case .body(let buffer):
            if reading != nil {
                readBody(buffer, context: context)
            } else if let current {
                pass(part, of: current, context: context)
            }
        case .end:
            if let call = reading {
                reading = nil
                current = nil
                if !call.answered { send(call, context: context) }
                if call.exchange === lastExchange { ending = true }
            } else if let exchange = current {
                current = nil
                pass(part, of: exchange, context: context)
                if exchange === lastExchange { ending = true }
            }
            // A request read to its end may be what a held shutdown or a paused read waited for.
            resumeIfQuiet(context: context)
        }
    }

    /// A routed request's part: to the router if every request before it is answered, else held.
    private func pass(_ part: HTTPRequestPart, of exchange: Exchange, context: ChannelHandlerContext) {
        if exchange.handedOn {
            context.fireChannelRead(wrapInboundOut(part))
        } else {
            exchange.parts.append(part)
            if waiting.first === exchange { handOn(exchange, context: context) }
        }
    }

    private func handOn(_ exchange: Exchange, context: ChannelHandlerContext) {
        exchange.handedOn = true
        let parts = exchange.parts
        exchange.parts = []
        for part in parts { context.fireChannelRead(wrapInboundOut(part)) }
        context.fireChannelReadComplete()
    }

    private func startCall(_ request: HTTPTypes.HTTPRequest, op: String, context: ChannelHandlerContext) {
        let exchange = Exchange(route: .call)
        waiting.append(exchange)
        current = exchange
        if peer == nil { peer = context.channel.remoteAddress?.ipAddress }
        let forwardedFor = request.headerFields[values: .forwardedFor]
        // The peer is the connection's: its address is worked out again only when what the
        // request says about forwarding changes (parsing it was a twentieth of the loop's time).
        if lastClient?.forwardedFor != forwardedFor {
            lastClient = (forwardedFor, edge.settings.resolver.resolve(peer: peer, forwardedFor: forwardedFor))
        }
        var head = edge.callHead(request, op: op, client: lastClient?.client ?? "")
        if head.refusal == nil, waiting.count > Self.maxPipelined {
            head.refusal = .error(.rateLimited(retryAfterMs: 1_000, "at most \(Self.maxPipelined) requests may wait on one connection"))
        }
        reading = Reading(exchange: exchange, head: head)
        reading?.awaitsContinue = Self.awaitsContinue(request)
        if let refusal = head.refusal { refuse(refusal, context: context) }
    }

    private func readBody(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        guard var call = reading, !call.answered else { return }
        let size = (call.body?.readableBytes ?? 0) + buffer.readableBytes
        guard size <= edge.settings.maxBodyBytes else {
            return refuse(.error(.payloadTooLarge(limit: edge.settings.maxBodyBytes)), context: context)
        }
        guard edge.bodies.take(buffer.readableBytes) else {
            return refuse(.error(.unavailable("the edge holds as many request bodies as it may at once: try again in a moment")), context: context)
        }
        call.held += buffer.readableBytes
        if call.body == nil {
            call.body = buffer
        } else {
            var buffer = buffer
            call.body!.writeBuffer(&buffer)
        }
        reading = call
    }

    /// Answers the call being read now, before its end; the rest of its body is dropped,
    /// or, when the client may not send it (a body over the limit, 413, or one it waits for
    /// a `100 Continue` to send), the connection ends after the answer (`lastExchange`).
    private func refuse(_ answer: EdgeAnswer, context: ChannelHandlerContext) {
        guard var call = reading else { return }
        var answer = answer
        if call.awaitsContinue || answer.status == .contentTooLarge {
            answer.headers[.connection] = "close"
            lastExchange = call.exchange
        }
        call.answered = true
        edge.bodies.give(call.held)
        call.held = 0
        call.body = nil
        reading = call
        finish(call.exchange, answer, head: call.head, context: context)
    }

    // MARK: The gateway

    /// Sends a call that was read whole; its answer is written when the reply comes back.
    private func send(_ call: Reading, context: ChannelHandlerContext) {
        let body = call.body.map { Data(buffer: $0, byteTransferStrategy: .copy) } ?? Data()
        let (head, held, edge) = (call.head, call.held, self.edge)
        let loop = context.eventLoop
        let bound = NIOLoopBound((self, context), eventLoop: loop)
        let exchange = NIOLoopBound(call.exchange, eventLoop: loop)
        // Hands the answer back to this loop; the body's bytes go back to the budget then.
        let answer: @Sendable (EdgeAnswer) -> Void = { answer in
            loop.execute {
                edge.bodies.give(held)
                let (handler, context) = bound.value
                handler.finish(exchange.value, answer, head: head, context: context)
            }
        }
        EdgeServer.offLoopIfLarge(body.count) {
            let frame: Data
            do throws(ServiceError) {
                frame = EdgeEnvelope.encode(
                    id: head.id, op: head.op, token: head.token, idem: head.idem, client: head.client, data: try EdgeEnvelope.data(fromBody: body))
            } catch {
                return answer(EdgeAnswer.error(error))
            }
            edge.gateway.send(frame, timeout: edge.settings.gatewayTimeout) { result in
                let reply: Data
                do {
                    reply = try result.get()
                } catch {
                    return answer(EdgeAnswer.error(EdgeServer.gatewayError(error)))
                }
                EdgeServer.offLoopIfLarge(reply.count) { answer(EdgeServer.callAnswer(reply, body: body)) }
            }
        }
    }

    // MARK: Answers

    private func finish(_ exchange: Exchange, _ answer: EdgeAnswer, head: EdgeServer.CallHead, context: ChannelHandlerContext) {
        guard !closed else { return }
        var headers = edge.responseHeaders(answer, requestID: head.id)
        edge.addCORS(to: &headers, origin: head.origin)
        headers.append(HTTPField(name: .contentLength, value: String(answer.body.count)))
        headers.append(HTTPField(name: .date, value: HTTPDate.current))
        exchange.answer = (HTTPTypes.HTTPResponse(status: answer.status, headerFields: headers), ByteBuffer(bytes: answer.body))
        writeReadyAnswers(context: context)
    }

    /// Writes the answers at the front of the line, in order, up to the first request not
    /// yet answered; hands a routed request at the front to the router.
    private func writeReadyAnswers(context: ChannelHandlerContext) {
        var wrote = false
        while let first = waiting.first {
            if first.route == .router {
                if !first.handedOn { handOn(first, context: context) }
                break
            }
            guard let answer = first.answer else { break }
            waiting.removeFirst()
            context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
            if answer.body.readableBytes > 0 { context.write(wrapOutboundOut(.body(answer.body)), promise: nil) }
            let written = context.eventLoop.makePromise(of: Void.self)
            context.write(wrapOutboundOut(.end(nil)), promise: written)
            lastWrite = written.futureResult
            wrote = true
        }
        if wrote { context.flush() }
        resumeIfQuiet(context: context)
    }

    /// Whether the connection ends after a request's answer, known from its head: a routed
    /// request (a media upload, or a method or path the router refuses) that waits for
    /// `100 Continue` before sending its body, or declares one over its path's limit, may
    /// never send that body, and a next request would be read as it. (A call is refused or
    /// not by ``EdgeServer/callHead(_:op:client:)`` and ends the connection only then.)
    static func routedRequestEndsConnection(_ request: HTTPTypes.HTTPRequest, limits settings: EdgeSettings) -> Bool {
        if awaitsContinue(request) { return true }
        guard let length = request.headerFields[.contentLength] else { return false }
        return (Int(length) ?? .max) > EdgePaths.bodyLimit(request.path ?? "", settings)
    }

    /// Whether a request waits for `100 Continue` before it sends its body.
    static func awaitsContinue(_ request: HTTPTypes.HTTPRequest) -> Bool {
        request.headerFields[values: .expect].contains { $0.lowercased() == "100-continue" }
    }

    /// The router's answers pass here: the end of one lets the answers behind it go; the
    /// head of the last one (`lastExchange`) says `Connection: close`.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(var response) = unwrapOutboundIn(data), response.status.code >= 200, let first = waiting.first, first === lastExchange {
            response.headerFields[.connection] = "close"
            return context.write(wrapOutboundOut(.head(response)), promise: promise)
        }
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        context.write(data, promise: written)
        lastWrite = written.futureResult
        guard let first = waiting.first, first.route == .router, first.handedOn else { return }
        waiting.removeFirst()
        writeReadyAnswers(context: context)
    }

    // MARK: Flow control and the connection's end

    /// Whether to read no more for now.
    private var paused: Bool {
        if draining { return false }
        // A client that does not read its answers: its answers wait in the channel's
        // outbound buffer, so no more of its requests are read until they are taken.
        if !writable { return true }
        if waiting.count >= Self.maxWaiting { return true }
        // A routed request waiting for its turn is held here, not streamed to the router:
        // no more of it is read until it is handed on.
        if let current, current.route == .router, !current.handedOn { return true }
        // Shutting down: the request being read is read to its end, nothing after it.
        if heldQuiesce != nil || quiesced, current == nil { return true }
        return false
    }

    func read(context: ChannelHandlerContext) {
        if paused {
            readHeld = true
        } else {
            context.read()
        }
    }

    /// Whether a request read whole still waits for its answer to be written (a call), or
    /// for its turn (a routed request not yet handed on). A call cut off by the end of the
    /// input never gets an answer of its own and does not count.
    private var answersPending: Bool {
        waiting.contains { exchange in
            if let reading, exchange === reading.exchange, !reading.answered { return false }
            return exchange.route == .call || !exchange.handedOn
        }
    }

    private func resumeIfQuiet(context: ChannelHandlerContext) {
        if heldInputClosed, !answersPending {
            heldInputClosed = false
            passOnWhenWritten(ChannelEvent.inputClosed, context: context)
        }
        if let event = heldQuiesce, waiting.isEmpty, reading == nil {
            heldQuiesce = nil
            passOn(event, context: context)
            return
        }
        if readHeld, !paused {
            readHeld = false
            context.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        writable = context.channel.isWritable
        if writable { resumeIfQuiet(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let channelEvent = event as? ChannelEvent, channelEvent == .inputClosed {
            guard answersPending else { return context.fireUserInboundEventTriggered(event) }
            heldInputClosed = true
            return
        }
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        // Held while a call waits or is being read, or a routed request waits its turn
        // (the router's handler would not know of them); passed on when the line is empty.
        if waiting.contains(where: { $0.route == .call || !$0.handedOn }) || reading != nil {
            heldQuiesce = event
            return
        }
        passOn(event, context: context)
    }

    /// Passes the shutdown's event on to the router's connection handler, which closes the
    /// connection: once the last answer written has gone to the socket (a close drops the
    /// writes not yet taken).
    private func passOn(_ event: Any, context: ChannelHandlerContext) {
        quiesced = true
        passOnWhenWritten(event, context: context)
    }

    /// Passes `event` on once the last answer written has gone to the socket.
    private func passOnWhenWritten(_ event: Any, context: ChannelHandlerContext) {
        context.flush()
        guard let lastWrite, !closed else { return context.fireUserInboundEventTriggered(event) }
        let bound = NIOLoopBound((context, event), eventLoop: context.eventLoop)
        lastWrite.whenComplete { _ in
            let (context, event) = bound.value
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Closes gently once shutting down, or after an answer that ends the connection (RFC 9112, 9.6): the answers go out, the output side
    /// closes, and what the client still sends is read and dropped for a moment before the
    /// connection closes whole; a close with unread input would make the kernel reset the
    /// connection and drop the answers it has not yet sent.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // Also after a refusal that ends the connection (`lastExchange`): the client may be
        // sending the refused body still.
        guard mode == .all, quiesced || lastExchange != nil, !draining else { return context.close(mode: mode, promise: promise) }
        draining = true
        dropping = true
        context.close(mode: .output, promise: nil)
        if readHeld {
            readHeld = false
            context.read()
        }
        let bound = NIOLoopBound((context, promise), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: .seconds(1)) {
            let (context, promise) = bound.value
            context.close(mode: .all, promise: promise)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        forget()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        forget()
    }

    /// The connection is gone: the body's bytes go back to the budget, answers still to
    /// come are dropped.
    private func forget() {
        guard !closed else { return }
        closed = true
        if let call = reading { edge.bodies.give(call.held) }
        reading = nil
        waiting.removeAll()
    }
}

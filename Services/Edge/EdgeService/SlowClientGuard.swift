import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Cuts off connections that send slowly (slowloris): a request's head must arrive within
/// `headerTimeout` of the connection opening or of the previous answer, and its body within
/// `bodyTimeout` of its head. A trickle of bytes does not reset either clock, so a slow
/// client holds nothing for longer than that. A keep-alive connection may then sit idle for
/// `idleTimeout` (longer: apps keep connections open between calls, and a POST sent on a
/// connection the server has just closed fails rather than being retried); the head clock
/// starts again with the next request's first byte.
///
/// It sits after the HTTP codec in each connection's pipeline, seeing whole request parts;
/// a ``ByteArrivalWatch`` it puts at the front of the pipeline tells it when bytes arrive.
final class SlowClientGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum Phase { case awaitingHead, readingBody, answering, idle }

    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var phase = Phase.awaitingHead
    private var timer: Scheduled<Void>?

    init(headerTimeout: TimeAmount, bodyTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        try? context.pipeline.syncOperations.addHandler(ByteArrivalWatch(), position: .first)
        if context.channel.isActive { arm(context, headerTimeout) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ByteArrivalWatch.BytesArrived else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // The next request has begun: its head has `headerTimeout` from its first byte.
        if phase == .idle {
            phase = .awaitingHead
            arm(context, headerTimeout)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context, headerTimeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            phase = .readingBody
            arm(context, bodyTimeout)
        case .body:
            break
        case .end:
            phase = .answering
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An answer is complete: the connection may idle until the next request. (An answer
        // sent before the body was read, such as 413, leaves the body's clock running.)
        if case .end = unwrapOutboundIn(data), phase == .answering {
            phase = .idle
            arm(context, idleTimeout)
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, _ amount: TimeAmount) {
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: amount) {
            context.close(promise: nil)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
    }
}

/// Tells the ``SlowClientGuard`` further down the pipeline that bytes arrived (before any
/// decoding: the first byte of a request starts its head's clock).
final class ByteArrivalWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    struct BytesArrived {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireUserInboundEventTriggered(BytesArrived())
        context.fireChannelRead(data)
    }
}

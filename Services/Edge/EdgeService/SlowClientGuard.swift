import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Cuts off connections that send slowly (slowloris): a request's head must arrive within
/// `headerTimeout` of the connection opening or of the previous answer, and its body within
/// `bodyTimeout` of its head. A trickle of bytes does not reset either clock, so a slow
/// client holds nothing for longer than that. An idle keep-alive connection is closed
/// after `headerTimeout` as well.
///
/// It sits after the HTTP codec in each connection's pipeline, seeing whole request parts.
final class SlowClientGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum Phase { case awaitingHead, readingBody, answering }

    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private var phase = Phase.awaitingHead
    private var timer: Scheduled<Void>?

    init(headerTimeout: TimeAmount, bodyTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, headerTimeout) }
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
        // An answer is complete: the next request's head has `headerTimeout` from now. (An
        // answer sent before the body was read, such as 413, leaves the body's clock running.)
        if case .end = unwrapOutboundIn(data), phase == .answering {
            phase = .awaitingHead
            arm(context, headerTimeout)
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

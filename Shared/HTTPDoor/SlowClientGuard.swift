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
///
/// Each clock is a deadline kept in a variable; one timer per connection checks it when it
/// fires and is set again for a later deadline. Moving a clock is a store, not a cancelled
/// and rescheduled timer: at thousands of requests a second on keep-alive connections the
/// timers were a sixth of the edge's CPU (a profile at 64 connections).
public final class SlowClientGuard: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private enum Phase { case awaitingHead, readingBody, answering, idle }

    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var phase = Phase.awaitingHead
    /// The answer was written before the request's end was read (a refusal before the
    /// body): the request's end starts the idle clock.
    private var answeredEarly = false
    /// When the running clock runs out; `nil` while none runs (an answer is being made).
    private var deadline: NIODeadline?
    /// The timer, and when it fires: never later than `deadline`.
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?
    /// The body parts of the request being read, and their bytes.
    private var bodyParts = 0
    private var bodyBytes = 0

    /// A body may come in this many parts, whatever their size (a chunked body's chunks, or
    /// what each read of the socket brings)...
    static let freeBodyParts = 1_024
    /// ...and beyond them only in parts of this many bytes on average: a body sent in
    /// one-byte chunks costs the server a pass down the pipeline per byte (2 s of CPU per
    /// MB, measured), and its connection is closed.
    static let minimumAveragePartBytes = 256

    /// A guard for one connection.
    public init(headerTimeout: TimeAmount, bodyTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        let watch = ByteArrivalWatch { [weak self] in self?.bytesArrived(context) }
        try? context.pipeline.syncOperations.addHandler(watch, position: .first)
        if context.channel.isActive { arm(context, headerTimeout) }
    }

    /// The next request has begun: its head has `headerTimeout` from its first byte.
    private func bytesArrived(_ context: ChannelHandlerContext) {
        if phase == .idle {
            phase = .awaitingHead
            arm(context, headerTimeout)
        }
    }

    public func channelActive(context: ChannelHandlerContext) {
        arm(context, headerTimeout)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            phase = .readingBody
            answeredEarly = false
            (bodyParts, bodyBytes) = (0, 0)
            arm(context, bodyTimeout)
        case .body(let buffer):
            bodyParts += 1
            bodyBytes += buffer.readableBytes
            if bodyParts > Self.freeBodyParts, bodyBytes < bodyParts * Self.minimumAveragePartBytes {
                stop()
                context.close(promise: nil)
                return
            }
        case .end:
            if answeredEarly {
                answeredEarly = false
                phase = .idle
                arm(context, idleTimeout)
            } else {
                phase = .answering
                deadline = nil
            }
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An answer is complete: the connection may idle until the next request. An answer
        // sent before the body was read (413, 401, 429) leaves the body's clock running,
        // and the body's end then starts the idle clock.
        if case .end = unwrapOutboundIn(data) {
            if phase == .answering {
                phase = .idle
                arm(context, idleTimeout)
            } else if phase == .readingBody {
                answeredEarly = true
            }
        }
        context.write(data, promise: promise)
    }

    /// Starts a clock of `amount` from now. The timer moves only when it would fire after
    /// the new deadline; an earlier one fires, finds time left and is set again.
    private func arm(_ context: ChannelHandlerContext, _ amount: TimeAmount) {
        let deadline = NIODeadline.now() + amount
        self.deadline = deadline
        if let timer, timer.at <= deadline { return }
        schedule(context, at: deadline)
    }

    private func schedule(_ context: ChannelHandlerContext, at instant: NIODeadline) {
        timer?.task.cancel()
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: instant) { [weak self] in
            guard let self else { return }
            self.timerFired(context)
        }
        timer = (task, instant)
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        timer = nil
        guard let deadline else { return }
        if deadline <= .now() {
            context.close(promise: nil)
        } else {
            schedule(context, at: deadline)
        }
    }

    private func stop() {
        deadline = nil
        timer?.task.cancel()
        timer = nil
    }
}

/// Tells the ``SlowClientGuard`` further down the pipeline that bytes arrived (before any
/// decoding: the first byte of a request starts its head's clock).
final class ByteArrivalWatch: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let arrived: () -> Void

    init(_ arrived: @escaping () -> Void) {
        self.arrived = arrived
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        arrived()
        context.fireChannelRead(data)
    }
}

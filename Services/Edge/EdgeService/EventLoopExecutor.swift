import NIOCore
import NIOPosix

/// Runs the edge's tasks on its NIO event loops, each job on the loop of the thread that
/// enqueues it (README, "HTTP edge").
///
/// Without it, each request crossed from its connection's event loop to Swift's
/// cooperative pool for its handler and back to the loop for its answer: two wake-ups of
/// another thread per request, 15–20 µs of kernel time each on the machines measured.
/// Under `withTaskExecutorPreference`, every task Hummingbird starts for a connection (a
/// child of the server's task group) has its jobs run here. A connection's task is woken
/// by its channel's loop (a request part arrived), so it runs on that loop; the gateway's
/// reply is handed to the loop that asked (``EdgeServer/call(_:)``), so the handler comes
/// back there and writes its answer without a hop. Only a job enqueued off every loop (a
/// timer of Swift's, the start of the server) goes to the next loop in turn.
///
/// Handlers must not block: they only parse, check and hand frames to the gateway
/// client's socket thread.
public final class EventLoopExecutor: TaskExecutor {
    /// The loops jobs run on.
    public let group: MultiThreadedEventLoopGroup
    private let loops: Set<ObjectIdentifier>

    public init(_ group: MultiThreadedEventLoopGroup) {
        self.group = group
        loops = Set(group.makeIterator().map { ObjectIdentifier($0) })
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        (currentLoop ?? group.next()).execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// The calling thread's loop when it is one of the group's.
    public var currentLoop: (any EventLoop)? {
        guard let loop = MultiThreadedEventLoopGroup.currentEventLoop, loops.contains(ObjectIdentifier(loop)) else { return nil }
        return loop
    }
}

import CBackendSystem
import Foundation
import Synchronization

/// A fixed set of dedicated threads for blocking or CPU-heavy work (password hashing,
/// calls to external providers).
///
/// Such work must stay off Swift's cooperative pool and off libdispatch's global queues:
/// those have about one thread per core, and a blocked or busy one there delays every
/// database access of the service (GRDB's queues run on them).
///
/// A caller may bound the queue (``run(maxQueued:_:)``): past the bound `run` throws
/// ``Full`` at once instead of queueing work nobody will wait for. Work
/// whose task is cancelled before a thread takes it (a request past its deadline) is
/// dropped unrun, with `CancellationError`.
public final class WorkerThreads: Sendable {
    /// The queue is at its bound.
    public struct Full: Error, Sendable {}

    fileprivate final class Job: Sendable {
        let body: @Sendable (_ cancelled: Bool) -> Void
        let cancelled = Atomic<Bool>(false)
        init(_ body: @escaping @Sendable (Bool) -> Void) { self.body = body }
    }

    private let jobs = Mutex<[Job]>([])
    private let available = DispatchSemaphore(value: 0)

    /// Starts `count` threads named `name`. A positive `niceness` lowers their scheduling
    /// priority, so CPU-heavy work yields to request handling on a busy machine.
    public init(name: String, count: Int, niceness: Int32 = 0) {
        for index in 0..<count {
            let thread = Thread { [self] in
                Thread.nameForKernel("\(name)-\(index)")
                if niceness != 0 {
                    _ = backend_set_thread_niceness(niceness)
                }
                while true {
                    available.wait()
                    guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                    job.body(job.cancelled.load(ordering: .acquiring))
                }
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// A job handed to the threads by ``submit(_:)``: cancelled before a thread takes it,
    /// it runs with `cancelled` true (and should only clean up).
    public struct Ticket: Sendable {
        fileprivate let job: Job

        /// Marks the job cancelled.
        public func cancel() { job.cancelled.store(true, ordering: .releasing) }
    }

    /// Hands `work` to one of the threads without waiting for it (for a thread that is
    /// not a task, such as a socket's, which hears the outcome another way).
    public func submit(_ work: @escaping @Sendable (_ cancelled: Bool) -> Void) -> Ticket {
        let job = Job(work)
        _ = enqueue(job, maxQueued: .max)
        return Ticket(job: job)
    }

    /// Queues `job` for a thread unless `maxQueued` jobs already wait; whether it did.
    private func enqueue(_ job: Job, maxQueued: Int) -> Bool {
        let accepted = jobs.withLock { queue -> Bool in
            guard queue.count < maxQueued else { return false }
            queue.append(job)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// Jobs waiting for a thread now.
    public var queued: Int { jobs.withLock { $0.count } }

    /// Runs `work` on one of the threads and returns its result; throws ``Full`` when
    /// `maxQueued` jobs already wait and `CancellationError` when the task is cancelled
    /// before a thread takes the work.
    public func run<T: Sendable>(maxQueued: Int = .max, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        let slot = Mutex<Job?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let job = Job { cancelled in
                    if cancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(with: Result { try work() })
                    }
                }
                // Known to the cancellation handler before a thread can take it.
                slot.withLock { $0 = job }
                guard enqueue(job, maxQueued: maxQueued) else {
                    continuation.resume(throwing: Full())
                    return
                }
            }
        } onCancel: {
            slot.withLock { $0?.cancelled.store(true, ordering: .releasing) }
        }
    }
}

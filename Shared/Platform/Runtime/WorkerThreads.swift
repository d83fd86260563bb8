import CBackendSystem
import Foundation
import Synchronization

/// A fixed set of dedicated threads for blocking or CPU-heavy work (password hashing,
/// calls to external providers).
///
/// Such work must stay off Swift's cooperative pool and off libdispatch's global queues:
/// those have about one thread per core, and a blocked or busy one there delays every
/// database access of the service (GRDB's queues run on them).
public final class WorkerThreads: Sendable {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let available = DispatchSemaphore(value: 0)

    /// Starts `count` threads named `name`. A positive `niceness` lowers their scheduling
    /// priority, so CPU-heavy work yields to request handling on a busy machine.
    public init(name: String, count: Int, niceness: Int32 = 0) {
        for index in 0..<count {
            let thread = Thread { [self] in
                if niceness != 0 {
                    _ = backend_set_thread_niceness(niceness)
                }
                while true {
                    available.wait()
                    let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                    job?()
                }
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Runs `work` on one of the threads and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            jobs.withLock { $0.append { continuation.resume(with: Result { try work() }) } }
            available.signal()
        }
    }
}

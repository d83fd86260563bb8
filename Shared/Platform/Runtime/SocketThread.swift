import CBackendSystem
import Foundation
import Synchronization

/// Starts a dedicated thread that owns ZeroMQ sockets and lets async code wait for it.
///
/// Blocking ZeroMQ calls never run on Swift's cooperative pool: every socket loop runs
/// on one of these threads, and `join()` suspends without blocking a pool thread.
public final class SocketThread: Sendable {
    private let done = AsyncSignal()

    /// Starts `body` on a new thread named `name`.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let done = self.done
        let thread = Thread {
            Thread.nameForKernel(name)
            body()
            done.fire()
        }
        thread.name = name
        // Socket loops are light; a smaller stack keeps many threads cheap.
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Waits until the thread's body has returned.
    public func join() async {
        await done.wait()
    }

    /// Runs blocking work (a SQLite backup, a file copy) on a thread of its own and returns
    /// its result, so the cooperative pool never waits on it.
    public static func value<T: Sendable>(name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        let result = Mutex<Result<T, any Error>?>(nil)
        let thread = SocketThread(name: name) {
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
        }
        await thread.join()
        return try result.withLock { $0! }.get()
    }
}

extension Thread {
    /// Names the calling thread for the kernel too, so `top -H`, `perf` and
    /// `/proc/<pid>/task/*/comm` tell the socket threads, the writer and the workers apart
    /// (at most 15 bytes are kept): Foundation on Linux keeps `Thread.name` in the object
    /// only. Called first in each of the platform's threads.
    public static func nameForKernel(_ name: String) {
        _ = backend_name_this_thread(name)
    }
}

import Synchronization

/// Runs async work one piece at a time, in the order it arrives: a line at a counter.
/// (An actor alone would not do: it lets the next call in at every `await`.)
final class SerialLine: Sendable {
    private let tail = Mutex<Task<Void, Never>?>(nil)

    /// Runs `work` after everything queued before it has finished, and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = tail.withLock { tail -> Task<T, any Error> in
            let previous = tail
            let task = Task<T, any Error> {
                await previous?.value
                return try await work()
            }
            tail = Task { _ = try? await task.value }
            return task
        }
        return try await task.value
    }
}

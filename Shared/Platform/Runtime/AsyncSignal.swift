import Synchronization

/// A one-shot signal: tasks wait until some thread fires it.
public final class AsyncSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// Creates an unfired signal.
    public init() {}

    /// Fires the signal, resuming every waiter; later waits return at once.
    public func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Whether the signal has fired.
    public var isFired: Bool { state.withLock { $0.fired } }

    /// Suspends until the signal fires.
    public func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

import Foundation

/// When failed work is tried again (a message of the delivery outbox, a durable timer):
/// exponential backoff with jitter and a cap, and when it is given up.
///
/// The n-th failure waits `min(cap, initial × 2^(n−1))`, less a random share of up to
/// `jitter` of it (so retries of many messages that failed together spread out, and no
/// wait exceeds the cap). Defaults (the outbox's): 5 s, 10 s, 20 s … at most 1 h; dead after
/// 10 attempts.
public struct BackoffPolicy: Sendable, Equatable {
    /// The wait after the first failure.
    public var initial: Duration
    /// The longest wait.
    public var cap: Duration
    /// The share of each wait taken off at random (0 keeps exact doubling, at most 1).
    public var jitter: Double
    /// Attempts before the work is dead.
    public var maxAttempts: Int

    /// A policy; the defaults are production's.
    public init(initial: Duration = .seconds(5), cap: Duration = .seconds(3_600), jitter: Double = 0.2, maxAttempts: Int = 10) {
        self.initial = initial
        self.cap = max(initial, cap)
        self.jitter = min(1, max(0, jitter))
        self.maxAttempts = max(1, maxAttempts)
    }

    /// What follows an attempt.
    public enum Decision: Sendable, Equatable {
        /// Try again after this many milliseconds.
        case retry(afterMs: Int64)
        /// Give up: the work is dead.
        case dead
    }

    /// The wait after the `failures`-th failed attempt (1 for the first), with `random`
    /// in 0..<1 choosing the jitter.
    public func delayMs(afterFailure failures: Int, random: Double) -> Int64 {
        let initialMs = Double(initial.wholeMilliseconds), capMs = Double(cap.wholeMilliseconds)
        // 2^62 overflows nothing in Double and is far past any cap.
        let exponential = initialMs * pow(2, Double(min(max(failures, 1) - 1, 62)))
        let full = min(capMs, exponential)
        return Int64((full * (1 - jitter * min(max(random, 0), 1))).rounded())
    }

    /// The decision after a failed attempt, when `attempts` attempts (this one included)
    /// have been made: a permanent refusal or the last allowed attempt makes it dead.
    public func decide(attempts: Int, permanent: Bool, random: Double) -> Decision {
        guard !permanent, attempts < maxAttempts else { return .dead }
        return .retry(afterMs: delayMs(afterFailure: attempts, random: random))
    }
}

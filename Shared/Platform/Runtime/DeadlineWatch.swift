/// The earliest deadline among requests in flight, for a socket loop that answers the
/// requests whose deadline passed (the gateway's, a service's request socket).
///
/// The loop looks through its requests only when the earliest deadline may have passed,
/// not on every wake-up: walking every request in flight on each one cost the gateway
/// more than routing them. Answers that come in do not move the watch, so it may be
/// early (a look that finds nothing to answer), never late.
public struct DeadlineWatch: Sendable {
    /// No later than the earliest deadline noted since the last look; `nil`: none.
    public private(set) var earliest: ContinuousClock.Instant?

    /// A watch with no deadline.
    public init() {}

    /// Notes a request's deadline.
    public mutating func note(_ deadline: ContinuousClock.Instant) {
        earliest = min(earliest ?? deadline, deadline)
    }

    /// Whether the requests in flight are to be looked through now. When so, the watch
    /// starts over: the caller notes the deadline of every request it keeps.
    public mutating func isDue(at now: ContinuousClock.Instant) -> Bool {
        guard let earliest, earliest <= now else { return false }
        self.earliest = nil
        return true
    }

    /// How long a poll may wait, in milliseconds: just past the earliest deadline (not at
    /// all once it passed), at most `limit`.
    public func pollTimeout(at now: ContinuousClock.Instant, atMost limit: Int) -> Int {
        guard let earliest else { return limit }
        guard earliest > now else { return 0 }
        return min(limit, (earliest - now).wholeMilliseconds + 1)
    }
}

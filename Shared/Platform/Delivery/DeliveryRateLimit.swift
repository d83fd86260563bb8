/// At most `limit` attempts per destination in any `window`: a flood of messages to one
/// address or number waits its turn instead of reaching the provider (which may bill it,
/// or mark us as a spammer). Nothing is dropped.
public struct DeliveryRateLimit: Sendable, Equatable {
    /// Attempts allowed per destination in a window.
    public var limit: Int
    /// The sliding window.
    public var window: Duration

    /// A limit of `limit` attempts per `window`.
    public init(limit: Int, window: Duration) {
        self.limit = max(1, limit)
        self.window = window
    }

    /// The default: 10 attempts per destination a minute.
    public static let standard = DeliveryRateLimit(limit: 10, window: .seconds(60))
}

/// The attempts of the last window per channel and destination, in memory (a pure value:
/// the worker owns one, tests drive it with explicit times). A restart starts every
/// window afresh.
public struct DeliveryRateLimiter: Sendable {
    private let limits: [DeliveryChannel: DeliveryRateLimit]
    private let fallback: DeliveryRateLimit?
    private var recent: [Key: [Int64]] = [:]
    private var reservations = 0

    private struct Key: Hashable, Sendable {
        var channel: DeliveryChannel
        var destination: String
    }

    /// A limiter with a limit per channel, and `fallback` for channels not named (`nil`: unlimited).
    public init(limits: [DeliveryChannel: DeliveryRateLimit] = [:], fallback: DeliveryRateLimit? = .standard) {
        self.limits = limits
        self.fallback = fallback
    }

    /// Reserves an attempt to `destination` at `nowMs` (milliseconds since 1970). Returns
    /// `nil` when it may go now (and counts it), or the earliest time it may go.
    public mutating func reserve(_ channel: DeliveryChannel, _ destination: String, nowMs: Int64) -> Int64? {
        guard let limit = limits[channel] ?? fallback else { return nil }
        let windowMs = Int64(limit.window.wholeMilliseconds)
        let key = Key(channel: channel, destination: destination)
        var times = recent[key, default: []]
        times.removeAll { $0 <= nowMs - windowMs }
        defer { forgetIdleDestinations(nowMs: nowMs) }
        guard times.count < limit.limit else {
            recent[key] = times
            // The oldest attempt in the window leaves it first.
            return times[times.count - limit.limit] + windowMs
        }
        times.append(nowMs)
        recent[key] = times
        return nil
    }

    /// Drops destinations with no attempt in their window, now and then, so memory follows
    /// the destinations of the last window only.
    private mutating func forgetIdleDestinations(nowMs: Int64) {
        reservations += 1
        guard reservations % 1_024 == 0 else { return }
        let longest = (limits.values.map(\.window) + [fallback?.window ?? .zero]).max() ?? .zero
        recent = recent.filter { $0.value.last.map { $0 > nowMs - Int64(longest.wholeMilliseconds) } ?? false }
    }

    /// Destinations it currently remembers (for tests).
    public var trackedDestinations: Int { recent.count }
}

import Foundation

/// How a service's ``DeliveryWorker`` retries, paces and keeps messages.
public struct DeliverySettings: Sendable, Equatable {
    /// Backoff and giving up.
    public var backoff: BackoffPolicy
    /// Attempts per destination (and channel) in a window; `nil` for none.
    public var rateLimit: DeliveryRateLimit?
    /// How long sent rows (without their payload) are kept: the window in which an
    /// enqueue with the same id is recognized as a duplicate.
    public var keepSent: Duration
    /// Messages read per scan of the queue.
    public var batchSize: Int

    /// Settings; the defaults are production's.
    public init(
        backoff: BackoffPolicy = BackoffPolicy(), rateLimit: DeliveryRateLimit? = .standard, keepSent: Duration = .seconds(7 * 86_400),
        batchSize: Int = 100
    ) {
        self.backoff = backoff
        self.rateLimit = rateLimit
        self.keepSent = keepSent
        self.batchSize = max(1, batchSize)
    }

    /// The defaults, changed by `<prefix>_BACKOFF_MS` (first wait, default 5000),
    /// `<prefix>_BACKOFF_MAX_MS` (3600000), `<prefix>_MAX_ATTEMPTS` (10) and
    /// `<prefix>_RATE_LIMIT` (`<count>/<seconds>` per destination, default `10/60`; `off`).
    public static func fromEnvironment(_ environment: [String: String], prefix: String) throws -> DeliverySettings {
        var settings = DeliverySettings()
        func milliseconds(_ name: String, minimum: Int) throws -> Duration? {
            guard let value = environment["\(prefix)_\(name)"] else { return nil }
            guard let number = Int(value), number >= minimum else { throw ConfigurationError("\(prefix)_\(name) must be a whole number of at least \(minimum)") }
            return .milliseconds(number)
        }
        let initial = try milliseconds("BACKOFF_MS", minimum: 1) ?? settings.backoff.initial
        let cap = try milliseconds("BACKOFF_MAX_MS", minimum: 1) ?? settings.backoff.cap
        var attempts = settings.backoff.maxAttempts
        if let value = environment["\(prefix)_MAX_ATTEMPTS"] {
            guard let number = Int(value), (1...100).contains(number) else { throw ConfigurationError("\(prefix)_MAX_ATTEMPTS must be 1 to 100") }
            attempts = number
        }
        settings.backoff = BackoffPolicy(initial: initial, cap: cap, jitter: settings.backoff.jitter, maxAttempts: attempts)
        if let value = environment["\(prefix)_RATE_LIMIT"] {
            if value == "off" {
                settings.rateLimit = nil
            } else {
                let parts = value.split(separator: "/")
                guard parts.count == 2, let count = Int(parts[0]), count >= 1, let seconds = Int(parts[1]), seconds >= 1 else {
                    throw ConfigurationError("\(prefix)_RATE_LIMIT must be <count>/<seconds> (e.g. 10/60) or off")
                }
                settings.rateLimit = DeliveryRateLimit(limit: count, window: .seconds(seconds))
            }
        }
        return settings
    }
}

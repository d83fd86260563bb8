import Foundation

/// RFC 3339 instants in UTC with milliseconds, as the contract writes them:
/// `2026-11-22T10:00:00.000Z`.
public enum Instant {
    /// Formats a date.
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return format(epochMilliseconds: milliseconds)
    }

    /// Formats milliseconds since 1970.
    public static func format(epochMilliseconds: Int64) -> String {
        let seconds = Int(epochMilliseconds.quotientFloorDiv(1000))
        let millis = Int(epochMilliseconds - Int64(seconds) * 1000)
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
    }

    /// Parses an instant with a `Z` or numeric offset; fractional seconds optional.
    public static func parse(_ text: String) -> Date? {
        let strategy = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        if let date = try? strategy.parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

extension Int64 {
    fileprivate func quotientFloorDiv(_ divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

import Foundation
import Platform

/// How many of one kind of write a user may make in any 24 hours: new goals (a recipient
/// may create, withdraw and create again) and feed comments, which nothing else bounds.
/// Past it, `rate_limited` with the wait until the oldest write of the window leaves it.
public struct DailyAllowance: Sendable, Hashable {
    /// Writes allowed in any window.
    public let limit: Int
    /// The window's length.
    public let window: TimeInterval

    /// `limit` writes in any `window` (24 hours by default).
    public init(limit: Int, window: TimeInterval = 86_400) {
        self.limit = limit
        self.window = window
    }

    /// New goals per recipient.
    public static let goals = DailyAllowance(limit: 20)
    /// Comments per author, over all their feeds.
    public static let comments = DailyAllowance(limit: 500)

    /// Where the window that ends at `now` starts.
    public func windowStart(at now: Date) -> Date { now.addingTimeInterval(-window) }

    /// `nil` when one more write is allowed at `now`: fewer than `limit` writes since
    /// ``windowStart(at:)``, so `limitthLatest` (the `limit`-th latest write of the window,
    /// whose leaving it makes room) is `nil`. Otherwise the milliseconds until it leaves
    /// (at least 1).
    public func wait(limitthLatest: Date?, at now: Date) -> Int64? {
        guard let limitthLatest else { return nil }
        let leaves = limitthLatest.addingTimeInterval(window)
        return max(1, Int64((leaves.timeIntervalSince(now) * 1_000).rounded(.up)))
    }

    /// Throws `rate_limited` when the write of `what` must wait (``wait(limitthLatest:at:)``).
    func check(limitthLatest: Date?, at now: Date, _ what: String) throws {
        guard let wait = wait(limitthLatest: limitthLatest, at: now) else { return }
        throw ServiceError.rateLimited(retryAfterMs: wait, "at most \(limit) \(what) in 24 hours: try again later")
    }
}

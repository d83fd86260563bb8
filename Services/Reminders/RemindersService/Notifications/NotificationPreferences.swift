import Foundation
import Platform

/// Quiet hours in the user's zone: from `start` to `end` local time (across midnight when
/// `end` is earlier, as 22:00-07:00 is). A notification made inside them waits for their
/// end, unless it is urgent.
struct QuietHours: Sendable, Equatable, Codable {
    var start: LocalTime
    var end: LocalTime

    /// Whether local `time` falls inside (start included, end excluded).
    func contains(_ time: LocalTime) -> Bool {
        let (t, s, e) = (time.secondOfDay, start.secondOfDay, end.secondOfDay)
        if s == e { return false }
        return s < e ? (t >= s && t < e) : (t >= s || t < e)
    }

    /// When something made at `instant` may be delivered: `nil` outside quiet hours, else
    /// the instant the quiet hours end in `zone` (a day boundary crossed, a DST gap
    /// shifted forward).
    func release(after instant: Date, in zone: ZoneClock) -> Date? {
        let local = zone.local(instant)
        guard contains(local.time) else { return nil }
        // The end is today when it is still ahead, else tomorrow.
        let endDate = local.time < end ? local.date : local.date.adding(days: 1)
        return zone.instant(endDate, end)
    }
}

/// How a user wants one app to notify them.
struct NotificationPreferences: Sendable, Equatable {
    enum AlertStyle: String, CaseIterable, Sendable, Codable { case banner, alert, none }

    /// Categories switched off (account notices cannot be).
    var disabled: Set<NotificationCategory> = []
    /// The sound name (`default`, or one the app ships); `nil`: silent.
    var sound: String? = "default"
    var vibration = true
    var alertStyle = AlertStyle.banner
    var quietHours: QuietHours?

    static let standard = NotificationPreferences()

    /// Whether a kind is wanted at all.
    func wants(_ kind: PushKind) -> Bool {
        kind.category == .account || !disabled.contains(kind.category)
    }
}

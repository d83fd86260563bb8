import Foundation
import Platform

/// What a reminder is about (section 4.1 of the Reminder app): the categories people
/// file reminders under, including the ones other apps and subscriptions create.
enum ReminderCategory: String, CaseIterable, Sendable, Codable {
    case personal, holiday, anniversary, birthday, congratulation, work, health, other
    case beautifulDate = "beautiful_date"
    case workout, savings, booking
}

enum Importance: String, CaseIterable, Sendable, Codable { case low, normal, high }

/// How the device should notify: sound, vibration or both (with a custom sound's name).
enum NotificationKind: String, CaseIterable, Sendable, Codable { case sound, vibration, both }

/// Active until done (a one-off) or its last occurrence is done; deleting archives it
/// (restorable); purging removes it for good.
enum ReminderStatus: String, CaseIterable, Sendable, Codable { case active, completed, archived }

/// A congratulation a user schedules for someone else's date ("sending congratulations"):
/// when the reminder fires, `reminders.due` carries it for the notifications service.
struct Greeting: Sendable, Hashable, Codable {
    var recipientName: String
    var message: String
    /// `email`, `sms`, or absent: the user is reminded to send it themselves.
    var channel: String?
    var address: String?
}

/// Everything a user sets on a reminder, validated: the value a create makes and an
/// update changes field by field.
struct ReminderContent: Sendable, Hashable {
    var title: String
    var description: String?
    var location: String?
    var notes: String?
    var category: ReminderCategory
    var importance: Importance
    var special: Bool
    var imageID: String?
    var notificationKind: NotificationKind
    var sound: String?
    var timing: ReminderTiming
    var alerts: AlertPlan
    var greeting: Greeting?

    /// The fields offline edits are merged by (see ``FieldClocks``): each is set as a
    /// whole. The timing (start, all-day, zone, rule, exceptions) is one field, so two
    /// devices' edits of it never mix into a rule neither wrote; so are the alerts.
    enum Field: String, CaseIterable, Sendable {
        case title, description, location, notes, category, importance, special, imageId, notification, timing, alerts, greeting, status
    }
}

/// Offline edits from several devices, merged by a simple documented rule: for each
/// field, the edit made last (by the time the device says it made it, `editedAt`) wins;
/// edits of different fields all apply; an edit as old as the one that set the field
/// wins too (the later arrival). A device's clock cannot claim the future: `editedAt` is
/// taken as at most the server's receive time.
struct FieldClocks: Sendable, Hashable {
    /// Field name → when the edit that set it was made.
    private(set) var times: [String: Date]

    init(times: [String: Date] = [:]) { self.times = times }

    /// Whether an edit of `field` made at `editedAt` applies; records it when it does.
    mutating func admit(_ field: ReminderContent.Field, editedAt: Date) -> Bool {
        if let current = times[field.rawValue], current > editedAt { return false }
        times[field.rawValue] = editedAt
        return true
    }

    /// Records every field as set at `editedAt` (a create).
    static func all(at editedAt: Date) -> FieldClocks {
        FieldClocks(times: Dictionary(uniqueKeysWithValues: ReminderContent.Field.allCases.map { ($0.rawValue, editedAt) }))
    }
}

/// The local date-time texts of the wire: `YYYY-MM-DDTHH:MM` (seconds are not kept).
enum LocalText {
    static func dateTime(_ text: String) -> LocalDateTime? {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].utf8.count == 5, let date = LocalDate(String(parts[0])), let time = LocalTime(String(parts[1])) else { return nil }
        return LocalDateTime(date: date, time: time)
    }

    static func format(_ local: LocalDateTime) -> String {
        "\(local.date)T\(Instant.digits(local.time.hour, width: 2)):\(Instant.digits(local.time.minute, width: 2))"
    }

    /// An occurrence as the wire names it: `YYYY-MM-DDTHH:MM`, or `YYYY-MM-DD` (an
    /// all-day one, kept as its midnight).
    static func occurrence(_ text: String) -> LocalDateTime? {
        if let date = LocalDate(text) { return LocalDateTime(date: date, time: .midnight) }
        return dateTime(text)
    }
}

import Foundation
import GRDB
import Platform

/// What a create or an update sends: every field optional here (the schema requires
/// `title` and `start` on a create); which ones were sent is read from the request, so
/// `null` can clear an optional field while an absent one stays as it is.
struct ReminderInput: Decodable, Sendable {
    struct Notification: Codable, Sendable {
        var kind: NotificationKind
        var sound: String?
    }

    struct Repeat: Codable, Sendable {
        var everyMinutes: Int
        var times: Int
    }

    var id: String?
    var title: String?
    var description: String?
    var location: String?
    var notes: String?
    var category: ReminderCategory?
    var importance: Importance?
    var special: Bool?
    var imageId: String?
    var notification: Notification?
    var start: String?
    var allDay: Bool?
    var zone: String?
    var rrule: String?
    var exdates: [String]?
    var alerts: [Int]?
    var repeatAlert: Repeat?
    var editedAt: String?
    var deviceZone: String?

    static let fields: [String: JSONSchema] = [
        "title": JSONSchema.name(maxLength: 200).described("with suggestions from reminders.suggest"),
        "description": JSONSchema.text(maxLength: 4_000).nullable(),
        "location": JSONSchema.text(maxLength: 500).nullable(),
        "notes": JSONSchema.text(maxLength: 4_000).nullable(),
        "category": JSONSchema.oneOf(ReminderCategory.allCases.map(\.rawValue)).described("default personal"),
        "importance": JSONSchema.oneOf(Importance.allCases.map(\.rawValue)).described("default normal"),
        "special": JSONSchema.boolean.described("the \"special\" mark"),
        "imageId": JSONSchema.string(minLength: 1, maxLength: 100).nullable().described("an id from reminders.media.put"),
        "notification": ReminderViews.notificationSchema.described("default: the settings' notification defaults"),
        "start": JSONSchema.string(minLength: 10, maxLength: 16).described(
            "local date and time YYYY-MM-DDTHH:MM in `zone` (or floating); all-day: YYYY-MM-DD. The first occurrence."),
        "allDay": JSONSchema.boolean.described("an all-day reminder: notified at the settings' allDayTime (default 09:00)"),
        "zone": JSONSchema.string(format: .timeZone).nullable().described("an IANA zone; absent or null: floating (follows the zone the device reports)"),
        "rrule": JSONSchema.string(minLength: 6, maxLength: 500).nullable().described(
            "RFC 5545 RRULE subset: FREQ DAILY/WEEKLY/MONTHLY/YEARLY, INTERVAL, BYDAY (ordinals), BYMONTHDAY (incl. -1), BYMONTH, BYSETPOS, COUNT, UNTIL, WKST, and SKIP=OMIT|BACKWARD|FORWARD for days a period lacks"),
        "exdates": JSONSchema.array(of: .string(minLength: 10, maxLength: 16), maxItems: 1_000).described("occurrences removed (local, as `start`)"),
        "alerts": JSONSchema.array(of: .integer(minimum: 0, maximum: Int64(AlertPlan.limits.leadMinutes)), maxItems: AlertPlan.limits.leads)
            .described("lead times in minutes before each occurrence (0: at its time; 60: an hour; 1440: a day; 10080: a week); default: the settings' defaultAlerts"),
        "repeatAlert": ReminderViews.repeatSchema.nullable().described("repeat the alert after the occurrence every `everyMinutes`, `times` times, until that occurrence is marked done"),
        "editedAt": JSONSchema.string(format: .dateTime).described(
            "when the device made this edit (offline edits): per field, the latest edit wins; default now"),
        "deviceZone": JSONSchema.string(format: .timeZone).described("the zone the device is in now: floating reminders follow it"),
    ]

    /// Which top-level fields the request names.
    static func present(_ data: JSONValue) -> Set<String> {
        guard case .object(let members) = data else { return [] }
        return Set(members.keys)
    }

    /// When the edit was made: the device's time, never after `now`.
    func editedAt(now: Date) -> Date { Self.editedAt(editedAt, now: now) }

    static func editedAt(_ text: String?, now: Date) -> Date {
        guard let text, let date = Instant.parse(text) else { return now }
        return min(date, now)
    }

    /// Applies the sent fields to `base`, each only if `admit` lets that field through
    /// (the offline merge rule), and checks the result as a whole.
    func apply(to base: ReminderContent, present: Set<String>, admit: (ReminderContent.Field) -> Bool) throws -> ReminderContent {
        var content = base
        func wants(_ field: ReminderContent.Field, _ names: String...) -> Bool {
            names.contains(where: present.contains) && admit(field)
        }
        if wants(.title, "title"), let title {
            content.title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if wants(.description, "description") { content.description = Self.blankIsNil(description) }
        if wants(.location, "location") { content.location = Self.blankIsNil(location) }
        if wants(.notes, "notes") { content.notes = Self.blankIsNil(notes) }
        if wants(.category, "category"), let category { content.category = category }
        if wants(.importance, "importance"), let importance { content.importance = importance }
        if wants(.special, "special"), let special { content.special = special }
        if wants(.imageId, "imageId") { content.imageID = imageId }
        if wants(.notification, "notification"), let notification {
            content.notificationKind = notification.kind
            content.sound = notification.sound
        }
        if wants(.timing, "start", "allDay", "zone", "rrule", "exdates") {
            content.timing = try timing(base: base.timing, present: present)
        }
        if wants(.alerts, "alerts", "repeatAlert") {
            let repeating = present.contains("repeatAlert") ? repeatAlert : base.alerts.repeatEveryMinutes.map { Repeat(everyMinutes: $0, times: base.alerts.repeatTimes) }
            content.alerts = AlertPlan(leadMinutes: alerts ?? base.alerts.leadMinutes, repeatEveryMinutes: repeating?.everyMinutes, repeatTimes: repeating?.times ?? 0)
        }
        guard !content.title.isEmpty else { throw ServiceError.invalid("title", "must not be empty") }
        return content
    }

    static func blankIsNil(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }

    /// The timing the request sets, with what it does not send kept from `base`.
    func timing(base: ReminderTiming, present: Set<String>) throws -> ReminderTiming {
        let allDay = present.contains("allDay") ? (self.allDay ?? false) : base.allDay
        var timing = base
        timing.allDay = allDay
        if present.contains("start") {
            guard let text = start, let local = Self.local(text, allDay: allDay) else {
                throw ServiceError.invalid("start", allDay ? "not a date (YYYY-MM-DD) that exists" : "not a local date and time YYYY-MM-DDTHH:MM that exists (all-day: set allDay)")
            }
            guard (1...9999).contains(local.date.year) else { throw ServiceError.invalid("start", "the year must be 1 to 9999") }
            timing.start = local
        } else if allDay {
            timing.start = LocalDateTime(date: timing.start.date, time: .midnight)
        }
        if present.contains("zone") {
            if let zone, ZoneClock(identifier: zone) == nil { throw ServiceError.invalid("zone", "not an IANA time zone name") }
            timing.zone = zone
        }
        if present.contains("rrule") {
            do {
                timing.rule = try rrule.map { text throws(RecurrenceError) in try RecurrenceRule.parse(text) }
            } catch {
                throw ServiceError.invalid(error.field, error.reason)
            }
        }
        if present.contains("exdates") {
            timing.exceptions = try (exdates ?? []).enumerated().map { index, text in
                guard let local = Self.local(text, allDay: allDay) else { throw ServiceError.invalid("exdates[\(index)]", "not a local date-time like `start`") }
                return local
            }
        } else if allDay {
            timing.exceptions = timing.exceptions.map { LocalDateTime(date: $0.date, time: .midnight) }
        }
        try Self.check(timing)
        return timing
    }

    /// A start or exception as sent: all-day takes a date (a date-time's time is dropped).
    static func local(_ text: String, allDay: Bool) -> LocalDateTime? {
        if allDay {
            if let date = LocalDate(text) { return LocalDateTime(date: date, time: .midnight) }
            return LocalText.dateTime(text).map { LocalDateTime(date: $0.date, time: .midnight) }
        }
        return LocalText.dateTime(text)
    }

    /// The rule must make sense with the start (UNTIL not before it, and so on).
    static func check(_ timing: ReminderTiming) throws {
        do {
            _ = try timing.series(userZone: .utc, allDayTime: UserClock.defaultAllDayTime)
        } catch {
            throw ServiceError.invalid(error.field, error.reason)
        }
    }
}

import Foundation
import GRDB
import Platform

/// How reminders look on the wire, and their schemas.
enum ReminderViews {
    static let notificationSchema = JSONSchema.object(
        [
            "kind": JSONSchema.oneOf(NotificationKind.allCases.map(\.rawValue)).described("sound, vibration or both"),
            "sound": JSONSchema.string(minLength: 1, maxLength: 100).nullable().described("a custom sound's name"),
        ], required: ["kind"])

    static let greetingSchema = JSONSchema.object(
        [
            "recipientName": JSONSchema.name(maxLength: 100), "message": JSONSchema.text(minLength: 1, maxLength: 2_000),
            "channel": JSONSchema.oneOf(["email", "sms"]).nullable().described("send it for the user; absent: remind the user to send it"),
            "address": JSONSchema.string(minLength: 3, maxLength: 254).nullable().described("the email address or E.164 phone number"),
        ], required: ["recipientName", "message"])

    static let repeatSchema = JSONSchema.object(
        [
            "everyMinutes": JSONSchema.integer(minimum: Int64(AlertPlan.limits.repeatEvery.lowerBound), maximum: Int64(AlertPlan.limits.repeatEvery.upperBound)),
            "times": JSONSchema.integer(minimum: 1, maximum: Int64(AlertPlan.limits.repeatTimes.upperBound)),
        ], required: ["everyMinutes", "times"])

    static let reminderSchema = JSONSchema.object(
        [
            "id": .string(), "title": .string(), "description": JSONSchema.string().nullable(), "location": JSONSchema.string().nullable(),
            "notes": JSONSchema.string().nullable(), "category": .oneOf(ReminderCategory.allCases.map(\.rawValue)),
            "importance": .oneOf(Importance.allCases.map(\.rawValue)), "special": .boolean, "imageId": JSONSchema.string().nullable(),
            "notification": notificationSchema,
            "start": JSONSchema.string().described("YYYY-MM-DDTHH:MM, or YYYY-MM-DD all-day"), "allDay": .boolean,
            "zone": JSONSchema.string(format: .timeZone).nullable().described("null: floating (follows the device's zone)"),
            "floating": .boolean, "rrule": JSONSchema.string().nullable(), "exdates": .array(of: .string()),
            "alerts": JSONSchema.array(of: .integer(minimum: 0)).described("lead times in minutes before each occurrence"),
            "repeatAlert": repeatSchema.nullable(), "greeting": greetingSchema.nullable(),
            "status": .oneOf(ReminderStatus.allCases.map(\.rawValue)),
            "source": JSONSchema.string().described("user, import, beautiful, holiday, schedule, birthday, congratulation"),
            "next": RemindersEvents.occurrence.nullable().described("the next occurrence (null: none ahead)"),
            "doneThrough": JSONSchema.string().nullable().described("every occurrence up to this one is done"),
            "version": .integer(minimum: 1), "createdAt": .string(format: .dateTime), "updatedAt": .string(format: .dateTime),
            "closedAt": JSONSchema.string(format: .dateTime).nullable(),
        ],
        required: [
            "id", "title", "category", "importance", "special", "notification", "start", "allDay", "zone", "floating", "rrule", "exdates", "alerts",
            "status", "source", "next", "version", "createdAt", "updatedAt",
        ])

    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    static func notification(_ content: ReminderContent) -> JSONValue {
        ["kind": .string(content.notificationKind.rawValue), "sound": optional(content.sound)]
    }

    static func greeting(_ greeting: Greeting?) -> JSONValue {
        guard let greeting else { return .null }
        return [
            "recipientName": .string(greeting.recipientName), "message": .string(greeting.message), "channel": optional(greeting.channel),
            "address": optional(greeting.address),
        ]
    }

    static func start(_ timing: ReminderTiming) -> String {
        timing.allDay ? timing.start.date.description : LocalText.format(timing.start)
    }

    static func reminder(_ row: ReminderRow, clock: UserClock) -> JSONValue {
        let c = row.content
        let next: JSONValue
        if let ms = row.nextAtMs {
            let instant = ReminderScheduler.date(ms)
            next = ["utc": .string(Instant.format(instant)), "local": .string(localText(row, at: instant, userZone: clock.zone))]
        } else {
            next = .null
        }
        return [
            "id": .string(row.id), "title": .string(c.title), "description": optional(c.description), "location": optional(c.location),
            "notes": optional(c.notes), "category": .string(c.category.rawValue), "importance": .string(c.importance.rawValue),
            "special": .bool(c.special), "imageId": optional(c.imageID), "notification": notification(c), "start": .string(start(c.timing)),
            "allDay": .bool(c.timing.allDay), "zone": optional(c.timing.zone), "floating": .bool(c.timing.zone == nil),
            "rrule": optional(c.timing.rule?.text),
            "exdates": .array(c.timing.exceptions.map { .string(c.timing.allDay ? $0.date.description : LocalText.format($0)) }),
            "alerts": .array(c.alerts.leadMinutes.map { .integer(Int64($0)) }),
            "repeatAlert": c.alerts.repeatEveryMinutes.map { ["everyMinutes": .integer(Int64($0)), "times": .integer(Int64(c.alerts.repeatTimes))] } ?? .null,
            "greeting": greeting(c.greeting), "status": .string(row.status.rawValue), "source": .string(row.source), "next": next,
            "doneThrough": row.doneThrough.map { .string(c.timing.allDay ? $0.date.description : LocalText.format($0)) } ?? .null,
            "version": .integer(Int64(row.version)), "createdAt": .string(row.createdAt), "updatedAt": .string(row.updatedAt),
            "closedAt": optional(row.closedAt),
        ]
    }

    /// The local text of an instant on the reminder's clock: its zone, else (floating) the
    /// user's.
    static func localText(_ row: ReminderRow, at instant: Date, userZone: ZoneClock) -> String {
        let clock = row.content.timing.zone.flatMap(ZoneCache.clock) ?? userZone
        let local = clock.local(instant)
        if row.content.timing.allDay { return local.date.description }
        return LocalText.format(local)
    }
}

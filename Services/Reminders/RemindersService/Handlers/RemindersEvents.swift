import Foundation
import GRDB
import Platform

/// The events reminders publishes (each listed with its schema in `reminders.describe`),
/// written to the outbox in the transaction that makes the change.
enum RemindersEvents {
    static let occurrence = JSONSchema.object(
        ["local": JSONSchema.string().described("YYYY-MM-DDTHH:MM, or YYYY-MM-DD all-day"), "utc": .string(format: .dateTime)],
        required: ["local", "utc"])

    static let dueData = JSONSchema.object(
        [
            "alertId": JSONSchema.string().described("reminders.snooze names it"), "reminderId": .string(), "userId": .string(),
            "title": .string(), "category": .oneOf(ReminderCategory.allCases.map(\.rawValue)),
            "importance": .oneOf(Importance.allCases.map(\.rawValue)), "special": .boolean,
            "kind": JSONSchema.oneOf(["alert", "repeat", "snooze"]).described("a lead-time alert, a repeat after the occurrence, or a snoozed alert again"),
            "minutesBefore": .integer(minimum: 0), "repeat": .integer(minimum: 1),
            "occurrence": occurrence, "dueAt": JSONSchema.string(format: .dateTime).described("when the alert was due"),
            "late": JSONSchema.boolean.described("it fell due while the service was down, or was sent more than a minute after it was due"),
            "notification": ReminderViews.notificationSchema, "greeting": ReminderViews.greetingSchema.nullable(),
        ], required: ["alertId", "reminderId", "userId", "title", "category", "kind", "occurrence", "dueAt", "late", "notification"])

    static let changeData = JSONSchema.object(
        [
            "reminderId": .string(), "userId": .string(),
            "change": .oneOf(["created", "updated", "done", "completed", "archived", "restored", "purged"]),
        ], required: ["reminderId", "userId", "change"])

    static let descriptions: [EventDescription] = [
        EventDescription(
            "reminders.due",
            summary: "An alert of a reminder is due: push it to the user (the notifications service). Each alert is published once, also across restarts.",
            data: dueData),
        EventDescription("reminders.reminder.changed", summary: "A user's reminder was created, changed, done, completed, archived, restored or purged.", data: changeData),
    ]

    static func due(
        _ db: Database, _ row: ReminderRow, alertID: String, occurrenceLocal: String, occurrence: Date, at: Date, now: Date, late: Bool,
        extra: [String: JSONValue]
    ) throws {
        var data: [String: JSONValue] = [
            "alertId": .string(alertID), "reminderId": .string(row.id), "userId": .string(row.userID), "title": .string(row.content.title),
            "category": .string(row.content.category.rawValue), "importance": .string(row.content.importance.rawValue),
            "special": .bool(row.content.special),
            "occurrence": ["local": .string(occurrenceLocal), "utc": .string(Instant.format(occurrence))],
            "dueAt": .string(Instant.format(at)), "late": .bool(late),
            "notification": ReminderViews.notification(row.content), "greeting": ReminderViews.greeting(row.content.greeting),
        ]
        data.merge(extra) { _, new in new }
        try Outbox.append(db, type: "reminders.due", data: JSONValue.object(data), at: now)
    }

    static func changed(_ db: Database, _ row: ReminderRow, _ change: String, at date: Date) throws {
        try Outbox.append(
            db, type: "reminders.reminder.changed",
            data: ["reminderId": .string(row.id), "userId": .string(row.userID), "change": .string(change)] as JSONValue, at: date)
    }
}

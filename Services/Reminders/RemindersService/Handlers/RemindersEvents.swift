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

    /// What an alert is: a lead-time alert, a repeat after the occurrence, or a snoozed
    /// alert again.
    enum DueKind {
        case alert(minutesBefore: Int)
        case repeated(Int)
        case snooze
    }

    static func due(
        _ db: Database, _ row: ReminderRow, alertID: String, occurrenceLocal: String, occurrence: Date, at: Date, now: Date, late: Bool, kind: DueKind
    ) throws {
        let data = DueData(row: row, alertID: alertID, occurrenceLocal: occurrenceLocal, occurrence: occurrence, at: at, late: late, kind: kind)
        try Outbox.append(db, type: "reminders.due", data: data, at: now)
    }

    /// `reminders.due`'s data, written straight to bytes (a burst publishes thousands).
    struct DueData: JSONWrittenOnly {
        var row: ReminderRow
        var alertID: String
        var occurrenceLocal: String
        var occurrence: Date
        var at: Date
        var late: Bool
        var kind: DueKind

        func writeJSON(to output: inout [UInt8]) {
            let content = row.content
            var object = JSONObjectWriter(taking: &output)
            object.field("alertId", alertID)
            object.field("category", content.category.rawValue)
            object.field("dueAt", Instant.format(at))
            ReminderViews.write(greeting: content.greeting, into: &object)
            object.field("importance", content.importance.rawValue)
            switch kind {
            case .alert: object.field("kind", "alert")
            case .repeated: object.field("kind", "repeat")
            case .snooze: object.field("kind", "snooze")
            }
            object.field("late", late)
            if case .alert(let minutes) = kind { object.field("minutesBefore", Int64(minutes)) }
            object.object("notification") { nested in
                nested.field("kind", content.notificationKind.rawValue)
                nested.field("sound", content.sound)
            }
            object.object("occurrence") { nested in
                nested.field("local", occurrenceLocal)
                nested.field("utc", Instant.format(occurrence))
            }
            object.field("reminderId", row.id)
            if case .repeated(let number) = kind { object.field("repeat", Int64(number)) }
            object.field("special", content.special)
            object.field("title", content.title)
            object.field("userId", row.userID)
            object.finish(returningTo: &output)
        }
    }

    static func changed(_ db: Database, _ row: ReminderRow, _ change: String, at date: Date) throws {
        try Outbox.append(
            db, type: "reminders.reminder.changed",
            data: ["reminderId": .string(row.id), "userId": .string(row.userID), "change": .string(change)] as JSONValue, at: date)
    }
}

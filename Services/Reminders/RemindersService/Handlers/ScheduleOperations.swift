import Foundation
import GRDB
import Platform

/// The fitness assistant's training schedule (Home → Schedule) and congratulations a user
/// schedules for someone else's date: both become ordinary reminders, made through
/// ``ReminderStore`` like the user's own.
struct ScheduleOperations: Sendable {
    static let user = AuthRule.authenticated
    static let scheduleKey = "schedule:workout"

    var all: [ServiceOperation] { [setSchedule, getSchedule, greeting] }

    /// RFC 5545's two-letter weekday names, Monday first.
    static let weekdays = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
    static let weekdayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// `daily`, or weekdays (`mon`…`sun`, `monday`…, or RFC 5545's `MO`…), in any case.
    static func days(_ value: JSONValue?) throws -> [Int]? {
        switch value {
        case .string(let text) where text.lowercased() == "daily": return nil
        case .array(let items) where !items.isEmpty && items.count <= 7:
            let days = try items.enumerated().map { index, item -> Int in
                let text = item.stringValue?.lowercased() ?? ""
                let short = fullNames.contains(text) ? String(text.prefix(3)) : text
                guard let day = weekdayNames.firstIndex(of: short) ?? weekdays.firstIndex(of: text.uppercased()) else {
                    throw ServiceError.invalid("days[\(index)]", "not a weekday (mon … sun)")
                }
                return day + 1
            }
            return Array(Set(days)).sorted()
        default:
            throw ServiceError.invalid("days", "\"daily\" or a list of 1-7 weekdays (mon … sun)")
        }
    }

    static let fullNames: Set<String> = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    struct ScheduleRequest: Decodable, Sendable {
        var time: LocalTime?
        var zone: String?
        var enabled: Bool?
        var title: String?
        var alerts: [Int]?
    }

    static let scheduleResponse = JSONSchema.object(
        [
            "enabled": .boolean, "days": JSONSchema.array(of: .oneOf(weekdayNames)).described("empty when daily"), "daily": .boolean,
            "time": JSONSchema.string(format: .time).nullable(), "zone": JSONSchema.string(format: .timeZone).nullable(),
            "reminder": ReminderViews.reminderSchema.nullable(),
        ], required: ["enabled", "days", "daily", "time", "zone", "reminder"])

    static func scheduleView(_ db: Database, _ row: ReminderRow?, clock: UserClock) throws -> JSONValue {
        guard let row, row.status == .active else {
            return ["enabled": false, "days": [], "daily": false, "time": .null, "zone": .null, "reminder": .null]
        }
        let byDay = row.content.timing.rule?.byDay.map(\.weekday) ?? []
        return [
            "enabled": true, "days": .array(byDay.map { .string(weekdayNames[$0 - 1]) }), "daily": .bool(byDay.isEmpty),
            "time": .string(row.content.timing.start.time.description), "zone": ReminderViews.optional(row.content.timing.zone),
            "reminder": try ReminderView(db, row, clock: clock).jsonValue,
        ]
    }

    var setSchedule: ServiceOperation {
        .write(
            "reminders.schedule.set",
            summary: "Stores the reminder plan for workouts: `days` (\"daily\" or weekdays mon … sun), `time` (HH:MM) in `zone` (absent: floating): one recurring reminder of the workout category, replaced by the next call; `enabled: false` removes it.",
            auth: Self.user,
            request: .object(
                [
                    "days": JSONSchema.any.described("\"daily\" or an array of weekdays: mon, tue, wed, thu, fri, sat, sun"),
                    "time": .string(format: .time), "zone": .string(format: .timeZone), "enabled": .boolean,
                    "title": JSONSchema.name(maxLength: 200).described("default: Workout / Тренировка"),
                    "alerts": JSONSchema.array(of: .integer(minimum: 0, maximum: Int64(AlertPlan.limits.leadMinutes)), maxItems: AlertPlan.limits.leads),
                ]),
            response: Self.scheduleResponse
        ) { (context, input: ScheduleRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            let clock = try UserClock.load(db, user: user)
            let existing = try ReminderRow.bySource(db, user: user, key: Self.scheduleKey)
            if input.enabled == false {
                if let existing { try ReminderStore.purge(db, existing, now: now, store: try context.mediaStore()) }
                return try Self.scheduleView(db, nil, clock: clock)
            }
            guard let time = input.time else { throw ServiceError.invalid("time", "required (HH:MM)") }
            let days = try Self.days(context.data["days"])
            if let zone = input.zone, ZoneClock(identifier: zone) == nil { throw ServiceError.invalid("zone", "not an IANA time zone name") }
            let zoneClock = input.zone.flatMap(ZoneClock.init(identifier:)) ?? clock.zone
            // The first occurrence: today or the next scheduled day, at the time.
            var date = zoneClock.localDate(of: now)
            if let days { while !days.contains(date.isoWeekday) { date = date.adding(days: 1) } }
            let ruleText = days.map { "FREQ=WEEKLY;BYDAY=" + $0.map { Self.weekdays[$0 - 1] }.joined(separator: ",") } ?? "FREQ=DAILY"
            var content = try existing?.content ?? ReminderStore.blank(db, user: user)
            content.title = input.title ?? existing?.content.title ?? (clock.language == "ru" ? "Тренировка" : "Workout")
            content.category = .workout
            content.timing = ReminderTiming(
                start: LocalDateTime(date: date, time: time), allDay: false, zone: input.zone, rule: try? RecurrenceRule.parse(ruleText), exceptions: [])
            if let alerts = input.alerts { content.alerts = AlertPlan(leadMinutes: alerts) }
            if var row = existing {
                row.content = content
                row.status = .active
                row.closedAt = nil
                row.doneThrough = nil
                try ReminderStore.commit(db, &row, change: "updated", clock: clock, now: now)
                return try Self.scheduleView(db, row, clock: clock)
            }
            try ReminderStore.requireRoom(db, user: user)
            let row = try ReminderStore.insert(
                db, id: RecordID.make(prefix: "rem", at: now), user: user, content: content, source: "schedule", sourceKey: Self.scheduleKey, clock: clock,
                now: now)
            return try Self.scheduleView(db, row, clock: clock)
        }
    }

    var getSchedule: ServiceOperation {
        .read(
            "reminders.schedule.get", summary: "The caller's training schedule as reminders.schedule.set stored it.", auth: Self.user,
            request: .empty, response: Self.scheduleResponse
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            return try Self.scheduleView(db, try ReminderRow.bySource(db, user: user, key: Self.scheduleKey), clock: try UserClock.load(db, user: user))
        }
    }

    struct GreetingRequest: Codable, Sendable {
        var recipientName: String
        var message: String
        var date: LocalDate
        var time: LocalTime?
        var zone: String?
        var yearly: Bool?
        var channel: String?
        var address: String?
        var title: String?
    }

    var greeting: ServiceOperation {
        .write(
            "reminders.greetings.schedule",
            summary: "Schedules a congratulation for someone else's date (the Reminder app's \"sending congratulations\"): a reminder of category congratulation at `date` and `time` (default 09:00) in `zone` (absent: floating), `yearly` for every year; when it fires, reminders.due carries the greeting (recipient, message), and with `channel` email or sms the message itself goes to `address` at each occurrence (from the service's outbox; at most once a year per reminder, 10 greetings a user and 3 an address a day; such a greeting stays yearly with its alert at 0); without a channel the user is reminded to send it. A one-off date or today's time already gone is refused.",
            auth: Self.user,
            request: .object(
                [
                    "recipientName": JSONSchema.name(maxLength: 100), "message": JSONSchema.text(minLength: 1, maxLength: 2_000), "date": .string(format: .date),
                    "time": .string(format: .time), "zone": .string(format: .timeZone), "yearly": .boolean, "channel": .oneOf(["email", "sms"]),
                    "address": .string(minLength: 3, maxLength: 254), "title": JSONSchema.name(maxLength: 200),
                ], required: ["recipientName", "message", "date"]),
            response: ReminderViews.reminderSchema
        ) { (context, input: GreetingRequest, db: Database) -> ReminderView in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            switch input.channel {
            case "email": guard let address = input.address, Formats.isEmail(address) else { throw ServiceError.invalid("address", "an email address is needed for channel email") }
            case "sms": guard let address = input.address, Formats.isE164(address) else { throw ServiceError.invalid("address", "a phone number in E.164 form is needed for channel sms") }
            default: guard input.address == nil else { throw ServiceError.invalid("address", "only with a channel") }
            }
            if let zone = input.zone, ZoneClock(identifier: zone) == nil { throw ServiceError.invalid("zone", "not an IANA time zone name") }
            try ReminderStore.requireRoom(db, user: user)
            let clock = try UserClock.load(db, user: user)
            if input.yearly != true {
                // A one-off greeting for a day already gone would never be sent.
                let zone = input.zone.flatMap(ZoneClock.init(identifier:)) ?? clock.zone
                let today = zone.localDate(of: now)
                guard input.date >= today else { throw ServiceError.invalid("date", "is in the past (today is \(today) there); send yearly: true for a yearly date") }
                let time = input.time ?? UserClock.defaultAllDayTime
                if input.date == today, let at = zone.instant(input.date, time), at < now {
                    throw ServiceError.invalid(input.time == nil ? "date" : "time", "\(time) has passed today there; choose a later time")
                }
            }
            var content = try ReminderStore.blank(db, user: user)
            let name = input.recipientName.trimmingCharacters(in: .whitespacesAndNewlines)
            content.title = input.title ?? (clock.language == "ru" ? "Поздравить: \(name)" : "Congratulate \(name)")
            content.category = .congratulation
            content.greeting = Greeting(recipientName: name, message: input.message, channel: input.channel, address: input.address)
            content.timing = ReminderTiming(
                start: LocalDateTime(date: input.date, time: input.time ?? UserClock.defaultAllDayTime), allDay: false, zone: input.zone,
                rule: input.yearly == true ? try? RecurrenceRule.parse("FREQ=YEARLY;SKIP=BACKWARD") : nil, exceptions: [])
            content.alerts = AlertPlan(leadMinutes: [0])
            let row = try ReminderStore.insert(
                db, id: RecordID.make(prefix: "rem", at: now), user: user, content: content, source: "congratulation", clock: clock, now: now)
            return try ReminderView(db, row, clock: clock)
        }
    }
}

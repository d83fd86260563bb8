import Foundation
import GRDB
import Platform

/// App settings kept on the server for every device of a user (section 4.1): language,
/// theme, notification defaults (kind, sound, lead times, the all-day time), and the zone
/// the device reports (floating reminders follow it). Reset puts the defaults back.
struct SettingsOperations: Sendable {
    static let user = AuthRule.authenticated

    var all: [ServiceOperation] { [get, set, reset] }

    static let languages = ["ru", "en", "de", "uk", "be", "kk"]
    static let themes = ["light", "dark", "system"]

    static let settingsSchema = JSONSchema.object(
        [
            "language": .oneOf(Self.languages), "theme": .oneOf(Self.themes),
            "notification": ReminderViews.notificationSchema,
            "defaultAlerts": JSONSchema.array(of: .integer(minimum: 0, maximum: Int64(AlertPlan.limits.leadMinutes)), maxItems: AlertPlan.limits.leads)
                .described("lead times new reminders get (minutes)"),
            "allDayTime": JSONSchema.string(format: .time).described("when all-day reminders notify (default 09:00)"),
            "timeZone": JSONSchema.string(format: .timeZone).nullable().described("the zone the device reports; floating reminders follow it"),
        ], required: ["language", "theme", "notification", "defaultAlerts", "allDayTime", "timeZone"])

    static func view(_ db: Database, user: String) throws -> JSONValue {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM settings WHERE user_id = ?"), arguments: [user])
        let clock = try UserClock.load(db, user: user)
        let defaults = try ReminderStore.defaults(db, user: user)
        return [
            "language": .string(Self.languages.contains(clock.language) ? clock.language : "ru"),
            "theme": .string((row?["theme"] as String?) ?? "system"),
            "notification": ["kind": .string(defaults.kind.rawValue), "sound": ReminderViews.optional(defaults.sound)],
            "defaultAlerts": .array(defaults.alerts.map { .integer(Int64($0)) }),
            "allDayTime": .string(clock.allDayTime.description),
            "timeZone": ReminderViews.optional(row?["time_zone"] as String?),
        ]
    }

    var get: ServiceOperation {
        .read(
            "reminders.settings.get", summary: "The caller's app settings (defaults where never set: language from the profile's locale, else ru).",
            auth: Self.user, request: .empty, response: Self.settingsSchema
        ) { (context, _: Empty, db: Database) -> JSONValue in
            try Self.view(db, user: try context.requirePrincipal().userID)
        }
    }

    struct SetRequest: Codable, Sendable {
        var language: String?
        var theme: String?
        var notification: ReminderInput.Notification?
        var defaultAlerts: [Int]?
        var allDayTime: LocalTime?
        var timeZone: String?
    }

    var set: ServiceOperation {
        .write(
            "reminders.settings.set",
            summary: "Changes the settings sent (every device of the user sees them; reminders.changes carries them as entity settings). A new timeZone moves floating reminders; a new allDayTime moves all-day ones.",
            auth: Self.user,
            request: .object([
                "language": .oneOf(Self.languages), "theme": .oneOf(Self.themes), "notification": ReminderViews.notificationSchema,
                "defaultAlerts": JSONSchema.array(of: .integer(minimum: 0, maximum: Int64(AlertPlan.limits.leadMinutes)), maxItems: AlertPlan.limits.leads),
                "allDayTime": .string(format: .time), "timeZone": .string(format: .timeZone),
            ]),
            response: Self.settingsSchema
        ) { (context, input: SetRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            if let zone = input.timeZone, ZoneClock(identifier: zone) == nil { throw ServiceError.invalid("timeZone", "not an IANA time zone name") }
            let before = try UserClock.load(db, user: user)
            let alerts = try input.defaultAlerts.map { String(decoding: try JSONEncoder().encode(Array(Set($0)).sorted()), as: UTF8.self) }
            try db.cachedStatement(sql: """
                    INSERT INTO settings (user_id, language, theme, notification_kind, sound, default_alerts, all_day_time, time_zone, change_version, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET
                        language = coalesce(excluded.language, language), theme = coalesce(excluded.theme, theme),
                        notification_kind = coalesce(excluded.notification_kind, notification_kind),
                        sound = CASE WHEN excluded.notification_kind IS NULL THEN sound ELSE excluded.sound END,
                        default_alerts = coalesce(excluded.default_alerts, default_alerts), all_day_time = coalesce(excluded.all_day_time, all_day_time),
                        time_zone = coalesce(excluded.time_zone, time_zone), change_version = excluded.change_version, updated_at = excluded.updated_at
                    """).execute(arguments: [
                    user, input.language, input.theme, input.notification?.kind.rawValue, input.notification?.sound, alerts, input.allDayTime?.description,
                    input.timeZone, try ChangeFeed.stamp(db), Instant.format(now),
                ])
            let after = try UserClock.load(db, user: user)
            if after.zoneName != before.zoneName || after.allDayTime != before.allDayTime {
                try FollowClock.start(db, user: user, allDay: after.allDayTime != before.allDayTime, now: now)
            }
            return try Self.view(db, user: user)
        }
    }

    var reset: ServiceOperation {
        .write(
            "reminders.settings.reset", summary: "Puts every setting back to its default (the reported time zone is kept: it is where the device is).",
            auth: Self.user, request: .empty, response: Self.settingsSchema
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let before = try UserClock.load(db, user: user)
            try db.cachedStatement(sql: """
                    UPDATE settings SET language = NULL, theme = NULL, notification_kind = NULL, sound = NULL, default_alerts = NULL, all_day_time = NULL,
                        change_version = ?, updated_at = ? WHERE user_id = ?
                    """).execute(arguments: [try ChangeFeed.stamp(db), Instant.format(context.receivedAt), user])
            let after = try UserClock.load(db, user: user)
            if after.allDayTime != before.allDayTime {
                try FollowClock.start(db, user: user, allDay: true, now: context.receivedAt)
            }
            return try Self.view(db, user: user)
        }
    }
}

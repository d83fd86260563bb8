import Foundation
import GRDB
import Platform

/// A reminder as stored: what the user set (``ReminderContent``) and what the scheduler
/// derived from it.
struct ReminderRow: Sendable, Hashable {
    var rowID: Int64
    var id: String
    var userID: String
    var content: ReminderContent
    var status: ReminderStatus
    var source: String
    var sourceKey: String?
    var doneThrough: LocalDateTime?
    var nextAtMs: Int64?
    var alertCursorMs: Int64
    var version: Int
    var changeVersion: Int64
    var fieldClocks: FieldClocks
    var createdAt: String
    var updatedAt: String
    var closedAt: String?

    init(row: Row) throws {
        rowID = row["rowid"]
        id = row["id"]
        userID = row["user_id"]
        let exdates = try Self.strings(row["exdates"])
        let alerts = try Self.integers(row["alerts"])
        let ruleText: String? = row["rrule"]
        let greetingText: String? = row["greeting"]
        content = ReminderContent(
            title: row["title"], description: row["description"], location: row["location"], notes: row["notes"],
            category: ReminderCategory(rawValue: row["category"]) ?? .other, importance: Importance(rawValue: row["importance"]) ?? .normal,
            special: row["special"], imageID: row["image_id"], notificationKind: NotificationKind(rawValue: row["notification_kind"]) ?? .sound,
            sound: row["sound"],
            timing: ReminderTiming(
                start: LocalText.dateTime(row["start_local"]) ?? LocalDateTime(date: LocalDate(year: 2000, month: 1, day: 1), time: .midnight),
                allDay: row["all_day"], zone: row["zone"], rule: try ruleText.map { text throws in try RuleCache.rule(text) },
                exceptions: exdates.compactMap(LocalText.dateTime)),
            alerts: AlertPlan(leadMinutes: alerts, repeatEveryMinutes: row["repeat_every_minutes"], repeatTimes: row["repeat_times"]),
            greeting: try greetingText.map { try JSONDecoder().decode(Greeting.self, from: Data($0.utf8)) })
        status = ReminderStatus(rawValue: row["status"]) ?? .active
        source = row["source"]
        sourceKey = row["source_key"]
        doneThrough = (row["done_through"] as String?).flatMap(LocalText.dateTime)
        nextAtMs = row["next_at_ms"]
        alertCursorMs = row["alert_cursor_ms"]
        version = row["version"]
        changeVersion = row["change_version"]
        let times = try JSONParser.parse(Data((row["field_times"] as String).utf8)).objectValue ?? [:]
        fieldClocks = FieldClocks(times: times.compactMapValues { $0.stringValue.flatMap(Instant.parse) })
        createdAt = row["created_at"]
        updatedAt = row["updated_at"]
        closedAt = row["closed_at"]
    }

    /// A JSON array of strings as stored (the common empty one without parsing).
    static func strings(_ text: String) throws -> [String] {
        text == "[]" ? [] : (try JSONParser.parse(Data(text.utf8)).arrayValue ?? []).compactMap(\.stringValue)
    }

    /// A JSON array of integers as stored (the common `[0]` without parsing).
    static func integers(_ text: String) throws -> [Int] {
        if text == "[0]" { return [0] }
        return (try JSONParser.parse(Data(text.utf8)).arrayValue ?? []).compactMap { $0.integerValue.map(Int.init) }
    }

    /// The caller's reminder `id`; anyone else's is `not_found` (it does not say whose it is).
    static func own(_ db: Database, id: String, user: String) throws -> ReminderRow {
        guard let row = try find(db, id: id, user: user) else { throw ServiceError.notFound("no such reminder") }
        return row
    }

    /// The user's reminder `id`, if there is one.
    static func find(_ db: Database, id: String, user: String) throws -> ReminderRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT rowid, * FROM reminder WHERE id = ? AND user_id = ?"), arguments: [id, user]).map(ReminderRow.init(row:))
    }

    static func bySource(_ db: Database, user: String, key: String) throws -> ReminderRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT rowid, * FROM reminder WHERE user_id = ? AND source_key = ?"), arguments: [user, key])
            .map(ReminderRow.init(row:))
    }

    /// The far-future sort key of a reminder with no occurrence ahead.
    static let noNextSort: Int64 = 9_000_000_000_000_000

    /// Writes the whole row (insert or replace by id), keeping the rowid of an existing one.
    func save(_ db: Database) throws {
        let c = content
        let exdates = String(decoding: try JSONEncoder().encode(c.timing.exceptions.map(LocalText.format)), as: UTF8.self)
        let alerts = String(decoding: try JSONEncoder().encode(c.alerts.leadMinutes), as: UTF8.self)
        let greeting = try c.greeting.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        let times = String(
            decoding: try JSONEncoder().encode(fieldClocks.times.mapValues { Instant.format($0) }), as: UTF8.self)
        let closedMs: Int64? = closedAt.flatMap(Instant.parse).map { Int64($0.timeIntervalSince1970 * 1_000) }
        let arguments: StatementArguments = [
            id, userID, c.title, c.title.lowercased(), c.description, c.location, c.notes, c.category.rawValue, c.importance.rawValue,
            c.special, c.imageID, c.notificationKind.rawValue, c.sound, LocalText.format(c.timing.start), c.timing.allDay, c.timing.zone,
            c.timing.rule?.text, exdates, alerts, c.alerts.repeatEveryMinutes, c.alerts.repeatTimes, greeting, status.rawValue, source,
            sourceKey, doneThrough.map(LocalText.format), nextAtMs, nextAtMs ?? Self.noNextSort, alertCursorMs, version, times,
            changeVersion, createdAt, updatedAt, closedAt, closedMs,
        ]
        if rowID == 0 {
            try db.cachedStatement(sql: """
                    INSERT INTO reminder (id, user_id, title, title_fold, description, location, notes, category, importance, special, image_id,
                        notification_kind, sound, start_local, all_day, zone, rrule, exdates, alerts, repeat_every_minutes, repeat_times, greeting,
                        status, source, source_key, done_through, next_at_ms, next_sort, alert_cursor_ms, version, field_times, change_version,
                        created_at, updated_at, closed_at, closed_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: arguments)
        } else {
            try db.cachedStatement(sql: """
                    UPDATE reminder SET id = ?, user_id = ?, title = ?, title_fold = ?, description = ?, location = ?, notes = ?, category = ?,
                        importance = ?, special = ?, image_id = ?, notification_kind = ?, sound = ?, start_local = ?, all_day = ?, zone = ?, rrule = ?,
                        exdates = ?, alerts = ?, repeat_every_minutes = ?, repeat_times = ?, greeting = ?, status = ?, source = ?, source_key = ?,
                        done_through = ?, next_at_ms = ?, next_sort = ?, alert_cursor_ms = ?, version = ?, field_times = ?, change_version = ?,
                        created_at = ?, updated_at = ?, closed_at = ?, closed_ms = ?
                    WHERE rowid = ?
                    """).execute(arguments: arguments + [rowID])
        }
    }

    /// The owner name of the reminder's image in the platform's media references.
    var imageOwner: String { Self.imageOwner(user: userID, id: id) }

    static func imageOwner(user: String, id: String) -> String { "reminder:\(user):\(id)" }

    /// The key of the reminder's timer: ids are unique per user, so the user is part of it.
    var timerKey: String { Self.timerKey(user: userID, id: id) }

    static func timerKey(user: String, id: String) -> String { "\(user) \(id)" }

    /// The reminder a timer key names.
    static func load(_ db: Database, timerKey: String) throws -> ReminderRow? {
        guard let space = timerKey.firstIndex(of: " ") else { return nil }
        let user = String(timerKey[..<space]), id = String(timerKey[timerKey.index(after: space)...])
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT rowid, * FROM reminder WHERE user_id = ? AND id = ?"), arguments: [user, id])
            .map(ReminderRow.init(row:))
    }
}

/// The user's settings the scheduler needs: the zone floating reminders follow, the
/// time all-day reminders notify at, the language generated reminders are titled in.
struct UserClock: Sendable {
    var zone: ZoneClock
    var zoneName: String
    var allDayTime: LocalTime
    var language: String

    static let defaultAllDayTime = LocalTime(hour: 9, minute: 0)!

    /// The settings' zone (what the device last reported), else the profile's, else UTC.
    static func load(_ db: Database, user: String) throws -> UserClock {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: """
                SELECT s.time_zone AS settings_zone, p.time_zone AS profile_zone, s.all_day_time, s.language, p.locale
                FROM (SELECT ? AS user_id) AS me
                LEFT JOIN settings AS s ON s.user_id = me.user_id
                LEFT JOIN person AS p ON p.user_id = me.user_id
                """), arguments: [user])
        let name = [row?["settings_zone"] as String?, row?["profile_zone"] as String?].compactMap { $0 }.first { ZoneClock(identifier: $0) != nil } ?? "UTC"
        let locale: String? = row?["locale"]
        let language = (row?["language"] as String?) ?? locale.map { String($0.prefix(2)).lowercased() } ?? "ru"
        return UserClock(
            zone: ZoneCache.clock(name) ?? .utc, zoneName: name,
            allDayTime: (row?["all_day_time"] as String?).flatMap(LocalTime.init) ?? defaultAllDayTime, language: language == "en" ? "en" : language)
    }
}

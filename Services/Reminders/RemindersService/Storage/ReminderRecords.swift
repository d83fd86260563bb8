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
    /// The next occurrence's local text on the reminder's clock (its zone, or the user's
    /// when floating), as the wire shows it; derived with `nextAtMs`.
    var nextLocal: String?
    var alertCursorMs: Int64
    var version: Int
    var changeVersion: Int64
    /// The field clocks as stored (JSON): parsed only by the edits that need them.
    var fieldTimes: String
    var createdAt: String
    var updatedAt: String
    var closedAt: String?

    var fieldClocks: FieldClocks {
        get { FieldClocks(stored: fieldTimes) }
        set { fieldTimes = newValue.stored }
    }

    /// The columns every read of whole reminders selects, in the order `init(row:)` reads
    /// them (by position: GRDB's lookup by name folds the name's case on every call).
    static let columns = """
        rowid, id, user_id, title, description, location, notes, category, importance, special, image_id, notification_kind, sound, \
        start_local, all_day, zone, rrule, exdates, alerts, repeat_every_minutes, repeat_times, greeting, status, source, source_key, \
        done_through, next_at_ms, next_local, alert_cursor_ms, version, change_version, field_times, created_at, updated_at, closed_at
        """
    /// How many `columns` there are: a query may select more after them.
    static let columnCount = 35
    /// `columns` with only what a kept text of the reminder needs (rowid, the all-day mark
    /// and zone, the next occurrence, the change version), `NULL` in the others' places.
    static let keptColumns = """
        rowid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
        NULL, all_day, zone, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, \
        NULL, next_at_ms, next_local, NULL, NULL, change_version, NULL, NULL, NULL, NULL
        """

    init(stored row: StoredColumns) throws {
        rowID = row.integer(0) ?? 0
        id = row.string(1)
        userID = row.string(2)
        content = ReminderContent(
            title: row.string(3), description: row.text(4), location: row.text(5), notes: row.text(6),
            category: ReminderCategory(rawValue: row.string(7)) ?? .other, importance: Importance(rawValue: row.string(8)) ?? .normal,
            special: row.bool(9), imageID: row.text(10), notificationKind: NotificationKind(rawValue: row.string(11)) ?? .sound, sound: row.text(12),
            timing: ReminderTiming(
                start: LocalText.dateTime(row.string(13)) ?? LocalDateTime(date: LocalDate(year: 2000, month: 1, day: 1), time: .midnight),
                allDay: row.bool(14), zone: row.text(15), rule: try row.text(16).map { text throws in try RuleCache.rule(text) },
                exceptions: try Self.strings(row.string(17)).compactMap(LocalText.dateTime)),
            alerts: AlertPlan(leadMinutes: try Self.integers(row.string(18)), repeatEveryMinutes: row.integer(19).map(Int.init), repeatTimes: Int(row.integer(20) ?? 0)),
            greeting: try row.text(21).map { try JSONDecoder().decode(Greeting.self, from: Data($0.utf8)) })
        status = ReminderStatus(rawValue: row.string(22)) ?? .active
        source = row.string(23)
        sourceKey = row.text(24)
        doneThrough = row.text(25).flatMap(LocalText.dateTime)
        nextAtMs = row.integer(26)
        nextLocal = row.text(27)
        alertCursorMs = row.integer(28) ?? 0
        version = Int(row.integer(29) ?? 1)
        changeVersion = row.integer(30) ?? 0
        fieldTimes = row.text(31) ?? "{}"
        createdAt = row.string(32)
        updatedAt = row.string(33)
        closedAt = row.text(34)
    }

    /// The reminders of a query selecting ``columns`` (read by position, straight from
    /// SQLite: the scheduler loads one per alert).
    static func fetchAll(_ db: Database, where filter: String, _ arguments: StatementArguments) throws -> [ReminderRow] {
        var rows: [ReminderRow] = []
        try db.cachedStatement(sql: "SELECT \(columns) FROM reminder WHERE \(filter)").forEachRow(arguments: arguments) { rows.append(try ReminderRow(stored: $0)) }
        return rows
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
        // Bound directly, its text made once: the scheduler loads one per alert.
        try db.cachedStatement(sql: findSQL).firstRow(id, user) { try ReminderRow(stored: $0) }
    }

    private static let findSQL = "SELECT \(columns) FROM reminder WHERE id = ? AND user_id = ?"

    static func bySource(_ db: Database, user: String, key: String) throws -> ReminderRow? {
        try fetchAll(db, where: "user_id = ? AND source_key = ?", [user, key]).first
    }

    /// The far-future sort key of a reminder with no occurrence ahead.
    static let noNextSort: Int64 = 9_000_000_000_000_000

    /// Writes the whole row (insert or replace by id), keeping the rowid of an existing one.
    func save(_ db: Database) throws {
        let c = content
        let exdates = String(decoding: try JSONEncoder().encode(c.timing.exceptions.map(LocalText.format)), as: UTF8.self)
        let alerts = String(decoding: try JSONEncoder().encode(c.alerts.leadMinutes), as: UTF8.self)
        let greeting = try c.greeting.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        let closedMs: Int64? = closedAt.flatMap(Instant.parse).map(Instant.milliseconds)
        let arguments: StatementArguments = [
            id, userID, c.title, c.title.lowercased(), c.description, c.location, c.notes, c.category.rawValue, c.importance.rawValue,
            c.special, c.imageID, c.notificationKind.rawValue, c.sound, LocalText.format(c.timing.start), c.timing.allDay, c.timing.zone,
            c.timing.rule?.text, exdates, alerts, c.alerts.repeatEveryMinutes, c.alerts.repeatTimes, greeting, status.rawValue, source,
            sourceKey, doneThrough.map(LocalText.format), nextAtMs, nextAtMs ?? Self.noNextSort, nextLocal, alertCursorMs, version, fieldTimes,
            changeVersion, createdAt, updatedAt, closedAt, closedMs, SearchTerms.indexed(c.title, user: userID),
            SearchTerms.indexed(c.description, user: userID),
        ]
        if rowID == 0 {
            try db.cachedStatement(sql: """
                    INSERT INTO reminder (id, user_id, title, title_fold, description, location, notes, category, importance, special, image_id,
                        notification_kind, sound, start_local, all_day, zone, rrule, exdates, alerts, repeat_every_minutes, repeat_times, greeting,
                        status, source, source_key, done_through, next_at_ms, next_sort, next_local, alert_cursor_ms, version, field_times,
                        change_version, created_at, updated_at, closed_at, closed_ms, search_title, search_body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: arguments)
        } else {
            try db.cachedStatement(sql: """
                    UPDATE reminder SET id = ?, user_id = ?, title = ?, title_fold = ?, description = ?, location = ?, notes = ?, category = ?,
                        importance = ?, special = ?, image_id = ?, notification_kind = ?, sound = ?, start_local = ?, all_day = ?, zone = ?, rrule = ?,
                        exdates = ?, alerts = ?, repeat_every_minutes = ?, repeat_times = ?, greeting = ?, status = ?, source = ?, source_key = ?,
                        done_through = ?, next_at_ms = ?, next_sort = ?, next_local = ?, alert_cursor_ms = ?, version = ?, field_times = ?,
                        change_version = ?, created_at = ?, updated_at = ?, closed_at = ?, closed_ms = ?, search_title = ?, search_body = ?
                    WHERE rowid = ?
                    """).execute(arguments: arguments + [rowID])
        }
    }

    /// Writes only what firing its timer changes: where its alerts stand and its next
    /// occurrence (what the user set is untouched, so the search index is too).
    func saveSchedule(_ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE reminder SET next_at_ms = ?, next_sort = ?, next_local = ?, alert_cursor_ms = ? WHERE rowid = ?")
            .run(nextAtMs, nextAtMs ?? Self.noNextSort, nextLocal, alertCursorMs, rowID)
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
        return try find(db, id: id, user: user)
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
        var settingsZone: String?, profileZone: String?, allDayTime: String?, chosenLanguage: String?, locale: String?
        try db.cachedStatement(sql: """
            SELECT s.time_zone, p.time_zone, s.all_day_time, s.language, p.locale
            FROM (SELECT ? AS user_id) AS me
            LEFT JOIN settings AS s ON s.user_id = me.user_id
            LEFT JOIN person AS p ON p.user_id = me.user_id
            """
        ).forEachRow(user) { row in
            (settingsZone, profileZone, allDayTime, chosenLanguage, locale) = (row.text(0), row.text(1), row.text(2), row.text(3), row.text(4))
        }
        // The first zone that is a zone (the cache makes each once; a list or a burst of
        // alerts asks for the same few again and again).
        let zone = [settingsZone, profileZone].lazy.compactMap { $0 }.compactMap { name in ZoneCache.clock(name).map { (name, $0) } }.first
        let language = chosenLanguage ?? locale.map { String($0.prefix(2)).lowercased() } ?? "ru"
        return UserClock(
            zone: zone?.1 ?? .utc, zoneName: zone?.0 ?? "UTC",
            allDayTime: allDayTime.flatMap(LocalTime.init) ?? defaultAllDayTime, language: language == "en" ? "en" : language)
    }
}

extension FieldClocks {
    /// The clocks as stored: a JSON object of field name to RFC 3339 instant.
    init(stored: String) {
        guard stored != "{}", let object = (try? JSONParser.parse(Data(stored.utf8)))?.objectValue else {
            self.init()
            return
        }
        self.init(times: object.compactMapValues { $0.stringValue.flatMap(Instant.parse) })
    }

    var stored: String {
        var bytes: [UInt8] = []
        JSONValue.object(times.mapValues { .string(Instant.format($0)) }).write(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

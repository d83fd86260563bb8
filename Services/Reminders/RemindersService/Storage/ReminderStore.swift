import Foundation
import GRDB
import Platform

/// Making and changing reminders: one path for the user's own and for the ones
/// subscriptions, the training schedule, greetings and imports make, so every reminder
/// gets its change version, its timer and its event the same way.
enum ReminderStore {
    /// A user keeps at most this many reminders (archived ones included; purging frees room).
    static let maximumPerUser = 20_000

    static func requireRoom(_ db: Database, user: String, adding count: Int = 1) throws {
        let existing = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM reminder WHERE user_id = ?"), arguments: [user]) ?? 0
        guard existing + count <= maximumPerUser else {
            throw ServiceError.conflict("you have \(existing) reminders; purge archived ones first (at most \(maximumPerUser))", reason: "too_many_reminders")
        }
    }

    /// The defaults a new reminder takes from the user's settings.
    static func defaults(_ db: Database, user: String) throws -> (alerts: [Int], kind: NotificationKind, sound: String?) {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT default_alerts, notification_kind, sound FROM settings WHERE user_id = ?"), arguments: [user])
        let alerts = (row?["default_alerts"] as String?).flatMap { try? JSONDecoder().decode([Int].self, from: Data($0.utf8)) } ?? [0]
        return (alerts, (row?["notification_kind"] as String?).flatMap(NotificationKind.init(rawValue:)) ?? .sound, row?["sound"])
    }

    /// A new reminder's content before the request's fields apply.
    static func blank(_ db: Database, user: String) throws -> ReminderContent {
        let defaults = try defaults(db, user: user)
        return ReminderContent(
            title: "", category: .personal, importance: .normal, special: false, notificationKind: defaults.kind, sound: defaults.sound,
            timing: ReminderTiming(start: LocalDateTime(date: LocalDate(year: 2000, month: 1, day: 1), time: .midnight), allDay: false, zone: nil, rule: nil, exceptions: []),
            alerts: AlertPlan(leadMinutes: defaults.alerts), greeting: nil)
    }

    /// Inserts a new active reminder, arms it and publishes `created`.
    @discardableResult
    static func insert(
        _ db: Database, id: String, user: String, content: ReminderContent, source: String, sourceKey: String? = nil, clock: UserClock, now: Date,
        editedAt: Date? = nil
    ) throws -> ReminderRow {
        let stamp = Instant.format(now)
        var row = ReminderRow(
            rowID: 0, id: id, userID: user, content: content, status: .active, source: source, sourceKey: sourceKey, doneThrough: nil, nextAtMs: nil,
            alertCursorMs: Instant.milliseconds(now), version: 1, changeVersion: try ChangeFeed.stamp(db),
            fieldClocks: FieldClocks.all(at: editedAt ?? now), createdAt: stamp, updatedAt: stamp, closedAt: nil)
        try ReminderScheduler.arm(db, &row, clock: clock, after: now)
        try row.save(db)
        row.rowID = db.lastInsertedRowID
        if let image = content.imageID {
            try db.execute(sql: "INSERT OR IGNORE INTO platform_media_reference (owner, media_id) VALUES (?, ?)", arguments: [row.imageOwner, image])
        }
        try RemindersEvents.changed(db, row, "created", at: now)
        return row
    }

    /// Saves a changed reminder as a new version: re-armed from `now`, stamped, announced.
    static func commit(_ db: Database, _ row: inout ReminderRow, change: String, clock: UserClock, now: Date) throws {
        row.version += 1
        row.updatedAt = Instant.format(now)
        row.changeVersion = try ChangeFeed.stamp(db)
        try ReminderScheduler.rearm(db, &row, clock: clock, now: now)
        try row.save(db)
        // Deleted into the archive: a greeting still queued for it is not sent.
        if row.status == .archived { try GreetingDelivery.withdraw(db, user: row.userID, reminder: row.id) }
        try RemindersEvents.changed(db, row, change, at: now)
    }

    /// Removes a reminder for good: its row, timers, alerts and image reference; a
    /// deletion in the changes feed.
    static func purge(_ db: Database, _ row: ReminderRow, now: Date, store: MediaStore?) throws {
        try DurableTimers.cancel(db, kind: ReminderScheduler.timerKind, key: row.timerKey)
        try GreetingDelivery.withdraw(db, user: row.userID, reminder: row.id)
        for alert in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM fired_alert WHERE reminder_id = ? AND user_id = ?"), arguments: [row.id, row.userID]) {
            try DurableTimers.cancel(db, kind: ReminderScheduler.snoozeKind, key: alert)
        }
        try db.cachedStatement(sql: "DELETE FROM fired_alert WHERE reminder_id = ? AND user_id = ?").execute(arguments: [row.id, row.userID])
        try db.cachedStatement(sql: "DELETE FROM reminder WHERE rowid = ?").execute(arguments: [row.rowID])
        if let image = row.content.imageID {
            if let store {
                try MediaCatalog.release(db, image, by: row.imageOwner, store: store)
            } else {
                try db.execute(sql: "DELETE FROM platform_media_reference WHERE owner = ?", arguments: [row.imageOwner])
            }
        }
        try ChangeFeed.recordDeletion(db, entity: "reminder", id: row.id, scope: ChangeViewer.user(row.userID), at: now)
        try RemindersEvents.changed(db, row, "purged", at: now)
    }

    /// Records the zone the device reports; floating reminders follow a change.
    static func reportZone(_ db: Database, user: String, zone: String?, now: Date) throws {
        guard let zone, ZoneClock(identifier: zone) != nil else { return }
        let current = try String.fetchOne(db.cachedStatement(sql: "SELECT time_zone FROM settings WHERE user_id = ?"), arguments: [user])
        guard current != zone else { return }
        try db.cachedStatement(sql: """
                INSERT INTO settings (user_id, time_zone, change_version, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone, change_version = excluded.change_version, updated_at = excluded.updated_at
                """).execute(arguments: [user, zone, try ChangeFeed.stamp(db), Instant.format(now)])
        try FollowClock.start(db, user: user, allDay: false, now: now)
    }
}

extension ReminderRow {
    init(
        rowID: Int64, id: String, userID: String, content: ReminderContent, status: ReminderStatus, source: String, sourceKey: String?,
        doneThrough: LocalDateTime?, nextAtMs: Int64?, alertCursorMs: Int64, version: Int, changeVersion: Int64, fieldClocks: FieldClocks,
        createdAt: String, updatedAt: String, closedAt: String?
    ) {
        self.rowID = rowID
        self.id = id
        self.userID = userID
        self.content = content
        self.status = status
        self.source = source
        self.sourceKey = sourceKey
        self.doneThrough = doneThrough
        self.nextAtMs = nextAtMs
        self.nextLocal = nil
        self.alertCursorMs = alertCursorMs
        self.version = version
        self.changeVersion = changeVersion
        self.fieldTimes = fieldClocks.stored
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.closedAt = closedAt
    }
}

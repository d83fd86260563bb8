import Foundation
import GRDB
import Platform

/// The scheduler, on the platform's durable timers: one keyed timer per active reminder,
/// set for the earlier of its next alert and its next occurrence, in the transaction that
/// changes the reminder. Firing publishes `reminders.due` for every alert point up to the
/// timer's instant that was not published yet (the reminder's `alert_cursor_ms`), moves
/// the reminder's next occurrence on and sets the timer again, all in one transaction:
/// each alert is published exactly once, also across restarts (what fell due while the
/// service was down fires at start-up, marked `late`). Alerts more than a day overdue
/// are not sent any more (a reminder that was due three days ago while the service was
/// down alerts for the last day only).
///
/// A reminder edited or deleted before it fires never fires in its old form: every change
/// sets its timer again from the new content (or removes it), and the alert cursor moves
/// to the change, so points that passed before it are not sent late.
enum ReminderScheduler {
    static let timerKind = "reminders.alert"
    static let snoozeKind = "reminders.snooze"
    /// Overdue alerts older than this are skipped, not sent late.
    static let missedWindow: TimeInterval = 86_400
    /// An alert sent this long after its instant is late (as is any that fell due while
    /// the service was down).
    static let lateAfter: TimeInterval = 60


    /// Derives the row's next occurrence from its content as it stands after `after`, and
    /// sets (or removes) its timer. The caller saves the row.
    static func arm(_ db: Database, _ row: inout ReminderRow, clock: UserClock, after: Date, series known: RecurrenceSeries? = nil) throws {
        guard row.status == .active,
            let series = known ?? (try? row.content.timing.series(userZone: clock.zone, allDayTime: clock.allDayTime))
        else {
            row.nextAtMs = nil
            row.nextLocal = nil
            try DurableTimers.cancel(db, kind: timerKind, key: row.timerKey)
            return
        }
        let outlook = ReminderOutlook(series: series, timing: row.content.timing, alerts: row.content.alerts, doneThrough: row.doneThrough, after: after)
        row.nextAtMs = outlook.nextOccurrence.map { Instant.milliseconds($0.instant) }
        row.nextLocal = outlook.nextOccurrence.map { ReminderViews.localText(
            zone: row.content.timing.zone, allDay: row.content.timing.allDay, at: $0.instant, userZone: clock.zone) }
        if let wake = outlook.wake {
            try DurableTimers.schedule(db, kind: timerKind, at: wake, key: row.timerKey)
        } else {
            try DurableTimers.cancel(db, kind: timerKind, key: row.timerKey)
        }
    }

    /// A change by the user at `now`: alerts before it are not sent, the next ones come
    /// from the new content.
    static func rearm(_ db: Database, _ row: inout ReminderRow, clock: UserClock, now: Date) throws {
        row.alertCursorMs = max(row.alertCursorMs, Instant.milliseconds(now))
        try arm(db, &row, clock: clock, after: now)
    }

    static let handler = TimerHandler(kind: timerKind) { db, timer in
        guard let key = timer.key, var row = try ReminderRow.load(db, timerKey: key), row.status == .active else { return }
        let clock = try UserClock.load(db, user: row.userID)
        guard let series = try? row.content.timing.series(userZone: clock.zone, allDayTime: clock.allDayTime) else { return }
        // Everything up to now has elapsed: a timer fired late catches up at once.
        let now = timer.firedAt
        let horizon = max(timer.dueAt, now)
        var cursor = max(Instant.date(milliseconds: row.alertCursorMs), now.addingTimeInterval(-missedWindow))
        var published = 0
        let timing = row.content.timing, doneThrough = row.doneThrough
        let isDone = { (occurrence: Occurrence) in timing.isDone(occurrence, doneThrough: doneThrough) }
        while published < 100 {
            // Every point at the next instant: two occurrences' alerts may fall together.
            let points = row.content.alerts.nextPoints(in: series, after: cursor, isDone: isDone)
            guard let at = points.first?.at, at <= horizon else { break }
            for point in points {
                try publish(db, row, point: point, now: now, late: timer.late || now.timeIntervalSince(point.at) > lateAfter, clock: clock)
                published += 1
            }
            cursor = at
        }
        row.alertCursorMs = max(row.alertCursorMs, Instant.milliseconds(horizon))
        try arm(db, &row, clock: clock, after: horizon, series: series)
        try row.saveSchedule(db)
    }

    /// Publishes one alert: a `fired_alert` row (the id a snooze names) and `reminders.due`.
    static func publish(_ db: Database, _ row: ReminderRow, point: AlertPoint, now: Date, late: Bool, clock: UserClock) throws {
        let alertID = RecordID.make(prefix: "alr", at: now)
        let local = row.content.timing.wireText(point.occurrence)
        try db.cachedStatement(sql: """
                INSERT INTO fired_alert (id, reminder_id, user_id, occurrence_local, occurrence_ms, fired_ms) VALUES (?, ?, ?, ?, ?, ?)
                """).run(alertID, row.id, row.userID, local, Instant.milliseconds(point.occurrence.instant), Instant.milliseconds(now))
        // Alerts are kept 30 days for snoozing; a few old ones go with each new one.
        try db.cachedStatement(sql: "DELETE FROM fired_alert WHERE id IN (SELECT id FROM fired_alert WHERE fired_ms < ? LIMIT 8)")
            .run(Instant.milliseconds(now) - 30 * 86_400_000)
        let kind: RemindersEvents.DueKind
        switch point.kind {
        case .lead(let minutes): kind = .alert(minutesBefore: minutes)
        case .repeated(let number): kind = .repeated(number)
        }
        try RemindersEvents.due(db, row, alertID: alertID, occurrenceLocal: local, occurrence: point.occurrence.instant, at: point.at, now: now, late: late, kind: kind)
        try NotificationSources.reminderDue(db, row, alertID: alertID, occurrenceLocal: local, now: now, clock: clock)
        try GreetingDelivery.send(db, row, point: point, alertID: alertID, clock: clock, now: now)
    }

    /// A snoozed alert comes again, unless its reminder was deleted, completed or that
    /// occurrence marked done meanwhile.
    static let snoozeHandler = TimerHandler(kind: snoozeKind) { db, timer in
        guard let alertID = timer.key,
            let alert = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM fired_alert WHERE id = ?"), arguments: [alertID]),
            let row = try ReminderRow.find(db, id: alert["reminder_id"], user: alert["user_id"]), row.status == .active
        else { return }
        let local: String = alert["occurrence_local"]
        if let done = row.doneThrough, let occurrence = LocalText.occurrence(local), occurrence <= done { return }
        // An edit since may have moved or removed that occurrence: a snooze never brings back
        // an occurrence the reminder no longer has.
        let clock = try UserClock.load(db, user: row.userID)
        guard let series = try? row.content.timing.series(userZone: clock.zone, allDayTime: clock.allDayTime) else { return }
        let was = Instant.date(milliseconds: alert["occurrence_ms"])
        let near = series.occurrences(from: was.addingTimeInterval(-2 * 86_400), through: was.addingTimeInterval(2 * 86_400), limit: 200)
        guard near.contains(where: { row.content.timing.wireText($0) == local }) else { return }
        try db.cachedStatement(sql: "UPDATE fired_alert SET snoozed_until_ms = NULL WHERE id = ?").execute(arguments: [alertID])
        try RemindersEvents.due(
            db, row, alertID: alertID, occurrenceLocal: local, occurrence: was, at: timer.dueAt, now: timer.firedAt,
            late: timer.late, kind: .snooze)
        // The snoozed alert's push is a new notification (its first one was already read).
        try NotificationSources.reminderDue(
            db, row, alertID: alertID, occurrenceLocal: local, now: timer.firedAt, clock: clock,
            again: "snooze.\(Instant.milliseconds(timer.dueAt))")
    }
}

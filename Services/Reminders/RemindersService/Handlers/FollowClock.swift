import Foundation
import GRDB
import Platform

/// Re-arming a user's reminders after their clock changed (a new reported zone moves
/// floating reminders, a new all-day time all-day ones), in batches of ``batch`` by rowid:
/// the first in the request's transaction, the rest each in a timer's transaction of its
/// own, one after another, so other users' writes go between them. A newer change starts
/// over from the first reminder (the keyed timer is replaced).
enum FollowClock {
    static let timerKind = "reminders.follow"
    static let batch = 200

    struct Progress: Codable, Sendable {
        var user: String
        var afterRowID: Int64
        var allDay: Bool
    }

    static func start(_ db: Database, user: String, allDay: Bool, now: Date) throws {
        try step(db, Progress(user: user, afterRowID: 0, allDay: allDay), now: now)
    }

    /// Re-arms one batch; schedules the next when there is more.
    static func step(_ db: Database, _ progress: Progress, now: Date) throws {
        let clock = try UserClock.load(db, user: progress.user)
        let which = progress.allDay ? "(zone IS NULL OR all_day = 1)" : "zone IS NULL"
        let rows = try ReminderRow.fetchAll(
            db, where: "user_id = ? AND status = 'active' AND \(which) AND rowid > ? ORDER BY rowid LIMIT ?", [progress.user, progress.afterRowID, batch])
        var last = progress.afterRowID
        for var reminder in rows {
            try ReminderScheduler.rearm(db, &reminder, clock: clock, now: now)
            try reminder.saveSchedule(db)
            last = reminder.rowID
        }
        if rows.count == batch {
            try DurableTimers.schedule(
                db, kind: timerKind, at: now, key: progress.user, payload: Progress(user: progress.user, afterRowID: last, allDay: progress.allDay))
        } else {
            try DurableTimers.cancel(db, kind: timerKind, key: progress.user)
        }
    }

    static let handler = TimerHandler(kind: timerKind) { db, timer in
        try step(db, try timer.payload(as: Progress.self), now: timer.firedAt)
    }
}

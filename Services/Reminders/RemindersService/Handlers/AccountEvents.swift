import Foundation
import GRDB
import Platform

/// Auth's events reminders applies. A deleted account's reminders, settings,
/// subscriptions, alerts and timers go. A profile's first name, birth date, locale and
/// zone are kept: the zone is the default of floating reminders until a device reports
/// one, and the birth date makes a yearly birthday greeting (all-day, in the user's
/// language; 29 February greets on 28 February in common years), changed or removed with
/// the profile.
enum AccountEvents {
    static var subscription: EventSubscription {
        EventSubscription(source: "auth", types: ["auth.user.deleted", "auth.user.profile_changed"]) { db, event in
            guard let user = event.data["userId"]?.stringValue else { return }
            let now = Date()
            if event.type == "auth.user.deleted" {
                try remove(db, user: user, at: now)
                return
            }
            func text(_ name: String) -> String? { event.data[name]?.stringValue }
            let zone = text("timeZone").flatMap { ZoneClock(identifier: $0) != nil ? $0 : nil }
            let birth = text("birthDate").flatMap(LocalDate.init)
            let zoneBefore = try String.fetchOne(db.cachedStatement(sql: "SELECT time_zone FROM person WHERE user_id = ?"), arguments: [user])
            try db.cachedStatement(sql: """
                    INSERT INTO person (user_id, first_name, birth_date, locale, time_zone) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET first_name = excluded.first_name, birth_date = excluded.birth_date,
                        locale = excluded.locale, time_zone = excluded.time_zone
                    """).execute(arguments: [user, text("firstName"), birth?.description, text("locale"), zone])
            try greetBirthday(db, user: user, firstName: text("firstName"), birthDate: birth, now: now)
            // Floating reminders follow the profile's zone while no device has reported one.
            if zoneBefore != zone { try FollowClock.start(db, user: user, allDay: false, now: now) }
        }
    }

    static let birthdayKey = "greeting:birthday"

    static func birthdayTitle(language: String, firstName: String?) -> String {
        let name = firstName.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        if language == "ru" { return name.map { "С днём рождения, \($0)!" } ?? "С днём рождения!" }
        return name.map { "Happy birthday, \($0)!" } ?? "Happy birthday!"
    }

    /// Makes, changes or removes the user's own birthday greeting.
    static func greetBirthday(_ db: Database, user: String, firstName: String?, birthDate: LocalDate?, now: Date) throws {
        let existing = try ReminderRow.bySource(db, user: user, key: birthdayKey)
        guard let birthDate else {
            if let existing { try ReminderStore.purge(db, existing, now: now, store: nil) }
            return
        }
        let clock = try UserClock.load(db, user: user)
        var content = try existing?.content ?? ReminderStore.blank(db, user: user)
        content.title = birthdayTitle(language: clock.language, firstName: firstName)
        content.category = .birthday
        content.special = true
        content.timing = ReminderTiming(
            start: LocalDateTime(date: birthDate, time: .midnight), allDay: true, zone: nil,
            rule: try? RecurrenceRule.parse("FREQ=YEARLY;SKIP=BACKWARD"), exceptions: [])
        content.alerts = AlertPlan(leadMinutes: [0])
        if var row = existing {
            guard row.content != content || row.status != .active else { return }
            row.content = content
            row.status = .active
            row.closedAt = nil
            try ReminderStore.commit(db, &row, change: "updated", clock: clock, now: now)
        } else {
            try ReminderStore.insert(
                db, id: RecordID.make(prefix: "rem", at: now), user: user, content: content, source: "birthday", sourceKey: birthdayKey, clock: clock, now: now)
        }
    }

    static func remove(_ db: Database, user: String, at date: Date) throws {
        for id in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM reminder WHERE user_id = ?"), arguments: [user]) {
            try DurableTimers.cancel(db, kind: ReminderScheduler.timerKind, key: ReminderRow.timerKey(user: user, id: id))
            try db.execute(sql: "DELETE FROM platform_media_reference WHERE owner = ?", arguments: [ReminderRow.imageOwner(user: user, id: id)])
        }
        for alert in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM fired_alert WHERE user_id = ?"), arguments: [user]) {
            try DurableTimers.cancel(db, kind: ReminderScheduler.snoozeKind, key: alert)
        }
        try DurableTimers.cancel(db, kind: FollowClock.timerKind, key: user)
        for subscription in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM subscription WHERE user_id = ?"), arguments: [user]) {
            try DurableTimers.cancel(db, kind: SubscriptionOperations.timerKind, key: subscription)
        }
        try db.cachedStatement(sql: "DELETE FROM fired_alert WHERE user_id = ?").execute(arguments: [user])
        try GreetingDelivery.forget(db, user: user)
        try db.cachedStatement(sql: "DELETE FROM reminder WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM subscription WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM settings WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM person WHERE user_id = ?").execute(arguments: [user])
        // Devices and whatever is still queued for them, preferences, history.
        for token in try String.fetchAll(db.cachedStatement(sql: "SELECT token FROM push_device WHERE user_id = ?"), arguments: [user]) {
            try DeliveryOutbox.forget(db, destination: token)
        }
        for table in ["push_device", "push_preference", "notification", "push_role"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE user_id = ?", arguments: [user])
        }
        try MediaCatalog.forget(db, user: user)
        try IdempotencyStore.forget(db, user: user)
        try Outbox.redact(db, user: user, as: "deleted")
        try DeletedUsers.record(db, user: user, at: Instant.format(date))
    }
}

import Foundation
import GRDB
import Platform

/// Auth's events savings applies: a deleted account's plans and deposits go (with their
/// reminders and idempotency records; stored events keep what happened, not to whom);
/// a profile's time zone becomes the default zone of the user's new plans.
enum UserDeletion {
    static func remove(_ db: Database, user: String, at date: Date) throws {
        for plan in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM plan WHERE user_id = ?"), arguments: [user]) {
            try DurableTimers.cancel(db, kind: InstallmentReminders.timerKind, key: plan)
        }
        try db.cachedStatement(sql: "DELETE FROM deposit WHERE plan_id IN (SELECT id FROM plan WHERE user_id = ?)").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM plan WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM person WHERE user_id = ?").execute(arguments: [user])
        try IdempotencyStore.forget(db, user: user)
        try Outbox.redact(db, user: user, as: "deleted")
        try DeletedUsers.record(db, user: user, at: Instant.format(date))
        LastWrittenPlans.shared.forget(user: user)
    }

    static var subscription: EventSubscription {
        EventSubscription(source: "auth", types: ["auth.user.deleted", "auth.user.profile_changed"]) { db, event in
            guard let user = event.data["userId"]?.stringValue else { return }
            if event.type == "auth.user.deleted" {
                try remove(db, user: user, at: Date())
                return
            }
            // A zone the platform knows, or none (cleared); an unknown one leaves none either.
            let zone = event.data["timeZone"]?.stringValue.flatMap { StringFormat.timeZone.accepts($0) && ZoneClock(identifier: $0) != nil ? $0 : nil }
            try db.cachedStatement(sql: "INSERT INTO person (user_id, time_zone) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone")
                .execute(arguments: [user, zone])
        }
    }
}

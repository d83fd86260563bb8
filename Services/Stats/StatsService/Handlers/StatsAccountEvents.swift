import Foundation
import GRDB
import Platform

/// Auth's events stats applies: a deleted account's workouts and preferences go (with its
/// idempotency records; stored events keep what happened, not to whom).
enum StatsAccountEvents {
    static func remove(_ db: Database, user: String, at date: Date) throws {
        try db.cachedStatement(sql: "DELETE FROM workout_exercise WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM workout WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM training_day WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM preferences WHERE user_id = ?").execute(arguments: [user])
        try IdempotencyStore.forget(db, user: user)
        try Outbox.redact(db, user: user, as: "deleted")
        try DeletedUsers.record(db, user: user, at: Instant.format(date))
    }

    static var subscription: EventSubscription {
        EventSubscription(source: "auth", types: ["auth.user.deleted"]) { db, event in
            guard let user = event.data["userId"]?.stringValue else { return }
            try remove(db, user: user, at: Date())
        }
    }
}

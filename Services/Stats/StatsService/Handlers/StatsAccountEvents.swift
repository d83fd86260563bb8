import Foundation
import GRDB
import Platform

/// A deleted account (auth's `auth.user.deleted`, applied by ``CrossAppEvents/auth``): its
/// workouts, preferences and cross-app figures go (with its idempotency records; stored
/// events keep what happened, not to whom; the admins' daily counts keep no ids).
enum StatsAccountEvents {
    static func remove(_ db: Database, user: String, at date: Date) throws {
        try db.cachedStatement(sql: "DELETE FROM workout_exercise WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM workout WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM training_day WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM preferences WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM app_month WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM booking_mark WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM savings_plan_month WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM history_reset WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM goal_progress WHERE user_id = ?").execute(arguments: [user])
        try db.cachedStatement(sql: "DELETE FROM active_user WHERE user_id = ?").execute(arguments: [user])
        try IdempotencyStore.forget(db, user: user)
        try Outbox.redact(db, user: user, as: "deleted")
        try DeletedUsers.record(db, user: user, at: Instant.format(date))
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import StatsService

/// The other apps' events as stats applies them, on a real service database: what each
/// adds to the monthly and daily figures, and a deleted account's figures going.
@Suite("Cross-app statistics from events")
struct CrossAppEventsTests {
    static func apply(_ db: Database, _ subscription: EventSubscription, _ type: String, at: String, _ data: JSONValue) throws {
        try subscription.apply(db, Event(source: subscription.source, seq: 1, type: type, at: at, data: data))
    }

    static func figure(_ db: Database, user: String, app: String, metric: String, month: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT value FROM app_month WHERE user_id = ? AND app = ? AND metric = ? AND month = ?", arguments: [user, app, metric, month])
    }

    @Test("savings, bookings and goals add to the user's months (a corrected attendance mark moves, never counts twice); registrations, active users, events per service and goal states to the admins'")
    func figures() throws {
        let directory = try TemporaryDirectory(prefix: "cross-app")
        let pool = try ServiceDatabase.open(directory: directory.url, name: "stats", durability: .normal) { StatsMigrations.register(in: &$0) }
        try pool.write { db in
            let amount: (Int64) -> JSONValue = { ["minor": .integer($0), "currency": "EUR"] }
            try Self.apply(db, CrossAppEvents.savings, "savings.deposit.recorded", at: "2026-11-03T10:00:00.000Z", ["userId": "ann", "amount": amount(1_500)])
            try Self.apply(db, CrossAppEvents.savings, "savings.deposit.recorded", at: "2026-11-20T10:00:00.000Z", ["userId": "ann", "amount": amount(500)])
            try Self.apply(db, CrossAppEvents.savings, "savings.deposit.undone", at: "2026-11-21T10:00:00.000Z", ["userId": "ann", "amount": amount(500)])
            try Self.apply(db, CrossAppEvents.savings, "savings.deposit.recorded", at: "2026-12-01T00:00:00.000Z", ["userId": "ann", "amount": amount(700)])
            try Self.apply(db, CrossAppEvents.savings, "savings.plan.completed", at: "2026-12-01T00:00:00.000Z", ["userId": "ann"])
            #expect(try Self.figure(db, user: "ann", app: "savings", metric: "saved:EUR", month: "2026-11") == 1_500)
            #expect(try Self.figure(db, user: "ann", app: "savings", metric: "saved:EUR", month: "2026-12") == 700)
            #expect(try Self.figure(db, user: "ann", app: "savings", metric: "plans_completed", month: "2026-12") == 1)

            for (type, booking) in [
                ("booking.attended", "b1"), ("booking.attended", "b2"), ("booking.late_cancelled", "b3"), ("booking.cancelled_by_park", "b4"),
                ("booking.no_show", "b5"),
            ] {
                try Self.apply(db, CrossAppEvents.booking, type, at: "2026-11-05T18:00:00.000Z", ["userId": "ann", "bookingId": .string(booking)])
            }
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "attended", month: "2026-11") == 2)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "late", month: "2026-11") == 1)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "cancelled", month: "2026-11") == 1)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "no_show", month: "2026-11") == 1)
            // Staff correct b2's mark the next month (twice, as a retried request would): it moves once.
            for _ in 0..<2 {
                try Self.apply(db, CrossAppEvents.booking, "booking.no_show", at: "2026-12-02T09:00:00.000Z", ["userId": "ann", "bookingId": "b2"])
            }
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "attended", month: "2026-11") == 1)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "no_show", month: "2026-12") == 1)
            try Self.apply(db, CrossAppEvents.booking, "booking.attended", at: "2026-12-03T09:00:00.000Z", ["userId": "ann", "bookingId": "b2"])
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "no_show", month: "2026-12") == 0)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "attended", month: "2026-12") == 1)

            let goal: (String, Int?) -> JSONValue = { state, progress in
                ["goalId": "g1", "recipientId": "bob", "state": .string(state), "progress": progress.map { .integer(Int64($0)) } ?? .null]
            }
            try Self.apply(db, CrossAppEvents.goals, "goals.created", at: "2026-11-05T08:00:00.000Z", goal("draft", nil))
            try Self.apply(db, CrossAppEvents.goals, "goals.progress.changed", at: "2026-11-06T08:00:00.000Z", goal("active", 40))
            try Self.apply(db, CrossAppEvents.goals, "goals.item.checked", at: "2026-11-06T09:00:00.000Z", ["goalId": "g1", "recipientId": "bob"])
            try Self.apply(db, CrossAppEvents.goals, "goals.completed", at: "2026-11-07T08:00:00.000Z", goal("completed", 100))
            #expect(try Self.figure(db, user: "bob", app: "goals", metric: "items_done", month: "2026-11") == 1)
            #expect(try Self.figure(db, user: "bob", app: "goals", metric: "goals_completed", month: "2026-11") == 1)
            #expect(try Int.fetchAll(db, sql: "SELECT percent FROM goal_progress WHERE goal_id = 'g1' ORDER BY at") == [40, 100])
            #expect(try String.fetchOne(db, sql: "SELECT state FROM goal_state WHERE goal_id = 'g1'") == "completed")

            try Self.apply(db, CrossAppEvents.auth, "auth.user.registered", at: "2026-11-05T07:00:00.000Z", ["userId": "cid", "roles": []])
            #expect(try Int.fetchOne(db, sql: "SELECT value FROM admin_day WHERE day = '2026-11-05' AND metric = 'registered'") == 1)
            #expect(try Int.fetchOne(db, sql: "SELECT value FROM admin_day WHERE day = '2026-11-05' AND metric = 'events:booking'") == 5)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM active_user WHERE day = '2026-11-05'") == 3)

            // A deleted account's figures go; the admins' counts keep no ids and stay.
            try Self.apply(db, CrossAppEvents.auth, "auth.user.deleted", at: "2026-11-22T00:00:00.000Z", ["userId": "ann"])
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM app_month WHERE user_id = 'ann'") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM booking_mark WHERE user_id = 'ann'") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM active_user WHERE user_id = 'ann'") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT value FROM admin_day WHERE day = '2026-11-05' AND metric = 'events:booking'") == 5)
        }
        try pool.close()
    }

    @Test("the admins' active users and events per service count sign-ins, bookings made and the fitness app's own workouts")
    func whatUsersDid() throws {
        let directory = try TemporaryDirectory(prefix: "cross-app-active")
        let pool = try ServiceDatabase.open(directory: directory.url, name: "stats", durability: .normal) { StatsMigrations.register(in: &$0) }
        try pool.write { db in
            try Self.apply(db, CrossAppEvents.auth, "auth.user.signed_in", at: "2026-11-05T07:00:00.000Z", ["userId": "ann", "method": "email"])
            try Self.apply(db, CrossAppEvents.booking, "booking.created", at: "2026-11-05T08:00:00.000Z", ["userId": "bob", "bookingId": "b9"])
            let summary = WorkoutOperations.summary(id: "w1", done: 3, skipped: 0, score: 300, repetitions: 30)
            let at = try #require(Instant.parse("2026-11-05T09:00:00.000Z"))
            try StatsEvents.workoutCompleted(db, user: "cid", summary: summary, startedMs: Instant.milliseconds(at) - 600_000, endedMs: Instant.milliseconds(at), at: at)
            let events = try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT metric, value FROM admin_day WHERE day = '2026-11-05'").map { ($0[0] as String, $0[1] as Int) })
            #expect(events == ["events:auth": 1, "events:booking": 1, "events:stats": 1])
            #expect(try String.fetchAll(db, sql: "SELECT user_id FROM active_user WHERE day = '2026-11-05' ORDER BY user_id") == ["ann", "bob", "cid"])
            // A booking made is no outcome: nothing is added to the rider's months.
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM app_month WHERE user_id = 'bob'") == 0)
        }
        try pool.close()
    }
}

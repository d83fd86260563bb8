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

    @Test("savings, bookings and goals add to the user's months; registrations, active users, events per service and goal states to the admins'")
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

            for type in ["booking.attended", "booking.attended", "booking.late_cancelled", "booking.cancelled_by_park", "booking.no_show"] {
                try Self.apply(db, CrossAppEvents.booking, type, at: "2026-11-05T18:00:00.000Z", ["userId": "ann", "bookingId": "b"])
            }
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "attended", month: "2026-11") == 2)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "late", month: "2026-11") == 1)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "cancelled", month: "2026-11") == 1)
            #expect(try Self.figure(db, user: "ann", app: "booking", metric: "no_show", month: "2026-11") == 1)

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
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM active_user WHERE user_id = 'ann'") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT value FROM admin_day WHERE day = '2026-11-05' AND metric = 'events:booking'") == 5)
        }
        try pool.close()
    }
}

import Foundation
import GRDB
import Platform

/// The statistics of the other apps, kept from their events (through the platform's
/// subscriber: each event is applied in the transaction that moves the cursor, so a
/// replayed event never counts twice): per user and month, savings (saved per currency,
/// plans completed), bookings (attended, cancelled, cancelled late, missed) and goals
/// (items done, goals completed, progress over time); for admins, per day, registrations,
/// active users and events per service, and goals by state. Months and days are UTC.
enum CrossAppEvents {
    /// Adds `delta` to a user's monthly figure.
    static func add(_ db: Database, user: String, app: String, metric: String, month: String, _ delta: Int64) throws {
        try db.cachedStatement(sql: """
                INSERT INTO app_month (user_id, app, metric, month, value) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (user_id, app, metric, month) DO UPDATE SET value = value + excluded.value
                """
        ).execute(arguments: [user, app, metric, month, delta])
    }

    /// Counts the event for the admin figures: its service's events that day, its user active.
    static func seen(_ db: Database, _ event: Event, user: String?) throws {
        try seen(db, source: event.source, day: String(event.at.prefix(10)), user: user)
    }

    /// Counts one thing a user did in `source` on the UTC `day` (stats counts its own
    /// workouts so: a fitness-assistant user who only trains is active too).
    static func seen(_ db: Database, source: String, day: String, user: String?) throws {
        try db.cachedStatement(sql: """
                INSERT INTO admin_day (day, metric, value) VALUES (?, ?, 1) ON CONFLICT (day, metric) DO UPDATE SET value = value + 1
                """
        ).execute(arguments: [day, "events:\(source)"])
        if let user { try db.cachedStatement(sql: "INSERT OR IGNORE INTO active_user (day, user_id) VALUES (?, ?)").execute(arguments: [day, user]) }
    }

    static func month(_ event: Event) -> String { String(event.at.prefix(7)) }

    static let savingsTypes: Set<String> = [
        "savings.deposit.recorded", "savings.deposit.undone", "savings.plan.completed", "savings.plan.reopened", "savings.plan.deleted",
    ]

    static var savings: EventSubscription {
        EventSubscription(source: "savings", types: savingsTypes) { db, event in
            guard let user = event.data["userId"]?.stringValue else { return }
            try seen(db, event, user: user)
            let plan = event.data["planId"]?.stringValue
            switch event.type {
            case "savings.deposit.recorded", "savings.deposit.undone":
                guard let minor = event.data["amount"]?["minor"]?.integerValue, let currency = event.data["amount"]?["currency"]?.stringValue else { return }
                try addForPlan(db, plan, user: user, metric: "saved:\(currency)", month: month(event), event.type == "savings.deposit.recorded" ? minor : -minor)
            case "savings.plan.completed": try addForPlan(db, plan, user: user, metric: "plans_completed", month: month(event), 1)
            case "savings.plan.reopened": try addForPlan(db, plan, user: user, metric: "plans_completed", month: month(event), -1)
            default:
                // Deleted, with its deposits, from the user's history: what it added goes.
                guard let plan else { return }
                let added = try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT metric, month, value FROM savings_plan_month WHERE plan_id = ? AND user_id = ?"),
                    arguments: [plan, user])
                for row in added where row["value"] as Int64 != 0 {
                    try add(db, user: user, app: "savings", metric: row["metric"], month: row["month"], -(row["value"] as Int64))
                }
                try db.cachedStatement(sql: "DELETE FROM savings_plan_month WHERE plan_id = ?").execute(arguments: [plan])
            }
        }
    }

    /// Adds to a user's savings figure and remembers it as the plan's, for its deletion.
    static func addForPlan(_ db: Database, _ plan: String?, user: String, metric: String, month: String, _ delta: Int64) throws {
        try add(db, user: user, app: "savings", metric: metric, month: month, delta)
        guard let plan else { return }
        try db.cachedStatement(sql: """
                INSERT INTO savings_plan_month (plan_id, metric, month, user_id, value) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (plan_id, metric, month) DO UPDATE SET value = value + excluded.value
                """
        ).execute(arguments: [plan, metric, month, user, delta])
    }

    /// Booking events and the figure each adds to.
    static let bookingMetrics = [
        "booking.attended": "attended", "booking.cancelled": "cancelled", "booking.cancelled_by_park": "cancelled",
        "booking.late_cancelled": "late", "booking.no_show": "no_show",
    ]

    static var booking: EventSubscription {
        EventSubscription(source: "booking", types: Set(bookingMetrics.keys).union(["booking.created"])) { db, event in
            guard let user = event.data["userId"]?.stringValue else { return }
            try seen(db, event, user: user)
            guard let metric = bookingMetrics[event.type] else { return }
            if metric == "attended" || metric == "no_show", let booking = event.data["bookingId"]?.stringValue {
                try mark(db, booking: booking, user: user, metric: metric, month: month(event))
            } else {
                try add(db, user: user, app: "booking", metric: metric, month: month(event), 1)
            }
        }
    }

    /// Counts a booking's attendance mark once: staff may correct it (attended ↔ no_show),
    /// and the correction moves the booking from the old figure (in the month it was
    /// counted) to the new one.
    static func mark(_ db: Database, booking: String, user: String, metric: String, month: String) throws {
        if let previous = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT metric, month FROM booking_mark WHERE booking_id = ?"), arguments: [booking])
        {
            let (oldMetric, oldMonth): (String, String) = (previous[0], previous[1])
            guard oldMetric != metric else { return }
            try add(db, user: user, app: "booking", metric: oldMetric, month: oldMonth, -1)
        }
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO booking_mark (booking_id, user_id, metric, month) VALUES (?, ?, ?, ?)")
            .execute(arguments: [booking, user, metric, month])
        try add(db, user: user, app: "booking", metric: metric, month: month, 1)
    }

    static let goalStateTypes: Set<String> = ["goals.created", "goals.activated", "goals.withdrawn", "goals.completed", "goals.failed", "goals.progress.changed"]

    static var goals: EventSubscription {
        EventSubscription(source: "goals", types: goalStateTypes.union(["goals.item.checked", "goals.item.unchecked"])) { db, event in
            guard let user = event.data["recipientId"]?.stringValue, let goal = event.data["goalId"]?.stringValue else { return }
            try seen(db, event, user: user)
            switch event.type {
            case "goals.item.checked": try add(db, user: user, app: "goals", metric: "items_done", month: month(event), 1)
            case "goals.item.unchecked": try add(db, user: user, app: "goals", metric: "items_done", month: month(event), -1)
            default:
                if let state = event.data["state"]?.stringValue {
                    try db.cachedStatement(sql: "INSERT INTO goal_state (goal_id, state) VALUES (?, ?) ON CONFLICT (goal_id) DO UPDATE SET state = excluded.state")
                        .execute(arguments: [goal, state])
                }
                if event.type == "goals.completed" { try add(db, user: user, app: "goals", metric: "goals_completed", month: month(event), 1) }
                if let percent = event.data["progress"]?.integerValue {
                    try db.cachedStatement(sql: "INSERT OR REPLACE INTO goal_progress (user_id, goal_id, at, percent) VALUES (?, ?, ?, ?)")
                        .execute(arguments: [user, goal, event.at, percent])
                }
            }
        }
    }

    /// Auth's events: registrations (admin figures), profiles (their zone and language are
    /// a new user's defaults) and deleted accounts (everything of the user goes,
    /// ``StatsAccountEvents``).
    static var auth: EventSubscription {
        EventSubscription(source: "auth", types: ["auth.user.registered", "auth.user.deleted", "auth.user.profile_changed", "auth.user.signed_in"]) { db, event in
            guard let user = event.data["userId"]?.stringValue else { return }
            if event.type == "auth.user.signed_in" {
                try seen(db, event, user: user)
                return
            }
            if event.type == "auth.user.deleted" {
                try StatsAccountEvents.remove(db, user: user, at: Date())
                return
            }
            if event.type == "auth.user.profile_changed" {
                // The profile's zone and language are the defaults until the app sets its own.
                let zone = event.data["timeZone"]?.stringValue.flatMap { ZoneClock(identifier: $0) != nil ? $0 : nil }
                let language = event.data["locale"]?.stringValue.map { String($0.prefix(2)).lowercased() }.flatMap { ["de", "en"].contains($0) ? $0 : nil }
                guard try !UserPreferences.exists(db, user: user) else { return }
                var stored = try UserPreferences.load(db, user: user)
                let zoneBefore = stored.timeZone
                if let zone { stored.timeZone = zone }
                stored.language = language
                try stored.save(db, user: user, now: Date())
                // Workouts uploaded before any zone was known counted UTC days.
                if stored.timeZone != zoneBefore { try TrainingDays.follow(db, user: user, clock: stored.clock) }
                return
            }
            try seen(db, event, user: user)
            try db.cachedStatement(sql: """
                    INSERT INTO admin_day (day, metric, value) VALUES (?, 'registered', 1) ON CONFLICT (day, metric) DO UPDATE SET value = value + 1
                    """
            ).execute(arguments: [String(event.at.prefix(10))])
        }
    }

    static var all: [EventSubscription] { [auth, savings, booking, goals] }
}

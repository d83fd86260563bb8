import Foundation
import GRDB
import Platform

/// The other apps' statistics screens, from ``CrossAppEvents``: a user's own overview
/// (BuckStash's history, the park's session counts, the goals app's progress) and the
/// admins' monitoring of activity (the goals app's "monitoring of user activity").
struct OverviewOperations: Sendable {
    var all: [ServiceOperation] { [overview, admin] }

    struct MonthsRequest: Codable, Sendable {
        var months: Int?
    }

    static let monthSchema = JSONSchema.object(
        ["month": JSONSchema.string().described("YYYY-MM, UTC"), "figures": JSONSchema.object([:], additional: .integer()).described("metric → value")],
        required: ["month", "figures"])

    static let appSchema = JSONSchema.array(of: monthSchema, maxItems: 36)

    /// A user's figures of one app per month, newest first, from `since` (YYYY-MM).
    static func months(_ db: Database, user: String, app: String, since: String) throws -> JSONValue {
        var months: [(String, [String: JSONValue])] = []
        try db.cachedStatement(sql: "SELECT month, metric, value FROM app_month WHERE user_id = ? AND app = ? AND month >= ? ORDER BY month DESC, metric")
            .forEachRow(arguments: [user, app, since]) { row in
                let month = row.string(0)
                if months.last?.0 != month { months.append((month, [:])) }
                months[months.count - 1].1[row.string(1)] = .integer(row.integer(2) ?? 0)
            }
        return .array(months.map { ["month": .string($0.0), "figures": .object($0.1)] })
    }

    var overview: ServiceOperation {
        .read(
            "stats.overview",
            summary: "The caller's statistics from the other apps, per month (UTC), newest first, for the last `months` (default 12): savings (`saved:<currency>` in minor units, `plans_completed`), bookings (`attended`, `cancelled`, `late`, `no_show`), goals (`items_done`, `goals_completed`) and each goal's progress over time. Kept from their events exactly once; an event shows here within about a second.",
            auth: .authenticated, request: .object(["months": .integer(minimum: 1, maximum: 36)]),
            response: .object(
                [
                    "savings": Self.appSchema, "bookings": Self.appSchema, "goals": Self.appSchema,
                    "goalProgress": .array(
                        of: .object(
                            [
                                "goalId": .string(),
                                "points": .array(of: .object(["at": .string(format: .dateTime), "percent": .integer(minimum: 0, maximum: 100)], required: ["at", "percent"])),
                            ], required: ["goalId", "points"])),
                ], required: ["savings", "bookings", "goals", "goalProgress"])
        ) { (context, input: MonthsRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let today = ZoneClock.utc.local(context.receivedAt).date
            let first = LocalDate(year: today.year, month: today.month, day: 1).adding(months: -((input.months ?? 12) - 1))
            let since = String(first.description.prefix(7))
            var progress: [(String, [JSONValue])] = []
            try db.cachedStatement(sql: "SELECT goal_id, at, percent FROM goal_progress WHERE user_id = ? AND at >= ? ORDER BY goal_id, at")
                .forEachRow(arguments: [user, first.description]) { row in
                    let goal = row.string(0)
                    if progress.last?.0 != goal { progress.append((goal, [])) }
                    progress[progress.count - 1].1.append(["at": .string(row.string(1)), "percent": .integer(row.integer(2) ?? 0)])
                }
            return [
                "savings": try Self.months(db, user: user, app: "savings", since: since),
                "bookings": try Self.months(db, user: user, app: "booking", since: since),
                "goals": try Self.months(db, user: user, app: "goals", since: since),
                "goalProgress": .array(progress.map { ["goalId": .string($0.0), "points": .array($0.1)] }),
            ]
        }
    }

    struct AdminRequest: Codable, Sendable {
        var from: LocalDate?
        var to: LocalDate?
    }

    var admin: ServiceOperation {
        .read(
            "stats.admin.overview",
            summary: "For admins, per UTC day from `from` to `to` (default the last 30 days, at most 366): users registered, active users (anyone an event of any app names), events per service (`events:<service>`: what users did); and goals by state now.",
            auth: CatalogOperations.admin,
            request: .object(["from": .string(format: .date), "to": .string(format: .date)]),
            response: .object(
                [
                    "days": .array(
                        of: .object(
                            [
                                "day": .string(format: .date), "registered": .integer(minimum: 0), "activeUsers": .integer(minimum: 0),
                                "events": JSONSchema.object([:], additional: .integer()).described("service → events that day"),
                            ], required: ["day", "registered", "activeUsers", "events"]), maxItems: 366),
                    "goalsByState": JSONSchema.object([:], additional: .integer()),
                ], required: ["days", "goalsByState"])
        ) { (context, input: AdminRequest, db: Database) -> JSONValue in
            _ = try context.requirePrincipal()
            let to = input.to ?? ZoneClock.utc.local(context.receivedAt).date
            let from = input.from ?? to.adding(days: -29)
            guard from <= to, from.days(until: to) < 366 else { throw ServiceError.invalid("from", "at most 366 days, from before to") }
            // Days before year 1 have no YYYY-MM-DD (they printed as year 0000, out of order).
            guard from.year >= 1 else { throw ServiceError.invalid(input.from == nil ? "to" : "from", "the days must be in year 1 or later") }
            var days: [String: (registered: Int64, events: [String: JSONValue])] = [:]
            try db.cachedStatement(sql: "SELECT day, metric, value FROM admin_day WHERE day >= ? AND day <= ?")
                .forEachRow(arguments: [from.description, to.description]) { row in
                    let metric = row.string(1), value = row.integer(2) ?? 0
                    if metric == "registered" {
                        days[row.string(0), default: (0, [:])].registered = value
                    } else if metric.hasPrefix("events:") {
                        days[row.string(0), default: (0, [:])].events[String(metric.dropFirst(7))] = .integer(value)
                    }
                }
            var active: [String: Int64] = [:]
            try db.cachedStatement(sql: "SELECT day, COUNT(*) FROM active_user WHERE day >= ? AND day <= ? GROUP BY day")
                .forEachRow(arguments: [from.description, to.description]) { active[$0.string(0)] = $0.integer(1) ?? 0 }
            var states: [String: JSONValue] = [:]
            try db.cachedStatement(sql: "SELECT state, COUNT(*) FROM goal_state GROUP BY state").forEachRow(arguments: []) {
                states[$0.string(0)] = .integer($0.integer(1) ?? 0)
            }
            var list: [JSONValue] = []
            var day = from
            while day <= to {
                let figures = days[day.description]
                list.append([
                    "day": .string(day.description), "registered": .integer(figures?.registered ?? 0), "activeUsers": .integer(active[day.description] ?? 0),
                    "events": .object(figures?.events ?? [:]),
                ])
                day = day.adding(days: 1)
            }
            return ["days": .array(list), "goalsByState": .object(states)]
        }
    }
}

import Foundation
import GRDB
import Platform

/// The statistics screen: the open plans with where each stands, totals per currency,
/// and the history of completed and cancelled plans.
struct StatsOperations: Sendable {
    var all: [ServiceOperation] { [stats, history] }

    static let totalSchema = JSONSchema.object(
        [
            "currency": .string(format: .currency), "plans": .integer(minimum: 0), "target": PlanViews.sum, "saved": PlanViews.sum,
            "remaining": PlanViews.sum, "savedAllTime": PlanViews.sum.described("saved in every plan of this currency, closed ones too"),
        ], required: ["currency", "plans", "target", "saved", "remaining", "savedAllTime"])

    var stats: ServiceOperation {
        .read(
            "savings.stats",
            summary: "The caller's statistics: each open plan (saved, remaining, percent, on track or behind and by how much, the next installment) and totals per currency (open plans' target, saved and remaining; saved in all plans ever).",
            auth: PlanOperations.user, request: .empty,
            response: .object(
                ["plans": .array(of: PlanViews.planSchema, maxItems: PlanOperations.maximumOpenPlans), "totals": .array(of: Self.totalSchema, maxItems: 200)],
                required: ["plans", "totals"])
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let plans = try PlanRow.fetchAll(
                db.cachedStatement(sql: "SELECT \(PlanRow.columns) FROM plan WHERE user_id = ? AND state IN ('active', 'paused') ORDER BY created_at DESC, id DESC"), arguments: [user])
            let totals = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT currency,
                        COUNT(*) FILTER (WHERE state IN ('active', 'paused')),
                        COALESCE(SUM(target_minor) FILTER (WHERE state IN ('active', 'paused')), 0),
                        COALESCE(SUM(saved_minor) FILTER (WHERE state IN ('active', 'paused')), 0),
                        COALESCE(SUM(MAX(target_minor - saved_minor, 0)) FILTER (WHERE state IN ('active', 'paused')), 0),
                        SUM(saved_minor)
                    FROM plan WHERE user_id = ? GROUP BY currency ORDER BY currency
                    """), arguments: [user]
            ).map { row -> JSONValue in
                let currency = Currency(stored: row[0])
                return [
                    "currency": .string(currency.code), "plans": .integer(row[1]), "target": PlanViews.money(row[2], currency),
                    "saved": PlanViews.money(row[3], currency), "remaining": PlanViews.money(row[4], currency), "savedAllTime": PlanViews.money(row[5], currency),
                ]
            }
            return ["plans": .array(plans.map { PlanViews.plan($0, at: context.receivedAt, upcoming: 1) }), "totals": .array(totals)]
        }
    }

    struct HistoryRequest: Codable, Sendable {
        var limit: Int?
        var cursor: String?
    }

    var history: ServiceOperation {
        .read(
            "savings.history",
            summary: "The caller's completed and cancelled plans, the latest closed first, paged (`limit` up to 100, default 20; `cursor` from `next`).",
            auth: PlanOperations.user, request: .object(["limit": .integer(minimum: 1, maximum: 100), "cursor": .string(maxLength: 300)]),
            response: .object(["items": .array(of: PlanViews.planSchema, maxItems: 100), "next": JSONSchema.string().nullable()], required: ["items", "next"])
        ) { (context, input: HistoryRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let limit = input.limit ?? 20
            var sql = "SELECT \(PlanRow.columns) FROM plan WHERE user_id = ? AND closed_at IS NOT NULL AND state IN ('completed', 'cancelled')"
            var arguments: StatementArguments = [user]
            if let cursor = input.cursor {
                let (closedAt, id) = try PageCursor.decode(cursor)
                sql += " AND (closed_at < ? OR (closed_at = ? AND id < ?))"
                arguments += [closedAt, closedAt, id]
            }
            sql += " ORDER BY closed_at DESC, id DESC LIMIT ?"
            arguments += [limit + 1]
            let rows = try PlanRow.fetchAll(db.makeStatement(sql: sql), arguments: arguments)
            let page = rows.prefix(limit)
            let next: JSONValue = rows.count > limit ? page.last.map { .string(PageCursor.encode($0.closedAt ?? "", $0.id)) } ?? .null : .null
            return ["items": .array(page.map { PlanViews.plan($0, at: context.receivedAt, upcoming: 0) }), "next": next]
        }
    }
}

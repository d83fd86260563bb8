import Foundation
import GRDB
import Platform

/// The dashboard (section 3.6): the Goal X tabs and one goal with the short lists of its
/// plans.
enum GoalsDashboard {
    static let tab = JSONSchema.object(
        [
            "goalId": .string(), "title": .string(), "type": TypeRef.schema, "state": .oneOf(GoalState.allCases.map(\.rawValue)),
            "progress": JSONSchema.integer(minimum: 0, maximum: 100).nullable(),
        ], required: ["goalId", "title", "type", "state", "progress"])

    static let schema = JSONSchema.object(
        [
            "tabs": JSONSchema.array(of: tab).described("the caller's goals (as recipient, else those they sponsor), newest first"),
            "goal": GoalView.schema.nullable(), "workouts": .array(of: PlanOperations.ItemView.schema),
            "nutrition": .array(of: PlanOperations.ItemView.schema), "tips": .array(of: PlanOperations.ItemView.schema),
            "recommendations": .array(of: PlanOperations.ItemView.schema),
        ], required: ["tabs", "goal", "workouts", "nutrition", "tips", "recommendations"])

    /// A goal's title and type, as tabs and the calendar show them.
    static func summary(_ db: Database, _ goal: GoalRow) throws -> (title: String, type: TypeRef) {
        let type = try GoalViews.typeRef(db, goal.typeID)
        let title = goal.typeID == "custom" ? goal.settings["goal"]?.stringValue ?? type.title : type.title
        return (title, type)
    }

    static func answer(_ db: Database, principal: Principal, goalId: String?, limit: Int, now: Date) throws -> JSONValue {
        var goals = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM goal WHERE recipient_id = ? ORDER BY created_at DESC, id DESC LIMIT 50"), arguments: [principal.userID]
        ).map(GoalRow.init(row:))
        if goals.isEmpty {
            goals = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT g.* FROM goal g JOIN sponsorship s ON s.goal_id = g.id
                    WHERE s.sponsor_id = ? AND s.state != 'withdrawn' ORDER BY g.created_at DESC, g.id DESC LIMIT 50
                    """), arguments: [principal.userID]
            ).map(GoalRow.init(row:))
        }
        let tabs: [JSONValue] = try goals.map { goal in
            let summary = try summary(db, goal)
            return [
                "goalId": .string(goal.id), "title": .string(summary.title), "type": try WireJSON.value(of: summary.type),
                "state": .string(goal.state.rawValue), "progress": goal.progress.map { .integer(Int64($0)) } ?? .null,
            ]
        }
        let chosen: (GoalRow, GoalAccess.Relation)?
        if let goalId {
            chosen = try GoalAccess.goal(db, goalId, for: principal)
        } else if let own = goals.first(where: { $0.recipientID == principal.userID && $0.state.isOpen })
            ?? goals.first(where: { $0.recipientID == principal.userID })
        {
            chosen = (own, .recipient)
        } else {
            chosen = nil
        }
        var answer: [String: JSONValue] = ["tabs": .array(tabs), "goal": .null, "workouts": [], "nutrition": [], "tips": [], "recommendations": []]
        guard let (goal, relation) = chosen else { return .object(answer) }
        answer["goal"] = try WireJSON.value(of: try GoalViews.goal(db, goal, for: relation))
        let today = try GoalViews.today(db, user: goal.recipientID, now: now).description
        func items(_ sql: String, _ arguments: StatementArguments) throws -> JSONValue {
            try WireJSON.value(of: try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map(PlanOperations.ItemView.init(row:)))
        }
        answer["workouts"] = try items(
            "SELECT * FROM plan_item WHERE goal_id = ? AND kind = 'workout' AND date >= ? ORDER BY date, position LIMIT ?", [goal.id, today, limit])
        answer["nutrition"] = try items(
            "SELECT * FROM plan_item WHERE goal_id = ? AND kind = 'nutrition' AND (date IS NULL OR date >= ?) ORDER BY COALESCE(date, ''), position LIMIT ?",
            [goal.id, today, limit])
        answer["tips"] = try items("SELECT * FROM plan_item WHERE goal_id = ? AND kind = 'tip' ORDER BY position LIMIT ?", [goal.id, limit])
        answer["recommendations"] = try items(
            "SELECT * FROM plan_item WHERE goal_id = ? AND kind = 'recommendation' ORDER BY position LIMIT ?", [goal.id, limit])
        return .object(answer)
    }
}

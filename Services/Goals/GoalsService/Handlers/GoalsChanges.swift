import Foundation
import GRDB
import Platform

/// `goals.changes` (section 7, 7.1): everything the caller's app keeps offline that changed
/// after a version: their goals and the goals offered to them (as goals.get shows them),
/// sponsorships, plan items, their profiles and their account as goals knows it. Removed
/// rows come as deletions (tombstones for the recipient and every sponsor of the goal).
/// Admin content has its own version: `goals.content`.
enum GoalsChanges {
    static var operation: ServiceOperation {
        ChangeFeed.operation(
            service: "goals", sources: [goals, sponsorships, items, profiles, account],
            summary: "Changes after `since` for an offline app, oldest first: the caller's goals and those offered to them (`data` as goals.get's goal), sponsorships, plan items, the caller's recipient and sponsor profiles (entity `profile`, ids `recipient`/`sponsor`) and `account` (id `me`: name, time zone, status). Keep `next` and send it as `since`; `resync: true` means sync again from 0. Admin content: goals.content.")
    }

    /// Who may hold a goal's rows: its recipient and every sponsor it was offered to.
    static func viewers(_ db: Database, goal: GoalRow) throws -> [String] {
        [goal.recipientID] + (try String.fetchAll(db.cachedStatement(sql: "SELECT sponsor_id FROM sponsorship WHERE goal_id = ?"), arguments: [goal.id]))
    }

    /// A sponsor may no longer see the goal (the offer was withdrawn): their app gets the
    /// goal and its plan items as deletions.
    static func hide(_ db: Database, goal: String, from sponsor: String, at date: Date) throws {
        let scope = ChangeViewer.user(sponsor)
        try ChangeFeed.recordDeletion(db, entity: "goal", id: goal, scope: scope, at: date)
        for item in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM plan_item WHERE goal_id = ?"), arguments: [goal]) {
            try ChangeFeed.recordDeletion(db, entity: "item", id: item, scope: scope, at: date)
        }
    }

    /// The goal is offered to a sponsor again: its row and plan items get new versions, so
    /// they come back after the deletions ``hide(_:goal:from:at:)`` left.
    static func reveal(_ db: Database, goal: String) throws {
        try GoalRow.touch(db, id: goal)
        for item in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM plan_item WHERE goal_id = ?"), arguments: [goal]) {
            try db.cachedStatement(sql: "UPDATE plan_item SET change_version = ? WHERE id = ?").execute(arguments: [try ChangeFeed.stamp(db), item])
        }
    }

    static let goals = ChangeSource(entity: "goal") { db, query in
        let me = query.viewer.userID
        return try Row.fetchAll(db.cachedStatement(sql: """
                SELECT * FROM goal WHERE change_version > ?
                  AND (recipient_id = ? OR id IN (SELECT goal_id FROM sponsorship WHERE sponsor_id = ? AND state != 'withdrawn'))
                ORDER BY change_version LIMIT ?
                """), arguments: [query.since, me, me, query.limit]
        ).map { row in
            let goal = try GoalRow(row: row)
            let relation: GoalAccess.Relation =
                goal.recipientID == me
                ? .recipient
                : .sponsor(
                    sponsorshipID: try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM sponsorship WHERE goal_id = ? AND sponsor_id = ?"), arguments: [goal.id, me]) ?? "")
            return Change(entity: "goal", id: goal.id, version: row["change_version"], data: try WireJSON.value(of: GoalViews.goal(db, goal, for: relation)))
        }
    }

    static let sponsorships = ChangeSource(entity: "sponsorship") { db, query in
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM sponsorship WHERE change_version > ? AND (recipient_id = ? OR sponsor_id = ?) ORDER BY change_version LIMIT ?"),
            arguments: [query.since, query.viewer.userID, query.viewer.userID, query.limit]
        ).map { row in
            let sponsorship = SponsorshipRow(row: row)
            return Change(
                entity: "sponsorship", id: sponsorship.id, version: row["change_version"],
                data: try WireJSON.value(of: GoalViews.sponsorship(db, sponsorship)))
        }
    }

    static let items = ChangeSource(entity: "item") { db, query in
        try Row.fetchAll(db.cachedStatement(sql: """
                SELECT * FROM plan_item WHERE change_version > ?
                  AND goal_id IN (SELECT id FROM goal WHERE recipient_id = ? UNION SELECT goal_id FROM sponsorship WHERE sponsor_id = ? AND state != 'withdrawn')
                ORDER BY change_version LIMIT ?
                """), arguments: [query.since, query.viewer.userID, query.viewer.userID, query.limit]
        ).map { row in
            Change(entity: "item", id: row["id"], version: row["change_version"], data: try WireJSON.value(of: PlanOperations.ItemView(row: row)))
        }
    }

    static let profiles = ChangeSource(entity: "profile") { db, query in
        var changes: [Change] = []
        if let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM recipient_profile WHERE user_id = ? AND change_version > ?"), arguments: [query.viewer.userID, query.since])
        {
            changes.append(Change(entity: "profile", id: "recipient", version: row["change_version"], data: try WireJSON.value(of: RecipientProfile(row: row))))
        }
        if let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM sponsor_profile WHERE user_id = ? AND change_version > ?"), arguments: [query.viewer.userID, query.since])
        {
            changes.append(
                Change(entity: "profile", id: "sponsor", version: row["change_version"], data: try WireJSON.value(of: ProfileOperations.sponsorView(db, row))))
        }
        return changes.sorted { $0.version < $1.version }
    }

    static let account = ChangeSource(entity: "account") { db, query in
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM person WHERE user_id = ? AND change_version > ?"), arguments: [query.viewer.userID, query.since])
        else { return [] }
        let data: JSONValue = [
            "userId": .string(row["user_id"]), "firstName": (row["first_name"] as String?).map(JSONValue.string) ?? .null,
            "timeZone": (row["time_zone"] as String?).map(JSONValue.string) ?? .null, "status": "active",
        ]
        return [Change(entity: "account", id: "me", version: row["change_version"], data: data)]
    }
}

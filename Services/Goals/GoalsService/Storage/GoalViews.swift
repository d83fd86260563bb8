import Foundation
import GRDB
import Platform

/// A goal type in a goal or offer: id, title, icon.
struct TypeRef: Codable, Sendable, Equatable {
    var id: String
    var title: String
    var icon: String?

    static let schema = JSONSchema.object(
        ["id": .string(), "title": .string(), "icon": JSONSchema.string().nullable()], required: ["id", "title"])
}

/// Someone on the other side: id and first name (null when they gave none).
struct PersonRef: Codable, Sendable, Equatable {
    var id: String
    var name: String?

    static let schema = JSONSchema.object(["id": .string(), "name": JSONSchema.string().nullable()], required: ["id"])
}

/// A sponsor as recipients see them: name, kind, group and avatar.
struct SponsorRef: Codable, Sendable, Equatable {
    var id: String
    var name: String?
    var kind: String?
    var group: TypeRef?
    var avatar: String?

    static let schema = JSONSchema.object(
        [
            "id": .string(), "name": JSONSchema.string().nullable(), "kind": JSONSchema.oneOf(["insurer", "employer", "person"]).nullable(),
            "group": TypeRef.schema.nullable(), "avatar": JSONSchema.string().nullable(),
        ], required: ["id"])
}

/// A reward on the wire: `{money}` or `{text}`.
struct RewardView: Codable, Sendable, Equatable {
    var money: Money?
    var text: String?

    init(_ reward: Reward) {
        switch reward {
        case .money(let money): self.money = money
        case .text(let text): self.text = text
        }
    }

    static let schema = JSONSchema.object([
        "money": JSONSchema.object(
            ["minor": .integer(minimum: 1, maximum: 1_000_000_000_000), "currency": .string(format: .currency)], required: ["minor", "currency"]),
        "text": .text(minLength: 1, maxLength: Reward.maxText),
    ]).described("exactly one of money (more than zero) and text")
}

/// One sponsor's side of a goal.
struct SponsorshipView: Codable, Sendable {
    var id: String
    var goalId: String
    var recipient: PersonRef
    var sponsor: SponsorRef
    var state: String
    var reward: RewardView
    var rewardStatus: String?
    var rejection: String?
    var suggestedType: TypeRef?
    var round: Int
    var updatedAt: String

    static let schema = JSONSchema.object(
        [
            "id": .string(), "goalId": .string(), "recipient": PersonRef.schema, "sponsor": SponsorRef.schema,
            "state": .oneOf(SponsorshipState.allCases.map(\.rawValue)), "reward": RewardView.schema,
            "rewardStatus": JSONSchema.oneOf(RewardStatus.allCases.map(\.rawValue)).described("set once accepted"),
            "rejection": JSONSchema.oneOf(Rejection.allCases.map(\.rawValue)).described("how the sponsor last said no, while rejected"),
            "suggestedType": TypeRef.schema.described("the goal type a counter-proposal suggests"),
            "round": JSONSchema.integer(minimum: 1).described("1 for the first proposal, one more for each proposal again or revision"),
            "updatedAt": .string(format: .dateTime),
        ], required: ["id", "goalId", "recipient", "sponsor", "state", "reward", "round", "updatedAt"])
}

/// A goal as its recipient, its sponsors and admins see it.
struct GoalView: Codable, Sendable {
    var id: String
    var recipient: PersonRef
    var type: TypeRef
    var formVersion: Int
    var settings: JSONValue
    var title: String
    var state: String
    /// The admin's percent, or `null` (kept explicit on the wire: "not set yet").
    var progress: JSONValue
    var plan: PlanProgress
    var createdAt: String
    var activatedAt: String?
    var closedAt: String?
    var sponsorships: [SponsorshipView]

    static let planSchema = JSONSchema.object(
        [
            "total": .integer(minimum: 0), "done": .integer(minimum: 0), "sharePercent": .integer(minimum: 0, maximum: 100),
            "due": .integer(minimum: 0), "doneOfDue": .integer(minimum: 0), "overdue": .integer(minimum: 0),
            "pace": .oneOf(["on_track", "behind", "not_started"]),
        ], required: ["total", "done", "sharePercent", "due", "doneOfDue", "overdue", "pace"]
    ).described("the plan's checkable items: the share done, and whether the recipient keeps pace with its calendar")

    static let schema = JSONSchema.object(
        [
            "id": .string(), "recipient": PersonRef.schema, "type": TypeRef.schema, "formVersion": .integer(minimum: 1),
            "settings": JSONSchema.any.described("the settings as filled in, read against the type's form of `formVersion`"),
            "title": .string(), "state": .oneOf(GoalState.allCases.map(\.rawValue)),
            "progress": JSONSchema.integer(minimum: 0, maximum: 100).nullable().described("the admin's percent (authoritative); null until set"),
            "plan": planSchema, "createdAt": .string(format: .dateTime), "activatedAt": .string(format: .dateTime),
            "closedAt": .string(format: .dateTime),
            "sponsorships": JSONSchema.array(of: SponsorshipView.schema).described("a sponsor sees only their own"),
        ], required: ["id", "recipient", "type", "formVersion", "settings", "title", "state", "progress", "plan", "createdAt", "sponsorships"])
}

/// Builds the views above from rows.
enum GoalViews {
    static func person(_ db: Database, _ id: String) throws -> PersonRef {
        PersonRef(id: id, name: try String.fetchOne(db.cachedStatement(sql: "SELECT first_name FROM person WHERE user_id = ?"), arguments: [id]))
    }

    static func typeRef(_ db: Database, _ id: String) throws -> TypeRef {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT title, icon_id FROM goal_type WHERE id = ?"), arguments: [id])
        return TypeRef(id: id, title: row?["title"] ?? id, icon: row?["icon_id"])
    }

    static func sponsor(_ db: Database, _ id: String) throws -> SponsorRef {
        guard
            let row = try Row.fetchOne(db.cachedStatement(sql: """
                    SELECT p.display_name, p.kind, p.avatar_id, g.id AS group_id, g.title AS group_title, g.icon_id AS group_icon
                    FROM sponsor_profile p JOIN sponsor_group g ON g.id = p.group_id WHERE p.user_id = ?
                    """), arguments: [id])
        else { return SponsorRef(id: id, name: try person(db, id).name) }
        return SponsorRef(
            id: id, name: row["display_name"], kind: row["kind"],
            group: TypeRef(id: row["group_id"], title: row["group_title"], icon: row["group_icon"]), avatar: row["avatar_id"])
    }

    static func sponsorship(_ db: Database, _ row: SponsorshipRow) throws -> SponsorshipView {
        SponsorshipView(
            id: row.id, goalId: row.goalID, recipient: try person(db, row.recipientID), sponsor: try sponsor(db, row.sponsorID),
            state: row.state.rawValue, reward: RewardView(row.reward), rewardStatus: row.rewardStatus?.rawValue,
            rejection: row.state == .rejected ? row.rejection?.rawValue : nil,
            suggestedType: row.state == .rejected ? try row.suggestedTypeID.map { try typeRef(db, $0) } : nil, round: row.round,
            updatedAt: row.updatedAt)
    }

    /// The recipient's today, in their time zone (auth's profile), else UTC.
    static func today(_ db: Database, user: String, now: Date = Date()) throws -> LocalDate {
        let zone = try String.fetchOne(db.cachedStatement(sql: "SELECT time_zone FROM person WHERE user_id = ?"), arguments: [user])
        return (zone.flatMap(ZoneClock.init(identifier:)) ?? .utc).localDate(of: now)
    }

    /// The goal's ``PlanProgress``, its counts summed by SQLite in one pass over the goal's
    /// checkable items (ISO dates compare as text); `PlanProgress.Counts` is the rule they
    /// must agree with (tested).
    static func planProgress(_ db: Database, goal: GoalRow) throws -> PlanProgress {
        let today = try today(db, user: goal.recipientID).description
        let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT COUNT(*) AS total, TOTAL(done) AS done, TOTAL(date <= ?1) AS due, TOTAL(done AND date <= ?1) AS done_of_due,
                    TOTAL(NOT done AND date < ?1) AS overdue, TOTAL(date < ?1) AS past_due
                FROM plan_item WHERE goal_id = ?2 AND checkable = 1
                """), arguments: [today, goal.id])
        func count(_ column: String) -> Int { Int(row?[column] as Double? ?? 0) }
        return PlanProgress(
            PlanProgress.Counts(
                total: row?["total"] ?? 0, done: count("done"), due: count("due"), doneOfDue: count("done_of_due"), overdue: count("overdue"),
                pastDue: count("past_due")))
    }

    /// The goal as `relation` sees it: a sponsor sees only their own sponsorship.
    static func goal(_ db: Database, _ goal: GoalRow, for relation: GoalAccess.Relation) throws -> GoalView {
        let type = try typeRef(db, goal.typeID)
        var sponsorships = try SponsorshipRow.all(db, goal: goal.id)
        if case .sponsor(let own) = relation { sponsorships = sponsorships.filter { $0.id == own } }
        let title = goal.settings["goal"]?.stringValue.flatMap { goal.typeID == "custom" ? $0 : nil } ?? type.title
        return GoalView(
            id: goal.id, recipient: try person(db, goal.recipientID), type: type, formVersion: goal.formVersion, settings: .object(goal.settings),
            title: title, state: goal.state.rawValue, progress: goal.progress.map { .integer(Int64($0)) } ?? .null, plan: try planProgress(db, goal: goal), createdAt: goal.createdAt,
            activatedAt: goal.activatedAt, closedAt: goal.closedAt, sponsorships: try sponsorships.map { try sponsorship(db, $0) })
    }
}

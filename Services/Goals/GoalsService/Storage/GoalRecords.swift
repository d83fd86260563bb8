import Foundation
import GRDB
import Platform

/// A goal's row, as the rules need it.
struct GoalRow: Sendable {
    var id: String
    var recipientID: String
    var typeID: String
    var formVersion: Int
    /// The settings as stored (JSON), parsed when asked: most writes never need them.
    var settingsText: String
    var settings: [String: JSONValue] { (try? GoalRow.object(settingsText)) ?? [:] }
    var state: GoalState
    var progress: Int?
    var createdAt: String
    var activatedAt: String?
    var closedAt: String?

    init(row: Row) throws {
        id = row["id"]
        recipientID = row["recipient_id"]
        typeID = row["type_id"]
        formVersion = row["form_version"]
        settingsText = row["settings"]
        state = GoalState(rawValue: row["state"]) ?? .draft
        progress = row["progress"]
        createdAt = row["created_at"]
        activatedAt = row["activated_at"]
        closedAt = row["closed_at"]
    }

    /// The columns ``init(row:at:)`` reads, in its order, for a query that selects them
    /// (qualified by `alias`) among others.
    static func columns(_ alias: String) -> String {
        ["id", "recipient_id", "type_id", "form_version", "settings", "state", "progress", "created_at", "activated_at", "closed_at"]
            .map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// A goal from ``columns(_:)`` starting at column `offset`: by position, for hot paths
    /// (a lookup by name lowercases and searches the names at every access).
    init(row: Row, at offset: Int) {
        id = row[offset]
        recipientID = row[offset + 1]
        typeID = row[offset + 2]
        formVersion = row[offset + 3]
        settingsText = row[offset + 4]
        state = GoalState(rawValue: row[offset + 5]) ?? .draft
        progress = row[offset + 6]
        createdAt = row[offset + 7]
        activatedAt = row[offset + 8]
        closedAt = row[offset + 9]
    }

    static func object(_ text: String?) throws -> [String: JSONValue] {
        guard let text else { return [:] }
        return try JSONParser.parse(Data(text.utf8)).objectValue ?? [:]
    }

    static func load(_ db: Database, id: String) throws -> GoalRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM goal WHERE id = ?"), arguments: [id]).map(GoalRow.init(row:))
    }

    /// Gives the goal a new change version: what its view embeds (sponsorships, the plan's
    /// progress) changed, so offline copies fetch it again.
    static func touch(_ db: Database, id: String) throws {
        try db.cachedStatement(sql: "UPDATE goal SET change_version = ? WHERE id = ?").execute(arguments: [try ChangeFeed.stamp(db), id])
    }
}

/// A sponsorship's row.
struct SponsorshipRow: Sendable {
    var id: String
    var goalID: String
    var recipientID: String
    var sponsorID: String
    var state: SponsorshipState
    var reward: Reward
    var rewardStatus: RewardStatus?
    var rejection: Rejection?
    var suggestedTypeID: String?
    /// Which round of offers this is: 1 for the first proposal, one more for each
    /// proposal again or revision (a sponsor's answer may name the round it answers).
    var round: Int
    var updatedAt: String

    init(row: Row) {
        id = row["id"]
        goalID = row["goal_id"]
        recipientID = row["recipient_id"]
        sponsorID = row["sponsor_id"]
        state = SponsorshipState(rawValue: row["state"]) ?? .withdrawn
        if let minor: Int64 = row["reward_minor"], let currency: String = row["reward_currency"] {
            reward = .money(Money(minor: minor, currency: Currency(stored: currency)))
        } else {
            reward = .text(row["reward_text"] ?? "")
        }
        rewardStatus = (row["reward_status"] as String?).flatMap(RewardStatus.init(rawValue:))
        rejection = (row["rejection"] as String?).flatMap(Rejection.init(rawValue:))
        suggestedTypeID = row["suggested_type_id"]
        round = row["round"]
        updatedAt = row["updated_at"]
    }

    static func load(_ db: Database, id: String) throws -> SponsorshipRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM sponsorship WHERE id = ?"), arguments: [id]).map(SponsorshipRow.init(row:))
    }

    static func all(_ db: Database, goal: String) throws -> [SponsorshipRow] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM sponsorship WHERE goal_id = ? ORDER BY created_at, id"), arguments: [goal]).map(SponsorshipRow.init(row:))
    }
}

/// Who may see and do what with a goal: its recipient, the sponsors it is offered to (an
/// offer proposed, rejected or accepted: not one withdrawn), and admins. Anyone else gets
/// `not_found`, the same answer as for an id that does not exist, so ids cannot be probed.
enum GoalAccess {
    /// The caller's relation to a goal.
    enum Relation: Equatable {
        case recipient
        case sponsor(sponsorshipID: String)
        case admin
    }

    static func isAdmin(_ principal: Principal) -> Bool { principal.has("admin") }

    /// The goal and how the caller relates to it, or `not_found`.
    static func goal(_ db: Database, _ id: String, for principal: Principal) throws -> (GoalRow, Relation) {
        guard let goal = try GoalRow.load(db, id: id) else { throw ServiceError.notFound("no such goal") }
        if goal.recipientID == principal.userID { return (goal, .recipient) }
        if let sponsorship = try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM sponsorship WHERE goal_id = ? AND sponsor_id = ? AND state != 'withdrawn'"),
            arguments: [id, principal.userID])
        {
            return (goal, .sponsor(sponsorshipID: sponsorship))
        }
        if isAdmin(principal) { return (goal, .admin) }
        throw ServiceError.notFound("no such goal")
    }

    /// The caller's own goal (as its recipient), or `not_found`.
    static func ownGoal(_ db: Database, _ id: String, for principal: Principal) throws -> GoalRow {
        guard let goal = try GoalRow.load(db, id: id), goal.recipientID == principal.userID else { throw ServiceError.notFound("no such goal") }
        return goal
    }

    /// A sponsorship the caller is the sponsor of, or `not_found`.
    static func sponsorshipAsSponsor(_ db: Database, _ id: String, for principal: Principal) throws -> SponsorshipRow {
        guard let sponsorship = try SponsorshipRow.load(db, id: id), sponsorship.sponsorID == principal.userID else {
            throw ServiceError.notFound("no such offer")
        }
        return sponsorship
    }

    /// A sponsorship the caller is the recipient of, or `not_found`.
    static func sponsorshipAsRecipient(_ db: Database, _ id: String, for principal: Principal) throws -> SponsorshipRow {
        guard let sponsorship = try SponsorshipRow.load(db, id: id), sponsorship.recipientID == principal.userID else {
            throw ServiceError.notFound("no such offer")
        }
        return sponsorship
    }
}

/// A goal type as the catalog shows it.
struct GoalTypeRow: Sendable {
    var id: String
    var title: String
    var icon: String?
    var formVersion: Int
    var active: Bool

    init(row: Row) {
        id = row["id"]
        title = row["title"]
        icon = row["icon_id"]
        formVersion = row["form_version"]
        active = row["active"]
    }

    static func load(_ db: Database, id: String) throws -> GoalTypeRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM goal_type WHERE id = ?"), arguments: [id]).map(GoalTypeRow.init(row:))
    }

    /// A type a new goal (or a revision, or a counter-proposal) may use: existing and not
    /// retired; else `validation_failed` on `field`.
    static func offered(_ db: Database, id: String, field: String) throws -> GoalTypeRow {
        guard let type = try load(db, id: id), type.active else { throw ServiceError.invalid(field, "no such goal type on offer") }
        return type
    }

    static func form(_ db: Database, type: String, version: Int) throws -> GoalForm? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT form FROM goal_type_form WHERE type_id = ? AND version = ?"), arguments: [type, version])
            .map { try WireJSON.decode(GoalForm.self, from: Data($0.utf8)) }
    }
}

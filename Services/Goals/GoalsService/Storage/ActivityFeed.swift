import Foundation
import GRDB
import Platform

/// The activity feed (section 3.11): one table of entries, each either a fact of a goal
/// that every sponsor of it sees (`sponsor_id` NULL: an item checked, progress changed) or
/// an entry of one recipient–sponsor pair (an offer, an answer, a comment).
enum ActivityFeed {
    /// What an entry records.
    enum Kind: String, Codable, Sendable, CaseIterable {
        case created, proposed, accepted, rejected, revised, withdrawn
        case checked, unchecked, rescheduled
        case progress, completed, failed
        case comment
        case rewardPaid = "reward_paid"
    }

    /// Adds an entry; returns its id.
    @discardableResult
    static func record(
        _ db: Database, goal: GoalRow, sponsor: String?, kind: Kind, actor: String, item: String? = nil, text: String? = nil,
        data: JSONValue? = nil, at now: String
    ) throws -> Int64 {
        try db.cachedStatement(sql: """
                INSERT INTO feed_entry (recipient_id, sponsor_id, goal_id, kind, actor_id, item_id, text, data, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                goal.recipientID, sponsor, goal.id, kind.rawValue, actor, item, text,
                try data.map { String(decoding: try WireJSON.encode($0), as: UTF8.self) }, now,
            ])
        return db.lastInsertedRowID
    }

    /// One entry as the pair's feed shows it.
    struct Entry: Codable, Sendable {
        var id: Int64
        var goalId: String
        var kind: String
        var actor: PersonRef
        var itemId: String?
        var text: String?
        var data: JSONValue?
        var likes: Int
        var likedByMe: Bool
        var at: String

        static let schema = JSONSchema.object(
            [
                "id": .integer(minimum: 1), "goalId": .string(), "kind": .oneOf(Kind.allCases.map(\.rawValue)), "actor": PersonRef.schema,
                "itemId": .string(), "text": .text(), "data": JSONSchema.any.described("what changed (item text and date, progress, reward, type)"),
                "likes": .integer(minimum: 0), "likedByMe": .boolean, "at": .string(format: .dateTime),
            ], required: ["id", "goalId", "kind", "actor", "likes", "likedByMe", "at"])
    }

    /// The pair's entries older than `before` (newest first), at most `limit`.
    static func page(_ db: Database, recipient: String, sponsor: String, viewer: String, before: Int64?, limit: Int) throws -> [Entry] {
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT f.*, p.first_name,
                    (SELECT COUNT(*) FROM comment_like l WHERE l.entry_id = f.id) AS likes,
                    EXISTS (SELECT 1 FROM comment_like l WHERE l.entry_id = f.id AND l.user_id = ?) AS liked
                FROM feed_entry f LEFT JOIN person p ON p.user_id = f.actor_id
                WHERE f.recipient_id = ? AND f.id < ?
                  AND (f.sponsor_id = ? OR (f.sponsor_id IS NULL AND f.goal_id IN (
                    SELECT goal_id FROM sponsorship WHERE recipient_id = ? AND sponsor_id = ? AND state != 'withdrawn')))
                ORDER BY f.id DESC LIMIT ?
                """),
            arguments: [viewer, recipient, before ?? Int64.max, sponsor, recipient, sponsor, limit])
        return try rows.map { row in
            Entry(
                id: row["id"], goalId: row["goal_id"], kind: row["kind"], actor: PersonRef(id: row["actor_id"], name: row["first_name"]),
                itemId: row["item_id"], text: row["text"], data: try (row["data"] as String?).map { try JSONParser.parse(Data($0.utf8)) },
                likes: row["likes"], likedByMe: row["liked"], at: row["created_at"])
        }
    }
}

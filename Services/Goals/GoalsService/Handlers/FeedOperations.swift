import Foundation
import GRDB
import Platform

/// The activity feed of a recipient–sponsor pair (3.11): facts, offers and answers,
/// comments from either side and ❤ on the sponsor's comments; and the sponsor's overview of
/// everyone they sponsor.
struct FeedOperations: Sendable {
    var all: [ServiceOperation] { [feed, comment, like, recipients] }

    /// The pair the caller and `other` form, in either role, or `not_found` when they share
    /// no sponsorship (`live`: none proposed, rejected or accepted; the history of a pair
    /// whose offers were withdrawn can still be read, not written to).
    static func pair(_ db: Database, caller: String, other: String, live: Bool) throws -> (recipient: String, sponsor: String) {
        let sql = "SELECT 1 FROM sponsorship WHERE recipient_id = ? AND sponsor_id = ? AND (? = 0 OR state != 'withdrawn') LIMIT 1"
        if try Bool.fetchOne(db.cachedStatement(sql: sql), arguments: [caller, other, live]) == true { return (caller, other) }
        if try Bool.fetchOne(db.cachedStatement(sql: sql), arguments: [other, caller, live]) == true { return (other, caller) }
        throw ServiceError.notFound("no feed with this user")
    }

    /// The pair of `goal`'s offer between the caller and `other`, whichever side each is on:
    /// two people who sponsor each other share two feeds, and the goal says which one.
    static func pair(
        _ db: Database, caller: String, other: String, goal: String, live: Bool
    ) throws -> (recipient: String, sponsor: String)? {
        try Row.fetchOne(
            db.cachedStatement(sql: """
                SELECT recipient_id, sponsor_id FROM sponsorship
                WHERE goal_id = ? AND ((recipient_id = ? AND sponsor_id = ?) OR (recipient_id = ? AND sponsor_id = ?)) AND (? = 0 OR state != 'withdrawn')
                LIMIT 1
                """), arguments: [goal, caller, other, other, caller, live]
        ).map { (recipient: $0[0] as String, sponsor: $0[1] as String) }
    }

    struct FeedRequest: Codable, Sendable {
        var with: String
        var goalId: String?
        var before: Int64?
        var limit: Int?
    }

    var feed: ServiceOperation {
        .read(
            "goals.feed",
            summary: "The feed the caller shares `with` a recipient or sponsor (either side calls it the same way), newest first: items checked and unchecked, progress, offers and answers, comments with their ❤ count. Page with `before` (the last entry id seen). Someone the caller shares no goal with is not_found. Two people who sponsor each other share two feeds: the one where the caller is the recipient, unless `goalId` names a goal of the other feed.",
            auth: .authenticated,
            request: .object(
                ["with": GoalOperations.id, "goalId": GoalOperations.id, "before": .integer(minimum: 1), "limit": .integer(minimum: 1, maximum: 100)],
                required: ["with"]),
            response: .object(["entries": .array(of: ActivityFeed.Entry.schema, maxItems: 100), "more": .boolean], required: ["entries", "more"])
        ) { (context, input: FeedRequest, db: Database) -> JSONValue in
            let me = try context.requirePrincipal().userID
            let pair: (recipient: String, sponsor: String)
            if let goal = input.goalId {
                guard let found = try Self.pair(db, caller: me, other: input.with, goal: goal, live: false) else {
                    throw ServiceError.notFound("no feed with this user about this goal")
                }
                pair = found
            } else {
                pair = try Self.pair(db, caller: me, other: input.with, live: false)
            }
            let limit = input.limit ?? 30
            let entries = try ActivityFeed.page(db, recipient: pair.recipient, sponsor: pair.sponsor, viewer: me, before: input.before, limit: limit + 1)
            return ["entries": try WireJSON.value(of: Array(entries.prefix(limit))), "more": .bool(entries.count > limit)]
        }
    }

    struct CommentRequest: Codable, Sendable {
        var with: String
        var goalId: String?
        var text: String
    }

    var comment: ServiceOperation {
        .write(
            "goals.comments.add",
            summary: "Posts a comment on the feed shared `with` the other side (about `goalId`, by default the latest goal the two share). The other side is told (event goals.comment.added). At most 500 texts to feeds (comments, offers' comments) by one author in any 24 hours (`rate_limited` with `retryAfterMs`).",
            auth: .authenticated,
            request: .object(
                ["with": GoalOperations.id, "goalId": GoalOperations.id, "text": .text(minLength: 1, maxLength: 2_000)], required: ["with", "text"]),
            response: ActivityFeed.Entry.schema
        ) { (context, input: CommentRequest, db: Database) -> ActivityFeed.Entry in
            let me = try context.requirePrincipal().userID
            guard !input.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ServiceError.invalid("text", "must not be blank") }
            try GoalOperations.requireRoomToSay(db, input.text, user: me, at: context.receivedAt)
            // A deleted sponsor (`deleted:<sponsorship>`) reads no more comments.
            guard !input.with.hasPrefix("deleted:") else { throw ServiceError.notFound("no feed with this user") }
            // The goal named decides the feed (two people may sponsor each other).
            let pair: (recipient: String, sponsor: String)
            if let goal = input.goalId, let named = try Self.pair(db, caller: me, other: input.with, goal: goal, live: true) {
                pair = named
            } else if let goal = input.goalId, try Self.pair(db, caller: me, other: input.with, goal: goal, live: false) != nil {
                throw ServiceError.conflict("the offer was withdrawn: this feed can be read, not written to", reason: "offer_closed")
            } else {
                pair = try Self.pair(db, caller: me, other: input.with, live: true)
            }
            guard
                let goalID = try String.fetchOne(db.cachedStatement(sql: """
                        SELECT g.id FROM goal g JOIN sponsorship s ON s.goal_id = g.id
                        WHERE s.recipient_id = ? AND s.sponsor_id = ? AND s.state != 'withdrawn' AND (? IS NULL OR g.id = ?) ORDER BY g.created_at DESC LIMIT 1
                        """), arguments: [pair.recipient, pair.sponsor, input.goalId, input.goalId]),
                let goal = try GoalRow.load(db, id: goalID)
            else { throw ServiceError.invalid("goalId", "not a goal the two of you share") }
            let now = Instant.format(context.receivedAt)
            let id = try ActivityFeed.record(db, goal: goal, sponsor: pair.sponsor, kind: .comment, actor: me, text: input.text, at: now)
            try Outbox.append(
                db, type: "goals.comment.added",
                data: [
                    "entryId": .integer(id), "goalId": .string(goal.id), "recipientId": .string(pair.recipient), "sponsorId": .string(pair.sponsor),
                    "authorId": .string(me), "toId": .string(me == pair.recipient ? pair.sponsor : pair.recipient),
                ] as JSONValue)
            guard let entry = try ActivityFeed.page(db, recipient: pair.recipient, sponsor: pair.sponsor, viewer: me, before: id + 1, limit: 1).first
            else { throw ServiceError.internal(ref: context.requestID) }
            return entry
        }
    }

    struct LikeRequest: Codable, Sendable {
        var entryId: Int64
        var liked: Bool
    }

    var like: ServiceOperation {
        .write(
            "goals.comments.like",
            summary: "Puts (`liked: true`) or takes back a ❤ on a sponsor's comment, once per user; only the other member of the pair can like it (not its author). Setting what is set changes nothing. The author is told of a new ❤ (event goals.comment.liked).",
            auth: .authenticated, request: .object(["entryId": .integer(minimum: 1), "liked": .boolean], required: ["entryId", "liked"]),
            response: ActivityFeed.Entry.schema
        ) { (context, input: LikeRequest, db: Database) -> ActivityFeed.Entry in
            let me = try context.requirePrincipal().userID
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM feed_entry WHERE id = ?"), arguments: [input.entryId]),
                let sponsor = row["sponsor_id"] as String?, me == (row["recipient_id"] as String) || me == sponsor
            else { throw ServiceError.notFound("no such entry") }
            let recipient: String = row["recipient_id"]
            guard (row["kind"] as String) == ActivityFeed.Kind.comment.rawValue, (row["actor_id"] as String) == sponsor else {
                throw ServiceError.conflict("only a sponsor's comment can be liked", reason: "not_likeable")
            }
            guard me != sponsor else { throw ServiceError.conflict("you cannot like your own comment", reason: "not_likeable") }
            // A pair whose offer of this goal was withdrawn keeps its history to read, not to write.
            guard try Self.pair(db, caller: me, other: sponsor, goal: row["goal_id"], live: true) != nil else {
                throw ServiceError.conflict("the offer was withdrawn: this feed can be read, not written to", reason: "offer_closed")
            }
            if input.liked {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO comment_like (entry_id, user_id, created_at) VALUES (?, ?, ?)").execute(arguments: [input.entryId, me, Instant.format(context.receivedAt)])
                if db.changesCount == 1 {
                    try Outbox.append(
                        db, type: "goals.comment.liked",
                        data: ["entryId": .integer(input.entryId), "goalId": .string(row["goal_id"]), "authorId": .string(sponsor), "byId": .string(me)]
                            as JSONValue)
                }
            } else {
                try db.cachedStatement(sql: "DELETE FROM comment_like WHERE entry_id = ? AND user_id = ?").execute(arguments: [input.entryId, me])
            }
            guard let entry = try ActivityFeed.page(db, recipient: recipient, sponsor: sponsor, viewer: me, before: input.entryId + 1, limit: 1).first
            else { throw ServiceError.internal(ref: context.requestID) }
            return entry
        }
    }

    var recipients: ServiceOperation {
        .read(
            "goals.sponsor.recipients",
            summary: "The sponsor's overview (3.11): every recipient they sponsor or were offered a goal by, with each goal's progress, the plan's share and pace.",
            auth: GoalOperations.sponsor, request: .empty,
            response: .object(
                [
                    "recipients": .array(
                        of: .object(
                            [
                                "recipient": PersonRef.schema,
                                "goals": .array(
                                    of: .object(
                                        [
                                            "goalId": .string(), "title": .string(), "type": TypeRef.schema, "state": .string(),
                                            "progress": JSONSchema.integer(minimum: 0, maximum: 100).nullable(), "plan": GoalView.planSchema,
                                            "sponsorshipId": .string(), "sponsorship": .oneOf(SponsorshipState.allCases.map(\.rawValue)),
                                        ], required: ["goalId", "title", "type", "state", "progress", "plan", "sponsorshipId", "sponsorship"])),
                            ], required: ["recipient", "goals"]))
                ], required: ["recipients"])
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let me = try context.requirePrincipal().userID
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT s.id AS sponsorship_id, s.state AS sponsorship_state, g.* FROM sponsorship s JOIN goal g ON g.id = s.goal_id
                    WHERE s.sponsor_id = ? AND s.state != 'withdrawn' ORDER BY s.recipient_id, g.created_at DESC LIMIT 1000
                    """), arguments: [me])
            var order: [String] = []
            var goals: [String: [JSONValue]] = [:]
            for row in rows {
                let goal = try GoalRow(row: row)
                let summary = try GoalsDashboard.summary(db, goal)
                if goals[goal.recipientID] == nil { order.append(goal.recipientID) }
                goals[goal.recipientID, default: []].append([
                    "goalId": .string(goal.id), "title": .string(summary.title), "type": try WireJSON.value(of: summary.type),
                    "state": .string(goal.state.rawValue), "progress": goal.progress.map { .integer(Int64($0)) } ?? .null,
                    "plan": try WireJSON.value(of: GoalViews.planProgress(db, goal: goal)), "sponsorshipId": .string(row["sponsorship_id"]),
                    "sponsorship": .string(row["sponsorship_state"]),
                ])
            }
            return [
                "recipients": .array(
                    try order.map { ["recipient": try WireJSON.value(of: GoalViews.person(db, $0)), "goals": .array(goals[$0] ?? [])] })
            ]
        }
    }
}

import Foundation
import GRDB
import Platform

/// The events goals publishes (each listed with its schema in `goals.describe`), written to
/// the outbox in the transaction that makes the change. They name the people to tell
/// (`recipientId`, `sponsorId`/`sponsorIds`) so push delivery needs no lookups.
enum GoalEvents {
    static let goalData = JSONSchema.object(
        [
            "goalId": .string(), "recipientId": .string(), "typeId": .string(), "state": .oneOf(GoalState.allCases.map(\.rawValue)),
            "progress": JSONSchema.integer(minimum: 0, maximum: 100).nullable(), "sponsorIds": .array(of: .string()),
        ], required: ["goalId", "recipientId", "typeId", "state", "sponsorIds"])

    static let sponsorshipData = JSONSchema.object(
        [
            "goalId": .string(), "sponsorshipId": .string(), "recipientId": .string(), "sponsorId": .string(), "typeId": .string(),
            "state": .oneOf(SponsorshipState.allCases.map(\.rawValue)), "reward": RewardView.schema,
            "rewardStatus": JSONSchema.oneOf(RewardStatus.allCases.map(\.rawValue)).nullable(), "comment": .text(),
            "rejection": JSONSchema.oneOf(Rejection.allCases.map(\.rawValue)), "suggestedType": JSONSchema.string().nullable(),
            "goalState": JSONSchema.oneOf(GoalState.allCases.map(\.rawValue)).described("goals.offer_withdrawn when the goal ended: how"),
        ], required: ["goalId", "sponsorshipId", "recipientId", "sponsorId", "typeId", "state", "reward"])

    static let itemData = JSONSchema.object(
        [
            "goalId": .string(), "itemId": .string(), "recipientId": .string(), "sponsorIds": .array(of: .string()),
            "kind": .oneOf(PlanOperations.kinds), "text": .text(), "date": JSONSchema.string(format: .date).nullable(), "done": .boolean,
        ], required: ["goalId", "itemId", "recipientId", "sponsorIds", "kind", "done"])

    static let descriptions: [EventDescription] = [
        EventDescription("goals.created", summary: "A recipient created a goal (the admins' inbox).", data: goalData),
        EventDescription("goals.proposed", summary: "A recipient offered a goal to a sponsor with a reward: tell the sponsor.", data: sponsorshipData),
        EventDescription("goals.accepted", summary: "A sponsor accepted: tell the recipient.", data: sponsorshipData),
        EventDescription(
            "goals.rejected", summary: "A sponsor rejected, with a counter-proposal (`suggestedType`) or asking for a new goal: tell the recipient.",
            data: sponsorshipData),
        EventDescription("goals.revised", summary: "A recipient revised an offer and proposed it again: tell the sponsor.", data: sponsorshipData),
        EventDescription(
            "goals.offer_withdrawn",
            summary: "A recipient took an offer back, or the goal ended (`goalState`: withdrawn, completed, failed) while the offer was still negotiated: tell the sponsor.",
            data: sponsorshipData),
        EventDescription("goals.activated", summary: "A goal's first sponsor accepted: it is active.", data: goalData),
        EventDescription("goals.withdrawn", summary: "A recipient gave a goal up; promised rewards are forfeited.", data: goalData),
        EventDescription("goals.completed", summary: "A goal reached 100 %: promised rewards are earned; tell both sides.", data: goalData),
        EventDescription("goals.failed", summary: "An admin marked a goal failed; promised rewards are forfeited.", data: goalData),
        EventDescription("goals.progress.changed", summary: "An admin set a goal's percent: tell its sponsors.", data: goalData),
        EventDescription("goals.reward.paid", summary: "A sponsor marked an earned reward handed over.", data: sponsorshipData),
        EventDescription("goals.item.checked", summary: "A recipient checked a plan item: tell the goal's sponsors.", data: itemData),
        EventDescription("goals.item.unchecked", summary: "A recipient unchecked a plan item: tell the goal's sponsors.", data: itemData),
        EventDescription(
            "goals.plan.rescheduled", summary: "A recipient moved a day's workout; later items shifted by `days`.",
            data: .object(
                [
                    "goalId": .string(), "recipientId": .string(), "sponsorIds": .array(of: .string()), "from": .string(format: .date),
                    "to": .string(format: .date), "days": .integer(), "moved": .integer(minimum: 0),
                ], required: ["goalId", "recipientId", "sponsorIds", "from", "to", "days", "moved"])),
        EventDescription(
            "goals.comment.added", summary: "A comment on a pair's feed: tell the other side (`toId`).",
            data: .object(
                [
                    "entryId": .integer(), "goalId": .string(), "recipientId": .string(), "sponsorId": .string(), "authorId": .string(),
                    "toId": .string(),
                ], required: ["entryId", "goalId", "recipientId", "sponsorId", "authorId", "toId"])),
        EventDescription(
            "goals.comment.liked", summary: "A sponsor's comment got a ❤: tell its author.",
            data: .object(
                ["entryId": .integer(), "goalId": .string(), "authorId": .string(), "byId": .string()],
                required: ["entryId", "goalId", "authorId", "byId"])),
        EventDescription(
            "goals.broadcast",
            summary: "An admin's push to an audience (everyone, a role, a sponsor group with its members' ids): the notifications service delivers it.",
            data: .object(
                [
                    "broadcastId": .string(), "title": .string(), "text": .text(), "audience": .oneOf(["everyone", "role", "sponsor_group"]),
                    "role": .string(), "groupId": .string(), "userIds": .array(of: .string(), maxItems: 1_000_000),
                    "kind": .oneOf(AdminOperations.broadcastKinds),
                ], required: ["broadcastId", "title", "text", "audience", "kind"])),
    ]

    /// The sponsors a goal's facts are for: those who accepted it.
    static func sponsorIDs(_ db: Database, goal: String) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: "SELECT sponsor_id FROM sponsorship WHERE goal_id = ? AND state = 'accepted' ORDER BY sponsor_id"), arguments: [goal])
    }

    static func goal(_ db: Database, _ type: String, _ goal: GoalRow) throws {
        try Outbox.append(
            db, type: type,
            data: [
                "goalId": .string(goal.id), "recipientId": .string(goal.recipientID), "typeId": .string(goal.typeID), "state": .string(goal.state.rawValue),
                "progress": goal.progress.map { .integer(Int64($0)) } ?? .null,
                "sponsorIds": .array(try sponsorIDs(db, goal: goal.id).map(JSONValue.string)),
            ] as JSONValue)
    }

    static func sponsorship(_ db: Database, _ type: String, _ goal: GoalRow, _ sponsorship: SponsorshipRow, extra: [String: JSONValue] = [:]) throws {
        var data: [String: JSONValue] = [
            "goalId": .string(goal.id), "sponsorshipId": .string(sponsorship.id), "recipientId": .string(goal.recipientID),
            "sponsorId": .string(sponsorship.sponsorID), "typeId": .string(goal.typeID), "state": .string(sponsorship.state.rawValue),
            "reward": try WireJSON.value(of: RewardView(sponsorship.reward)),
            "rewardStatus": sponsorship.rewardStatus.map { .string($0.rawValue) } ?? .null,
        ]
        data.merge(extra) { current, _ in current }
        try Outbox.append(db, type: type, data: JSONValue.object(data))
    }
}

/// How a goal ends: withdrawn by its recipient, completed at 100 %, failed by an admin.
/// Negotiated offers are withdrawn; promised rewards follow ``RewardStatus/after(goal:)``.
enum GoalEnding {
    static func end(
        _ db: Database, _ goal: GoalRow, as outcome: GoalState, actor: String, at date: Date, relation: GoalAccess.Relation, reason: String? = nil
    ) throws -> GoalView {
        let state = try GoalLifecycle.finish(goal.state, as: outcome).mapError(\.serviceError).get()
        let now = Instant.format(date)
        try db.cachedStatement(sql: "UPDATE goal SET state = ?, closed_at = ?, updated_at = ?, change_version = ? WHERE id = ? AND state = ?").execute(arguments: [state.rawValue, now, now, try ChangeFeed.stamp(db), goal.id, goal.state.rawValue])
        var closedOffers: [String] = []
        for sponsorship in try SponsorshipRow.all(db, goal: goal.id) {
            let next: SponsorshipState = SponsorshipState.negotiating.contains(sponsorship.state) ? .withdrawn : sponsorship.state
            if next == .withdrawn && sponsorship.state != .withdrawn {
                try GoalsChanges.hide(db, goal: goal.id, from: sponsorship.sponsorID, at: date)
                closedOffers.append(sponsorship.id)
            }
            let reward = sponsorship.rewardStatus?.after(goal: state)
            guard next != sponsorship.state || reward != sponsorship.rewardStatus else { continue }
            try db.cachedStatement(sql: "UPDATE sponsorship SET state = ?, reward_status = ?, updated_at = ?, change_version = ? WHERE id = ?").execute(arguments: [next.rawValue, reward?.rawValue, now, try ChangeFeed.stamp(db), sponsorship.id])
        }
        guard let ended = try GoalRow.load(db, id: goal.id) else { throw ServiceError.notFound("no such goal") }
        // A sponsor still negotiating is told that the offer is closed, as when the recipient
        // takes one offer back: the pair's feed ends with it and `goals.offer_withdrawn` says so.
        for id in closedOffers {
            guard let offer = try SponsorshipRow.load(db, id: id) else { continue }
            try ActivityFeed.record(
                db, goal: ended, sponsor: offer.sponsorID, kind: .withdrawn, actor: actor, data: ["goalState": .string(state.rawValue)], at: now)
            try GoalEvents.sponsorship(db, "goals.offer_withdrawn", ended, offer, extra: ["goalState": .string(state.rawValue)])
        }
        let kind: ActivityFeed.Kind = state == .completed ? .completed : state == .failed ? .failed : .withdrawn
        try ActivityFeed.record(db, goal: ended, sponsor: nil, kind: kind, actor: actor, text: reason, at: now)
        try GoalEvents.goal(db, "goals.\(state.rawValue)", ended)
        return try GoalViews.goal(db, ended, for: relation)
    }
}

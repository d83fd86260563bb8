import Foundation
import GRDB
import Platform

/// What happens to a person's goal data when their account goes (`auth.user.deleted`, or an
/// admin's `goals.admin.users.delete_data`): as a recipient, their goals go with plans,
/// offers, feeds and likes (sponsors' apps get deletions); as a sponsor, they stay in the
/// recipients' histories only as an anonymous sponsor: offers still negotiated are
/// withdrawn, promises not yet kept are forfeited, their comments and likes go. Profiles,
/// answers, activities and their name go too.
enum UserDeletion {
    /// The sponsor id a deleted sponsor leaves on a sponsorship (unique per sponsorship, so
    /// two deleted sponsors of one goal stay two).
    static func anonymous(_ sponsorship: String) -> String { "deleted:\(sponsorship)" }

    /// Removes `user`'s data; returns how many of their goals went.
    @discardableResult
    static func remove(_ db: Database, user: String, at date: Date) throws -> Int {
        guard !user.hasPrefix("deleted:") else { return 0 }
        let goals = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM goal WHERE recipient_id = ?"), arguments: [user]).map(GoalRow.init(row:))
        for goal in goals {
            for sponsor in try String.fetchAll(db.cachedStatement(sql: "SELECT sponsor_id FROM sponsorship WHERE goal_id = ?"), arguments: [goal.id]) {
                let scope = ChangeViewer.user(sponsor)
                try ChangeFeed.recordDeletion(db, entity: "goal", id: goal.id, scope: scope, at: date)
                for id in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM sponsorship WHERE goal_id = ?"), arguments: [goal.id]) {
                    try ChangeFeed.recordDeletion(db, entity: "sponsorship", id: id, scope: scope, at: date)
                }
                for id in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM plan_item WHERE goal_id = ?"), arguments: [goal.id]) {
                    try ChangeFeed.recordDeletion(db, entity: "item", id: id, scope: scope, at: date)
                }
            }
            try db.cachedStatement(sql: "DELETE FROM offer WHERE sponsorship_id IN (SELECT id FROM sponsorship WHERE goal_id = ?)").execute(arguments: [goal.id])
            try db.cachedStatement(sql: "DELETE FROM comment_like WHERE entry_id IN (SELECT id FROM feed_entry WHERE goal_id = ?)").execute(arguments: [goal.id])
            try db.cachedStatement(sql: "DELETE FROM feed_entry WHERE goal_id = ?").execute(arguments: [goal.id])
            try db.cachedStatement(sql: "DELETE FROM sponsorship WHERE goal_id = ?").execute(arguments: [goal.id])
            try db.cachedStatement(sql: "DELETE FROM plan_item WHERE goal_id = ?").execute(arguments: [goal.id])
            try db.cachedStatement(sql: "DELETE FROM goal WHERE id = ?").execute(arguments: [goal.id])
        }
        // As a sponsor: anonymous from now on.
        let now = Instant.format(date)
        for sponsorship in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM sponsorship WHERE sponsor_id = ?"), arguments: [user]).map(SponsorshipRow.init(row:)) {
            let anonymous = anonymous(sponsorship.id)
            let state: SponsorshipState = SponsorshipState.negotiating.contains(sponsorship.state) ? .withdrawn : sponsorship.state
            let reward: RewardStatus? = sponsorship.rewardStatus.map { $0 == .promised || $0 == .earned ? .forfeited : $0 }
            try db.cachedStatement(sql: "UPDATE sponsorship SET sponsor_id = ?, state = ?, reward_status = ?, updated_at = ?, change_version = ? WHERE id = ?").execute(arguments: [anonymous, state.rawValue, reward?.rawValue, now, try ChangeFeed.stamp(db), sponsorship.id])
            try db.cachedStatement(sql: "DELETE FROM comment_like WHERE entry_id IN (SELECT id FROM feed_entry WHERE sponsor_id = ? AND actor_id = ? AND kind = 'comment')").execute(arguments: [user, user])
            try db.cachedStatement(sql: "DELETE FROM feed_entry WHERE sponsor_id = ? AND actor_id = ? AND kind = 'comment'").execute(arguments: [user, user])
            try db.cachedStatement(sql: "UPDATE feed_entry SET sponsor_id = ? WHERE sponsor_id = ? AND goal_id = ?").execute(arguments: [anonymous, user, sponsorship.goalID])
            // What they wrote goes; that they answered stays.
            try db.cachedStatement(sql: "UPDATE offer SET actor_id = 'deleted', comment = NULL WHERE sponsorship_id = ? AND actor_id = ?")
                .execute(arguments: [sponsorship.id, user])
            // The goal's state follows its sponsorships (an offer withdrawn may leave it a draft).
            if let goal = try GoalRow.load(db, id: sponsorship.goalID) {
                let states = try String.fetchAll(db.cachedStatement(sql: "SELECT state FROM sponsorship WHERE goal_id = ?"), arguments: [goal.id])
                    .compactMap(SponsorshipState.init(rawValue:))
                let next = GoalLifecycle.goalState(goal.state, sponsorships: states)
                if next != goal.state {
                    try db.cachedStatement(sql: "UPDATE goal SET state = ?, updated_at = ?, change_version = ? WHERE id = ?").execute(arguments: [next.rawValue, now, try ChangeFeed.stamp(db), goal.id])
                }
            }
        }
        try db.cachedStatement(
            sql: "UPDATE feed_entry SET actor_id = 'deleted', text = NULL, data = json_remove(data, '$.comment') WHERE actor_id = ?"
        ).execute(arguments: [user])
        try IdempotencyStore.forget(db, user: user)
        try db.cachedStatement(sql: "DELETE FROM comment_like WHERE user_id = ?").execute(arguments: [user])
        // The avatar loses its reference; the media sweep removes an image nothing uses.
        if let avatar = try String.fetchOne(db.cachedStatement(sql: "SELECT avatar_id FROM sponsor_profile WHERE user_id = ?"), arguments: [user]) {
            try db.cachedStatement(sql: "DELETE FROM platform_media_reference WHERE owner = ? AND media_id = ?").execute(arguments: ["sponsor:\(user)", avatar])
        }
        for table in ["recipient_profile", "sponsor_profile", "answer_set", "activity", "person"] {
            try db.cachedStatement(sql: "DELETE FROM \(table) WHERE user_id = ?").execute(arguments: [user])
        }
        try MediaCatalog.forget(db, user: user)
        // Stored events (events.replay) keep what happened, not to whom.
        try Outbox.redact(db, user: user, as: "deleted")
        try DeletedUsers.record(db, user: user, at: now)
        return goals.count
    }

    /// The subscription to auth: deletions, and names and time zones for the other side's
    /// screens and the recipient's "today".
    static var subscription: EventSubscription {
        EventSubscription(source: "auth", types: ["auth.user.deleted", "auth.user.profile_changed"]) { db, event in
            guard let user = event.data["userId"]?.stringValue else { return }
            if event.type == "auth.user.deleted" {
                try remove(db, user: user, at: Date())
                return
            }
            let zone = event.data["timeZone"]?.stringValue.flatMap { ZoneClock(identifier: $0) == nil ? nil : $0 }
            try db.cachedStatement(sql: """
                    INSERT INTO person (user_id, first_name, time_zone, change_version) VALUES (?, ?, ?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET first_name = excluded.first_name, time_zone = excluded.time_zone,
                        change_version = excluded.change_version
                    """).execute(arguments: [user, event.data["firstName"]?.stringValue, zone, try ChangeFeed.stamp(db)])
        }
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import GoalsService

/// Regressions for what an attack over the wire found in the goals service (each test
/// fails on the code before its fix).
@Suite("Goals: the attack's findings")
struct GoalsReviewTests {
    typealias Flow = GoalsFlowTests

    @Test("a sponsor whose offer was withdrawn no longer sees the goal, its plan or its facts, and cannot comment")
    func withdrawnSponsorLosesSight() async throws {
        try await Flow.with { goals in
            let (goalID, _) = try await Flow.activeGoal(goals, recipient: "rec", sponsor: "kept")
            try await Flow.sponsor(goals, "dropped")
            let offer = try await Flow.ok(goals, "goals.propose", ["goalId": .string(goalID), "sponsor": "dropped", "reward": ["text": "x"]], as: Flow.user("rec"))
            let before = try await Flow.ok(goals, "goals.changes", ["since": "0"], as: Flow.user("dropped"))
            #expect(before["items"]?.arrayValue?.contains { $0["id"]?.stringValue == goalID } == true)
            try await Flow.ok(goals, "goals.offer.withdraw", ["sponsorshipId": offer["id"]!], as: Flow.user("rec"))
            try await Flow.ok(goals, "goals.admin.progress.set", ["goalId": .string(goalID), "percent": 40], as: Flow.admin)

            let dropped = Flow.user("dropped")
            for (op, data) in [
                ("goals.get", ["goalId": .string(goalID)]), ("goals.dashboard", ["goalId": .string(goalID)]),
                ("goals.items.list", ["goalId": .string(goalID)]), ("goals.comments.add", ["with": "rec", "text": "still here"]),
            ] as [(String, JSONValue)] {
                #expect(try await goals.call(op, data: data, as: dropped).error?.code == .notFound, "\(op)")
            }
            let feed = try await Flow.ok(goals, "goals.feed", ["with": "rec"], as: dropped)
            var kinds: [String] = []
            for entry in feed["entries"]?.arrayValue ?? [] { kinds.append(entry["kind"]?.stringValue ?? "?") }
            #expect(!kinds.contains("progress") && !kinds.contains("created"), "\(kinds)")
            #expect(kinds.contains("withdrawn"), "the pair's own history stays readable")
            #expect(try await Flow.ok(goals, "goals.sponsor.recipients", as: dropped)["recipients"] == [])
            #expect(try await Flow.ok(goals, "goals.offers", as: dropped)["goals"] == [])
            let after = try await Flow.ok(goals, "goals.changes", ["since": before["next"]!], as: dropped)
            #expect(after["items"]?.arrayValue?.contains { $0["id"]?.stringValue == goalID && $0["deleted"] == true } == true)
        }
    }

    @Test("a deleted sponsor's words go everywhere: offer comments, feed texts and stored replies")
    func deletedSponsorsWordsGo() async throws {
        try await Flow.with { goals in
            try await Flow.sponsor(goals, "talker")
            let goal = try await Flow.ok(goals, "goals.create", ["type": "marathon"], as: Flow.user("rec"))
            let proposal: JSONValue = ["goalId": goal["id"]!, "sponsor": "talker", "reward": ["text": "x"]]
            let offer = try await goals.call("goals.propose", data: proposal, as: Flow.user("rec"), idem: "pk")
            let sponsorship = try #require(offer.data?["id"])
            try await Flow.ok(goals, "goals.reject", ["sponsorshipId": sponsorship, "kind": "ask_new_goal", "comment": "call +79991234567"], as: Flow.user("talker"))
            try await Flow.ok(goals, "goals.revise", ["sponsorshipId": sponsorship, "comment": "ok"], as: Flow.user("rec"))
            try await Flow.ok(goals, "goals.accept", ["sponsorshipId": sponsorship, "comment": "mail talker@example.com"], as: Flow.user("talker"))
            try await Flow.ok(goals, "goals.admin.users.delete_data", ["userId": "talker"], as: Flow.admin)

            let history = try await Flow.ok(goals, "goals.get", ["goalId": goal["id"]!], as: Flow.user("rec"))
            #expect(!"\(history)".contains("79991234567") && !"\(history)".contains("talker@example.com"))
            let anonymous = try #require(history["goal"]?["sponsorships"]?[0]?["sponsor"]?["id"])
            let feed = try await Flow.ok(goals, "goals.feed", ["with": anonymous], as: Flow.user("rec"))
            #expect(!"\(feed)".contains("79991234567") && !"\(feed)".contains("talker@example.com"))
            #expect(try await goals.call("goals.comments.add", data: ["with": anonymous, "text": "to a ghost"], as: Flow.user("rec")).error?.code == .notFound)
            let retry = try await goals.call("goals.propose", data: proposal, as: Flow.user("rec"), idem: "pk")
            #expect(!"\(retry)".contains("Sponsor talker"), "a retry does not bring the deleted sponsor's name back")
        }
    }

    @Test("the goal's offline copy follows what it embeds: sponsorships and the plan's progress")
    func goalVersionFollowsEmbeddedRows() async throws {
        try await Flow.with { goals in
            let (goalID, sponsorship) = try await Flow.activeGoal(goals, recipient: "rec", sponsor: "payer")
            let start = try await Flow.ok(goals, "goals.changes", ["since": "0"], as: Flow.user("rec"))
            try await Flow.ok(goals, "goals.admin.progress.set", ["goalId": .string(goalID), "percent": 100], as: Flow.admin)
            let middle = try await Flow.ok(goals, "goals.changes", ["since": start["next"]!], as: Flow.user("rec"))
            try await Flow.ok(goals, "goals.reward.paid", ["sponsorshipId": .string(sponsorship)], as: Flow.user("payer"))
            let page = try await Flow.ok(goals, "goals.changes", ["since": middle["next"]!], as: Flow.user("rec"))
            let goal = page["items"]?.arrayValue?.first { $0["entity"] == "goal" }
            #expect(goal?["data"]?["sponsorships"]?[0]?["rewardStatus"] == "paid")
        }
    }

    @Test("lengths count code points: combining marks cannot stretch a 100-character name")
    func combiningMarks() async throws {
        try await Flow.with { goals in
            let name = "Sponsor" + String(repeating: "\u{0301}", count: 500)
            let reply = try await goals.call("goals.sponsor.profile.save", data: ["name": .string(name), "kind": "person", "group": "family"], as: Flow.user("s"))
            #expect(reply.error?.fields["name"] != nil)
            let goal = try await goals.call(
                "goals.create", data: ["type": "custom", "settings": ["goal": .string("x" + String(repeating: "\u{0301}", count: 600))]], as: Flow.user("r"))
            #expect(goal.error?.fields["settings.goal"] != nil)
        }
    }

    @Test("an admin making a checked item uncheckable tells both sides like an uncheck; a blank failure reason is refused")
    func adminEdits() async throws {
        try await Flow.with { goals in
            let (goalID, _) = try await Flow.activeGoal(goals, recipient: "rec", sponsor: "spo")
            let added = try await Flow.ok(
                goals, "goals.admin.items.add", ["goalId": .string(goalID), "items": [["kind": "recommendation", "text": "Walk", "checkable": true]]], as: Flow.admin)
            let item = try #require(added["items"]?[0]?["id"])
            try await Flow.ok(goals, "goals.items.check", ["itemId": item, "done": true], as: Flow.user("rec"))
            let updated = try await Flow.ok(goals, "goals.admin.items.update", ["itemId": item, "checkable": false], as: Flow.admin)
            #expect(updated["done"] == false)
            let feed = try await Flow.ok(goals, "goals.feed", ["with": "spo", "limit": 1], as: Flow.user("rec"))
            #expect(feed["entries"]?[0]?["kind"] == "unchecked")
            let events = try await goals.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_event WHERE type = 'goals.item.unchecked'") }
            #expect(events == 1)
            let blank = try await goals.call("goals.admin.fail", data: ["goalId": .string(goalID), "reason": "   "], as: Flow.admin)
            #expect(blank.error?.fields["reason"] != nil)
        }
    }

    @Test("a sponsor answers the round they saw: a revision in between is conflict offer_changed")
    func answerNamesTheRound() async throws {
        try await Flow.with { goals in
            try await Flow.sponsor(goals, "careful")
            let goal = try await Flow.ok(goals, "goals.create", ["type": "marathon"], as: Flow.user("rec"))
            let offer = try await Flow.ok(goals, "goals.propose", ["goalId": goal["id"]!, "sponsor": "careful", "reward": ["text": "x"]], as: Flow.user("rec"))
            #expect(offer["round"] == 1)
            try await Flow.ok(goals, "goals.revise", ["sponsorshipId": offer["id"]!, "type": "ironman"], as: Flow.user("rec"))
            let stale = try await goals.call("goals.accept", data: ["sponsorshipId": offer["id"]!, "round": 1], as: Flow.user("careful"))
            #expect(stale.error?.details["reason"] == "offer_changed" && stale.error?.details["round"] == 2)
            #expect(try await Flow.ok(goals, "goals.accept", ["sponsorshipId": offer["id"]!, "round": 2], as: Flow.user("careful"))["state"] == "accepted")
        }
    }

    @Test("a sponsor's avatar is an image they uploaded: another's fresh upload is refused, so it cannot be attached and released away")
    func avatarIsOwnUpload() async throws {
        try await Flow.with { goals in
            let content = try TestImages.png(width: 16, height: 16, seed: 9).base64EncodedString()
            let image = try #require(try await Flow.ok(goals, "goals.media.put", ["content": .string(content)], as: Flow.user("a"))["id"]?.stringValue)
            let taken = try await goals.call(
                "goals.sponsor.profile.save", data: ["name": "B", "kind": "person", "group": "family", "avatar": .string(image)], as: Flow.user("b"))
            #expect(taken.error?.code == .validationFailed && taken.error?.fields["avatar"] != nil)
            try await Flow.ok(goals, "goals.sponsor.profile.save", ["name": "A", "kind": "person", "group": "family", "avatar": .string(image)], as: Flow.user("a"))
            #expect(try await goals.runtime.pool.read { db in try MediaCatalog.referenceCount(db, id: image) } == 1)
        }
    }

    @Test("an item's day comes in the recipient's zone: checked from then on, not before; unchecking is always allowed")
    func checkFromItsDay() async throws {
        try await Flow.with { goals in
            let (goalID, _) = try await Flow.activeGoal(goals, recipient: "east", sponsor: "s-east")
            // Auth's profile put the recipient at UTC+14: their today is a day ahead of UTC's for ten hours.
            try await goals.runtime.pool.write { db in
                try db.execute(sql: "INSERT INTO person (user_id, time_zone) VALUES ('east', 'Pacific/Kiritimati') ON CONFLICT (user_id) DO UPDATE SET time_zone = excluded.time_zone")
            }
            let today = try #require(ZoneClock(identifier: "Pacific/Kiritimati")).localDate(of: Date())
            let added = try await Flow.ok(
                goals, "goals.admin.items.add",
                ["goalId": .string(goalID), "items": [["kind": "workout", "date": .string(today.description), "text": "Run"], ["kind": "workout", "date": .string(today.adding(days: 1).description), "text": "Run"]]],
                as: Flow.admin)
            let ids = try #require(added["items"]?.arrayValue?.compactMap { $0["id"] })
            try #require(ids.count == 2)
            #expect(try await Flow.ok(goals, "goals.items.check", ["itemId": ids[0], "done": true], as: Flow.user("east"))["done"] == true)
            let early = try await goals.call("goals.items.check", data: ["itemId": ids[1], "done": true], as: Flow.user("east"))
            #expect(early.error?.code == .conflict && early.error?.details["reason"] == "not_yet")
            #expect(try await Flow.ok(goals, "goals.items.check", ["itemId": ids[1], "done": false], as: Flow.user("east"))["done"] == false)
            // A done item stays on a day that has come: an admin cannot date it in the future, only an undone one.
            let moved = try await goals.call("goals.admin.items.update", data: ["itemId": ids[0], "date": .string(today.adding(days: 3).description)], as: Flow.admin)
            #expect(moved.error?.code == .conflict && moved.error?.details["reason"] == "item_done")
            #expect(try await Flow.ok(goals, "goals.admin.items.update", ["itemId": ids[0], "date": .string(today.adding(days: -1).description)], as: Flow.admin)["done"] == true)
            #expect(try await Flow.ok(goals, "goals.admin.items.update", ["itemId": ids[1], "date": .string(today.adding(days: 3).description)], as: Flow.admin)["done"] == false)
        }
    }

    @Test("profiles: a change of sex lets go of the other sex's options; a retired group's members still save")
    func profileEdges() async throws {
        try await Flow.with { goals in
            let figure = try await Flow.ok(goals, "goals.admin.body_options.save", ["kind": "figure", "sex": "male", "title": "V"], as: Flow.admin)
            try await Flow.ok(goals, "goals.profile.save", ["personal": ["sex": "male"], "figure": ["figure": figure["id"]!]], as: Flow.user("r"))
            let switched = try await Flow.ok(goals, "goals.profile.save", ["personal": ["sex": "female"]], as: Flow.user("r"))
            #expect(switched["figure"] == nil)
            try await Flow.sponsor(goals, "member", group: "employers")
            try await Flow.ok(goals, "goals.admin.groups.retire", ["id": "employers", "retired": true], as: Flow.admin)
            try await Flow.sponsor(goals, "member", group: "employers")
            #expect(try await goals.call("goals.sponsor.profile.save", data: ["name": "New", "kind": "employer", "group": "employers"], as: Flow.user("newcomer")).error?.fields["group"] != nil)
        }
    }

    @Test("tracker records from the future are refused")
    func futureActivity() async throws {
        try await Flow.with { goals in
            let reply = try await goals.call(
                "goals.activities.import",
                data: ["activities": [["source": "fitbit", "externalId": "f", "type": "run", "start": "3000-01-01T00:00:00Z", "durationSeconds": 60]]],
                as: Flow.user("r"))
            #expect(reply.error?.fields["activities[0].start"] != nil)
            #expect(try await goals.call("goals.activities", data: ["from": "2027-01-02T00:00:00Z", "to": "2027-01-01T00:00:00Z"], as: Flow.user("r")).error?.fields["to"] != nil)
        }
    }

    // MARK: Second attack (helper-72)

    @Test("a new type revises every offer still negotiated: the other sponsor's answer to the old goal is offer_changed, and they are told")
    func newTypeRevisesEveryOffer() async throws {
        try await Flow.with { goals in
            try await Flow.sponsor(goals, "s1")
            try await Flow.sponsor(goals, "s2")
            let goal = try await Flow.ok(goals, "goals.create", ["type": "weight_loss", "settings": ["sport": "running"]], as: Flow.user("rec"))
            let one = try await Flow.ok(goals, "goals.propose", ["goalId": goal["id"]!, "sponsor": "s1", "reward": ["text": "x"]], as: Flow.user("rec"))
            let two = try await Flow.ok(goals, "goals.propose", ["goalId": goal["id"]!, "sponsor": "s2", "reward": ["text": "y"]], as: Flow.user("rec"))
            try await Flow.ok(goals, "goals.revise", ["sponsorshipId": one["id"]!, "type": "ironman", "comment": "for s1 only"], as: Flow.user("rec"))
            let stale = try await goals.call("goals.accept", data: ["sponsorshipId": two["id"]!, "round": 1], as: Flow.user("s2"))
            #expect(stale.error?.details["reason"] == "offer_changed" && stale.error?.details["round"] == 2)
            let told = try await goals.runtime.pool.read { db in
                try String.fetchAll(db, sql: "SELECT data FROM platform_event WHERE type = 'goals.revised' ORDER BY seq")
            }
            #expect(told.count == 2 && told.contains { $0.contains("\"sponsorId\":\"s2\"") && $0.contains("ironman") && !$0.contains("for s1 only") })
            let feed = try await Flow.ok(goals, "goals.feed", ["with": "rec", "limit": 1], as: Flow.user("s2"))
            #expect(feed["entries"]?[0]?["kind"] == "revised")
            #expect(try await Flow.ok(goals, "goals.accept", ["sponsorshipId": two["id"]!, "round": 2], as: Flow.user("s2"))["state"] == "accepted")
            // A rejected offer stays as its sponsor left it: no new round, not told.
            try await Flow.sponsor(goals, "s3")
            let other = try await Flow.ok(goals, "goals.create", ["type": "weight_loss", "settings": ["sport": "running"]], as: Flow.user("rec2"))
            let first = try await Flow.ok(goals, "goals.propose", ["goalId": other["id"]!, "sponsor": "s1", "reward": ["text": "x"]], as: Flow.user("rec2"))
            let refused = try await Flow.ok(goals, "goals.propose", ["goalId": other["id"]!, "sponsor": "s3", "reward": ["text": "y"]], as: Flow.user("rec2"))
            try await Flow.ok(goals, "goals.reject", ["sponsorshipId": refused["id"]!, "kind": "ask_new_goal", "comment": "not running"], as: Flow.user("s3"))
            try await Flow.ok(goals, "goals.revise", ["sponsorshipId": first["id"]!, "settings": ["sport": "cycling"]], as: Flow.user("rec2"))
            let after = try await Flow.ok(goals, "goals.get", ["goalId": other["id"]!], as: Flow.user("s3"))
            let theirs = after["goal"]?["sponsorships"]?.arrayValue?.first { $0["id"] == refused["id"] }
            #expect(theirs?["state"] == "rejected" && theirs?["round"] == 1, "\(theirs ?? .null)")
            // A blank comment alone revises nothing.
            let blank = try await goals.call("goals.revise", data: ["sponsorshipId": one["id"]!, "comment": "  "], as: Flow.user("rec"))
            #expect(blank.error?.code == .validationFailed)
        }
    }

    @Test("a goal that ends closes the offers still negotiated with a feed entry and goals.offer_withdrawn for each sponsor")
    func endingTellsOpenOffers() async throws {
        try await Flow.with { goals in
            let (goalID, _) = try await Flow.activeGoal(goals, recipient: "rec", sponsor: "kept")
            try await Flow.sponsor(goals, "waiting")
            try await Flow.ok(goals, "goals.propose", ["goalId": .string(goalID), "sponsor": "waiting", "reward": ["text": "x"]], as: Flow.user("rec"))
            try await Flow.ok(goals, "goals.withdraw", ["goalId": .string(goalID)], as: Flow.user("rec"))
            let told = try await goals.runtime.pool.read { db in
                try String.fetchAll(db, sql: "SELECT data FROM platform_event WHERE type = 'goals.offer_withdrawn'")
            }
            #expect(told.count == 1 && told[0].contains("\"sponsorId\":\"waiting\"") && told[0].contains("\"goalState\":\"withdrawn\""))
            let feed = try await Flow.ok(goals, "goals.feed", ["with": "rec", "limit": 1], as: Flow.user("waiting"))
            #expect(feed["entries"]?[0]?["kind"] == "withdrawn")
        }
    }

    @Test("two people who sponsor each other: the goal named picks the feed, for comments and for reading")
    func mutualSponsorsReachBothFeeds() async throws {
        try await Flow.with { goals in
            let (pGoal, _) = try await Flow.activeGoal(goals, recipient: "p", sponsor: "q")
            let (qGoal, _) = try await Flow.activeGoal(goals, recipient: "q", sponsor: "p")
            let comment = try await Flow.ok(goals, "goals.comments.add", ["with": "q", "goalId": .string(qGoal), "text": "go Quinn"], as: Flow.user("p"))
            #expect(comment["goalId"]?.stringValue == qGoal)
            let theirs = try await Flow.ok(goals, "goals.feed", ["with": "q", "goalId": .string(qGoal), "limit": 1], as: Flow.user("p"))
            #expect(theirs["entries"]?[0]?["text"] == "go Quinn")
            let mine = try await Flow.ok(goals, "goals.feed", ["with": "q", "limit": 5], as: Flow.user("p"))
            #expect(mine["entries"]?.arrayValue?.allSatisfy { $0["goalId"]?.stringValue == pGoal } == true)
            #expect(try await goals.call("goals.feed", data: ["with": "q", "goalId": "goal_nope"], as: Flow.user("p")).error?.code == .notFound)
        }
    }

    @Test("a finished goal's plan is closed to edits; contradictory or blank items and bad cursors are refused; no counter-goal once accepted")
    func closedPlanAndItemRules() async throws {
        try await Flow.with { goals in
            let (goalID, _) = try await Flow.activeGoal(goals, recipient: "rec", sponsor: "spo")
            let bad = try await goals.call(
                "goals.admin.items.add", data: ["goalId": .string(goalID), "items": [["kind": "nutrition", "text": "Eat", "checkable": true]]], as: Flow.admin)
            #expect(bad.error?.fields["items[0].checkable"] != nil)
            let blank = try await goals.call("goals.admin.items.add", data: ["goalId": .string(goalID), "items": [["kind": "tip", "text": "   "]]], as: Flow.admin)
            #expect(blank.error?.fields["items[0].text"] != nil)
            let control = try await goals.call("goals.create", data: ["type": "custom", "settings": ["goal": "a\u{0}b"]], as: Flow.user("other"))
            #expect(control.error?.fields["settings.goal"] != nil)
            #expect(try await goals.call("goals.admin.inbox", data: ["before": "goal_nope"], as: Flow.admin).error?.fields["before"] != nil)
            #expect(
                try await goals.call("goals.items.list", data: ["goalId": .string(goalID), "from": "2026-02-02", "to": "2026-02-01"], as: Flow.user("rec"))
                    .error?.fields["to"] != nil)
            try await Flow.sponsor(goals, "late")
            let offer = try await Flow.ok(goals, "goals.propose", ["goalId": .string(goalID), "sponsor": "late", "reward": ["text": "x"]], as: Flow.user("rec"))
            let counter = try await goals.call("goals.reject", data: ["sponsorshipId": offer["id"]!, "kind": "counter_goal", "type": "ironman"], as: Flow.user("late"))
            #expect(counter.error?.details["reason"] == "wrong_state")

            let added = try await Flow.ok(
                goals, "goals.admin.items.add",
                ["goalId": .string(goalID), "items": [["kind": "workout", "date": .string(Flow.today().description), "text": "Run"]]], as: Flow.admin)
            let item = try #require(added["items"]?[0]?["id"])
            try await Flow.ok(goals, "goals.admin.progress.set", ["goalId": .string(goalID), "percent": 100], as: Flow.admin)
            for (op, data, caller) in [
                ("goals.items.time", ["itemId": item, "time": "08:00"], Flow.user("rec")),
                ("goals.admin.items.update", ["itemId": item, "text": "Swim"], Flow.admin),
                ("goals.admin.items.remove", ["itemId": item], Flow.admin),
            ] as [(String, JSONValue, TestCaller)] {
                #expect(try await goals.call(op, data: data, as: caller).error?.details["reason"] == "wrong_state", "\(op)")
            }
        }
    }

    @Test("new goals and comments are bounded per user in any 24 hours: rate_limited with the wait, others unaffected")
    func dailyAllowances() async throws {
        try await Flow.with { goals in
            for _ in 0..<DailyAllowance.goals.limit {
                let goal = try await Flow.ok(goals, "goals.create", ["type": "marathon"], as: Flow.user("loop"))
                try await Flow.ok(goals, "goals.withdraw", ["goalId": goal["id"]!], as: Flow.user("loop"))
            }
            let refused = try await goals.call("goals.create", data: ["type": "marathon"], as: Flow.user("loop"))
            #expect(refused.error?.code == .rateLimited)
            let wait = refused.error?.details["retryAfterMs"]?.integerValue ?? 0
            #expect(wait > 86_000_000 && wait <= 86_400_000, "\(wait)")
            try await Flow.ok(goals, "goals.create", ["type": "marathon"], as: Flow.user("other"))

            let (talking, _) = try await Flow.activeGoal(goals, recipient: "talk", sponsor: "listener")
            for start in stride(from: 0, to: DailyAllowance.comments.limit, by: 50) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in start..<start + 50 {
                        group.addTask { try await Flow.ok(goals, "goals.comments.add", ["with": "listener", "text": .string("c\(index)")], as: Flow.user("talk")) }
                    }
                    try await group.waitForAll()
                }
            }
            let silenced = try await goals.call("goals.comments.add", data: ["with": "listener", "text": "one more"], as: Flow.user("talk"))
            #expect(silenced.error?.code == .rateLimited && silenced.error?.details["retryAfterMs"] != nil)
            try await Flow.ok(goals, "goals.comments.add", ["with": "talk", "text": "my turn"], as: Flow.user("listener"))
            // An offer's comment is a text for a feed too: refused before anything is written;
            // the same offer without one goes through.
            try await Flow.sponsor(goals, "third")
            let offer: JSONValue = ["goalId": .string(talking), "sponsor": "third", "reward": ["text": "x"], "comment": "and you?"]
            let quiet = try await goals.call("goals.propose", data: offer, as: Flow.user("talk"))
            #expect(quiet.error?.code == .rateLimited)
            var plain = offer.objectValue ?? [:]
            plain["comment"] = nil
            try await Flow.ok(goals, "goals.propose", .object(plain), as: Flow.user("talk"))
            let feed = try await Flow.ok(goals, "goals.feed", ["with": "listener", "limit": 100], as: Flow.user("talk"))
            #expect(!"\(feed)".contains("one more"))
        }
    }

    @Test("a like needs the offer still live: a withdrawn pair's feed is read, not written to")
    func noLikeAfterWithdrawal() async throws {
        try await Flow.with { goals in
            try await Flow.sponsor(goals, "s")
            let goal = try await Flow.ok(goals, "goals.create", ["type": "marathon"], as: Flow.user("rec"))
            let offer = try await Flow.ok(goals, "goals.propose", ["goalId": goal["id"]!, "sponsor": "s", "reward": ["text": "x"]], as: Flow.user("rec"))
            let comment = try await Flow.ok(goals, "goals.comments.add", ["with": "rec", "text": "hello"], as: Flow.user("s"))
            try await Flow.ok(goals, "goals.offer.withdraw", ["sponsorshipId": offer["id"]!], as: Flow.user("rec"))
            let like = try await goals.call("goals.comments.like", data: ["entryId": comment["id"]!, "liked": true], as: Flow.user("rec"))
            #expect(like.error?.code == .conflict && like.error?.details["reason"] == "offer_closed")
            let more = try await goals.call("goals.comments.add", data: ["with": "rec", "goalId": goal["id"]!, "text": "after"], as: Flow.user("s"))
            #expect(more.error?.code == .conflict && more.error?.details["reason"] == "offer_closed")
        }
    }
}

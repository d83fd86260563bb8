import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import GoalsService

/// The goals service in process: its real socket and SQLite file, called as users with
/// test tokens. (The journey through the gateway with real auth: ``GoalsGatewayTests``.)
@Suite("Goals in process")
struct GoalsFlowTests {
    static func user(_ id: String) -> TestCaller { .user(id, roles: ["recipient", "sponsor"]) }
    static let admin = TestCaller.user("admin-1", roles: ["recipient", "sponsor", "admin"])

    static func with<T>(_ body: (InProcessService) async throws -> T) async throws -> T {
        try await InProcessService.with(GoalsService.definition, body)
    }

    /// Calls and requires success; returns `data`.
    @discardableResult
    static func ok(
        _ goals: InProcessService, _ op: String, _ data: JSONValue = [:], as caller: TestCaller, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let reply = try await goals.call(op, data: data, as: caller)
        #expect(reply.ok, "\(op): \(reply.error?.code.rawValue ?? "") \(reply.error?.message ?? "") \(reply.error?.fields ?? [:])", sourceLocation: sourceLocation)
        return reply.data ?? .null
    }

    /// A sponsor listed in `group`.
    static func sponsor(_ goals: InProcessService, _ id: String, group: String = "employers") async throws {
        try await ok(goals, "goals.sponsor.profile.save", ["name": .string("Sponsor \(id)"), "kind": "employer", "group": .string(group)], as: user(id))
    }

    /// A recipient's goal offered to `sponsor` and accepted: returns (goal id, sponsorship id).
    static func activeGoal(_ goals: InProcessService, recipient: String, sponsor: String) async throws -> (String, String) {
        try await Self.sponsor(goals, sponsor)
        let goal = try await ok(goals, "goals.create", ["type": "weight_loss", "settings": ["sport": "running"]], as: user(recipient))
        let goalID = try #require(goal["id"]?.stringValue)
        let offer = try await ok(
            goals, "goals.propose", ["goalId": .string(goalID), "sponsor": .string(sponsor), "reward": ["money": ["minor": 5_000, "currency": "EUR"]]],
            as: user(recipient))
        let sponsorship = try #require(offer["id"]?.stringValue)
        try await ok(goals, "goals.accept", ["sponsorshipId": .string(sponsorship)], as: user(sponsor))
        return (goalID, sponsorship)
    }

    static func today() -> LocalDate { ZoneClock.utc.localDate(of: Date()) }

    @Test("the whole flow: proposal, counter-proposal, revision, acceptance, plan checked, comments and likes, 100 %, reward paid")
    func wholeFlow() async throws {
        try await Self.with { goals in
            let recipient = Self.user("rita"), sponsor = Self.user("sam")
            try await Self.sponsor(goals, "sam")
            let types = try await Self.ok(goals, "goals.types", as: recipient)
            #expect(types["types"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.contains("muscle_mass") == true)

            let goal = try await Self.ok(goals, "goals.create", ["type": "weight_loss", "settings": ["sport": "swimming"]], as: recipient)
            let goalID = try #require(goal["id"]?.stringValue)
            #expect(goal["state"] == "draft" && goal["formVersion"] == 1)
            let second = try await goals.call("goals.create", data: ["type": "marathon"], as: recipient)
            #expect(second.error?.code == .conflict && second.error?.details["reason"] == "open_goal_exists")

            let listed = try await Self.ok(goals, "goals.sponsors", ["group": "employers"], as: recipient)
            #expect(listed["sponsors"]?.arrayValue?.first?["id"] == "sam")

            let offer = try await Self.ok(
                goals, "goals.propose",
                ["goalId": .string(goalID), "sponsor": "sam", "reward": ["money": ["minor": 10_000, "currency": "EUR"]], "comment": "please"],
                as: recipient)
            let sponsorship = try #require(offer["id"]?.stringValue)
            #expect(offer["state"] == "proposed")
            let waiting = try await Self.ok(goals, "goals.offers", ["state": "proposed"], as: sponsor)
            #expect(waiting["goals"]?.arrayValue?.count == 1)

            let rejected = try await Self.ok(
                goals, "goals.reject", ["sponsorshipId": .string(sponsorship), "kind": "counter_goal", "type": "marathon", "comment": "run instead"],
                as: sponsor)
            #expect(rejected["state"] == "rejected" && rejected["suggestedType"]?["id"] == "marathon")
            let late = try await goals.call("goals.accept", data: ["sponsorshipId": .string(sponsorship)], as: sponsor)
            #expect(late.error?.code == .conflict && late.error?.message.contains("rejected") == true)

            let revised = try await Self.ok(
                goals, "goals.revise", ["sponsorshipId": .string(sponsorship), "type": "marathon", "reward": ["text": "a new watch"]], as: recipient)
            #expect(revised["state"] == "proposed" && revised["reward"]?["text"] == "a new watch")
            let accepted = try await Self.ok(goals, "goals.accept", ["sponsorshipId": .string(sponsorship)], as: sponsor)
            #expect(accepted["state"] == "accepted" && accepted["rewardStatus"] == "promised")

            let detail = try await Self.ok(goals, "goals.get", ["goalId": .string(goalID)], as: recipient)
            #expect(detail["goal"]?["state"] == "active" && detail["goal"]?["type"]?["id"] == "marathon")
            #expect(detail["history"]?.arrayValue?.map { $0["kind"]?.stringValue ?? "" } == ["proposal", "counter_goal", "revision", "accept"])

            let today = Self.today()
            let added = try await Self.ok(
                goals, "goals.admin.items.add",
                [
                    "goalId": .string(goalID),
                    "items": [
                        ["kind": "workout", "date": .string(today.adding(days: -1).description), "text": "Run 5 km", "requirement": "under 35 min"],
                        ["kind": "workout", "date": .string(today.description), "text": "Intervals"],
                        ["kind": "workout", "date": .string(today.adding(days: 1).description), "text": "Long run"],
                        ["kind": "recommendation", "text": "Sleep 8 hours", "checkable": true], ["kind": "tip", "text": "Drink water"],
                    ],
                ], as: Self.admin)
            let items = try #require(added["items"]?.arrayValue)
            let todays = try #require(items[1]["id"]?.stringValue)
            for _ in 0..<2 {
                let checked = try await Self.ok(goals, "goals.items.check", ["itemId": .string(todays), "done": true], as: recipient)
                #expect(checked["done"] == true)
            }
            let tip = try await goals.call("goals.items.check", data: ["itemId": items[4]["id"]!, "done": true], as: recipient)
            #expect(tip.error?.details["reason"] == "not_checkable")
            let calendar = try await Self.ok(goals, "goals.calendar", ["date": .string(today.description)], as: recipient)
            #expect(calendar["goals"]?[0]?["items"]?[0]?["done"] == true)
            let dashboard = try await Self.ok(goals, "goals.dashboard", as: recipient)
            #expect(dashboard["goal"]?["plan"]?["pace"] == "behind", "yesterday's run is not done")
            #expect(dashboard["goal"]?["plan"]?["sharePercent"] == 25)
            #expect(dashboard["workouts"]?.arrayValue?.count == 2 && dashboard["tips"]?.arrayValue?.count == 1)

            let comment = try await Self.ok(goals, "goals.comments.add", ["with": "rita", "text": "Great start!\nKeep going"], as: sponsor)
            let entry = try #require(comment["id"]?.integerValue)
            let own = try await goals.call("goals.comments.like", data: ["entryId": .integer(entry), "liked": true], as: sponsor)
            #expect(own.error?.details["reason"] == "not_likeable")
            for _ in 0..<2 {
                let liked = try await Self.ok(goals, "goals.comments.like", ["entryId": .integer(entry), "liked": true], as: recipient)
                #expect(liked["likes"] == 1 && liked["likedByMe"] == true)
            }
            try await Self.ok(goals, "goals.comments.add", ["with": "sam", "text": "Thanks!"], as: recipient)
            let myComment = try await Self.ok(goals, "goals.feed", ["with": "sam", "limit": 1], as: recipient)
            let recipientsComment = try #require(myComment["entries"]?[0]?["id"]?.integerValue)
            let notSponsors = try await goals.call("goals.comments.like", data: ["entryId": .integer(recipientsComment), "liked": true], as: sponsor)
            #expect(notSponsors.error?.details["reason"] == "not_likeable")

            let half = try await Self.ok(goals, "goals.admin.progress.set", ["goalId": .string(goalID), "percent": 50], as: Self.admin)
            #expect(half["progress"] == 50 && half["state"] == "active")
            let done = try await Self.ok(goals, "goals.admin.progress.set", ["goalId": .string(goalID), "percent": 100], as: Self.admin)
            #expect(done["state"] == "completed" && done["sponsorships"]?[0]?["rewardStatus"] == "earned")
            let paid = try await Self.ok(goals, "goals.reward.paid", ["sponsorshipId": .string(sponsorship)], as: sponsor)
            #expect(paid["rewardStatus"] == "paid")
            let again = try await goals.call("goals.reward.paid", data: ["sponsorshipId": .string(sponsorship)], as: sponsor)
            #expect(again.error?.code == .conflict && again.error?.details["state"] == "paid")

            let feed = try await Self.ok(goals, "goals.feed", ["with": "rita"], as: sponsor)
            var kinds: [String] = []
            for entry in feed["entries"]?.arrayValue ?? [] { kinds.append(entry["kind"]?.stringValue ?? "?") }
            #expect(kinds == ["reward_paid", "completed", "progress", "progress", "comment", "comment", "checked", "accepted", "revised", "rejected", "proposed", "created"])
            let checkedFacts = kinds.filter { $0 == "checked" }.count
            #expect(checkedFacts == 1, "a double tap is one fact")

            // A new goal may follow the finished one.
            try await Self.ok(goals, "goals.create", ["type": "custom", "settings": ["goal": "Climb Elbrus"]], as: recipient)
            let tabs = try await Self.ok(goals, "goals.mine", as: recipient)
            #expect(tabs["goals"]?.arrayValue?.map { $0["title"]?.stringValue ?? "" } == ["Climb Elbrus", "Run a marathon"])
        }
    }

    @Test("nobody reads or changes another's goal, offer, item, feed, comment or like by guessing ids")
    func othersIDs() async throws {
        try await Self.with { goals in
            let (goalID, sponsorship) = try await Self.activeGoal(goals, recipient: "owner", sponsor: "patron")
            let added = try await Self.ok(
                goals, "goals.admin.items.add",
                ["goalId": .string(goalID), "items": [["kind": "workout", "date": .string(Self.today().description), "text": "Run"]]], as: Self.admin)
            let item = try #require(added["items"]?[0]?["id"])
            let comment = try await Self.ok(goals, "goals.comments.add", ["with": "owner", "text": "hi"], as: Self.user("patron"))
            let stranger = Self.user("mallory")
            try await Self.sponsor(goals, "mallory")
            let attempts: [(String, JSONValue)] = [
                ("goals.get", ["goalId": .string(goalID)]), ("goals.items.list", ["goalId": .string(goalID)]),
                ("goals.dashboard", ["goalId": .string(goalID)]), ("goals.items.check", ["itemId": item, "done": true]),
                ("goals.items.time", ["itemId": item, "time": "07:00"]), ("goals.accept", ["sponsorshipId": .string(sponsorship)]),
                ("goals.reject", ["sponsorshipId": .string(sponsorship), "kind": "ask_new_goal", "comment": "no"]),
                ("goals.revise", ["sponsorshipId": .string(sponsorship), "comment": "x"]), ("goals.offer.withdraw", ["sponsorshipId": .string(sponsorship)]),
                ("goals.withdraw", ["goalId": .string(goalID)]), ("goals.reward.paid", ["sponsorshipId": .string(sponsorship)]),
                ("goals.feed", ["with": "owner"]), ("goals.feed", ["with": "patron"]), ("goals.comments.add", ["with": "owner", "text": "spam"]),
                ("goals.comments.like", ["entryId": comment["id"]!, "liked": true]),
                ("goals.propose", ["goalId": .string(goalID), "sponsor": "mallory", "reward": ["text": "x"]]),
                ("goals.plan.reschedule", ["goalId": .string(goalID), "from": .string(Self.today().description), "to": .string(Self.today().description)]),
            ]
            for (op, data) in attempts {
                let reply = try await goals.call(op, data: data, as: stranger)
                #expect(reply.error?.code == .notFound || (op == "goals.plan.reschedule" && reply.error?.code == .notFound), "\(op): \(reply.error?.code.rawValue ?? "ok")")
            }
            // The sponsor cannot act as the recipient, nor the recipient as the sponsor.
            #expect(try await goals.call("goals.items.check", data: ["itemId": item, "done": true], as: Self.user("patron")).error?.code == .notFound)
            #expect(try await goals.call("goals.reward.paid", data: ["sponsorshipId": .string(sponsorship)], as: Self.user("owner")).error?.code == .notFound)
            // Admin operations need the role.
            let progress = try await goals.call("goals.admin.progress.set", data: ["goalId": .string(goalID), "percent": 10], as: stranger)
            #expect(progress.error?.code == .forbidden)
            // The goal is unchanged.
            let goal = try await Self.ok(goals, "goals.get", ["goalId": .string(goalID)], as: Self.user("owner"))
            #expect(goal["goal"]?["state"] == "active" && goal["goal"]?["plan"]?["done"] == 0)
        }
    }

    @Test("two sponsors accepting at the same moment both sponsor the goal; a double-tapped check is one fact")
    func races() async throws {
        try await Self.with { goals in
            let recipient = Self.user("racer")
            let goal = try await Self.ok(goals, "goals.create", ["type": "triathlon"], as: recipient)
            let goalID = try #require(goal["id"])
            var offers: [String: String] = [:]
            for sponsor in ["s1", "s2", "s3"] {
                try await Self.sponsor(goals, sponsor)
                let offer = try await Self.ok(goals, "goals.propose", ["goalId": goalID, "sponsor": .string(sponsor), "reward": ["text": "cake"]], as: recipient)
                offers[sponsor] = offer["id"]?.stringValue
            }
            let replies = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for (sponsor, offer) in offers {
                    for _ in 0..<3 {
                        group.addTask { try await goals.call("goals.accept", data: ["sponsorshipId": .string(offer)], as: Self.user(sponsor)) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.ok }.count == 3, "each sponsor accepts once")
            #expect(replies.filter { !$0.ok }.allSatisfy { $0.error?.code == .conflict })
            let detail = try await Self.ok(goals, "goals.get", ["goalId": goalID], as: recipient)
            #expect(detail["goal"]?["state"] == "active")
            #expect(detail["goal"]?["sponsorships"]?.arrayValue?.allSatisfy { $0["state"] == "accepted" } == true)

            let added = try await Self.ok(
                goals, "goals.admin.items.add",
                ["goalId": goalID, "items": [["kind": "workout", "date": .string(Self.today().description), "text": "Swim"]]], as: Self.admin)
            let item = try #require(added["items"]?[0]?["id"])
            let checks = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for _ in 0..<10 { group.addTask { try await goals.call("goals.items.check", data: ["itemId": item, "done": true], as: recipient) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(checks.allSatisfy { $0.ok })
            let facts = try await goals.runtime.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM feed_entry WHERE kind = 'checked'")
            }
            #expect(facts == 1)
            let events = try await goals.runtime.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_event WHERE type = 'goals.item.checked'")
            }
            #expect(events == 1)
        }
    }

    @Test("the plan's progress summed by the database agrees with the rule, for random plans; items of days ahead cannot be checked yet")
    func progressAgreesWithRule() async throws {
        try await Self.with { goals in
            var generator = SystemRandomNumberGenerator()
            for round in 0..<5 {
                let recipient = "random-\(round)"
                let (goalID, _) = try await Self.activeGoal(goals, recipient: recipient, sponsor: "sponsor-\(round)")
                let items: [JSONValue] = (0..<40).map { _ in
                    let kind = ["workout", "nutrition", "recommendation"].randomElement(using: &generator)!
                    var item: [String: JSONValue] = ["kind": .string(kind), "text": "x", "checkable": .bool(Bool.random(using: &generator))]
                    if kind == "workout" || Bool.random(using: &generator) {
                        item["date"] = .string(Self.today().adding(days: Int.random(in: -20...20, using: &generator)).description)
                    }
                    if kind != "recommendation" { item["checkable"] = nil }
                    return .object(item)
                }
                let added = try await Self.ok(goals, "goals.admin.items.add", ["goalId": .string(goalID), "items": .array(items)], as: Self.admin)
                var checkable: [CheckableItem] = []
                for item in added["items"]?.arrayValue ?? [] where item["checkable"] == true {
                    let date = item["date"]?.stringValue.flatMap(LocalDate.init)
                    // An item of a day still ahead cannot be checked yet.
                    let ahead = date.map { $0 > Self.today() } ?? false
                    let done = Bool.random(using: &generator)
                    if done && ahead {
                        let refused = try await goals.call("goals.items.check", data: ["itemId": item["id"]!, "done": true], as: Self.user(recipient))
                        #expect(refused.error?.code == .conflict && refused.error?.details["reason"] == "not_yet")
                    } else if done {
                        try await Self.ok(goals, "goals.items.check", ["itemId": item["id"]!, "done": true], as: Self.user(recipient))
                    }
                    checkable.append(CheckableItem(date: date, done: done && !ahead))
                }
                let goal = try await Self.ok(goals, "goals.get", ["goalId": .string(goalID)], as: Self.user(recipient))
                let expected = try WireJSON.value(of: PlanProgress(checkable, today: Self.today()))
                #expect(goal["goal"]?["plan"] == expected, "round \(round)")
            }
        }
    }

    @Test("the dashboard and calendar answered from memory never lag a write, and are per caller")
    func cachedReadsFollowWrites() async throws {
        try await Self.with { goals in
            let (goalID, _) = try await Self.activeGoal(goals, recipient: "cached", sponsor: "viewer")
            let today = Self.today().description
            let added = try await Self.ok(
                goals, "goals.admin.items.add", ["goalId": .string(goalID), "items": [["kind": "workout", "date": .string(today), "text": "Run"]]], as: Self.admin)
            let item = try #require(added["items"]?[0]?["id"])
            // Typed dates far from today are refused, and nothing of the request is written.
            let far = try await goals.call(
                "goals.admin.items.add",
                data: ["goalId": .string(goalID), "items": [["kind": "workout", "date": .string(today), "text": "Ok"], ["kind": "workout", "date": "9999-01-01", "text": "Typo"]]],
                as: Self.admin)
            #expect(far.error?.code == .validationFailed && far.error?.fields["items[1].date"] != nil)
            #expect(try await goals.call("goals.admin.items.update", data: ["itemId": item, "date": "1900-01-01"], as: Self.admin).error?.fields["date"] != nil)
            #expect(try await Self.ok(goals, "goals.items.list", ["goalId": .string(goalID)], as: Self.user("cached"))["items"]?.arrayValue?.count == 1)
            for done in [true, false, true] {
                // Twice each: the second answer comes from memory.
                for _ in 0..<2 {
                    #expect(try await Self.ok(goals, "goals.dashboard", as: Self.user("cached"))["goal"]?["plan"]?["done"] == (done ? 0 : 1))
                    #expect(try await Self.ok(goals, "goals.calendar", ["date": .string(today)], as: Self.user("cached"))["goals"]?[0]?["items"]?[0]?["done"] == .bool(!done))
                }
                try await Self.ok(goals, "goals.items.check", ["itemId": item, "done": .bool(done)], as: Self.user("cached"))
            }
            #expect(try await Self.ok(goals, "goals.dashboard", as: Self.user("cached"))["goal"]?["plan"]?["done"] == 1)
            // Another caller with the same request gets their own answer.
            #expect(try await Self.ok(goals, "goals.dashboard", as: Self.user("someone-else"))["goal"] == .null)
            #expect(try await Self.ok(goals, "goals.calendar", ["date": .string(today)], as: Self.user("someone-else"))["goals"] == [])
        }
    }

    @Test("the database holds one open goal per recipient whatever the code does")
    func oneOpenGoalInTheDatabase() async throws {
        try await Self.with { goals in
            try await Self.ok(goals, "goals.create", ["type": "ironman"], as: Self.user("solo"))
            await #expect(throws: DatabaseError.self) {
                try await goals.runtime.pool.write { db in
                    try db.execute(
                        sql: """
                            INSERT INTO goal (id, recipient_id, type_id, form_version, settings, state, created_at, updated_at, change_version)
                            VALUES ('x', 'solo', 'marathon', 1, '{}', 'proposed', '2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z', 1)
                            """)
                }
            }
        }
    }

    @Test("bad input gets validation_failed naming the field, and writes nothing")
    func badInput() async throws {
        try await Self.with { goals in
            let recipient = Self.user("careless")
            let cases: [(String, JSONValue, String)] = [
                ("goals.create", ["type": "weight_loss"], "settings.sport"),
                ("goals.create", ["type": "weight_loss", "settings": ["sport": "golf"]], "settings.sport"),
                ("goals.create", ["type": "nope"], "type"),
                ("goals.create", ["type": "custom", "settings": ["goal": "   "]], "settings.goal"),
                ("goals.profile.save", ["personal": ["height": ["value": 20, "unit": "cm"]]], "personal.height.value"),
                ("goals.profile.save", ["personal": ["age": 0]], "personal.age"),
                ("goals.profile.save", ["figure": ["figure": "nope"]], "figure.figure"),
                ("goals.questionnaire.submit", ["questionnaire": "nutrition", "answers": ["meals_work_days": "three"]], "answers.meals_weekend_days"),
                ("goals.sponsor.profile.save", ["name": "X", "kind": "employer", "group": "aliens"], "group"),
            ]
            for (op, data, field) in cases {
                let reply = try await goals.call(op, data: data, as: recipient)
                #expect(reply.error?.code == .validationFailed, "\(op)")
                #expect(reply.error?.fields[field] != nil, "\(op): \(reply.error?.fields ?? [:])")
            }
            let goal = try await Self.ok(goals, "goals.create", ["type": "marathon"], as: recipient)
            let moneyless = try await goals.call(
                "goals.propose", data: ["goalId": goal["id"]!, "sponsor": "nobody", "reward": ["money": ["minor": 0, "currency": "EUR"]]], as: recipient)
            #expect(moneyless.error?.fields["reward.money.minor"] != nil)
            let both = try await goals.call(
                "goals.propose", data: ["goalId": goal["id"]!, "sponsor": "nobody", "reward": ["money": ["minor": 10, "currency": "EUR"], "text": "x"]],
                as: recipient)
            #expect(both.error?.code == .validationFailed)
            let noSponsor = try await goals.call("goals.propose", data: ["goalId": goal["id"]!, "sponsor": "nobody", "reward": ["text": "x"]], as: recipient)
            #expect(noSponsor.error?.fields["sponsor"] != nil)
            let count = try await goals.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sponsorship") }
            #expect(count == 0)
        }
    }

    @Test("the fitness profile: saved per tab in either units, stored in SI, with the BMI and its WHO category")
    func profile() async throws {
        try await Self.with { goals in
            let recipient = Self.user("fit")
            let shape = try await Self.ok(goals, "goals.admin.body_options.save", ["kind": "shape", "sex": "female", "title": "Pear"], as: Self.admin)
            let male = try await Self.ok(goals, "goals.admin.body_options.save", ["kind": "figure", "sex": "male", "title": "V"], as: Self.admin)
            let personal = try await Self.ok(
                goals, "goals.profile.save",
                ["personal": ["age": 34, "height": ["value": 65, "unit": "in"], "weight": ["value": 150, "unit": "lb"], "sex": "female", "units": "imperial"]],
                as: recipient)
            #expect(personal["height"]?["millimetres"] == 1_651 && personal["weight"]?["grams"] == 68_039)
            #expect(personal["bmi"]?["category"] == "normal" && personal["units"] == "imperial")
            let wrongSex = try await goals.call("goals.profile.save", data: ["figure": ["figure": male["id"]!]], as: recipient)
            #expect(wrongSex.error?.fields["figure.figure"]?.contains("male") == true)
            let tab = try await Self.ok(goals, "goals.profile.save", ["extraPounds": ["shape": shape["id"]!], "figure": ["bodyType": "asthenic"]], as: recipient)
            #expect(tab["shape"] == shape["id"] && tab["age"] == 34 && tab["bodyType"] == "asthenic")
        }
    }

    @Test("moving a day's workout shifts the rest of the plan; the feed and the sponsors hear of it")
    func reschedule() async throws {
        try await Self.with { goals in
            let (goalID, _) = try await Self.activeGoal(goals, recipient: "mover", sponsor: "watcher")
            let today = Self.today()
            let week = PlanReschedule.week(of: today)
            guard today < week.upperBound else { return }  // Sunday: no later day this week to move to.
            let added = try await Self.ok(
                goals, "goals.admin.items.add",
                [
                    "goalId": .string(goalID),
                    "items": [
                        ["kind": "workout", "date": .string(today.description), "text": "A"],
                        ["kind": "workout", "date": .string(today.adding(days: 7).description), "text": "B"],
                    ],
                ], as: Self.admin)
            #expect(added["items"]?.arrayValue?.count == 2)
            let moved = try await Self.ok(
                goals, "goals.plan.reschedule",
                ["goalId": .string(goalID), "from": .string(today.description), "to": .string(today.adding(days: 1).description)], as: Self.user("mover"))
            #expect(moved["days"] == 1)
            #expect(moved["items"]?.arrayValue?.map { $0["date"]?.stringValue ?? "" } == [today.adding(days: 1).description, today.adding(days: 8).description])
            let intoPast = try await goals.call(
                "goals.plan.reschedule",
                data: ["goalId": .string(goalID), "from": .string(today.adding(days: 1).description), "to": .string(today.adding(days: -1).description)],
                as: Self.user("mover"))
            #expect(intoPast.error?.code == .validationFailed)
            let feed = try await Self.ok(goals, "goals.feed", ["with": "mover", "limit": 1], as: Self.user("watcher"))
            #expect(feed["entries"]?[0]?["kind"] == "rescheduled")
        }
    }

    @Test("questionnaires: answered whole, a retake replaces, admins read the results")
    func questionnaires() async throws {
        try await Self.with { goals in
            let recipient = Self.user("quiz")
            let test = try await Self.ok(goals, "goals.questionnaire", ["questionnaire": "recommendations"], as: recipient)
            #expect(test["answers"] == .null && test["questions"]?.arrayValue?.count == 2)
            try await Self.ok(goals, "goals.questionnaire.submit", ["questionnaire": "recommendations", "answers": ["work_load": "mixed", "free_time": "lt3"]], as: recipient)
            try await Self.ok(goals, "goals.questionnaire.submit", ["questionnaire": "recommendations", "answers": ["work_load": "physical", "free_time": "gt6"]], as: recipient)
            let results = try await Self.ok(goals, "goals.admin.questionnaire.results", ["questionnaire": "recommendations"], as: Self.admin)
            #expect(results["results"]?.arrayValue?.count == 1)
            #expect(results["results"]?[0]?["answers"]?[0]?["answer"] == "Mostly physical")
            let denied = try await goals.call("goals.admin.questionnaire.results", data: ["questionnaire": "recommendations"], as: recipient)
            #expect(denied.error?.code == .forbidden)
            // An admin's new question makes the old answers incomplete until retaken.
            try await Self.ok(
                goals, "goals.admin.questionnaire.set",
                [
                    "questionnaire": "recommendations",
                    "questions": [
                        ["id": "work_load", "text": "Work?", "options": [["value": "sedentary", "label": "Sitting"], ["value": "physical", "label": "Moving"]]],
                        ["text": "Smoker?", "options": [["value": "yes", "label": "Yes"], ["value": "no", "label": "No"]]],
                    ],
                ], as: Self.admin)
            let after = try await Self.ok(goals, "goals.questionnaire", ["questionnaire": "recommendations"], as: recipient)
            #expect(after["answers"] == ["work_load": "physical"])
        }
    }

    @Test("offline sync: changes after a version, paged; a removed item comes as a deletion; content only when its version moved")
    func offlineSync() async throws {
        try await Self.with { goals in
            let (goalID, _) = try await Self.activeGoal(goals, recipient: "offline", sponsor: "backer")
            let added = try await Self.ok(
                goals, "goals.admin.items.add",
                [
                    "goalId": .string(goalID),
                    "items": .array((0..<5).map { ["kind": "workout", "date": .string(Self.today().adding(days: $0).description), "text": "Run"] }),
                ], as: Self.admin)
            var since: JSONValue = "0"
            var seen: [String: JSONValue] = [:]
            for _ in 0..<10 {
                let page = try await Self.ok(goals, "goals.changes", ["since": since, "limit": 3], as: Self.user("backer"))
                for item in page["items"]?.arrayValue ?? [] { seen["\(item["entity"]?.stringValue ?? "")/\(item["id"]?.stringValue ?? "")"] = item }
                since = page["next"] ?? since
                if page["more"] == false { break }
            }
            #expect(seen["goal/\(goalID)"] != nil && seen.keys.filter { $0.hasPrefix("item/") }.count == 5)
            let removed = try #require(added["items"]?[0]?["id"]?.stringValue)
            try await Self.ok(goals, "goals.admin.items.remove", ["itemId": .string(removed)], as: Self.admin)
            let next = try await Self.ok(goals, "goals.changes", ["since": since], as: Self.user("backer"))
            #expect(next["items"]?.arrayValue?.contains { $0["id"]?.stringValue == removed && $0["deleted"] == true } == true)
            #expect(try await Self.ok(goals, "goals.changes", ["since": since], as: Self.user("stranger"))["resync"] == true, "another user's cursor")

            let content = try await Self.ok(goals, "goals.content", as: Self.user("offline"))
            let version = try #require(content["version"])
            #expect(content["changed"] == true && content["content"]?["types"]?.arrayValue?.isEmpty == false)
            #expect(try await Self.ok(goals, "goals.content", ["version": version], as: Self.user("offline"))["changed"] == false)
            try await Self.ok(goals, "goals.admin.texts.set", ["key": "popup.welcome", "locale": "es", "text": "¡Hola!"], as: Self.admin)
            let fresh = try await Self.ok(goals, "goals.content", ["version": version, "locale": "es"], as: Self.user("offline"))
            #expect(fresh["changed"] == true && fresh["content"]?["texts"]?["popup.welcome"] == "¡Hola!")
        }
    }

    @Test("tracker imports are kept once per source and external id, and back a check")
    func trackerImport() async throws {
        try await Self.with { goals in
            let (goalID, _) = try await Self.activeGoal(goals, recipient: "runner", sponsor: "coach")
            let runner = Self.user("runner")
            let batch: JSONValue = [
                "activities": [
                    ["source": "fitbit", "externalId": "f-1", "type": "Running", "start": "2026-01-05T07:00:00+03:00", "durationSeconds": 1_800, "distanceMeters": 5_000],
                    ["source": "runkeeper", "externalId": "r-9", "type": "running", "start": "2026-01-06T07:00:00Z", "durationSeconds": 1_500],
                ]
            ]
            let first = try await Self.ok(goals, "goals.activities.import", batch, as: runner)
            #expect(first["imported"] == 2 && first["duplicates"] == 0)
            let again = try await Self.ok(goals, "goals.activities.import", batch, as: runner)
            #expect(again["imported"] == 0 && again["duplicates"] == 2 && again["ids"] == first["ids"])
            let listed = try await Self.ok(goals, "goals.activities", as: runner)
            #expect(listed["activities"]?[1]?["start"] == "2026-01-05T04:00:00.000Z")
            let added = try await Self.ok(
                goals, "goals.admin.items.add",
                ["goalId": .string(goalID), "items": [["kind": "workout", "date": .string(Self.today().description), "text": "Run"]]], as: Self.admin)
            let item = try #require(added["items"]?[0]?["id"])
            let activity = try #require(first["ids"]?[0])
            let theirs = try await goals.call("goals.items.check", data: ["itemId": item, "done": true, "activityId": activity], as: Self.user("coach"))
            #expect(theirs.error?.code == .notFound)
            let checked = try await Self.ok(goals, "goals.items.check", ["itemId": item, "done": true, "activityId": activity], as: runner)
            #expect(checked["evidence"] == activity)
        }
    }

    @Test("admins: inbox of new goals, counts per day, broadcasts as events, the log of what they did")
    func adminDesk() async throws {
        try await Self.with { goals in
            try await Self.sponsor(goals, "g1", group: "insurers")
            try await Self.ok(goals, "goals.create", ["type": "marathon"], as: Self.user("a"))
            try await Self.ok(goals, "goals.create", ["type": "ironman"], as: Self.user("b"))
            let inbox = try await Self.ok(goals, "goals.admin.inbox", ["unseenOnly": true, "markSeen": true], as: Self.admin)
            #expect(inbox["goals"]?.arrayValue?.count == 2 && inbox["unseen"] == 0)
            #expect(try await Self.ok(goals, "goals.admin.inbox", ["unseenOnly": true], as: Self.admin)["goals"]?.arrayValue?.isEmpty == true)
            let today = Self.today()
            let stats = try await Self.ok(goals, "goals.admin.stats", ["from": .string(today.adding(days: -1).description), "to": .string(today.description)], as: Self.admin)
            #expect(stats["byState"]?["draft"] == 2 && stats["byType"]?["ironman"] == 1)
            #expect(stats["days"]?[1]?["goalsCreated"] == 2 && stats["days"]?[1]?["activeRecipients"] == 2)
            let broadcast = try await Self.ok(goals, "goals.admin.broadcast", ["title": "News", "text": "New plans!", "audience": "sponsor_group", "groupId": "insurers"], as: Self.admin)
            #expect(broadcast["userIds"] == 1)
            // A push that would show nothing reaches nobody.
            for (title, text) in [("\u{3000}", "New plans!"), ("News", "\u{200B}\n\t")] {
                let blank = try await goals.call(
                    "goals.admin.broadcast", data: ["title": .string(title), "text": .string(text), "audience": "everyone"], as: Self.admin)
                #expect(blank.error?.code == .validationFailed, "\(title) / \(text)")
            }
            let event = try await goals.runtime.pool.read { db in
                try String.fetchOne(db, sql: "SELECT data FROM platform_event WHERE type = 'goals.broadcast'")
            }
            #expect(event?.contains("\"g1\"") == true)
            let log = try await Self.ok(goals, "goals.admin.actions", as: Self.admin)
            #expect(log["actions"]?[0]?["action"] == "broadcast" && log["actions"]?[0]?["admin"] == "admin-1")
        }
    }

    @Test("a deleted recipient's goals go; a deleted sponsor stays only as an anonymous sponsor")
    func deletion() async throws {
        try await Self.with { goals in
            let (goalID, sponsorship) = try await Self.activeGoal(goals, recipient: "leaver", sponsor: "stayer")
            let (otherGoal, otherSponsorship) = try await Self.activeGoal(goals, recipient: "keeper", sponsor: "quitter")
            try await Self.ok(goals, "goals.comments.add", ["with": "keeper", "text": "bye"], as: Self.user("quitter"))
            #expect(try await Self.ok(goals, "goals.admin.users.delete_data", ["userId": "leaver"], as: Self.admin)["goals"] == 1)
            #expect(try await goals.call("goals.get", data: ["goalId": .string(goalID)], as: Self.user("stayer")).error?.code == .notFound)
            let changes = try await Self.ok(goals, "goals.changes", ["since": "0"], as: Self.user("stayer"))
            #expect(changes["items"]?.arrayValue?.contains { $0["id"]?.stringValue == sponsorship } != true)

            try await Self.ok(goals, "goals.admin.users.delete_data", ["userId": "quitter"], as: Self.admin)
            let kept = try await Self.ok(goals, "goals.get", ["goalId": .string(otherGoal)], as: Self.user("keeper"))
            #expect(kept["goal"]?["state"] == "active")
            #expect(kept["goal"]?["sponsorships"]?[0]?["sponsor"]?["id"]?.stringValue == UserDeletion.anonymous(otherSponsorship))
            #expect(kept["goal"]?["sponsorships"]?[0]?["rewardStatus"] == "forfeited")
            let left = try await goals.runtime.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM feed_entry WHERE actor_id = 'quitter' OR sponsor_id = 'quitter' OR recipient_id = 'leaver'")
            }
            #expect(left == 0)
        }
    }
}

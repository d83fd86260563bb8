import Foundation
import GRDB
import Platform

/// The goal and sponsorship lifecycle (sections 3.3, 3.4, 3.10): a recipient creates a
/// goal and offers it to sponsors with a reward; each sponsor accepts or rejects (with a
/// counter-proposal or a request for a new goal); the recipient revises until acceptance
/// or withdrawal. Each transition is decided by ``GoalLifecycle`` on the states loaded in
/// the write transaction and written with a compare-and-swap on them.
struct GoalOperations: Sendable {
    static let recipient = AuthRule.anyRole(["recipient"])
    static let sponsor = AuthRule.anyRole(["sponsor"])
    static let admin = AuthRule.anyRole(["admin"])

    var all: [ServiceOperation] { [create, propose, accept, reject, revise, withdrawOffer, withdraw, get, mine, offers, rewardPaid] }

    static let id = JSONSchema.string(minLength: 1, maxLength: 100)
    static let comment = JSONSchema.text(maxLength: 2_000)
    static let settings = JSONSchema.object([:], additional: .any).described("the type's form fields by key")
    static let goalResponse = GoalView.schema

    // MARK: Creating and offering

    struct CreateRequest: Codable, Sendable {
        var type: String
        var settings: [String: JSONValue]?
    }

    /// The `allowance.limit`-th latest of the user's writes in its window, by `sql` (user,
    /// window start, offset), when there are that many (``DailyAllowance``).
    static func limitthLatest(_ db: Database, sql: String, user: String, _ allowance: DailyAllowance, at now: Date) throws -> Date? {
        try String.fetchOne(db.cachedStatement(sql: sql), arguments: [user, Instant.format(allowance.windowStart(at: now)), allowance.limit - 1])
            .flatMap(Instant.parse)
    }

    /// Refuses, `rate_limited`, a text for the pair's feed (a comment, or the comment of an
    /// offer, an answer, a revision or a withdrawal) past the author's daily allowance
    /// (``DailyAllowance/comments``); an absent or empty text is not counted.
    static func requireRoomToSay(_ db: Database, _ text: String?, user: String, at now: Date) throws {
        guard let text, !text.isEmpty else { return }
        try DailyAllowance.comments.check(
            limitthLatest: try limitthLatest(
                db, sql: "SELECT created_at FROM feed_entry WHERE actor_id = ? AND text IS NOT NULL AND created_at >= ? ORDER BY created_at DESC LIMIT 1 OFFSET ?",
                user: user, DailyAllowance.comments, at: now),
            at: now, "comments")
    }

    var create: ServiceOperation {
        .write(
            "goals.create",
            summary: "Creates the caller's goal from a goal type and its settings (checked against the type's current form, whose version the goal keeps). A recipient has one open goal (draft, proposed or active) at a time: another is conflict `open_goal_exists`; at most 20 new goals in any 24 hours (`rate_limited` with `retryAfterMs`). Admins are told (inbox, event goals.created).",
            auth: Self.recipient,
            request: .object(["type": Self.id, "settings": Self.settings], required: ["type"]), response: Self.goalResponse
        ) { (context, input: CreateRequest, db: Database) in
            let principal = try context.requirePrincipal()
            let type = try GoalTypeRow.offered(db, id: input.type, field: "type")
            guard let form = try GoalTypeRow.form(db, type: type.id, version: type.formVersion) else { throw ServiceError.invalid("type", "has no form") }
            let settings = input.settings ?? [:]
            let problems = form.problems(of: settings)
            guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
            if let open = try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM goal WHERE recipient_id = ? AND state IN ('draft', 'proposed', 'active')"), arguments: [principal.userID])
            {
                var error = ServiceError.conflict("you already have an open goal (\(open)); finish or withdraw it first", reason: "open_goal_exists")
                error.details["state"] = .string(open)
                throw error
            }
            try DailyAllowance.goals.check(
                limitthLatest: try Self.limitthLatest(
                    db, sql: "SELECT created_at FROM goal WHERE recipient_id = ? AND created_at >= ? ORDER BY created_at DESC LIMIT 1 OFFSET ?",
                    user: principal.userID, DailyAllowance.goals, at: context.receivedAt),
                at: context.receivedAt, "new goals")
            let now = Instant.format(context.receivedAt)
            let id = RecordID.make(prefix: "goal", at: context.receivedAt)
            try db.cachedStatement(sql: """
                    INSERT INTO goal (id, recipient_id, type_id, form_version, settings, state, created_at, updated_at, change_version)
                    VALUES (?, ?, ?, ?, ?, 'draft', ?, ?, ?)
                    """).execute(arguments: [
                    id, principal.userID, type.id, type.formVersion, String(decoding: try WireJSON.encode(settings), as: UTF8.self), now, now,
                    try ChangeFeed.stamp(db),
                ])
            guard let goal = try GoalRow.load(db, id: id) else { throw ServiceError.internal(ref: context.requestID) }
            try ActivityFeed.record(db, goal: goal, sponsor: nil, kind: .created, actor: principal.userID, data: ["type": .string(type.id)], at: now)
            try GoalEvents.goal(db, "goals.created", goal)
            return try GoalViews.goal(db, goal, for: .recipient)
        }
    }

    struct ProposeRequest: Codable, Sendable {
        var goalId: String
        var sponsor: String
        var reward: RewardInput
        var comment: String?
    }

    struct RewardInput: Codable, Sendable {
        var money: Money?
        var text: String?

        func parsed(field: String) throws -> Reward {
            try Reward.parse(money: money, text: text, field: field).get()
        }
    }

    var propose: ServiceOperation {
        .write(
            "goals.propose",
            summary: "Offers the caller's open goal to a sponsor (one of goals.sponsors) with a reward: money (`{minor, currency}`) or `text`. The sponsor is told at once (event goals.proposed). Offering again after a withdrawal reopens that offer; one offer per sponsor and goal.",
            auth: Self.recipient,
            request: .object(
                ["goalId": Self.id, "sponsor": Self.id, "reward": RewardView.schema, "comment": Self.comment], required: ["goalId", "sponsor", "reward"]),
            response: SponsorshipView.schema
        ) { (context, input: ProposeRequest, db: Database) in
            let principal = try context.requirePrincipal()
            try Self.requireRoomToSay(db, input.comment, user: principal.userID, at: context.receivedAt)
            let reward = try input.reward.parsed(field: "reward")
            let goal = try GoalAccess.ownGoal(db, input.goalId, for: principal)
            guard input.sponsor != principal.userID else { throw ServiceError.invalid("sponsor", "you cannot sponsor your own goal") }
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sponsor_profile WHERE user_id = ?"), arguments: [input.sponsor]) == true else {
                throw ServiceError.invalid("sponsor", "no such sponsor")
            }
            let existing = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM sponsorship WHERE goal_id = ? AND sponsor_id = ?"), arguments: [goal.id, input.sponsor]
            ).map(SponsorshipRow.init(row:))
            let next = try GoalLifecycle.next(after: .propose, from: existing?.state, goal: goal.state).mapError(\.serviceError).get()
            let now = Instant.format(context.receivedAt)
            let id = existing?.id ?? RecordID.make(prefix: "spn", at: context.receivedAt)
            let (minor, currency, text) = Self.columns(reward)
            if let existing {
                try Self.swap(
                    db, existing, to: next,
                    set: "reward_minor = ?, reward_currency = ?, reward_text = ?, rejection = NULL, suggested_type_id = NULL, round = round + 1",
                    [minor, currency, text], at: now)
                // The sponsor's app dropped the goal at the withdrawal: it comes back.
                try GoalsChanges.reveal(db, goal: goal.id)
            } else {
                try db.cachedStatement(sql: """
                        INSERT INTO sponsorship (id, goal_id, recipient_id, sponsor_id, state, reward_minor, reward_currency, reward_text,
                            created_at, updated_at, change_version)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """).execute(arguments: [id, goal.id, goal.recipientID, input.sponsor, next.rawValue, minor, currency, text, now, now, try ChangeFeed.stamp(db)])
            }
            try Self.recordOffer(db, sponsorship: id, actor: principal.userID, kind: "proposal", reward: reward, comment: input.comment, at: now)
            return try Self.finish(db, goal: goal, sponsorship: id, feed: .proposed, event: "goals.proposed", actor: principal.userID, comment: input.comment, at: now)
        }
    }

    // MARK: The sponsor's answer

    struct AnswerRequest: Codable, Sendable {
        var sponsorshipId: String
        var comment: String?
        var round: Int?
    }

    static let round = JSONSchema.integer(minimum: 1).described(
        "the offer's round you are answering (from the sponsorship); when it was revised meanwhile: conflict offer_changed")

    /// Refuses an answer to a round the recipient has already revised.
    static func requireRound(_ round: Int?, of sponsorship: SponsorshipRow) throws {
        guard let round, round != sponsorship.round else { return }
        var error = ServiceError.conflict(
            "the offer was revised (round \(sponsorship.round), you answered round \(round)); look at it again", reason: "offer_changed")
        error.details["round"] = .integer(Int64(sponsorship.round))
        throw error
    }

    var accept: ServiceOperation {
        .write(
            "goals.accept",
            summary: "The sponsor accepts an offer: the goal becomes active (if it was not) and the reward is promised; the recipient is told (event goals.accepted). Two sponsors accepting at once both sponsor the goal.",
            auth: Self.sponsor, request: .object(["sponsorshipId": Self.id, "comment": Self.comment, "round": Self.round], required: ["sponsorshipId"]),
            response: SponsorshipView.schema
        ) { (context, input: AnswerRequest, db: Database) in
            let principal = try context.requirePrincipal()
            try Self.requireRoomToSay(db, input.comment, user: principal.userID, at: context.receivedAt)
            let sponsorship = try GoalAccess.sponsorshipAsSponsor(db, input.sponsorshipId, for: principal)
            guard let goal = try GoalRow.load(db, id: sponsorship.goalID) else { throw ServiceError.notFound("no such offer") }
            try Self.requireRound(input.round, of: sponsorship)
            let next = try GoalLifecycle.next(after: .accept, from: sponsorship.state, goal: goal.state).mapError(\.serviceError).get()
            let now = Instant.format(context.receivedAt)
            try Self.swap(db, sponsorship, to: next, set: "reward_status = 'promised', rejection = NULL, suggested_type_id = NULL", [], at: now)
            try Self.recordOffer(db, sponsorship: sponsorship.id, actor: principal.userID, kind: "accept", comment: input.comment, at: now)
            return try Self.finish(
                db, goal: goal, sponsorship: sponsorship.id, feed: .accepted, event: "goals.accepted", actor: principal.userID, comment: input.comment,
                at: now)
        }
    }

    struct RejectRequest: Codable, Sendable {
        var sponsorshipId: String
        var kind: Rejection
        var type: String?
        var comment: String?
        var round: Int?
    }

    var reject: ServiceOperation {
        .write(
            "goals.reject",
            summary: "The sponsor rejects an offer in one of two ways (table 9): `counter_goal` proposes another goal (`type` from the catalog, required, plus a comment), `ask_new_goal` asks the recipient to choose a new goal (a comment). The recipient is told (event goals.rejected) and may revise.",
            auth: Self.sponsor,
            request: .object(
                [
                    "sponsorshipId": Self.id, "kind": .oneOf(Rejection.allCases.map(\.rawValue)), "type": Self.id.described("required for counter_goal"),
                    "comment": Self.comment, "round": Self.round,
                ], required: ["sponsorshipId", "kind"]),
            response: SponsorshipView.schema
        ) { (context, input: RejectRequest, db: Database) in
            let principal = try context.requirePrincipal()
            try Self.requireRoomToSay(db, input.comment, user: principal.userID, at: context.receivedAt)
            switch input.kind {
            case .counterGoal where input.type == nil: throw ServiceError.invalid("type", "a counter-proposal names a goal type")
            case .askNewGoal where input.type != nil: throw ServiceError.invalid("type", "only a counter-proposal names a goal type")
            default: break
            }
            if input.kind == .askNewGoal && (input.comment ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ServiceError.invalid("comment", "say what kind of goal you would sponsor")
            }
            let sponsorship = try GoalAccess.sponsorshipAsSponsor(db, input.sponsorshipId, for: principal)
            if let type = input.type { _ = try GoalTypeRow.offered(db, id: type, field: "type") }
            guard let goal = try GoalRow.load(db, id: sponsorship.goalID) else { throw ServiceError.notFound("no such offer") }
            try Self.requireRound(input.round, of: sponsorship)
            // Once another sponsor accepted, the goal's type cannot change: a counter-proposal could never be taken.
            if input.kind == .counterGoal && !GoalLifecycle.goalIsRevisable(goal.state) {
                throw LifecycleError(
                    message: "the goal is \(goal.state.rawValue): another sponsor accepted it, so its type cannot change; accept it or ask for a new goal",
                    currentState: goal.state.rawValue
                ).serviceError
            }
            let next = try GoalLifecycle.next(after: .reject(input.kind), from: sponsorship.state, goal: goal.state).mapError(\.serviceError).get()
            let now = Instant.format(context.receivedAt)
            try Self.swap(db, sponsorship, to: next, set: "rejection = ?, suggested_type_id = ?", [input.kind.rawValue, input.type], at: now)
            try Self.recordOffer(
                db, sponsorship: sponsorship.id, actor: principal.userID, kind: input.kind.rawValue, type: input.type, comment: input.comment, at: now)
            return try Self.finish(
                db, goal: goal, sponsorship: sponsorship.id, feed: .rejected, event: "goals.rejected", actor: principal.userID, comment: input.comment,
                at: now, extra: ["rejection": .string(input.kind.rawValue), "suggestedType": input.type.map(JSONValue.string) ?? .null])
        }
    }

    // MARK: The recipient's revision and withdrawal

    struct ReviseRequest: Codable, Sendable {
        var sponsorshipId: String
        var type: String?
        var settings: [String: JSONValue]?
        var reward: RewardInput?
        var comment: String?
    }

    var revise: ServiceOperation {
        .write(
            "goals.revise",
            summary: "The recipient revises an offer that is proposed or rejected and proposes it again: the goal's `type` and/or `settings` (only while no sponsor has accepted the goal; the type's current form applies), the `reward`, a comment. The history keeps every round (goals.get). The sponsor is told (event goals.revised). A new type or settings change the goal every offer shares: the other offers still proposed move to a new round too and their sponsors are told (without the comment); rejected ones stay as they are. A blank comment alone is no revision.",
            auth: Self.recipient,
            request: .object(
                ["sponsorshipId": Self.id, "type": Self.id, "settings": Self.settings, "reward": RewardView.schema, "comment": Self.comment],
                required: ["sponsorshipId"]),
            response: SponsorshipView.schema
        ) { (context, input: ReviseRequest, db: Database) in
            let principal = try context.requirePrincipal()
            try Self.requireRoomToSay(db, input.comment, user: principal.userID, at: context.receivedAt)
            let saysSomething = input.comment.map { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty } ?? false
            guard input.type != nil || input.settings != nil || input.reward != nil || saysSomething else {
                throw ServiceError.invalid("data", "give a type, settings, reward or comment")
            }
            let reward = try input.reward?.parsed(field: "reward")
            let sponsorship = try GoalAccess.sponsorshipAsRecipient(db, input.sponsorshipId, for: principal)
            guard let goal = try GoalRow.load(db, id: sponsorship.goalID) else { throw ServiceError.notFound("no such offer") }
            let next = try GoalLifecycle.next(after: .revise, from: sponsorship.state, goal: goal.state).mapError(\.serviceError).get()
            let now = Instant.format(context.receivedAt)
            var revisedSettings: [String: JSONValue]?
            if input.type != nil || input.settings != nil {
                guard GoalLifecycle.goalIsRevisable(goal.state) else {
                    throw LifecycleError(
                        message: "the goal is \(goal.state.rawValue): a sponsor accepted it, so only the reward can change", currentState: goal.state.rawValue
                    ).serviceError
                }
                // Settings alone for a goal whose type was retired meanwhile: the settings are what cannot be revised.
                let type = try GoalTypeRow.offered(db, id: input.type ?? goal.typeID, field: input.type == nil ? "settings" : "type")
                guard let form = try GoalTypeRow.form(db, type: type.id, version: type.formVersion) else { throw ServiceError.invalid("type", "has no form") }
                let settings = input.settings ?? (type.id == goal.typeID ? goal.settings : [:])
                let problems = form.problems(of: settings)
                guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
                try db.cachedStatement(sql: "UPDATE goal SET type_id = ?, form_version = ?, settings = ?, updated_at = ?, change_version = ? WHERE id = ? AND state = ?").execute(arguments: [
                        type.id, type.formVersion, String(decoding: try WireJSON.encode(settings), as: UTF8.self), now, try ChangeFeed.stamp(db), goal.id,
                        goal.state.rawValue,
                    ])
                revisedSettings = settings
            }
            // The goal is shared by all its offers: a new type or settings revise the other
            // offers still proposed too (a sponsor's answer to the old goal is then
            // `offer_changed`, and each is told, without the comment meant for this one). An
            // offer its sponsor rejected stays so: the recipient revises it on its own.
            var assignments = "rejection = NULL, suggested_type_id = NULL, round = round + 1"
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let reward {
                let (minor, currency, text) = Self.columns(reward)
                assignments += ", reward_minor = ?, reward_currency = ?, reward_text = ?"
                arguments = [minor, currency, text]
            }
            try Self.swap(db, sponsorship, to: next, set: assignments, arguments, at: now)
            try Self.recordOffer(
                db, sponsorship: sponsorship.id, actor: principal.userID, kind: "revision", type: input.type, settings: revisedSettings, reward: reward,
                comment: input.comment, at: now)
            guard let revised = try GoalRow.load(db, id: goal.id) else { throw ServiceError.internal(ref: context.requestID) }
            if revisedSettings != nil {
                for other in try SponsorshipRow.all(db, goal: goal.id) where other.id != sponsorship.id && other.state == .proposed {
                    try db.cachedStatement(sql: "UPDATE sponsorship SET round = round + 1, updated_at = ?, change_version = ? WHERE id = ?")
                        .execute(arguments: [now, try ChangeFeed.stamp(db), other.id])
                    try Self.recordOffer(
                        db, sponsorship: other.id, actor: principal.userID, kind: "revision", type: input.type, settings: revisedSettings, at: now)
                    _ = try Self.finish(db, goal: revised, sponsorship: other.id, feed: .revised, event: "goals.revised", actor: principal.userID, comment: nil, at: now)
                }
            }
            return try Self.finish(
                db, goal: revised, sponsorship: sponsorship.id, feed: .revised, event: "goals.revised", actor: principal.userID, comment: input.comment,
                at: now)
        }
    }

    var withdrawOffer: ServiceOperation {
        .write(
            "goals.offer.withdraw",
            summary: "The recipient takes back an offer that is proposed or rejected (it may be made again with goals.propose).",
            auth: Self.recipient, request: .object(["sponsorshipId": Self.id, "comment": Self.comment], required: ["sponsorshipId"]),
            response: SponsorshipView.schema
        ) { (context, input: AnswerRequest, db: Database) in
            let principal = try context.requirePrincipal()
            try Self.requireRoomToSay(db, input.comment, user: principal.userID, at: context.receivedAt)
            let sponsorship = try GoalAccess.sponsorshipAsRecipient(db, input.sponsorshipId, for: principal)
            guard let goal = try GoalRow.load(db, id: sponsorship.goalID) else { throw ServiceError.notFound("no such offer") }
            let next = try GoalLifecycle.next(after: .withdraw, from: sponsorship.state, goal: goal.state).mapError(\.serviceError).get()
            let now = Instant.format(context.receivedAt)
            try Self.swap(db, sponsorship, to: next, set: "rejection = NULL, suggested_type_id = NULL", [], at: now)
            try Self.recordOffer(db, sponsorship: sponsorship.id, actor: principal.userID, kind: "withdrawal", comment: input.comment, at: now)
            try GoalsChanges.hide(db, goal: goal.id, from: sponsorship.sponsorID, at: context.receivedAt)
            return try Self.finish(
                db, goal: goal, sponsorship: sponsorship.id, feed: .withdrawn, event: "goals.offer_withdrawn", actor: principal.userID,
                comment: input.comment, at: now)
        }
    }

    struct GoalRequest: Codable, Sendable {
        var goalId: String
    }

    var withdraw: ServiceOperation {
        .write(
            "goals.withdraw",
            summary: "The recipient gives up their open goal (goes beyond the spec): offers still negotiated are withdrawn, promised rewards forfeited; the goal stays as an earlier tab and a new one may be created.",
            auth: Self.recipient, request: .object(["goalId": Self.id], required: ["goalId"]), response: Self.goalResponse
        ) { (context, input: GoalRequest, db: Database) in
            let principal = try context.requirePrincipal()
            let goal = try GoalAccess.ownGoal(db, input.goalId, for: principal)
            return try GoalEnding.end(db, goal, as: .withdrawn, actor: principal.userID, at: context.receivedAt, relation: .recipient)
        }
    }

    // MARK: Reading

    var get: ServiceOperation {
        .read(
            "goals.get",
            summary: "One goal with its sponsorships and each one's history of offers and answers, oldest first (a sponsor sees only their own). Someone else's goal is not_found.",
            auth: .authenticated, request: .object(["goalId": Self.id], required: ["goalId"]),
            response: .object(
                [
                    "goal": Self.goalResponse,
                    "history": .array(
                        of: .object(
                            [
                                "sponsorshipId": .string(), "actor": PersonRef.schema, "kind": .string(), "type": TypeRef.schema,
                                "settings": .any, "reward": RewardView.schema, "comment": .text(), "at": .string(format: .dateTime),
                            ], required: ["sponsorshipId", "actor", "kind", "at"]), maxItems: 100_000),
                ], required: ["goal", "history"])
        ) { (context, input: GoalRequest, db: Database) -> JSONValue in
            let principal = try context.requirePrincipal()
            let (goal, relation) = try GoalAccess.goal(db, input.goalId, for: principal)
            let view = try GoalViews.goal(db, goal, for: relation)
            let visible = view.sponsorships.map(\.id)
            var history: [JSONValue] = []
            for sponsorship in visible {
                for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM offer WHERE sponsorship_id = ? ORDER BY id"), arguments: [sponsorship]) {
                    var entry: [String: JSONValue] = [
                        "sponsorshipId": .string(sponsorship), "actor": try WireJSON.value(of: try GoalViews.person(db, row["actor_id"])),
                        "kind": .string(row["kind"]), "at": .string(row["created_at"]),
                    ]
                    if let type: String = row["type_id"] { entry["type"] = try WireJSON.value(of: try GoalViews.typeRef(db, type)) }
                    if let settings: String = row["settings"] { entry["settings"] = .object(try GoalRow.object(settings)) }
                    if let minor: Int64 = row["reward_minor"], let currency: String = row["reward_currency"] {
                        entry["reward"] = ["money": Money(minor: minor, currency: Currency(stored: currency)).json]
                    } else if let text: String = row["reward_text"] {
                        entry["reward"] = ["text": .string(text)]
                    }
                    if let comment: String = row["comment"] { entry["comment"] = .string(comment) }
                    history.append(.object(entry))
                }
            }
            return ["goal": try WireJSON.value(of: view), "history": .array(history)]
        }
    }

    var mine: ServiceOperation {
        .read(
            "goals.mine",
            summary: "The caller's goals as a recipient, newest first: the open one and the earlier ones (the dashboard's Goal X tabs).",
            auth: Self.recipient, request: .empty, response: .object(["goals": .array(of: Self.goalResponse)], required: ["goals"])
        ) { (context, _: Empty, db: Database) -> [String: [GoalView]] in
            let principal = try context.requirePrincipal()
            let goals = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM goal WHERE recipient_id = ? ORDER BY created_at DESC, id DESC LIMIT 100"), arguments: [principal.userID]
            ).map(GoalRow.init(row:))
            return ["goals": try goals.map { try GoalViews.goal(db, $0, for: .recipient) }]
        }
    }

    struct OffersRequest: Codable, Sendable {
        var state: SponsorshipState?
    }

    var offers: ServiceOperation {
        .read(
            "goals.offers",
            summary: "The sponsor's side (the Reward screen, 3.10): goals offered to the caller or sponsored by them, with progress and the reward, newest change first; `state` filters (proposed: waiting for an answer). An offer the recipient withdrew no longer shows.",
            auth: Self.sponsor, request: .object(["state": .oneOf(["proposed", "rejected", "accepted"])]),
            response: .object(["goals": .array(of: Self.goalResponse)], required: ["goals"])
        ) { (context, input: OffersRequest, db: Database) -> [String: [GoalView]] in
            let principal = try context.requirePrincipal()
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT id, goal_id FROM sponsorship WHERE sponsor_id = ? AND state != 'withdrawn' AND (? IS NULL OR state = ?)
                    ORDER BY updated_at DESC, id DESC LIMIT 200
                    """), arguments: [principal.userID, input.state?.rawValue, input.state?.rawValue])
            return [
                "goals": try rows.compactMap { row in
                    try GoalRow.load(db, id: row["goal_id"]).map { try GoalViews.goal(db, $0, for: .sponsor(sponsorshipID: row["id"])) }
                }
            ]
        }
    }

    var rewardPaid: ServiceOperation {
        .write(
            "goals.reward.paid",
            summary: "The sponsor marks an earned reward as handed over (the service records the promise; it moves no money). Event goals.reward.paid.",
            auth: Self.sponsor, request: .object(["sponsorshipId": Self.id], required: ["sponsorshipId"]), response: SponsorshipView.schema
        ) { (context, input: AnswerRequest, db: Database) in
            let principal = try context.requirePrincipal()
            let sponsorship = try GoalAccess.sponsorshipAsSponsor(db, input.sponsorshipId, for: principal)
            guard let status = sponsorship.rewardStatus else {
                throw LifecycleError(message: "the offer is \(sponsorship.state.rawValue); no reward was promised", currentState: sponsorship.state.rawValue)
                    .serviceError
            }
            let paid = try status.markedPaid().mapError(\.serviceError).get()
            let now = Instant.format(context.receivedAt)
            try db.cachedStatement(sql: "UPDATE sponsorship SET reward_status = ?, updated_at = ?, change_version = ? WHERE id = ? AND reward_status = ?").execute(arguments: [paid.rawValue, now, try ChangeFeed.stamp(db), sponsorship.id, status.rawValue])
            try GoalRow.touch(db, id: sponsorship.goalID)
            guard let goal = try GoalRow.load(db, id: sponsorship.goalID) else { throw ServiceError.notFound("no such offer") }
            try ActivityFeed.record(db, goal: goal, sponsor: sponsorship.sponsorID, kind: .rewardPaid, actor: principal.userID, at: now)
            guard let updated = try SponsorshipRow.load(db, id: sponsorship.id) else { throw ServiceError.internal(ref: context.requestID) }
            try GoalEvents.sponsorship(db, "goals.reward.paid", goal, updated)
            return try GoalViews.sponsorship(db, updated)
        }
    }

    // MARK: Shared steps

    static func columns(_ reward: Reward) -> (Int64?, String?, String?) {
        switch reward {
        case .money(let money): (money.minor, money.currency.code, nil)
        case .text(let text): (nil, nil, text)
        }
    }

    /// Moves `sponsorship` from the state it was loaded in to `next` (compare-and-swap),
    /// setting `assignments` too.
    static func swap(
        _ db: Database, _ sponsorship: SponsorshipRow, to next: SponsorshipState, set assignments: String,
        _ arguments: [(any DatabaseValueConvertible)?], at now: String
    ) throws {
        try db.cachedStatement(sql: "UPDATE sponsorship SET state = ?, \(assignments), updated_at = ?, change_version = ? WHERE id = ? AND state = ?").execute(arguments: StatementArguments([next.rawValue] + arguments + [now, try ChangeFeed.stamp(db), sponsorship.id, sponsorship.state.rawValue]))
        guard db.changesCount == 1 else {
            throw LifecycleError(message: "the offer changed meanwhile; load it again", currentState: sponsorship.state.rawValue).serviceError
        }
        try GoalRow.touch(db, id: sponsorship.goalID)
    }

    static func recordOffer(
        _ db: Database, sponsorship: String, actor: String, kind: String, type: String? = nil, settings: [String: JSONValue]? = nil,
        reward: Reward? = nil, comment: String? = nil, at now: String
    ) throws {
        let (minor, currency, text) = reward.map(columns) ?? (nil, nil, nil)
        try db.cachedStatement(sql: """
                INSERT INTO offer (sponsorship_id, actor_id, kind, type_id, settings, reward_minor, reward_currency, reward_text, comment, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                sponsorship, actor, kind, type, try settings.map { String(decoding: try WireJSON.encode($0), as: UTF8.self) }, minor, currency, text,
                comment.flatMap { $0.isEmpty ? nil : $0 }, now,
            ])
    }

    /// After a sponsorship moved: brings the goal's state in line (``GoalLifecycle/goalState``),
    /// writes the pair's feed entry and the event, and answers the sponsorship.
    static func finish(
        _ db: Database, goal: GoalRow, sponsorship id: String, feed: ActivityFeed.Kind, event: String, actor: String, comment: String?,
        at now: String, extra: [String: JSONValue] = [:]
    ) throws -> SponsorshipView {
        let states = try String.fetchAll(db.cachedStatement(sql: "SELECT state FROM sponsorship WHERE goal_id = ?"), arguments: [goal.id])
            .compactMap(SponsorshipState.init(rawValue:))
        let goalState = GoalLifecycle.goalState(goal.state, sponsorships: states)
        var current = goal
        if goalState != goal.state {
            try db.cachedStatement(sql: """
                    UPDATE goal SET state = ?, activated_at = CASE WHEN ? = 'active' THEN ? ELSE activated_at END, updated_at = ?, change_version = ?
                    WHERE id = ? AND state = ?
                    """).execute(arguments: [goalState.rawValue, goalState.rawValue, now, now, try ChangeFeed.stamp(db), goal.id, goal.state.rawValue])
            current.state = goalState
            if goalState == .active { try GoalEvents.goal(db, "goals.activated", current) }
        }
        guard let sponsorship = try SponsorshipRow.load(db, id: id) else { throw ServiceError.notFound("no such offer") }
        var data = extra
        if let comment, !comment.isEmpty { data["comment"] = .string(comment) }
        try ActivityFeed.record(
            db, goal: current, sponsor: sponsorship.sponsorID, kind: feed, actor: actor, text: comment.flatMap { $0.isEmpty ? nil : $0 },
            data: .object(data.merging(["reward": try WireJSON.value(of: RewardView(sponsorship.reward))]) { a, _ in a }), at: now)
        try GoalEvents.sponsorship(db, event, current, sponsorship, extra: data)
        return try GoalViews.sponsorship(db, sponsorship)
    }
}

import Foundation
import GRDB
import Platform

/// What admins do beyond the catalog (section 9): set progress (the spec's footnote 3),
/// end goals, read the inbox of new goals and the questionnaires' results, count goals and
/// active users per day, broadcast a push, delete a user's goal data, read the log of
/// admin actions.
struct AdminOperations: Sendable {
    var all: [ServiceOperation] { [progress, fail, inbox, results, stats, broadcast, deleteData, actions] }

    struct ProgressRequest: Codable, Sendable {
        var goalId: String
        var percent: Int
    }

    var progress: ServiceOperation {
        .write(
            "goals.admin.progress.set",
            summary: "Sets an active goal's percent (\"X %\", an integer; authoritative over the plan's share). Both feeds get it and sponsors are told (event goals.progress.changed); 100 completes the goal: promised rewards are earned (event goals.completed).",
            auth: GoalOperations.admin,
            request: .object(["goalId": GoalOperations.id, "percent": .integer(minimum: 0, maximum: 100)], required: ["goalId", "percent"]),
            response: GoalView.schema
        ) { (context, input: ProgressRequest, db: Database) -> GoalView in
            let admin = try context.requirePrincipal().userID
            guard let goal = try GoalRow.load(db, id: input.goalId) else { throw ServiceError.notFound("no such goal") }
            guard goal.state == .active else {
                throw LifecycleError(message: "the goal is \(goal.state.rawValue); only an active goal has progress", currentState: goal.state.rawValue)
                    .serviceError
            }
            let now = Instant.format(context.receivedAt)
            try AdminLog.record(db, admin: admin, action: "progress.set", target: goal.id, detail: ["percent": .integer(Int64(input.percent))], at: now)
            guard input.percent != goal.progress else { return try GoalViews.goal(db, goal, for: .admin) }
            try db.cachedStatement(sql: "UPDATE goal SET progress = ?, updated_at = ?, change_version = ? WHERE id = ? AND state = 'active'").execute(arguments: [input.percent, now, try ChangeFeed.stamp(db), goal.id])
            guard let updated = try GoalRow.load(db, id: goal.id) else { throw ServiceError.internal(ref: context.requestID) }
            try ActivityFeed.record(
                db, goal: updated, sponsor: nil, kind: .progress, actor: admin,
                data: ["from": goal.progress.map { .integer(Int64($0)) } ?? .null, "to": .integer(Int64(input.percent))], at: now)
            try GoalEvents.goal(db, "goals.progress.changed", updated)
            guard input.percent >= 100 else { return try GoalViews.goal(db, updated, for: .admin) }
            return try GoalEnding.end(db, updated, as: .completed, actor: admin, at: context.receivedAt, relation: .admin)
        }
    }

    struct FailRequest: Codable, Sendable {
        var goalId: String
        var reason: String
    }

    var fail: ServiceOperation {
        .write(
            "goals.admin.fail",
            summary: "Marks an active goal failed, with a reason shown in the feeds: promised rewards are forfeited (event goals.failed).",
            auth: GoalOperations.admin,
            request: .object(["goalId": GoalOperations.id, "reason": .text(minLength: 1, maxLength: 1_000)], required: ["goalId", "reason"]),
            response: GoalView.schema
        ) { (context, input: FailRequest, db: Database) -> GoalView in
            let admin = try context.requirePrincipal().userID
            guard !input.reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ServiceError.invalid("reason", "must not be blank") }
            guard let goal = try GoalRow.load(db, id: input.goalId) else { throw ServiceError.notFound("no such goal") }
            let view = try GoalEnding.end(db, goal, as: .failed, actor: admin, at: context.receivedAt, relation: .admin, reason: input.reason)
            try AdminLog.record(db, admin: admin, action: "goal.fail", target: goal.id, detail: ["reason": .string(input.reason)], at: Instant.format(context.receivedAt))
            return view
        }
    }

    struct PageRequest: Codable, Sendable {
        var before: String?
        var limit: Int?
        var unseenOnly: Bool?
        var markSeen: Bool?
    }

    var inbox: ServiceOperation {
        .write(
            "goals.admin.inbox",
            summary: "Newly created goals for admins (3.3: \"the app sends the admin a message about the created goal\"), newest first, with the recipient, type and settings; `unseenOnly` keeps the unread ones, `markSeen` marks the page read. Page with `before` (the last goal id seen).",
            auth: GoalOperations.admin,
            request: .object([
                "before": GoalOperations.id, "limit": .integer(minimum: 1, maximum: 200), "unseenOnly": .boolean, "markSeen": .boolean,
            ]),
            response: .object(
                [
                    "goals": .array(of: GoalView.schema.adding(["seen": .boolean], required: ["seen"]), maxItems: 200), "unseen": .integer(minimum: 0),
                    "more": .boolean,
                ], required: ["goals", "unseen", "more"])
        ) { (context, input: PageRequest, db: Database) -> JSONValue in
            _ = try context.requirePrincipal()
            let limit = input.limit ?? 50
            if let before = input.before, try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM goal WHERE id = ?"), arguments: [before]) != true {
                throw ServiceError.invalid("before", "not a goal's id")
            }
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT * FROM goal WHERE (? IS NULL OR (created_at, id) < (SELECT created_at, id FROM goal WHERE id = ?))
                      AND (? = 0 OR seen_by_admin = 0)
                    ORDER BY created_at DESC, id DESC LIMIT ?
                    """), arguments: [input.before, input.before, input.unseenOnly == true, limit + 1])
            var goals: [JSONValue] = []
            for row in rows.prefix(limit) {
                let goal = try GoalRow(row: row)
                var view = try WireJSON.value(of: GoalViews.goal(db, goal, for: .admin))
                view = view.merging(["seen": .bool(row["seen_by_admin"])])
                goals.append(view)
                if input.markSeen == true {
                    try db.cachedStatement(sql: "UPDATE goal SET seen_by_admin = 1 WHERE id = ?").execute(arguments: [goal.id])
                }
            }
            let unseen = try Int64.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM goal WHERE seen_by_admin = 0")) ?? 0
            return ["goals": .array(goals), "unseen": .integer(unseen), "more": .bool(rows.count > limit)]
        }
    }

    struct ResultsRequest: Codable, Sendable {
        var questionnaire: String
        var before: String?
        var limit: Int?
    }

    var results: ServiceOperation {
        .read(
            "goals.admin.questionnaire.results",
            summary: "Recipients' latest answers to a questionnaire (3.9: the results go to the administrator), newest submission first, each answer with its question and option texts. Page with `before` (the last submittedAt seen).",
            auth: GoalOperations.admin,
            request: .object(
                ["questionnaire": .oneOf(["recommendations", "nutrition"]), "before": .string(format: .dateTime), "limit": .integer(minimum: 1, maximum: 200)],
                required: ["questionnaire"]),
            response: .object(
                [
                    "results": .array(
                        of: .object(
                            [
                                "user": PersonRef.schema, "submittedAt": .string(format: .dateTime),
                                "answers": .array(
                                    of: .object(
                                        ["questionId": .string(), "question": .text(), "value": .string(), "answer": .string()],
                                        required: ["questionId", "question", "value", "answer"])),
                            ], required: ["user", "submittedAt", "answers"]), maxItems: 200), "more": .boolean,
                ], required: ["results", "more"])
        ) { (context, input: ResultsRequest, db: Database) -> JSONValue in
            let questions = try CatalogOperations.questionnaire(db, input.questionnaire).questions
            let limit = input.limit ?? 50
            let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM answer_set WHERE questionnaire = ? AND (? IS NULL OR submitted_at < ?) ORDER BY submitted_at DESC LIMIT ?"),
                arguments: [input.questionnaire, input.before, input.before, limit + 1])
            var results: [JSONValue] = []
            for row in rows.prefix(limit) {
                let answers = try WireJSON.decode([String: String].self, from: Data((row["answers"] as String).utf8))
                let shown: [JSONValue] = questions.compactMap { question in
                    guard let value = answers[question.id] else { return nil }
                    return [
                        "questionId": .string(question.id), "question": .string(question.text), "value": .string(value),
                        "answer": .string(question.options.first { $0.value == value }?.label ?? value),
                    ]
                }
                results.append([
                    "user": try WireJSON.value(of: GoalViews.person(db, row["user_id"])), "submittedAt": .string(row["submitted_at"]),
                    "answers": .array(shown),
                ])
            }
            return ["results": .array(results), "more": .bool(rows.count > limit)]
        }
    }

    struct StatsRequest: Codable, Sendable {
        var from: LocalDate
        var to: LocalDate
    }

    var stats: ServiceOperation {
        .read(
            "goals.admin.stats",
            summary: "Counts for the admin's report form: goals by state and by type now; and per UTC day from `from` to `to` (at most 366 days): goals created, recipients and sponsors active (who did anything in the feeds).",
            auth: GoalOperations.admin,
            request: .object(["from": .string(format: .date), "to": .string(format: .date)], required: ["from", "to"]),
            response: .object(
                [
                    "byState": .object([:], additional: .integer(minimum: 0)), "byType": .object([:], additional: .integer(minimum: 0)),
                    "days": .array(
                        of: .object(
                            [
                                "date": .string(format: .date), "goalsCreated": .integer(minimum: 0), "activeRecipients": .integer(minimum: 0),
                                "activeSponsors": .integer(minimum: 0),
                            ], required: ["date", "goalsCreated", "activeRecipients", "activeSponsors"]), maxItems: 366),
                ], required: ["byState", "byType", "days"])
        ) { (_, input: StatsRequest, db: Database) -> JSONValue in
            guard input.from <= input.to else { throw ServiceError.invalid("to", "must not be before from") }
            guard input.from.days(until: input.to) < 366 else { throw ServiceError.invalid("to", "at most 366 days") }
            var byState: [String: JSONValue] = [:], byType: [String: JSONValue] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT state, COUNT(*) AS n FROM goal GROUP BY state")) { byState[row["state"]] = .integer(row["n"]) }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT type_id, COUNT(*) AS n FROM goal GROUP BY type_id")) { byType[row["type_id"]] = .integer(row["n"]) }
            let start = input.from.description, end = input.to.adding(days: 1).description
            var created: [String: Int64] = [:], recipients: [String: Int64] = [:], sponsors: [String: Int64] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS n FROM goal WHERE created_at >= ? AND created_at < ? GROUP BY day"),
                arguments: [start, end])
            { created[row["day"]] = row["n"] }
            for row in try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT substr(created_at, 1, 10) AS day,
                        COUNT(DISTINCT CASE WHEN actor_id = recipient_id THEN actor_id END) AS recipients,
                        COUNT(DISTINCT CASE WHEN actor_id = sponsor_id THEN actor_id END) AS sponsors
                    FROM feed_entry WHERE created_at >= ? AND created_at < ? GROUP BY day
                    """), arguments: [start, end])
            {
                recipients[row["day"]] = row["recipients"]
                sponsors[row["day"]] = row["sponsors"]
            }
            var days: [JSONValue] = []
            var day = input.from
            while day <= input.to {
                let key = day.description
                days.append([
                    "date": .string(key), "goalsCreated": .integer(created[key] ?? 0), "activeRecipients": .integer(recipients[key] ?? 0),
                    "activeSponsors": .integer(sponsors[key] ?? 0),
                ])
                day = day.adding(days: 1)
            }
            return ["byState": .object(byState), "byType": .object(byType), "days": .array(days)]
        }
    }

    struct BroadcastRequest: Codable, Sendable {
        var title: String
        var text: String
        var audience: String
        var role: String?
        var groupId: String?
        var kind: String?
    }

    /// The kinds of broadcast the goals app shows (seed 000, 8.3).
    static let broadcastKinds = ["updates", "promotions", "offers", "congratulations", "news"]

    var broadcast: ServiceOperation {
        .write(
            "goals.admin.broadcast",
            summary: "Sends a push with an editable text and a `kind` (updates, promotions, offers, congratulations, news; default news) to an audience: `everyone`, a `role` (recipient, sponsor, admin), or a `sponsor_group` (`groupId`; its sponsors' ids go with the event). Published as goals.broadcast for the notifications service to deliver; logged. Send idem: a retry broadcasts once.",
            auth: GoalOperations.admin,
            request: .object(
                [
                    "title": .name(maxLength: 100), "text": .text(minLength: 1, maxLength: 1_000),
                    "audience": .oneOf(["everyone", "role", "sponsor_group"]), "role": .oneOf(["recipient", "sponsor", "staff", "admin"]),
                    "groupId": GoalOperations.id, "kind": .oneOf(Self.broadcastKinds),
                ], required: ["title", "text", "audience"]),
            response: .object(["broadcastId": .string(), "userIds": .integer(minimum: 0)], required: ["broadcastId"])
        ) { (context, input: BroadcastRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            // A push that shows nothing must not reach every device (the title is a `name`).
            guard Formats.isName(input.text) else { throw ServiceError.invalid("text", "must show something") }
            var data: [String: JSONValue] = [
                "title": .string(input.title), "text": .string(input.text), "audience": .string(input.audience), "kind": .string(input.kind ?? "news"),
            ]
            var count: Int?
            switch input.audience {
            case "role":
                guard let role = input.role, input.groupId == nil else { throw ServiceError.invalid("role", "a role audience names the role (and no group)") }
                data["role"] = .string(role)
            case "sponsor_group":
                guard let group = input.groupId, input.role == nil else { throw ServiceError.invalid("groupId", "a group audience names the group (and no role)") }
                guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sponsor_group WHERE id = ?"), arguments: [group]) == true else {
                    throw ServiceError.invalid("groupId", "no such sponsor group")
                }
                let members = try String.fetchAll(db.cachedStatement(sql: "SELECT user_id FROM sponsor_profile WHERE group_id = ? ORDER BY user_id"), arguments: [group])
                data["groupId"] = .string(group)
                data["userIds"] = .array(members.map(JSONValue.string))
                count = members.count
            default:
                guard input.role == nil, input.groupId == nil else { throw ServiceError.invalid("audience", "everyone takes no role or group") }
            }
            let id = RecordID.make(prefix: "bcs", at: context.receivedAt)
            data["broadcastId"] = .string(id)
            try Outbox.append(db, type: "goals.broadcast", data: JSONValue.object(data))
            try AdminLog.record(db, admin: admin, action: "broadcast", target: id, detail: .object(data.filter { $0.key != "userIds" }), at: Instant.format(context.receivedAt))
            var answer: [String: JSONValue] = ["broadcastId": .string(id)]
            if let count { answer["userIds"] = .integer(Int64(count)) }
            return .object(answer)
        }
    }

    struct UserRequest: Codable, Sendable {
        var userId: String
    }

    var deleteData: ServiceOperation {
        .write(
            "goals.admin.users.delete_data",
            summary: "Deletes a user's goal data, as when their account is deleted (auth.user.deleted): their goals with plans, offers and feeds, their profiles, answers and activities; where they sponsored others, their offers are withdrawn and they stay as an anonymous sponsor.",
            auth: GoalOperations.admin, request: .object(["userId": GoalOperations.id], required: ["userId"]),
            response: .object(["goals": .integer(minimum: 0)], required: ["goals"])
        ) { (context, input: UserRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            let removed = try UserDeletion.remove(db, user: input.userId, at: context.receivedAt)
            try AdminLog.record(db, admin: admin, action: "users.delete_data", target: input.userId, detail: nil, at: Instant.format(context.receivedAt))
            return ["goals": .integer(Int64(removed))]
        }
    }

    struct ActionsRequest: Codable, Sendable {
        var before: Int64?
        var limit: Int?
    }

    var actions: ServiceOperation {
        .read(
            "goals.admin.actions",
            summary: "The log of admin actions (who, what, on what, when), newest first; page with `before` (the last id seen).",
            auth: GoalOperations.admin, request: .object(["before": .integer(minimum: 1), "limit": .integer(minimum: 1, maximum: 200)]),
            response: .object(
                [
                    "actions": .array(
                        of: .object(
                            ["id": .integer(), "admin": .string(), "action": .string(), "target": JSONSchema.string().nullable(), "detail": .any,
                             "at": .string(format: .dateTime)], required: ["id", "admin", "action", "target", "at"]), maxItems: 200),
                    "more": .boolean,
                ], required: ["actions", "more"])
        ) { (_, input: ActionsRequest, db: Database) -> JSONValue in
            let limit = input.limit ?? 50
            let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM admin_action WHERE id < ? ORDER BY id DESC LIMIT ?"), arguments: [input.before ?? Int64.max, limit + 1])
            let actions: [JSONValue] = try rows.prefix(limit).map { row in
                var entry: [String: JSONValue] = [
                    "id": .integer(row["id"]), "admin": .string(row["admin_id"]), "action": .string(row["action"]),
                    "target": (row["target"] as String?).map(JSONValue.string) ?? .null, "at": .string(row["at"]),
                ]
                if let detail: String = row["detail"] { entry["detail"] = try JSONParser.parse(Data(detail.utf8)) }
                return .object(entry)
            }
            return ["actions": .array(actions), "more": .bool(rows.count > limit)]
        }
    }
}

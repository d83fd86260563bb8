import Foundation
import GRDB
import Platform

/// A goal's plans (sections 3.6–3.9): the monthly workout plan, nutrition recommendations
/// and admin tips, general recommendations. Admins write them; the recipient checks items
/// off (each change tells the sponsors and goes into both feeds), sets workouts' times and
/// moves a day's workout within the week.
struct PlanOperations: Sendable {
    /// Recent dashboards and calendar days, answered from the socket thread.
    let cache: ReadCache

    static let kinds = ["workout", "nutrition", "tip", "recommendation"]

    var all: [ServiceOperation] { [add, update, remove, check, time, reschedule, list, calendar, dashboard] }

    /// One plan item on the wire.
    struct ItemView: Codable, Sendable {
        var id: String
        var goalId: String
        var kind: String
        var date: String?
        var text: String
        var requirement: String?
        var checkable: Bool
        var timeOfDay: String?
        var done: Bool
        var doneAt: String?
        var evidence: String?

        init(row: Row) {
            id = row["id"]
            goalId = row["goal_id"]
            kind = row["kind"]
            date = row["date"]
            text = row["text"]
            requirement = row["requirement"]
            checkable = row["checkable"]
            timeOfDay = row["time_of_day"]
            done = row["done"]
            doneAt = row["done_at"]
            evidence = row["evidence_id"]
        }

        static let schema = JSONSchema.object(
            [
                "id": .string(), "goalId": .string(), "kind": .oneOf(kinds), "date": .string(format: .date), "text": .text(),
                "requirement": .text(), "checkable": .boolean, "timeOfDay": .string(format: .time), "done": .boolean,
                "doneAt": .string(format: .dateTime), "evidence": JSONSchema.string().described("the imported activity backing the check"),
            ], required: ["id", "goalId", "kind", "text", "checkable", "done"])

        /// The columns ``init(row:at:)`` reads, in its order, qualified by `alias`.
        static func columns(_ alias: String) -> String {
            ["id", "goal_id", "kind", "date", "text", "requirement", "checkable", "time_of_day", "done", "done_at", "evidence_id"]
                .map { "\(alias).\($0)" }.joined(separator: ", ")
        }

        /// An item from ``columns(_:)`` starting at column `offset`, by position.
        init(row: Row, at offset: Int) {
            id = row[offset]
            goalId = row[offset + 1]
            kind = row[offset + 2]
            date = row[offset + 3]
            text = row[offset + 4]
            requirement = row[offset + 5]
            checkable = row[offset + 6]
            timeOfDay = row[offset + 7]
            done = row[offset + 8]
            doneAt = row[offset + 9]
            evidence = row[offset + 10]
        }

        /// The item and its goal in one statement: the check's hot path.
        static func loadWithGoal(_ db: Database, id: String) throws -> (item: ItemView, goal: GoalRow)? {
            let sql = "SELECT \(columns("i")), \(GoalRow.columns("g")) FROM plan_item i JOIN goal g ON g.id = i.goal_id WHERE i.id = ?"
            return try Row.fetchOne(db.cachedStatement(sql: sql), arguments: [id]).map { row in
                (ItemView(row: row, at: 0), GoalRow(row: row, at: 11))
            }
        }

        static func load(_ db: Database, id: String) throws -> ItemView? {
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM plan_item WHERE id = ?"), arguments: [id]).map(ItemView.init(row:))
        }
    }

    static let itemInput = JSONSchema.object(
        [
            "kind": .oneOf(kinds), "date": .string(format: .date), "text": .text(minLength: 1, maxLength: 2_000),
            "requirement": .text(maxLength: 500),
            "checkable": JSONSchema.boolean.described("recommendations: whether the recipient may check it off (default no); workouts and dated nutrition always, tips never"),
        ], required: ["kind", "text"])

    struct ItemInput: Codable, Sendable {
        var kind: String
        var date: LocalDate?
        var text: String
        var requirement: String?
        var checkable: Bool?

        /// Whether the item can be checked off, by its kind (the admin decides only for
        /// recommendations), or the problem keyed under `field`.
        func checkability(field: String) throws -> Bool {
            switch kind {
            case "workout":
                guard date != nil else { throw ServiceError.invalid("\(field).date", "a workout has a date") }
                if checkable == false { throw ServiceError.invalid("\(field).checkable", "a workout is always checked off") }
                return true
            case "nutrition":
                if let checkable, checkable != (date != nil) {
                    throw ServiceError.invalid("\(field).checkable", "a nutrition item can be checked off exactly when it has a date")
                }
                return date != nil
            case "tip":
                if checkable == true { throw ServiceError.invalid("\(field).checkable", "tips cannot be checked off") }
                return false
            default: return checkable ?? false
            }
        }
    }

    /// A finished goal's plan is closed: it is kept as it was, not added to or edited.
    static func requireOpenPlan(_ goal: GoalRow) throws {
        guard goal.state.isOpen else {
            throw LifecycleError(message: "the goal is \(goal.state.rawValue); its plan is closed", currentState: goal.state.rawValue).serviceError
        }
    }

    // MARK: Admins write

    struct AddRequest: Codable, Sendable {
        var goalId: String
        var items: [ItemInput]
    }

    var add: ServiceOperation {
        .write(
            "goals.admin.items.add",
            summary: "Adds plan items to a goal (up to 500 at once, e.g. a month's workouts): `workout` (date, exercise text, requirement), `nutrition` (dated or not), `tip` (the admin's nutrition tips), `recommendation` (`checkable` as the admin decides). Dates within 5 years of today. Not on a finished goal.",
            auth: GoalOperations.admin,
            request: .object(["goalId": GoalOperations.id, "items": .array(of: Self.itemInput, minItems: 1, maxItems: 500)], required: ["goalId", "items"]),
            response: .object(["items": .array(of: ItemView.schema, maxItems: 500)], required: ["items"])
        ) { (context, input: AddRequest, db: Database) -> [String: [ItemView]] in
            let admin = try context.requirePrincipal().userID
            let checkable = try input.items.enumerated().map { try $0.element.checkability(field: "items[\($0.offset)]") }
            if let blank = input.items.firstIndex(where: { $0.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) {
                throw ServiceError.invalid("items[\(blank)].text", "must not be blank")
            }
            let today = PlanDates.utcDay(context.receivedAt)
            for (index, item) in input.items.enumerated() {
                if let date = item.date, let problem = PlanDates.problem(date, today: today) { throw ServiceError.invalid("items[\(index)].date", problem) }
            }
            guard let goal = try GoalRow.load(db, id: input.goalId) else { throw ServiceError.notFound("no such goal") }
            try Self.requireOpenPlan(goal)
            let now = Instant.format(context.receivedAt)
            var position = (try Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(position) FROM plan_item WHERE goal_id = ?"), arguments: [goal.id]) ?? 0)
            var ids: [String] = []
            for (index, item) in input.items.enumerated() {
                position += 1
                let id = RecordID.make(prefix: "itm", at: context.receivedAt)
                try db.cachedStatement(sql: """
                        INSERT INTO plan_item (id, goal_id, kind, date, text, requirement, checkable, position, created_at, change_version)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """).execute(arguments: [
                        id, goal.id, item.kind, item.date?.description, item.text, item.requirement, checkable[index], position, now,
                        try ChangeFeed.stamp(db),
                    ])
                ids.append(id)
            }
            try AdminLog.record(db, admin: admin, action: "items.add", target: goal.id, detail: ["count": .integer(Int64(ids.count))], at: now)
            try GoalRow.touch(db, id: goal.id)
            return ["items": try ids.compactMap { try ItemView.load(db, id: $0) }]
        }
    }

    struct UpdateRequest: Codable, Sendable {
        var itemId: String
        var date: LocalDate?
        var text: String?
        var requirement: String?
        var checkable: Bool?
    }

    var update: ServiceOperation {
        .write(
            "goals.admin.items.update",
            summary: "Changes a plan item's date (within 5 years of today; a done item's not past the recipient's today: conflict item_done), text, requirement or (recommendations) whether it can be checked off. Unchecking the checkable flag clears a done mark. A nutrition item is checkable exactly when dated, a workout always: a contradicting `checkable` is refused. Not on a finished goal.",
            auth: GoalOperations.admin,
            request: .object(
                [
                    "itemId": GoalOperations.id, "date": .string(format: .date), "text": .text(minLength: 1, maxLength: 2_000),
                    "requirement": .text(maxLength: 500), "checkable": .boolean,
                ], required: ["itemId"]),
            response: ItemView.schema
        ) { (context, input: UpdateRequest, db: Database) -> ItemView in
            let admin = try context.requirePrincipal().userID
            guard let item = try ItemView.load(db, id: input.itemId), let goal = try GoalRow.load(db, id: item.goalId) else {
                throw ServiceError.notFound("no such item")
            }
            try Self.requireOpenPlan(goal)
            if let text = input.text, text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { throw ServiceError.invalid("text", "must not be blank") }
            let merged = ItemInput(
                kind: item.kind, date: input.date ?? item.date.flatMap(LocalDate.init), text: input.text ?? item.text,
                requirement: input.requirement ?? item.requirement, checkable: input.checkable ?? (item.kind == "recommendation" ? item.checkable : nil))
            if input.checkable != nil && item.kind != "recommendation" && item.kind != "tip" {
                throw ServiceError.invalid("checkable", "only a recommendation's can be chosen")
            }
            let checkable = try merged.checkability(field: "data")
            if let date = input.date, let problem = PlanDates.problem(date, today: PlanDates.utcDay(context.receivedAt)) {
                throw ServiceError.invalid("date", problem)
            }
            // A done item reports what was done on its day: it cannot move to a day that has
            // not come yet for the recipient (who could not have checked it there).
            if item.done && checkable, let date = input.date, date > (try GoalViews.today(db, user: goal.recipientID, now: context.receivedAt)) {
                throw ServiceError.conflict("this item is done: it cannot move to a day that has not come yet for the recipient; uncheck it first", reason: "item_done")
            }
            let now = Instant.format(context.receivedAt)
            try db.cachedStatement(sql: """
                    UPDATE plan_item SET date = ?, text = ?, requirement = ?, checkable = ?,
                        done = CASE WHEN ? THEN done ELSE 0 END, done_at = CASE WHEN ? THEN done_at ELSE NULL END, change_version = ?
                    WHERE id = ?
                    """).execute(arguments: [merged.date?.description, merged.text, merged.requirement, checkable, checkable, checkable, try ChangeFeed.stamp(db), item.id])
            try AdminLog.record(db, admin: admin, action: "items.update", target: item.id, detail: nil, at: now)
            if item.done && !checkable {
                // No longer checkable: the mark goes, and both sides hear of it like an uncheck.
                try Self.recordDone(db, goal: goal, item: item, done: false, actor: admin, at: now)
            } else {
                try GoalRow.touch(db, id: goal.id)
            }
            guard let updated = try ItemView.load(db, id: item.id) else { throw ServiceError.internal(ref: context.requestID) }
            return updated
        }
    }

    struct ItemRequest: Codable, Sendable {
        var itemId: String
    }

    var remove: ServiceOperation {
        .write(
            "goals.admin.items.remove",
            summary: "Removes a plan item (offline apps get it as a deletion). Not on a finished goal.",
            auth: GoalOperations.admin, request: .object(["itemId": GoalOperations.id], required: ["itemId"]), response: .object([:])
        ) { (context, input: ItemRequest, db: Database) -> Empty in
            let admin = try context.requirePrincipal().userID
            guard let item = try ItemView.load(db, id: input.itemId), let goal = try GoalRow.load(db, id: item.goalId) else {
                throw ServiceError.notFound("no such item")
            }
            try Self.requireOpenPlan(goal)
            try db.cachedStatement(sql: "DELETE FROM plan_item WHERE id = ?").execute(arguments: [item.id])
            for viewer in try GoalsChanges.viewers(db, goal: goal) {
                try ChangeFeed.recordDeletion(db, entity: "item", id: item.id, scope: ChangeViewer.user(viewer), at: context.receivedAt)
            }
            try AdminLog.record(db, admin: admin, action: "items.remove", target: item.id, detail: nil, at: Instant.format(context.receivedAt))
            try GoalRow.touch(db, id: goal.id)
            return Empty()
        }
    }

    // MARK: The recipient follows

    struct CheckRequest: Codable, Sendable {
        var itemId: String
        var done: Bool
        var activityId: String?
    }

    var check: ServiceOperation {
        .write(
            "goals.items.check",
            summary: "Checks (`done: true`) or unchecks a checkable item of the caller's goal; a dated item from its day on (the recipient's zone; before it, conflict not_yet). Setting what is already set changes nothing (a double tap is harmless); a change tells the sponsors (events goals.item.checked/unchecked) and goes into the feed. `activityId` (an imported tracker activity of the caller) backs a check as evidence.",
            auth: GoalOperations.recipient,
            request: .object(["itemId": GoalOperations.id, "done": .boolean, "activityId": GoalOperations.id], required: ["itemId", "done"]),
            response: ItemView.schema
        ) { (context, input: CheckRequest, db: Database) -> ItemView in
            let principal = try context.requirePrincipal()
            guard let (item, goal) = try ItemView.loadWithGoal(db, id: input.itemId), goal.recipientID == principal.userID
            else { throw ServiceError.notFound("no such item") }
            guard item.checkable else { throw ServiceError.conflict("this item cannot be checked off", reason: "not_checkable") }
            guard goal.state.isOpen else {
                throw LifecycleError(message: "the goal is \(goal.state.rawValue); its plan can no longer be checked", currentState: goal.state.rawValue)
                    .serviceError
            }
            // A check reports what was done on the item's day: not before that day comes in
            // the recipient's zone (only a date that may be ahead somewhere is looked up).
            if input.done, let date = item.date, date > ZoneClock.utc.localDate(of: context.receivedAt.addingTimeInterval(-12 * 3_600)).description,
                date > (try GoalViews.today(db, user: principal.userID, now: context.receivedAt)).description
            {
                throw ServiceError.conflict("this item is for \(date): it can be checked from that day on", reason: "not_yet")
            }
            if let activity = input.activityId {
                guard input.done else { throw ServiceError.invalid("activityId", "only a check has evidence") }
                guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM activity WHERE id = ? AND user_id = ?"), arguments: [activity, principal.userID]) == true
                else { throw ServiceError.invalid("activityId", "no such activity of yours") }
            }
            guard item.done != input.done || (input.done && input.activityId != nil && input.activityId != item.evidence) else { return item }
            let now = Instant.format(context.receivedAt)
            try db.cachedStatement(sql: "UPDATE plan_item SET done = ?, done_at = ?, evidence_id = ?, change_version = ? WHERE id = ?").execute(arguments: [
                    input.done, input.done ? (item.doneAt ?? now) : nil, input.done ? (input.activityId ?? item.evidence) : nil, try ChangeFeed.stamp(db),
                    item.id,
                ])
            if item.done != input.done {
                try Self.recordDone(db, goal: goal, item: item, done: input.done, actor: principal.userID, at: now)
            }
            var updated = item
            updated.done = input.done
            updated.doneAt = input.done ? (item.doneAt ?? now) : nil
            updated.evidence = input.done ? (input.activityId ?? item.evidence) : nil
            return updated
        }
    }

    /// An item's done mark changed: the feed's fact and the sponsors' event, and the goal's
    /// view (its plan's progress) has a new version.
    static func recordDone(_ db: Database, goal: GoalRow, item: ItemView, done: Bool, actor: String, at now: String) throws {
        try ActivityFeed.record(
            db, goal: goal, sponsor: nil, kind: done ? .checked : .unchecked, actor: actor, item: item.id, text: item.text,
            data: ["kind": .string(item.kind), "date": item.date.map(JSONValue.string) ?? .null], at: now)
        try Outbox.append(
            db, type: done ? "goals.item.checked" : "goals.item.unchecked",
            data: [
                "goalId": .string(goal.id), "itemId": .string(item.id), "recipientId": .string(goal.recipientID),
                "sponsorIds": .array(try GoalEvents.sponsorIDs(db, goal: goal.id).map(JSONValue.string)), "kind": .string(item.kind),
                "text": .string(item.text), "date": item.date.map(JSONValue.string) ?? .null, "done": .bool(done),
            ] as JSONValue)
        try GoalRow.touch(db, id: goal.id)
    }

    struct TimeRequest: Codable, Sendable {
        var itemId: String
        var time: LocalTime?
    }

    var time: ServiceOperation {
        .write(
            "goals.items.time",
            summary: "Sets (or clears with null) the time of day of a workout of the caller's goal. Not on a finished goal.",
            auth: GoalOperations.recipient,
            request: .object(["itemId": GoalOperations.id, "time": JSONSchema.string(format: .time).nullable()], required: ["itemId", "time"]),
            response: ItemView.schema
        ) { (context, input: TimeRequest, db: Database) -> ItemView in
            let principal = try context.requirePrincipal()
            guard let item = try ItemView.load(db, id: input.itemId), let goal = try GoalRow.load(db, id: item.goalId), goal.recipientID == principal.userID
            else { throw ServiceError.notFound("no such item") }
            guard item.kind == "workout" else { throw ServiceError.invalid("itemId", "only a workout has a time of day") }
            try Self.requireOpenPlan(goal)
            try db.cachedStatement(sql: "UPDATE plan_item SET time_of_day = ?, change_version = ? WHERE id = ?").execute(arguments: [input.time?.description, try ChangeFeed.stamp(db), item.id])
            guard let updated = try ItemView.load(db, id: item.id) else { throw ServiceError.internal(ref: context.requestID) }
            return updated
        }
    }

    struct RescheduleRequest: Codable, Sendable {
        var goalId: String
        var from: LocalDate
        var to: LocalDate
    }

    var reschedule: ServiceOperation {
        .write(
            "goals.plan.reschedule",
            summary: "Moves the workout of day `from` to day `to` within the current week (the recipient's time zone), and shifts every later workout of the plan by the same number of days (PlanReschedule: exercises already done stay, a moved day joins the exercises on `to`, nothing moves into the past, dates cross month ends). Answers the items that moved.",
            auth: GoalOperations.recipient,
            request: .object(
                ["goalId": GoalOperations.id, "from": .string(format: .date), "to": .string(format: .date)], required: ["goalId", "from", "to"]),
            response: .object(["days": .integer(), "items": .array(of: ItemView.schema, maxItems: 100_000)], required: ["days", "items"])
        ) { (context, input: RescheduleRequest, db: Database) -> JSONValue in
            let principal = try context.requirePrincipal()
            let goal = try GoalAccess.ownGoal(db, input.goalId, for: principal)
            guard goal.state.isOpen else {
                throw LifecycleError(message: "the goal is \(goal.state.rawValue); its plan can no longer move", currentState: goal.state.rawValue).serviceError
            }
            let today = try GoalViews.today(db, user: principal.userID, now: context.receivedAt)
            let plan = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, date, done FROM plan_item WHERE goal_id = ? AND kind = 'workout' AND date >= ?"),
                arguments: [goal.id, input.from.description]
            ).compactMap { row in (row["date"] as String?).flatMap(LocalDate.init).map { PlannedWorkout(id: row["id"], date: $0, done: row["done"]) } }
            let moves = try PlanReschedule.move(plan, from: input.from, to: input.to, today: today).mapError(\.serviceError).get()
            for (id, date) in moves {
                try db.cachedStatement(sql: "UPDATE plan_item SET date = ?, change_version = ? WHERE id = ?").execute(arguments: [date.description, try ChangeFeed.stamp(db), id])
            }
            try GoalRow.touch(db, id: goal.id)
            let days = input.from.days(until: input.to)
            let now = Instant.format(context.receivedAt)
            let data: JSONValue = [
                "from": .string(input.from.description), "to": .string(input.to.description), "days": .integer(Int64(days)),
                "moved": .integer(Int64(moves.count)),
            ]
            try ActivityFeed.record(db, goal: goal, sponsor: nil, kind: .rescheduled, actor: principal.userID, data: data, at: now)
            try Outbox.append(
                db, type: "goals.plan.rescheduled",
                data: data.merging([
                    "goalId": .string(goal.id), "recipientId": .string(goal.recipientID),
                    "sponsorIds": .array(try GoalEvents.sponsorIDs(db, goal: goal.id).map(JSONValue.string)),
                ]))
            let items = try moves.keys.sorted().compactMap { try ItemView.load(db, id: $0) }.sorted { ($0.date ?? "", $0.id) < ($1.date ?? "", $1.id) }
            return ["days": .integer(Int64(days)), "items": try WireJSON.value(of: items)]
        }
    }

    // MARK: Reading

    struct ListRequest: Codable, Sendable {
        var goalId: String
        var kind: String?
        var from: LocalDate?
        var to: LocalDate?
        var after: String?
        var limit: Int?
    }

    var list: ServiceOperation {
        .read(
            "goals.items.list",
            summary: "The full list of a goal's plan items (the dashboard's ▼), by `kind`, dated ones within `from`…`to`; in plan order (date, then position), paged with `after` (the last item id seen). For the recipient, the goal's sponsors and admins.",
            auth: .authenticated,
            request: .object(
                [
                    "goalId": GoalOperations.id, "kind": .oneOf(Self.kinds), "from": .string(format: .date), "to": .string(format: .date),
                    "after": GoalOperations.id, "limit": .integer(minimum: 1, maximum: 500),
                ], required: ["goalId"]),
            response: .object(["items": .array(of: ItemView.schema, maxItems: 500), "more": .boolean], required: ["items", "more"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            let (goal, _) = try GoalAccess.goal(db, input.goalId, for: try context.requirePrincipal())
            if let from = input.from, let to = input.to, to < from { throw ServiceError.invalid("to", "must not be before from") }
            let limit = input.limit ?? 100
            var after: (date: String, position: Int)? = nil
            if let id = input.after {
                guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT date, position FROM plan_item WHERE id = ? AND goal_id = ?"), arguments: [id, goal.id])
                else { throw ServiceError.invalid("after", "not an item of this goal") }
                after = ((row["date"] as String?) ?? "", row["position"])
            }
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT * FROM plan_item WHERE goal_id = ? AND (? IS NULL OR kind = ?)
                      AND (? IS NULL OR date >= ?) AND (? IS NULL OR date <= ?)
                      AND (? IS NULL OR (COALESCE(date, ''), position) > (?, ?))
                    ORDER BY COALESCE(date, ''), position LIMIT ?
                    """),
                arguments: [
                    goal.id, input.kind, input.kind, input.from?.description, input.from?.description, input.to?.description, input.to?.description,
                    after?.date, after?.date, after?.position, limit + 1,
                ])
            let items = rows.prefix(limit).map(ItemView.init(row:))
            return ["items": try WireJSON.value(of: Array(items)), "more": .bool(rows.count > limit)]
        }
    }

    struct CalendarRequest: Codable, Sendable {
        var date: LocalDate
    }

    var calendar: ServiceOperation {
        let cache = self.cache
        return .task(
            "goals.calendar",
            summary: "A day of the caller's training calendar (table 6): each of their goals with that day's exercises, requirements, times and done flags.",
            auth: GoalOperations.recipient, request: .object(["date": .string(format: .date)], required: ["date"]),
            response: .object(
                [
                    "date": .string(format: .date),
                    "goals": .array(
                        of: .object(
                            ["goalId": .string(), "title": .string(), "type": TypeRef.schema, "state": .string(), "items": .array(of: ItemView.schema)],
                            required: ["goalId", "title", "type", "state", "items"])),
                ], required: ["date", "goals"])
        ) { (context, input: CalendarRequest) -> RawJSON in
            let principal = try context.requirePrincipal()
            return try await cache.remember(Self.calendarKey(principal, input), from: context.database()) { db in
                try Self.calendarDay(db, principal: principal, date: input.date)
            }
        }.answeringFromMemory(CalendarRequest.self) { context, input in
            context.principal.flatMap { cache.answer(Self.calendarKey($0, input)) }
        }
    }

    static func calendarKey(_ principal: Principal, _ input: CalendarRequest) -> String { "calendar|\(principal.userID)|\(input.date)" }

    static func calendarDay(_ db: Database, principal: Principal, date: LocalDate) throws -> JSONValue {
        let input = CalendarRequest(date: date)
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
                SELECT i.* FROM plan_item i JOIN goal g ON g.id = i.goal_id
                WHERE g.recipient_id = ? AND i.kind = 'workout' AND i.date = ?
                ORDER BY g.created_at, i.goal_id, COALESCE(i.time_of_day, '99'), i.position
                """), arguments: [principal.userID, input.date.description])
        var order: [String] = []
        var byGoal: [String: [ItemView]] = [:]
        for item in rows.map(ItemView.init(row:)) {
            if byGoal[item.goalId] == nil { order.append(item.goalId) }
            byGoal[item.goalId, default: []].append(item)
        }
        var goals: [JSONValue] = []
        for id in order {
            guard let goal = try GoalRow.load(db, id: id) else { continue }
            let view = try GoalsDashboard.summary(db, goal)
            goals.append([
                "goalId": .string(id), "title": .string(view.title), "type": try WireJSON.value(of: view.type), "state": .string(goal.state.rawValue),
                "items": try WireJSON.value(of: byGoal[id] ?? []),
            ])
        }
        return ["date": .string(input.date.description), "goals": .array(goals)]
    }

    struct DashboardRequest: Codable, Sendable {
        var goalId: String?
        var limit: Int?
    }

    var dashboard: ServiceOperation {
        let cache = self.cache
        return .task(
            "goals.dashboard",
            summary: "The dashboard (3.6): the caller's goal tabs and one goal in full: type and icon, sponsors with their groups, the admin's percent and the plan's share and pace, the next workouts (from today), nutrition and recommendations (`limit` each, 5 by default; goals.items.list gives the full lists). Without `goalId`, the recipient's open goal (else the latest). A sponsor or admin names a goal they may see.",
            auth: .authenticated,
            request: .object(["goalId": GoalOperations.id, "limit": .integer(minimum: 1, maximum: 50)]),
            response: GoalsDashboard.schema
        ) { (context, input: DashboardRequest) -> RawJSON in
            let principal = try context.requirePrincipal()
            let now = context.receivedAt
            return try await cache.remember(Self.dashboardKey(principal, input), from: context.database()) { db in
                try GoalsDashboard.answer(db, principal: principal, goalId: input.goalId, limit: input.limit ?? 5, now: now)
            }
        }.answeringFromMemory(DashboardRequest.self) { context, input in
            context.principal.flatMap { cache.answer(Self.dashboardKey($0, input)) }
        }
    }

    /// Who asks matters: the caller's own tabs, and admins see any goal.
    static func dashboardKey(_ principal: Principal, _ input: DashboardRequest) -> String {
        "dashboard|\(principal.userID)|\(principal.has("admin"))|\(input.goalId ?? "")|\(input.limit ?? 5)"
    }
}

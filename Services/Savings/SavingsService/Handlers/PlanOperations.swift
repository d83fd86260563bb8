import Foundation
import GRDB
import Platform

/// Plans: previewed without saving, started ("the stash has started"), read with where
/// they stand, changed (name, deadline, reminders), paused, resumed, cancelled, deleted.
/// Every change decides with ``PlanLifecycle`` on the plan loaded in the write transaction
/// and sets the installment reminder again (``InstallmentReminders``).
struct PlanOperations: Sendable {
    static let user = AuthRule.authenticated
    /// A user has at most this many open (active or paused) plans.
    static let maximumOpenPlans = 100

    var all: [ServiceOperation] { [preview, start, get, list, schedule, update, pause, resume, cancel, delete] }

    static let id = JSONSchema.string(minLength: 1, maxLength: 100)
    static let amount = PlanViews.positive
    static let planResponse = PlanViews.planSchema

    // MARK: Terms

    struct ParamsInput: Codable, Sendable {
        var income: Money?
        var percent: Int?
        var amount: Money?
    }

    /// What preview and start share: the method and its parameters.
    struct TermsInput: Codable, Sendable {
        var method: SavingMethod
        var target: Money
        var startDate: LocalDate
        var deadline: LocalDate?
        var interval: SavingInterval
        var params: ParamsInput?

        /// The terms, with every amount in the target's currency and each parameter one
        /// the method uses; the schedule's own checks come after (``SavingsSchedule``).
        func terms() throws -> (PlanTerms, Currency) {
            let currency = target.currency
            let params = params ?? ParamsInput()
            var problems: [String: String] = [:]
            let uses: [String: Bool] = [
                "income": method == .incomePercent, "percent": method == .incomePercent, "amount": method == .fixedAmount,
            ]
            let given: [String: Bool] = ["income": params.income != nil, "percent": params.percent != nil, "amount": params.amount != nil]
            for (name, isGiven) in given where isGiven && uses[name] != true {
                problems["params.\(name)"] = "is not used by the \(method.rawValue) method"
            }
            for (name, money) in [("income", params.income), ("amount", params.amount)] {
                if let money, money.currency != currency { problems["params.\(name).currency"] = "must be the target's currency (\(currency.code))" }
            }
            guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
            return (
                PlanTerms(
                    method: method, target: target.minor, start: startDate, deadline: deadline, interval: interval, income: params.income?.minor,
                    percent: params.percent, amount: params.amount?.minor), currency
            )
        }
    }

    static let termsSchema: [String: JSONSchema] = [
        "method": JSONSchema.oneOf(SavingMethod.allCases.map(\.rawValue)).described("the saving method (savings.methods.list)"),
        "target": Self.amount.described("what to save, in minor units"),
        "startDate": JSONSchema.string(format: .date).described("the first installment's date; today or later"),
        "deadline": JSONSchema.string(format: .date).described(
            "equal: required; the challenges: the last installment falls on or before it (52 intervals without one); income_percent and fixed_amount: the target must be reached by it"),
        "interval": JSONSchema.oneOf(SavingInterval.allCases.map(\.rawValue)).described(
            "week, two_weeks or month (calendar months: a plan started on the 31st uses a shorter month's last day)"),
        "params": PlanViews.paramsSchema,
    ]

    static func schedule(_ terms: PlanTerms, today: LocalDate) throws -> [Installment] {
        switch SavingsSchedule.installments(terms, today: today) {
        case .success(let installments): return installments
        case .failure(let problem): throw ServiceError.invalid(problem.field, problem.reason)
        }
    }

    /// The zone a user's dates are read in: the one given (apps send the device's), else
    /// their profile's, else UTC.
    static func zone(_ db: Database, given: String?, user: String) throws -> (name: String, clock: ZoneClock) {
        zone(named: try given ?? String.fetchOne(db.cachedStatement(sql: "SELECT time_zone FROM person WHERE user_id = ?"), arguments: [user]) ?? "UTC")
    }

    /// The zone `name` (checked by the request's schema), UTC if unknown.
    static func zone(named name: String) -> (name: String, clock: ZoneClock) {
        ZoneClock(identifier: name).map { (name, $0) } ?? ("UTC", .utc)
    }

    /// Refuses another open plan to a user who has ``maximumOpenPlans``.
    static func requireRoomForOpenPlan(_ db: Database, user: String) throws {
        let open = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM plan WHERE user_id = ? AND state IN ('active', 'paused')"), arguments: [user]) ?? 0
        guard open < Self.maximumOpenPlans else {
            throw ServiceError.conflict("you have \(open) open plans; finish or cancel one first", reason: "too_many_plans")
        }
    }

    /// A name as stored: without the spaces around it.
    static func trimmed(_ name: String?) -> String? { name?.trimmingCharacters(in: .whitespacesAndNewlines) }

    // MARK: Preview and start

    /// The terms and the zone "today" is read in.
    struct PreviewRequest: Decodable, Sendable {
        var termsInput: TermsInput
        var timeZone: String?

        private enum CodingKeys: String, CodingKey { case timeZone }

        init(from decoder: any Decoder) throws {
            termsInput = try TermsInput(from: decoder)
            timeZone = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .timeZone)
        }
    }

    var preview: ServiceOperation {
        var request = Self.termsSchema
        request["timeZone"] = JSONSchema.string(format: .timeZone).described("the zone \"today\" is read in (default: the profile's, else UTC)")
        // A task, not a read: with `timeZone` given nothing is read, so no hop to a reader
        // connection and no read transaction (a profile of previews at 1 in flight spent a
        // sixth of the process on the reader thread and its hand-offs).
        return .task(
            "savings.plans.preview",
            summary: "The installments a plan would have, without saving it: each `{date, amount, cumulative}` (Money), summing exactly to the target; `reachDate` is when the target is reached. Infeasible terms are validation_failed naming the field and the reason.",
            auth: Self.user, request: .object(request, required: ["method", "target", "startDate", "interval"]), response: ScheduleView.schema
        ) { (context, input: PreviewRequest) async throws -> ScheduleView in
            let user = try context.requirePrincipal().userID
            let (terms, currency) = try input.termsInput.terms()
            let zone = if let given = input.timeZone {
                Self.zone(named: given)
            } else {
                try await context.database().read { db in try Self.zone(db, given: nil, user: user) }
            }
            let installments = try Self.schedule(terms, today: zone.clock.localDate(of: context.receivedAt))
            return ScheduleView(installments: installments, currency: currency)
        }
    }

    /// The terms, a name, the plan's zone and reminders.
    struct StartRequest: Decodable, Sendable {
        var termsInput: TermsInput
        var name: String?
        var timeZone: String?
        var reminderTime: LocalTime?
        var reminders: Bool?

        private enum CodingKeys: String, CodingKey { case name, timeZone, reminderTime, reminders }

        init(from decoder: any Decoder) throws {
            termsInput = try TermsInput(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            timeZone = try container.decodeIfPresent(String.self, forKey: .timeZone)
            reminderTime = try container.decodeIfPresent(LocalTime.self, forKey: .reminderTime)
            reminders = try container.decodeIfPresent(Bool.self, forKey: .reminders)
        }
    }

    static let reminderTime = JSONSchema.string(format: .time).described("when installments are reminded of, in the plan's zone (default 09:00)")
    static let name = JSONSchema.name(maxLength: 100)

    var start: ServiceOperation {
        var request = Self.termsSchema
        request["name"] = Self.name.described("default: the method's title")
        request["timeZone"] = JSONSchema.string(format: .timeZone).described("the plan's zone: reminders and \"today\" (default: the profile's, else UTC)")
        request["reminderTime"] = Self.reminderTime
        request["reminders"] = JSONSchema.boolean.described("remind of installments (default true)")
        return .write(
            "savings.plans.start",
            summary: "Starts a plan (\"the stash has started\"): the terms as for savings.plans.preview, a name, the zone and time of installment reminders. Publishes savings.plan.started. At most 100 open plans per user (conflict too_many_plans).",
            auth: Self.user, request: .object(request, required: ["method", "target", "startDate", "interval"]), response: Self.planResponse
        ) { (context, input: StartRequest, db: Database) -> PlanView in
            let user = try context.requirePrincipal().userID
            let (terms, currency) = try input.termsInput.terms()
            let zone = try Self.zone(db, given: input.timeZone, user: user)
            let today = zone.clock.localDate(of: context.receivedAt)
            _ = try Self.schedule(terms, today: today)
            try Self.requireRoomForOpenPlan(db, user: user)
            let name = try Self.trimmed(input.name) ?? String.fetchOne(db.cachedStatement(sql: "SELECT title FROM method WHERE id = ?"), arguments: [terms.method.rawValue]) ?? terms.method.rawValue
            let id = RecordID.make(prefix: "pln", at: context.receivedAt)
            let now = Instant.format(context.receivedAt)
            try db.cachedStatement(sql: """
                    INSERT INTO plan (id, user_id, name, method, currency, target_minor, start_date, deadline, interval, income_minor, percent,
                        amount_minor, state, created_on, time_zone, reminder_time, reminders, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: [
                    id, user, name, terms.method.rawValue, currency.code, terms.target, terms.start.description, terms.deadline?.description,
                    terms.interval.rawValue, terms.income, terms.percent, terms.amount, today.description, zone.name,
                    (input.reminderTime ?? Self.defaultReminderTime).description, input.reminders ?? true, now, now,
                ])
            let plan = try PlanRow.own(db, id: id, user: user)
            let standing = plan.standing(at: context.receivedAt)
            try InstallmentReminders.arm(db, plan, standing, at: context.receivedAt)
            try SavingsEvents.plan(db, "savings.plan.started", plan, at: context.receivedAt)
            return PlanView(plan: plan, standing: standing)
        }
    }

    static let defaultReminderTime = LocalTime(hour: 9, minute: 0)!

    // MARK: Reading

    struct PlanRequest: Codable, Sendable {
        var planId: String
    }

    var get: ServiceOperation {
        .read(
            "savings.plans.get",
            summary: "One of the caller's plans and where it stands: saved, remaining, percent, on track or behind and by how much, the next installments of the rebalanced schedule, the reach date, or the nearest feasible deadline when the deadline can no longer be kept.",
            auth: Self.user, request: .object(["planId": Self.id], required: ["planId"]), response: Self.planResponse
        ) { (context, input: PlanRequest, db: Database) -> JSONValue in
            PlanViews.plan(try PlanRow.own(db, id: input.planId, user: try context.requirePrincipal().userID), at: context.receivedAt)
        }
    }

    struct ListRequest: Codable, Sendable {
        var state: PlanState?
    }

    var list: ServiceOperation {
        .read(
            "savings.plans.list",
            summary: "The caller's open plans (active and paused), newest first, or those in one `state`; closed ones page through savings.history.",
            auth: Self.user, request: .object(["state": .oneOf(["active", "paused"])]),
            response: .object(["items": .array(of: Self.planResponse, maxItems: Self.maximumOpenPlans), "next": JSONSchema.string().nullable()], required: ["items", "next"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let states = input.state.map { [$0.rawValue] } ?? ["active", "paused"]
            let rows = try PlanRow.fetchAll(
                db.cachedStatement(sql: "SELECT \(PlanRow.columns) FROM plan WHERE user_id = ? AND state IN (?, ?) ORDER BY created_at DESC, id DESC"),
                arguments: [user, states[0], states.last!])
            return ["items": .array(rows.map { PlanViews.plan($0, at: context.receivedAt) }), "next": .null]
        }
    }

    var schedule: ServiceOperation {
        .read(
            "savings.plans.schedule",
            summary: "The whole rest of a plan's rebalanced schedule (its view lists the next 12): `{installments, count, reachDate, total}`; empty once completed, closed, or when the deadline can no longer be kept.",
            auth: Self.user, request: .object(["planId": Self.id], required: ["planId"]), response: ScheduleView.schema
        ) { (context, input: PlanRequest, db: Database) in
            let plan = try PlanRow.own(db, id: input.planId, user: try context.requirePrincipal().userID)
            guard plan.state.isOpen, case .onSchedule(let installments) = plan.standing(at: context.receivedAt).outcome else {
                return ScheduleView(installments: [], currency: plan.currency)
            }
            return ScheduleView(installments: Array(installments), currency: plan.currency)
        }
    }

    // MARK: Changing

    /// Asks the lifecycle about `action` on the caller's `plan` (loaded in this
    /// transaction), writes `state` and `set`, re-arms the reminder, publishes `event`;
    /// returns the plan's view.
    static func change(
        _ context: RequestContext, _ db: Database, _ plan: PlanRow, action: PlanAction, event: String, set: String = "", _ arguments: StatementArguments = []
    ) throws -> PlanView {
        let next = try nextState(after: action, of: plan)
        let now = Instant.format(context.receivedAt)
        let closing = next == .cancelled || next == .completed
        try db.execute(
            sql: "UPDATE plan SET state = ?, updated_at = ?, closed_at = CASE WHEN ? THEN ? ELSE closed_at END\(set) WHERE id = ?",
            arguments: [next.rawValue, now, closing, now] + arguments + [plan.id])
        let changed = try PlanRow.own(db, id: plan.id, user: plan.userID)
        let standing = changed.standing(at: context.receivedAt)
        try InstallmentReminders.arm(db, changed, standing, at: context.receivedAt)
        try SavingsEvents.plan(db, event, changed, at: context.receivedAt)
        return PlanView(plan: changed, standing: standing)
    }

    /// The plan's state after `action`, or `conflict` with the lifecycle's reason.
    static func nextState(after action: PlanAction, of plan: PlanRow) throws -> PlanState {
        try PlanLifecycle.next(after: action, from: plan.state, saved: plan.saved, target: plan.terms.target)
            .mapError { ServiceError.conflict($0.message, reason: $0.reason) }.get()
    }

    struct UpdateRequest: Codable, Sendable {
        var planId: String
        var name: String?
        var deadline: LocalDate?
        var timeZone: String?
        var reminderTime: LocalTime?
        var reminders: Bool?
    }

    var update: ServiceOperation {
        .write(
            "savings.plans.update",
            summary: "Changes an open plan: its name, reminders (on/off, time, zone), or its deadline (null removes it where the method allows): the rest is rebalanced to the new date — take the plan's `nearestDeadline` when the old one can no longer be kept.",
            auth: Self.user,
            request: .object(
                [
                    "planId": Self.id, "name": Self.name, "deadline": JSONSchema.string(format: .date).nullable(), "timeZone": .string(format: .timeZone),
                    "reminderTime": Self.reminderTime, "reminders": .boolean,
                ], required: ["planId"]),
            response: Self.planResponse
        ) { (context, input: UpdateRequest, db: Database) -> PlanView in
            let plan = try PlanRow.own(db, id: input.planId, user: try context.requirePrincipal().userID)
            // A closed plan is refused before its new values are looked at.
            _ = try Self.nextState(after: .update, of: plan)
            var terms = plan.terms
            if context.data["deadline"] != nil, input.deadline != plan.terms.deadline {
                terms.deadline = input.deadline
                try Self.checkDeadline(of: terms, for: plan, at: context.receivedAt)
            }
            let name = Self.trimmed(input.name) ?? plan.name
            let zone = input.timeZone ?? plan.timeZone
            let time = input.reminderTime ?? plan.reminderTime
            let reminders = input.reminders ?? plan.reminders
            guard terms != plan.terms || name != plan.name || zone != plan.timeZone || time != plan.reminderTime || reminders != plan.reminders else {
                // Nothing changes: nothing written, nothing published.
                return PlanView(plan: plan, standing: plan.standing(at: context.receivedAt))
            }
            return try Self.change(
                context, db, plan, action: .update, event: "savings.plan.changed",
                set: ", name = ?, deadline = ?, time_zone = ?, reminder_time = ?, reminders = ?",
                [name, terms.deadline?.description, zone, time.description, reminders])
        }
    }

    /// Whether a plan can move its deadline to `terms.deadline`: a date not past (in the
    /// plan's zone) nor before its start, that leaves at least one installment date for
    /// what remains; spread plans also keep within the installments' limit, and equal
    /// installments need one.
    static func checkDeadline(of terms: PlanTerms, for plan: PlanRow, at now: Date) throws {
        guard let deadline = terms.deadline else {
            if terms.method == .equal { throw ServiceError.invalid("deadline", "is needed to split the target into equal installments") }
            return
        }
        let today = plan.today(at: now)
        guard deadline >= today else { throw ServiceError.invalid("deadline", "is in the past") }
        guard deadline >= terms.start else { throw ServiceError.invalid("deadline", "must not be before the start date (\(terms.start))") }
        if terms.method.spreadsToDeadline, terms.interval.count(from: terms.start, through: deadline) > SavingsSchedule.maximumInstallments {
            throw ServiceError.invalid("deadline", "gives more than \(SavingsSchedule.maximumInstallments) installments")
        }
        if case .unreachable(_, let nearest) = PlanRebalance.remaining(terms, saved: plan.saved, lastDeposit: plan.lastDeposit, today: today) {
            throw ServiceError.invalid("deadline", "leaves no installment date for what remains; the nearest is \(nearest)")
        }
    }

    var pause: ServiceOperation {
        Self.lifecycle(
            "savings.plans.pause", .pause, event: "savings.plan.paused", set: ", paused = 1",
            summary: "Pauses an active plan: no reminders until resumed; deposits still count, and the schedule is rebalanced on resuming. Publishes savings.plan.paused.")
    }

    var resume: ServiceOperation {
        Self.lifecycle(
            "savings.plans.resume", .resume, event: "savings.plan.resumed", set: ", paused = 0",
            summary: "Resumes a paused plan: what was missed is spread over the installments left. Publishes savings.plan.resumed.")
    }

    var cancel: ServiceOperation {
        Self.lifecycle(
            "savings.plans.cancel", .cancel, event: "savings.plan.cancelled",
            summary: "Gives an open plan up: it goes to the history with what was saved, its reminders stop. Publishes savings.plan.cancelled.")
    }

    /// An operation that takes a plan from one state to the next (`{planId}` in, the plan out).
    static func lifecycle(_ name: String, _ action: PlanAction, event: String, set: String = "", summary: String) -> ServiceOperation {
        .write(name, summary: summary, auth: Self.user, request: .object(["planId": Self.id], required: ["planId"]), response: Self.planResponse) {
            (context, input: PlanRequest, db: Database) -> PlanView in
            try Self.change(context, db, try PlanRow.own(db, id: input.planId, user: try context.requirePrincipal().userID), action: action, event: event, set: set)
        }
    }

    var delete: ServiceOperation {
        .write(
            "savings.plans.delete",
            summary: "Deletes one of the caller's plans (any state) with its deposits, from the history too. Publishes savings.plan.deleted.",
            auth: Self.user, request: .object(["planId": Self.id], required: ["planId"]), response: .object(["deleted": .boolean], required: ["deleted"])
        ) { (context, input: PlanRequest, db: Database) -> JSONValue in
            let plan = try PlanRow.own(db, id: input.planId, user: try context.requirePrincipal().userID)
            try db.cachedStatement(sql: "DELETE FROM deposit WHERE plan_id = ?").execute(arguments: [plan.id])
            try db.cachedStatement(sql: "DELETE FROM plan WHERE id = ?").execute(arguments: [plan.id])
            try DurableTimers.cancel(db, kind: InstallmentReminders.timerKind, key: plan.id)
            try SavingsEvents.plan(db, "savings.plan.deleted", plan, at: context.receivedAt)
            LastWrittenPlans.shared.forget(plan: plan.id)
            return ["deleted": true]
        }
    }
}

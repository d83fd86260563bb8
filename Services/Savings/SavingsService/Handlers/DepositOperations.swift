import Foundation
import GRDB
import Platform
import Synchronization

/// Deposits: what a user put aside for a plan, on a date. Each one moves the plan's saved
/// amount and its last deposit date in the same transaction, completes the plan when the
/// target is reached, and sets the installment reminder again from the rebalanced rest.
struct DepositOperations: Sendable {
    /// A plan takes at most this many deposits.
    static let maximumDeposits = 10_000

    var all: [ServiceOperation] { [record, undo, list] }

    /// Each plan as the last deposit left it (``LastWrittenPlans``).
    var lastWritten: LastWrittenPlans { .shared }

    struct RecordRequest: Codable, Sendable {
        var planId: String
        var amount: Money
        var date: LocalDate
        var note: String?
    }

    /// The deposit's reply lists the plan's next few installments (all of them: savings.plans.get and .schedule).
    static let upcomingInReply = 3

    static let reply = JSONSchema.object(["deposit": PlanViews.depositSchema, "plan": PlanViews.planSchema], required: ["deposit", "plan"])

    var record: ServiceOperation {
        .write(
            "savings.deposits.record",
            summary: "Records money put aside for an open plan on `date` (from the day the plan was started to today in the plan's zone; a late one counts for its own date). Any amount: the rest of the schedule is rebalanced so the plan still reaches its target by its deadline. Reaching the target completes the plan (savings.plan.completed). Answers the deposit and the plan after it (its next 3 installments). Send `idem`: a retry is recorded once.",
            auth: PlanOperations.user,
            request: .object(
                ["planId": PlanOperations.id, "amount": PlanOperations.amount, "date": .string(format: .date), "note": .text(maxLength: 500)],
                required: ["planId", "amount", "date"]),
            response: Self.reply,
            preparedAtOnce: { [lastWritten] (context, input: RecordRequest) -> PreparedDeposit in
                // Worked out off the writer (the rebalanced schedule and the encoded reply were
                // a quarter of its time) against the plan as this service's last deposit left
                // it, when it knows it: read nothing here (a read's hand-off to a reader thread
                // cost more than it saved). Only a hint: the transaction reads the plan anyway,
                // uses the work when the plan is still exactly that, and does it again when not
                // (another change came first, or the plan is not known here). Nothing is
                // refused on the strength of the hint alone.
                let at = context.receivedAt
                let (id, now) = (RecordID.make(prefix: "dep", at: at), Instant.format(at))
                let user = try context.requirePrincipal().userID
                let worked = lastWritten.plan(input.planId, of: user).flatMap { try? WorkedDeposit($0, input, id: id, now: now, at: at) }
                return PreparedDeposit(input: input, id: id, now: now, worked: worked)
            }
        ) { [lastWritten] (context, prepared: PreparedDeposit, db: Database) -> RawJSON in
            let plan = try PlanRow.own(db, id: prepared.input.planId, user: try context.requirePrincipal().userID)
            let worked = try prepared.worked.flatMap { $0.before == plan ? $0 : nil }
                ?? WorkedDeposit(plan, prepared.input, id: prepared.id, now: prepared.now, at: context.receivedAt)
            let (changed, deposit, now) = (worked.after, worked.deposit, worked.deposit.createdAt)
            try db.cachedStatement(sql: "INSERT INTO deposit (id, plan_id, user_id, amount_minor, date, note, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .run(deposit.id, plan.id, plan.userID, deposit.amount, deposit.date.description, deposit.note, now)
            // The plan's state and closing time only when it completes: the indexes on them stay untouched otherwise.
            try db.cachedStatement(sql: "UPDATE plan SET saved_minor = ?, deposits = deposits + 1, last_deposit = ?, updated_at = ? WHERE id = ?")
                .run(changed.saved, changed.lastDeposit?.description, now, plan.id)
            if changed.state != plan.state {
                try db.cachedStatement(sql: "UPDATE plan SET state = ?, closed_at = ? WHERE id = ?")
                    .run(changed.state.rawValue, changed.closedAt, plan.id)
            }
            try InstallmentReminders.arm(db, changed, worked.standing, at: context.receivedAt)
            try SavingsEvents.deposit(db, "savings.deposit.recorded", changed, deposit, at: context.receivedAt)
            if changed.state == .completed { try SavingsEvents.plan(db, "savings.plan.completed", changed, at: context.receivedAt) }
            // Kept even if this transaction then rolls back: a wrong hint only costs the work again.
            lastWritten.keep(changed)
            return RawJSON(worked.reply)
        }
    }

    /// A deposit request with its outcome worked out before the write transaction.
    struct PreparedDeposit: Sendable {
        var input: RecordRequest
        /// The new deposit's id and time.
        var id: String
        var now: String
        /// Worked out against the plan as last written, if known and the deposit passed there.
        var worked: WorkedDeposit?
    }

    /// A deposit worked out against one reading of its plan: the checks, the plan after
    /// it, where that plan stands and the reply. Everything but the writes.
    struct WorkedDeposit: Sendable {
        /// The plan as read.
        var before: PlanRow
        /// The plan with the deposit.
        var after: PlanRow
        var deposit: DepositRow
        var standing: PlanRow.Standing
        /// The encoded ``DepositReply``.
        var reply: Data

        init(_ plan: PlanRow, _ input: RecordRequest, id: String, now: String, at receivedAt: Date) throws {
            guard input.amount.currency == plan.currency else { throw ServiceError.invalid("amount.currency", "must be the plan's currency (\(plan.currency.code))") }
            let saved = plan.saved + input.amount.minor
            let next = try PlanLifecycle.next(after: .deposit, from: plan.state, saved: saved, target: plan.terms.target)
                .mapError { ServiceError.conflict($0.message, reason: $0.reason) }.get()
            guard input.date >= plan.createdOn else { throw ServiceError.invalid("date", "is before the plan was started (\(plan.createdOn))") }
            guard input.date <= plan.today(at: receivedAt) else { throw ServiceError.invalid("date", "is in the future (in the plan's zone, \(plan.timeZone))") }
            guard plan.deposits < DepositOperations.maximumDeposits else {
                throw ServiceError.conflict("the plan has \(plan.deposits) deposits, the most it takes", reason: "too_many_deposits")
            }
            var changed = plan
            (changed.saved, changed.deposits, changed.state, changed.updatedAt) = (saved, plan.deposits + 1, next, now)
            changed.lastDeposit = max(plan.lastDeposit ?? input.date, input.date)
            if next == .completed { changed.closedAt = now }
            before = plan
            after = changed
            deposit = DepositRow(id: id, planID: plan.id, userID: plan.userID, amount: input.amount.minor, date: input.date, note: input.note, createdAt: now)
            standing = changed.standing(at: receivedAt)
            reply = try WireJSON.encode(
                DepositReply(
                    deposit: DepositView(deposit: deposit, currency: plan.currency),
                    plan: PlanView(plan: changed, standing: standing, upcoming: DepositOperations.upcomingInReply)))
        }
    }

    struct UndoRequest: Codable, Sendable {
        var depositId: String
    }

    var undo: ServiceOperation {
        .write(
            "savings.deposits.undo",
            summary: "Takes back one of the caller's deposits (a mistake): the plan's saved amount and schedule follow; a completed plan that falls below its target is open again, active or paused as it was (savings.plan.reopened; conflict too_many_plans when the user already has 100 open). Not on a cancelled plan.",
            auth: PlanOperations.user, request: .object(["depositId": PlanOperations.id], required: ["depositId"]), response: Self.reply
        ) { (context, input: UndoRequest, db: Database) -> DepositReply in
            let user = try context.requirePrincipal().userID
            guard let deposit = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM deposit WHERE id = ?"), arguments: [input.depositId]).map(DepositRow.init(row:)),
                deposit.userID == user
            else { throw ServiceError.notFound("no such deposit") }
            let plan = try PlanRow.own(db, id: deposit.planID, user: user)
            let saved = plan.saved - deposit.amount
            let next = try PlanLifecycle.next(after: .undoDeposit, from: plan.state, saved: saved, target: plan.terms.target, paused: plan.paused)
                .mapError { ServiceError.conflict($0.message, reason: $0.reason) }.get()
            if plan.state == .completed && next.isOpen {
                // Open again: it counts against the open plans' limit.
                try PlanOperations.requireRoomForOpenPlan(db, user: user)
            }
            let now = Instant.format(context.receivedAt)
            try db.cachedStatement(sql: "DELETE FROM deposit WHERE id = ?").execute(arguments: [deposit.id])
            try db.cachedStatement(sql: """
                    UPDATE plan SET saved_minor = ?, deposits = deposits - 1, last_deposit = (SELECT MAX(date) FROM deposit WHERE plan_id = ?),
                        state = ?, updated_at = ?, closed_at = CASE WHEN ? = 'completed' THEN closed_at ELSE NULL END
                    WHERE id = ?
                    """).execute(arguments: [saved, plan.id, next.rawValue, now, next.rawValue, plan.id])
            let changed = try PlanRow.own(db, id: plan.id, user: user)
            let standing = changed.standing(at: context.receivedAt)
            try InstallmentReminders.arm(db, changed, standing, at: context.receivedAt)
            try SavingsEvents.deposit(db, "savings.deposit.undone", changed, deposit, at: context.receivedAt)
            if plan.state == .completed && next != .completed { try SavingsEvents.plan(db, "savings.plan.reopened", changed, at: context.receivedAt) }
            return DepositReply(deposit: DepositView(deposit: deposit, currency: plan.currency), plan: PlanView(plan: changed, standing: standing, upcoming: Self.upcomingInReply))
        }
    }

    struct ListRequest: Codable, Sendable {
        var planId: String?
        var limit: Int?
        var cursor: String?
    }

    var list: ServiceOperation {
        .read(
            "savings.deposits.list",
            summary: "The caller's deposits with their dates, newest date first: of one plan (`planId`) or of all, paged (`limit` up to 200, default 50; `cursor` from `next`).",
            auth: PlanOperations.user,
            request: .object(["planId": PlanOperations.id, "limit": .integer(minimum: 1, maximum: 200), "cursor": .string(maxLength: 300)]),
            response: .object(
                ["items": .array(of: PlanViews.depositSchema, maxItems: 200), "next": JSONSchema.string().nullable()], required: ["items", "next"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            if let planId = input.planId { _ = try PlanRow.own(db, id: planId, user: user) }
            let limit = input.limit ?? 50
            var sql = "SELECT deposit.*, plan.currency FROM deposit JOIN plan ON plan.id = deposit.plan_id WHERE plan.user_id = ?"
            var arguments: StatementArguments = [user]
            if let planId = input.planId {
                sql += " AND plan.id = ?"
                arguments += [planId]
            }
            if let cursor = input.cursor {
                let (date, id) = try PageCursor.decode(cursor)
                sql += " AND (deposit.date < ? OR (deposit.date = ? AND deposit.id < ?))"
                arguments += [date, date, id]
            }
            sql += " ORDER BY deposit.date DESC, deposit.id DESC LIMIT ?"
            arguments += [limit + 1]
            let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
            let page = try rows.prefix(limit).map { row in (try DepositRow(row: row), Currency(stored: row["currency"])) }
            let next: JSONValue = rows.count > limit ? page.last.map { .string(PageCursor.encode($0.0.date.description, $0.0.id)) } ?? .null : .null
            return ["items": .array(page.map { DepositView(deposit: $0.0, currency: $0.1).jsonValue }), "next": next]
        }
    }
}

/// Each plan as the last deposit recorded here left it, for ``DepositOperations``'s
/// `prepare` to work the next deposit out against: a hint, never trusted (the write
/// transaction compares it with the plan it reads). Bounded: past ``capacity`` plans it
/// starts again.
/// A deleted plan, or every plan of a deleted account, is forgotten here too.
final class LastWrittenPlans: Sendable {
    /// The process's one map (plan ids are unique, so services of tests sharing a process
    /// cannot confuse each other's hints).
    static let shared = LastWrittenPlans()
    static let capacity = 20_000
    private let plans = Mutex<[String: PlanRow]>([:])

    func forget(plan id: String) {
        _ = plans.withLock { $0.removeValue(forKey: id) }
    }

    func forget(user: String) {
        plans.withLock { plans in plans = plans.filter { $0.value.userID != user } }
    }

    /// The plan `id` as last written, when it is `user`'s.
    func plan(_ id: String, of user: String) -> PlanRow? {
        plans.withLock { $0[id] }.flatMap { $0.userID == user ? $0 : nil }
    }

    func keep(_ plan: PlanRow) {
        plans.withLock { plans in
            if plans.count >= Self.capacity && plans[plan.id] == nil { plans.removeAll(keepingCapacity: true) }
            plans[plan.id] = plan
        }
    }
}

import Foundation
import GRDB
import Platform

/// A plan as stored.
struct PlanRow: Sendable, Hashable {
    var id: String
    var userID: String
    var name: String
    var terms: PlanTerms
    var currency: Currency
    var state: PlanState
    var saved: Int64
    var deposits: Int
    var lastDeposit: LocalDate?
    var createdOn: LocalDate
    var timeZone: String
    var reminderTime: LocalTime
    var reminders: Bool
    var createdAt: String
    var updatedAt: String
    var closedAt: String?
    var paused: Bool

    /// The columns ``init(columns:)`` reads, in the order it reads them (by position: the
    /// hottest reads skip name lookups).
    static let columns = """
        id, user_id, name, method, currency, target_minor, start_date, deadline, interval, income_minor, percent, amount_minor, state,
        saved_minor, deposits, last_deposit, created_on, time_zone, reminder_time, reminders, created_at, updated_at, closed_at, paused
        """

    /// A row of ``columns``, read by position from SQLite's buffers.
    init(columns row: StoredColumns) throws {
        guard let method = SavingMethod(rawValue: row.string(3)), let start = LocalDate(row.string(6)), let interval = SavingInterval(rawValue: row.string(8)),
            let state = PlanState(rawValue: row.string(12)), let createdOn = LocalDate(row.string(16)), let reminderTime = LocalTime(row.string(18))
        else { throw ServiceError.internal(ref: "plan-row") }
        id = row.string(0)
        userID = row.string(1)
        name = row.string(2)
        currency = Currency(stored: row.string(4))
        terms = PlanTerms(
            method: method, target: row.integer(5) ?? 0, start: start, deadline: row.text(7).flatMap { LocalDate($0) }, interval: interval,
            income: row.integer(9), percent: row.integer(10).map(Int.init), amount: row.integer(11))
        self.state = state
        saved = row.integer(13) ?? 0
        deposits = Int(row.integer(14) ?? 0)
        lastDeposit = row.text(15).flatMap { LocalDate($0) }
        self.createdOn = createdOn
        timeZone = row.string(17)
        self.reminderTime = reminderTime
        reminders = row.bool(19)
        createdAt = row.string(20)
        updatedAt = row.string(21)
        closedAt = row.text(22)
        paused = row.bool(23)
    }

    static func load(_ db: Database, id: String) throws -> PlanRow? {
        try db.cachedStatement(sql: "SELECT \(columns) FROM plan WHERE id = ?").firstRow(id) { try PlanRow(columns: $0) }
    }

    /// The plans a query of ``columns`` finds, in its order.
    static func fetchAll(_ statement: Statement, arguments: StatementArguments) throws -> [PlanRow] {
        var plans: [PlanRow] = []
        try statement.forEachRow(arguments: arguments) { plans.append(try PlanRow(columns: $0)) }
        return plans
    }

    /// The caller's plan: another user's, or none, is `not_found` alike.
    static func own(_ db: Database, id: String, user: String) throws -> PlanRow {
        guard let plan = try load(db, id: id), plan.userID == user else { throw ServiceError.notFound("no such plan") }
        return plan
    }

    /// The plan's clock (its zone is checked when stored).
    var clock: ZoneClock { ZoneClock(identifier: timeZone) ?? .utc }

    /// Today in the plan's zone.
    func today(at now: Date) -> LocalDate { clock.localDate(of: now) }

    /// Where the plan stands on `now`'s date in its zone: the rest of its schedule (open
    /// plans only) and its pace against the plan as made. Computed once per request.
    struct Standing: Sendable {
        var today: LocalDate
        /// `nil` for a closed plan.
        var outcome: PlanRebalance.Outcome?
        var pace: PlanPace

        /// The installments still due, when the plan is open and its deadline can be kept.
        var installments: InstallmentSeries {
            if case .onSchedule(let installments) = outcome { return installments }
            return []
        }
    }

    func standing(at now: Date) -> Standing {
        let today = today(at: now)
        return Standing(
            today: today, outcome: state.isOpen ? PlanRebalance.remaining(terms, saved: saved, lastDeposit: lastDeposit, today: today) : nil,
            pace: PlanPace(terms: terms, saved: saved, today: today))
    }
}

/// A recorded deposit.
struct DepositRow: Sendable {
    var id: String
    var planID: String
    var userID: String
    var amount: Int64
    var date: LocalDate
    var note: String?
    var createdAt: String

    init(id: String, planID: String, userID: String, amount: Int64, date: LocalDate, note: String?, createdAt: String) {
        (self.id, self.planID, self.userID, self.amount, self.date, self.note, self.createdAt) = (id, planID, userID, amount, date, note, createdAt)
    }

    init(row: Row) throws {
        id = row["id"]
        planID = row["plan_id"]
        userID = row["user_id"]
        amount = row["amount_minor"]
        guard let date = LocalDate(row["date"] as String) else { throw ServiceError.internal(ref: "deposit-row") }
        self.date = date
        note = row["note"]
        createdAt = row["created_at"]
    }
}

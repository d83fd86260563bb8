import Foundation
import GRDB
import Platform

/// A plan as stored.
struct PlanRow: Sendable {
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

    init(row: Row) throws {
        id = row["id"]
        userID = row["user_id"]
        name = row["name"]
        guard let method = SavingMethod(rawValue: row["method"]), let interval = SavingInterval(rawValue: row["interval"]),
            let start = LocalDate(row["start_date"] as String), let state = PlanState(rawValue: row["state"]),
            let createdOn = LocalDate(row["created_on"] as String), let reminderTime = LocalTime(row["reminder_time"] as String)
        else { throw ServiceError.internal(ref: "plan-row") }
        terms = PlanTerms(
            method: method, target: row["target_minor"], start: start, deadline: (row["deadline"] as String?).flatMap(LocalDate.init),
            interval: interval, income: row["income_minor"], percent: row["percent"], amount: row["amount_minor"])
        currency = Currency(stored: row["currency"])
        self.state = state
        saved = row["saved_minor"]
        deposits = row["deposits"]
        lastDeposit = (row["last_deposit"] as String?).flatMap(LocalDate.init)
        self.createdOn = createdOn
        timeZone = row["time_zone"]
        self.reminderTime = reminderTime
        reminders = row["reminders"]
        createdAt = row["created_at"]
        updatedAt = row["updated_at"]
        closedAt = row["closed_at"]
    }

    static func load(_ db: Database, id: String) throws -> PlanRow? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM plan WHERE id = ?"), arguments: [id]).map(PlanRow.init(row:))
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

    /// The schedule as the plan was made (and as its terms stand: a moved deadline
    /// remakes it): what "on track" is measured against.
    var planned: [Installment] {
        (try? SavingsSchedule.installments(terms, today: terms.start).get()) ?? []
    }

    /// What is left to do, seen on `today`.
    func outcome(on today: LocalDate) -> PlanRebalance.Outcome {
        PlanRebalance.remaining(terms, saved: saved, lastDeposit: lastDeposit, today: today)
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

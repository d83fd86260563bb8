import Foundation
import GRDB
import Platform

/// Reminders of installments on the platform's durable timers: one keyed timer per plan,
/// set for its next installment's date at the user's reminder time in the plan's zone.
/// Every change to a plan (start, deposit, undo, pause, resume, change, cancel) sets it
/// again from the rebalanced schedule, in the same transaction; when it fires it publishes
/// `savings.installment.due` for today's installment and sets itself for the next one.
enum InstallmentReminders {
    static let timerKind = "savings.installment"

    /// Sets (or removes) the plan's timer for what it has left, seen at `now`.
    static func arm(_ db: Database, _ plan: PlanRow, _ standing: PlanRow.Standing, at now: Date) throws {
        guard plan.state == .active, plan.reminders,
            let next = InstallmentReminder.next(standing.installments, time: plan.reminderTime, clock: plan.clock, after: now)
        else {
            try DurableTimers.cancel(db, kind: timerKind, key: plan.id)
            return
        }
        try DurableTimers.schedule(db, kind: timerKind, at: next.at, key: plan.id)
    }

    /// The timer's work: today's installment, if still due, and the next timer.
    static let handler = TimerHandler(kind: timerKind) { db, timer in
        guard let id = timer.key, let plan = try PlanRow.load(db, id: id), plan.state == .active, plan.reminders else { return }
        let now = timer.firedAt
        let standing = plan.standing(at: now)
        if let due = InstallmentReminder.due(standing.installments, time: plan.reminderTime, clock: plan.clock, at: now) {
            try SavingsEvents.due(db, plan, due, at: now)
        }
        try arm(db, plan, standing, at: now)
    }
}

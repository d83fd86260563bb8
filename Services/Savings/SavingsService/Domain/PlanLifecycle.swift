import Foundation
import Platform

/// Where a plan is in its life.
public enum PlanState: String, Sendable, CaseIterable, Codable {
    /// Saving: installments fall due and are reminded of.
    case active
    /// Saving paused by the user: no reminders; deposits still count.
    case paused
    /// The target is reached (early or on time).
    case completed
    /// Given up by the user; kept in the history with what was saved.
    case cancelled

    /// Open plans take deposits and changes; closed ones are history.
    public var isOpen: Bool { self == .active || self == .paused }
}

/// What a user does to a plan.
public enum PlanAction: String, Sendable {
    case deposit, undoDeposit = "undo", pause, resume, cancel, update
}

/// Why an action is refused: `conflict` with this reason.
public struct PlanRefusal: Error, Sendable, Hashable {
    public var reason: String
    public var message: String
}

/// The plan's state machine: which actions each state allows and where they lead.
/// Reaching the target completes a plan (a deposit); taking the deposit back below the
/// target opens it again (an undo), as it was before.
public enum PlanLifecycle {
    /// The state after `action` from `state`, with `saved` of `target` saved after it;
    /// `paused`: the plan was paused when it completed (an undo that takes it back below
    /// its target leaves it paused again).
    public static func next(
        after action: PlanAction, from state: PlanState, saved: Int64, target: Int64, paused: Bool = false
    ) -> Result<PlanState, PlanRefusal> {
        switch (action, state) {
        case (.deposit, .active), (.deposit, .paused):
            return .success(saved >= target ? .completed : state)
        case (.undoDeposit, .active), (.undoDeposit, .paused):
            return .success(state)
        case (.undoDeposit, .completed):
            return .success(saved >= target ? .completed : paused ? .paused : .active)
        case (.pause, .active): return .success(.paused)
        case (.resume, .paused): return .success(.active)
        case (.pause, .paused): return .failure(PlanRefusal(reason: "already_paused", message: "the plan is already paused"))
        case (.resume, .active): return .failure(PlanRefusal(reason: "not_paused", message: "the plan is not paused"))
        case (.cancel, .active), (.cancel, .paused): return .success(.cancelled)
        case (.update, .active), (.update, .paused): return .success(state)
        case (_, .completed): return .failure(PlanRefusal(reason: "plan_completed", message: "the plan is completed"))
        case (_, .cancelled): return .failure(PlanRefusal(reason: "plan_cancelled", message: "the plan is cancelled"))
        }
    }
}

/// When to remind of an installment: on its date, at the user's chosen time in their zone.
public struct InstallmentReminder: Sendable, Hashable {
    public var installment: Installment
    public var at: Date

    /// The first of `installments` (in date order) whose reminder is after `now`.
    public static func next(_ installments: some Collection<Installment>, time: LocalTime, clock: ZoneClock, after now: Date) -> InstallmentReminder? {
        let today = clock.localDate(of: now)
        for installment in installments where installment.date >= today {
            guard let at = clock.instant(installment.date, time) else { continue }
            if at > now { return InstallmentReminder(installment: installment, at: at) }
        }
        return nil
    }

    /// The installment due on `now`'s local date whose reminder time has come, if any: what a
    /// timer firing at `now` reminds of (late timers, after a restart, remind only of
    /// today's installment, never of missed ones).
    public static func due(_ installments: some Collection<Installment>, time: LocalTime, clock: ZoneClock, at now: Date) -> Installment? {
        let today = clock.localDate(of: now)
        guard let first = installments.first(where: { $0.date >= today }), first.date == today,
            let at = clock.instant(first.date, time), at <= now
        else { return nil }
        return first
    }
}


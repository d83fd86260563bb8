import Platform

/// What a started plan has still to do, after the deposits so far ("guaranteed
/// completion"): a missed, smaller or larger deposit spreads the rest over the
/// installments still ahead, so the plan reaches its target exactly, by its deadline when it
/// has one.
public enum PlanRebalance {
    /// Where a plan stands.
    public enum Outcome: Sendable, Hashable {
        /// The target is reached.
        case completed
        /// The installments still due, summing exactly to what remains.
        case onSchedule(InstallmentSeries)
        /// No installment date is left before the deadline: the plan cannot reach its
        /// target in time. `nearestDeadline` is the first date it could: the next date of
        /// its series, for the whole remainder at once.
        case unreachable(remaining: Int64, nearestDeadline: LocalDate)
    }

    /// The rest of `terms`' plan, with `saved` minor units deposited, the last deposit on
    /// `lastDeposit`, seen on `today`. An installment is still due when its date is today or
    /// later and after the last deposit (a deposit covers the installment of its day),
    /// except that a part paid on the last date left does not use that date up: the rest
    /// is still due that day, and the plan is unreachable only once no date is left.
    public static func remaining(_ terms: PlanTerms, saved: Int64, lastDeposit: LocalDate?, today: LocalDate) -> Outcome {
        let outcome = remaining(terms, saved: saved, from: max(today, terms.start), after: lastDeposit)
        guard case .unreachable = outcome, let lastDeposit, lastDeposit >= max(today, terms.start) else { return outcome }
        return remaining(terms, saved: saved, from: max(today, terms.start), after: nil)
    }

    /// ``remaining(_:saved:lastDeposit:today:)`` from the first date on or after `from`,
    /// and after `after` when that is later.
    private static func remaining(_ terms: PlanTerms, saved: Int64, from start: LocalDate, after lastDeposit: LocalDate?) -> Outcome {
        let remaining = terms.target - saved
        guard remaining > 0 else { return .completed }
        var from = start
        if let lastDeposit, lastDeposit >= from { from = lastDeposit.adding(days: 1) }
        let interval = terms.interval
        let firstIndex = interval.firstIndex(onOrAfter: from, from: terms.start)
        let next = interval.date(firstIndex, from: terms.start)
        /// How many of the series' dates from `firstIndex` fall on or before `last`.
        func datesLeft(through last: LocalDate) -> Int {
            min(SavingsSchedule.maximumInstallments, max(0, interval.count(from: terms.start, through: last) - firstIndex))
        }
        /// The rest spread evenly over the first of `dates` dates (fewer units left than
        /// dates: one unit on each of the first dates finishes it).
        func evenly(over dates: Int) -> Outcome {
            let used = Int(min(Int64(dates), remaining))
            return .onSchedule(InstallmentSeries(interval, from: terms.start, firstIndex: firstIndex, count: used, shares: .even(remaining, count: used), after: saved))
        }
        if terms.method.spreadsToDeadline {
            let planned = plannedCount(terms)
            let last = terms.deadline ?? interval.date(planned - 1, from: terms.start)
            let dates = datesLeft(through: last)
            guard dates > 0 else { return .unreachable(remaining: remaining, nearestDeadline: next) }
            // Equal weights: each installment from its index (the same split as below).
            if terms.method == .equal { return evenly(over: dates) }
            let used = Int(min(Int64(dates), remaining))
            let weights = SavingsSchedule.weights(terms.method, count: used, fromIndex: firstIndex, of: max(planned, firstIndex + used))
            let amounts = SavingsSchedule.allocate(remaining, weights: weights, largestLast: terms.method != .fiftyTwoWeekReverse)
            let listed = interval.dates(from: terms.start, fromIndex: firstIndex, through: last, limit: used)
            return .onSchedule(InstallmentSeries(listing: SavingsSchedule.schedule(listed, amounts, startingAt: saved)))
        }
        // The amount per interval until the rest is reached, the last one smaller.
        guard let each = terms.amountPerInterval, each >= 1 else { return .unreachable(remaining: remaining, nearestDeadline: next) }
        let count = (remaining + each - 1) / each
        guard count <= Int64(SavingsSchedule.maximumInstallments) else { return .unreachable(remaining: remaining, nearestDeadline: next) }
        let end = interval.date(firstIndex + Int(count) - 1, from: terms.start)
        if let deadline = terms.deadline, end > deadline {
            // Saving the same amount would finish late: the rest spread evenly before the deadline, if any date is left.
            let dates = datesLeft(through: deadline)
            guard dates > 0 else { return .unreachable(remaining: remaining, nearestDeadline: next) }
            return evenly(over: dates)
        }
        return .onSchedule(
            InstallmentSeries(
                interval, from: terms.start, firstIndex: firstIndex, count: Int(count), shares: .fixed(each: each, last: remaining - each * (count - 1)),
                after: saved))
    }

    /// How many installments a plan spreading to a deadline was made with.
    static func plannedCount(_ terms: PlanTerms) -> Int {
        guard let deadline = terms.deadline else { return SavingsSchedule.challengeIntervals }
        return min(SavingsSchedule.maximumInstallments, terms.interval.count(from: terms.start, through: deadline))
    }
}

/// Whether a plan keeps pace: what its schedule expected by today against what was saved.
public struct PlanPace: Sendable, Hashable {
    /// The cumulative amount the schedule planned before today (an installment due today
    /// is not late until its day is over).
    public var expected: Int64
    /// Saved so far.
    public var saved: Int64
    /// Integer percent of the target saved (rounded down, 100 only when reached).
    public var percent: Int
    /// How far behind the schedule, in minor units (0 when on track).
    public var behind: Int64
    public var onTrack: Bool { behind == 0 }

    /// The pace of a plan whose first schedule was `planned`.
    public init(planned: [Installment], target: Int64, saved: Int64, today: LocalDate) {
        self.init(expected: planned.last(where: { $0.date < today })?.cumulative ?? 0, target: target, saved: saved)
    }

    /// The pace of the plan `terms` make (as ``SavingsSchedule/installments(_:today:)``
    /// made it on its start date), without listing its installments: how many fell due
    /// before today, and the sum of their amounts.
    public init(terms: PlanTerms, saved: Int64, today: LocalDate) {
        let due = terms.interval.count(from: terms.start, through: today.adding(days: -1))
        var expected: Int64 = 0
        if due > 0 {
            if terms.method.spreadsToDeadline {
                let count = PlanRebalance.plannedCount(terms)
                if count >= 1 && terms.target >= Int64(count) {
                    let weights = SavingsSchedule.weights(terms.method, count: count, fromIndex: 0, of: count)
                    let amounts = SavingsSchedule.allocate(terms.target, weights: weights, largestLast: terms.method != .fiftyTwoWeekReverse)
                    expected = amounts.prefix(due).reduce(0, +)
                }
            } else if let each = terms.amountPerInterval, each >= 1 {
                expected = min(terms.target, each * Int64(min(due, SavingsSchedule.maximumInstallments)))
            }
        }
        self.init(expected: expected, target: terms.target, saved: saved)
    }

    private init(expected: Int64, target: Int64, saved: Int64) {
        self.expected = expected
        self.saved = saved
        behind = max(0, expected - saved)
        percent = Self.percent(saved: saved, of: target)
    }

    /// Integer percent of `target` that `saved` is: rounded down, 100 only when reached.
    public static func percent(saved: Int64, of target: Int64) -> Int {
        guard target > 0 else { return 0 }
        let (high, low) = max(0, min(saved, target)).multipliedFullWidth(by: 100)
        return Int(target.dividingFullWidth((high, low)).quotient)
    }
}

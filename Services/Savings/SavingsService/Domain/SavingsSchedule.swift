import Platform

/// How often a plan's installments fall due.
public enum SavingInterval: String, Sendable, CaseIterable, Codable {
    case week
    case twoWeeks = "two_weeks"
    /// Calendar months: each date is counted from the start (the 31st falls on a shorter
    /// month's last day, and comes back to the 31st the month after).
    case month

    /// The date of installment `index` (0 is the start date itself).
    public func date(_ index: Int, from start: LocalDate) -> LocalDate {
        switch self {
        case .week: start.adding(days: 7 * index)
        case .twoWeeks: start.adding(days: 14 * index)
        case .month: start.adding(months: index)
        }
    }

    /// The index of the first installment date on or after `date` (0 when `date` is not
    /// after the start).
    public func firstIndex(onOrAfter date: LocalDate, from start: LocalDate) -> Int {
        guard date > start else { return 0 }
        var index: Int
        switch self {
        case .week: index = start.days(until: date) / 7
        case .twoWeeks: index = start.days(until: date) / 14
        case .month: index = (date.year - start.year) * 12 + (date.month - start.month) - 1
        }
        index = max(0, index)
        while self.date(index, from: start) < date { index += 1 }
        return index
    }

    /// How many of the series' dates from `start` fall on or before `last`.
    public func count(from start: LocalDate, through last: LocalDate) -> Int {
        last < start ? 0 : firstIndex(onOrAfter: last.adding(days: 1), from: start)
    }

    /// The series' dates from installment `fromIndex` through `last`, at most `limit`:
    /// weeks step from one date to the next; months are each counted from the start.
    public func dates(from start: LocalDate, fromIndex: Int, through last: LocalDate, limit: Int) -> [LocalDate] {
        var dates: [LocalDate] = []
        let count = min(limit, max(0, self.count(from: start, through: last) - fromIndex))
        guard count > 0 else { return dates }
        dates.reserveCapacity(count)
        switch self {
        case .week, .twoWeeks:
            let step = self == .week ? 7 : 14
            var date = self.date(fromIndex, from: start)
            for _ in 0..<count {
                dates.append(date)
                date = date.adding(days: step)
            }
        case .month:
            for index in fromIndex..<(fromIndex + count) { dates.append(start.adding(months: index)) }
        }
        return dates
    }
}

/// The saving methods (BuckStash's algorithms). Each is a rule over integer minor units.
public enum SavingMethod: String, Sendable, CaseIterable, Codable {
    /// The target split into equal installments over the intervals until the deadline.
    case equal
    /// The 52-week challenge: each installment one step larger than the one before,
    /// scaled to the target and to the number of intervals until the deadline (52 without one).
    case fiftyTwoWeek = "fifty_two_week"
    /// The challenge in reverse: the largest installment first, each one step smaller.
    case fiftyTwoWeekReverse = "fifty_two_week_reverse"
    /// A percentage of an expected income per interval, until the target is reached.
    case incomePercent = "income_percent"
    /// A fixed amount per interval, until the target is reached.
    case fixedAmount = "fixed_amount"

    /// Whether the method spreads the target over the intervals until a deadline (the
    /// others save an amount per interval and tell when the target is reached).
    public var spreadsToDeadline: Bool { self == .equal || self == .fiftyTwoWeek || self == .fiftyTwoWeekReverse }
}

/// One installment of a plan: due on `date`, `amount` minor units, `cumulative` the sum so far.
public struct Installment: Sendable, Hashable, Codable {
    public var date: LocalDate
    public var amount: Int64
    public var cumulative: Int64

    public init(date: LocalDate, amount: Int64, cumulative: Int64) {
        self.date = date
        self.amount = amount
        self.cumulative = cumulative
    }
}

/// The installments still due of a rebalanced plan. A deposit's reply reads four of them
/// (the next three and the last) while a plan's rest can be 1,300 long, and listing them
/// all for every deposit was a tenth of the savings service's CPU: so when the shares
/// have a closed form (the same amount each with the leftover units one each to the last
/// ones, or a fixed amount with a smaller last one), each installment is made when it is
/// read, from its index. Others (the challenge's growing shares) are listed.
public struct InstallmentSeries: RandomAccessCollection, Sendable, Hashable, ExpressibleByArrayLiteral {
    /// How the amounts of a series are shared among its installments.
    enum Shares: Sendable, Hashable {
        /// `base` each, one unit more for the installments in `plusOne`.
        case even(base: Int64, plusOne: Range<Int>)
        /// `each` each, the last one `last`.
        case fixed(each: Int64, last: Int64)

        /// `total` split over `count` installments as ``SavingsSchedule/allocate(_:weights:largestLast:)``
        /// splits it over equal weights: the quotient each, the remainder one unit each to
        /// the last ones.
        static func even(_ total: Int64, count: Int) -> Shares {
            let (base, leftover) = total.quotientAndRemainder(dividingBy: Int64(count))
            return .even(base: base, plusOne: (count - Int(leftover))..<count)
        }
    }

    private enum Storage: Sendable, Hashable {
        case listed([Installment])
        /// Series index `firstIndex` on of `interval`'s dates from `start`, after `saved`.
        case series(interval: SavingInterval, start: LocalDate, firstIndex: Int, shares: Shares, saved: Int64)
    }

    private let storage: Storage
    public let count: Int

    /// `count` installments from series index `firstIndex` of `interval`'s dates from
    /// `start`, shared as `shares`, after `saved` (the first one's cumulative adds to it).
    init(_ interval: SavingInterval, from start: LocalDate, firstIndex: Int, count: Int, shares: Shares, after saved: Int64) {
        storage = .series(interval: interval, start: start, firstIndex: firstIndex, shares: shares, saved: saved)
        self.count = count
    }

    /// These installments, as they are.
    public init(listing installments: [Installment]) {
        storage = .listed(installments)
        count = installments.count
    }

    public init(arrayLiteral installments: Installment...) {
        self.init(listing: installments)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> Installment {
        switch storage {
        case .listed(let installments):
            return installments[position]
        case .series(let interval, let start, let firstIndex, let shares, let saved):
            precondition(position >= 0 && position < count, "installment index out of range")
            let amount: Int64
            let before: Int64
            switch shares {
            case .even(let base, let plusOne):
                amount = base + (plusOne.contains(position) ? 1 : 0)
                // The extra units of the installments before this one.
                before = base * Int64(position) + Int64(Swift.max(0, Swift.min(position, plusOne.upperBound) - plusOne.lowerBound))
            case .fixed(let each, let last):
                amount = position == count - 1 ? last : each
                before = each * Int64(position)
            }
            return Installment(date: interval.date(firstIndex + position, from: start), amount: amount, cumulative: saved + before + amount)
        }
    }

    public static func == (left: InstallmentSeries, right: InstallmentSeries) -> Bool { left.elementsEqual(right) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for installment in self { hasher.combine(installment) }
    }
}

/// What a plan is made from, as the user chose it (amounts in minor units of one currency).
public struct PlanTerms: Sendable, Hashable, Codable {
    public var method: SavingMethod
    public var target: Int64
    public var start: LocalDate
    public var deadline: LocalDate?
    public var interval: SavingInterval
    /// `income_percent`: the income expected per interval, and the share of it saved.
    public var income: Int64?
    public var percent: Int?
    /// `fixed_amount`: the amount saved per interval.
    public var amount: Int64?

    public init(
        method: SavingMethod, target: Int64, start: LocalDate, deadline: LocalDate? = nil, interval: SavingInterval, income: Int64? = nil,
        percent: Int? = nil, amount: Int64? = nil
    ) {
        (self.method, self.target, self.start, self.deadline, self.interval) = (method, target, start, deadline, interval)
        (self.income, self.percent, self.amount) = (income, percent, amount)
    }

    /// What one interval saves under `income_percent` or `fixed_amount`.
    var amountPerInterval: Int64? {
        switch method {
        case .incomePercent: income.flatMap { income in percent.map { income * Int64($0) / 100 } }
        case .fixedAmount: amount
        default: nil
        }
    }
}

/// Why terms cannot make a plan: the field and the reason, for `validation_failed`.
public struct PlanProblem: Error, Sendable, Hashable {
    public var field: String
    public var reason: String

    public init(_ field: String, _ reason: String) {
        self.field = field
        self.reason = reason
    }
}

/// The plans' arithmetic: installments that sum exactly to the target, each at least one
/// minor unit, growing or shrinking ones monotonic.
///
/// Rounding: the target is shared in proportion to the installments' weights (1 each for
/// `equal`, 1, 2, 3, … for the challenge, the reverse for its reverse), each share rounded
/// down; when that would leave an installment at zero, every installment first gets one
/// minor unit and the rest is shared so. The units the rounding left (fewer than the
/// installments) go one each to the last installments (to the first for the reverse), the
/// largest ones. So the sum is exact and the order is kept.
/// (Differences of rounded cumulative sums, the other usual way, can break the order
/// when an installment grows by less than one unit.)
public enum SavingsSchedule {
    /// At most this many installments in a plan: 25 years of weeks, 50 of fortnights,
    /// a century of months (and a plan's view stays cheap to compute).
    public static let maximumInstallments = 1_300
    /// A plan starts at most this many years ahead (so no date of it leaves four-digit years).
    public static let latestStartYears = 10
    /// The challenge's number of intervals when no deadline is given.
    public static let challengeIntervals = 52
    /// Targets and amounts lie within the contract's money range.
    public static let maximumAmount: Int64 = 1_000_000_000_000

    /// The installments of `terms` as planned on `today`.
    public static func installments(_ terms: PlanTerms, today: LocalDate) -> Result<[Installment], PlanProblem> {
        guard terms.target >= 1 else { return .failure(PlanProblem("target", "must be at least one minor unit")) }
        guard terms.target <= maximumAmount else { return .failure(PlanProblem("target", "must be at most \(maximumAmount) minor units")) }
        guard terms.start >= today else { return .failure(PlanProblem("startDate", "must not be in the past")) }
        guard terms.start <= today.adding(years: latestStartYears) else {
            return .failure(PlanProblem("startDate", "must be within \(latestStartYears) years from today"))
        }
        if let deadline = terms.deadline {
            guard deadline >= today else { return .failure(PlanProblem("deadline", "is in the past")) }
            guard deadline >= terms.start else { return .failure(PlanProblem("deadline", "must not be before the start date")) }
        }
        if terms.method.spreadsToDeadline {
            let dates: [LocalDate]
            if let deadline = terms.deadline {
                dates = terms.interval.dates(from: terms.start, fromIndex: 0, through: deadline, limit: maximumInstallments + 1)
                guard dates.count <= maximumInstallments else {
                    return .failure(PlanProblem("deadline", "gives more than \(maximumInstallments) installments"))
                }
            } else if terms.method == .equal {
                return .failure(PlanProblem("deadline", "is needed to split the target into equal installments"))
            } else {
                dates = (0..<challengeIntervals).map { terms.interval.date($0, from: terms.start) }
            }
            guard terms.target >= Int64(dates.count) else {
                return .failure(PlanProblem("target", "is fewer minor units (\(terms.target)) than installments (\(dates.count))"))
            }
            let weights = Self.weights(terms.method, count: dates.count, fromIndex: 0, of: dates.count)
            return .success(Self.schedule(dates, allocate(terms.target, weights: weights, largestLast: terms.method != .fiftyTwoWeekReverse)))
        }
        let field = terms.method == .incomePercent ? "params.income" : "params.amount"
        if terms.method == .incomePercent {
            guard let income = terms.income else { return .failure(PlanProblem("params.income", "is required for this method")) }
            guard income >= 1 else { return .failure(PlanProblem("params.income", "must be at least one minor unit")) }
            guard income <= maximumAmount else { return .failure(PlanProblem("params.income", "must be at most \(maximumAmount) minor units")) }
            guard let percent = terms.percent, (1...100).contains(percent) else { return .failure(PlanProblem("params.percent", "must be 1 to 100")) }
        }
        if terms.method == .fixedAmount, terms.amountPerInterval == nil { return .failure(PlanProblem(field, "is required for this method")) }
        guard let each = terms.amountPerInterval, each >= 1 else {
            return .failure(PlanProblem(field, terms.method == .incomePercent ? "saves less than one minor unit per interval" : "must be at least one minor unit"))
        }
        guard each <= maximumAmount else { return .failure(PlanProblem(field, "must be at most \(maximumAmount) minor units")) }
        let installments = Self.amountsOf(each, toReach: terms.target, from: terms.start, interval: terms.interval, fromIndex: 0)
        guard let installments else {
            return .failure(PlanProblem(field, "reaches the target in more than \(maximumInstallments) installments"))
        }
        if let deadline = terms.deadline, let last = installments.last?.date, last > deadline {
            return .failure(PlanProblem("deadline", "is before the target is reached (\(last)); save more per interval or move it"))
        }
        return .success(installments)
    }

    /// The weights of installments `fromIndex ..< of` of a plan of `of` installments.
    static func weights(_ method: SavingMethod, count: Int, fromIndex: Int, of total: Int) -> [Int64] {
        (fromIndex..<(fromIndex + count)).map { index in
            switch method {
            case .fiftyTwoWeek: Int64(index + 1)
            case .fiftyTwoWeekReverse: Int64(max(1, total - index))
            default: 1
            }
        }
    }

    /// Splits `total` (at least `weights.count`) into one amount per weight: each at least
    /// one unit, the rest in proportion to the weights rounded down, the leftover units one
    /// each to the last (`largestLast`) or first amounts. Weights must be positive and
    /// ordered the way the amounts should be.
    public static func allocate(_ total: Int64, weights: [Int64], largestLast: Bool) -> [Int64] {
        let count = Int64(weights.count)
        precondition(count >= 1 && total >= count, "at least one unit per installment")
        if weights.allSatisfy({ $0 == weights[0] }) {
            // Equal weights (equal installments): what the general rule below gives, at once:
            // the quotient each, the remainder one unit each to the last (or first) ones.
            let (base, leftover) = total.quotientAndRemainder(dividingBy: count)
            var amounts = [Int64](repeating: base, count: weights.count)
            let extra = largestLast ? (weights.count - Int(leftover))..<weights.count : 0..<Int(leftover)
            for index in extra { amounts[index] += 1 }
            return amounts
        }
        let sum = weights.reduce(0, +)
        // Full-width products: exact whatever the total and the weights.
        func share(_ amount: Int64, _ weight: Int64) -> Int64 { sum.dividingFullWidth(amount.multipliedFullWidth(by: weight)).quotient }
        // Shares of the whole total when even the smallest is a unit or more (the classic
        // challenge, 1378 over 52 weeks, gives 1, 2, …, 52); else a unit each first.
        var amounts = weights.map { share(total, $0) }
        if amounts.contains(where: { $0 < 1 }) {
            amounts = weights.map { 1 + share(total - count, $0) }
        }
        var leftover = Int(total - amounts.reduce(0, +))
        var index = largestLast ? amounts.count - 1 : 0
        while leftover > 0 {
            amounts[index] += 1
            leftover -= 1
            index += largestLast ? -1 : 1
        }
        return amounts
    }

    /// Installments on `dates` with `amounts`, cumulative sums added.
    static func schedule(_ dates: [LocalDate], _ amounts: [Int64], startingAt saved: Int64 = 0) -> [Installment] {
        var cumulative = saved
        return zip(dates, amounts).map { date, amount in
            cumulative += amount
            return Installment(date: date, amount: amount, cumulative: cumulative)
        }
    }

    /// `each` per interval from installment `fromIndex` until `remaining` is reached (the
    /// last one smaller); nil beyond ``maximumInstallments``.
    static func amountsOf(_ each: Int64, toReach remaining: Int64, from start: LocalDate, interval: SavingInterval, fromIndex: Int) -> [Installment]? {
        let count = (remaining + each - 1) / each
        guard count <= Int64(maximumInstallments) else { return nil }
        guard count >= 1 else { return [] }
        let dates = interval.dates(from: start, fromIndex: fromIndex, through: interval.date(fromIndex + Int(count) - 1, from: start), limit: Int(count))
        let amounts = (0..<Int(count)).map { index in index == Int(count) - 1 ? remaining - each * (count - 1) : each }
        return schedule(dates, amounts)
    }
}

import Foundation
import Platform
import PropertyBased
import Testing

@testable import SavingsService

/// The savings arithmetic as pure rules: the methods' schedules, calendar intervals,
/// rebalancing after deposits and the pace, by examples and over random plans.
@Suite("Savings rules")
struct SavingsRulesTests {
    static let today = LocalDate(year: 2026, month: 11, day: 23)

    static func plan(_ terms: PlanTerms) throws -> [Installment] {
        try SavingsSchedule.installments(terms, today: today).get()
    }

    static func problem(_ terms: PlanTerms) -> PlanProblem? {
        if case .failure(let problem) = SavingsSchedule.installments(terms, today: today) { return problem }
        return nil
    }

    // MARK: Examples

    @Test("months are counted from the start: the 31st falls on a shorter month's last day and comes back")
    func monthlyDates() {
        let start = LocalDate(year: 2027, month: 1, day: 31)
        let dates = (0..<4).map { SavingInterval.month.date($0, from: start).description }
        #expect(dates == ["2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30"])
        #expect(SavingInterval.month.date(13, from: start).description == "2028-02-29")
        #expect(SavingInterval.twoWeeks.date(2, from: start).description == "2027-02-28")
        #expect(SavingInterval.month.firstIndex(onOrAfter: LocalDate(year: 2027, month: 3, day: 1), from: start) == 2)
        #expect(SavingInterval.week.firstIndex(onOrAfter: LocalDate(year: 2027, month: 2, day: 7), from: start) == 1)
        #expect(SavingInterval.week.firstIndex(onOrAfter: LocalDate(year: 2027, month: 2, day: 8), from: start) == 2)
    }

    @Test("the classic challenge: 1,378 over 52 weeks is 1, 2, …, 52; its reverse 52 down to 1")
    func classicChallenge() throws {
        let terms = PlanTerms(method: .fiftyTwoWeek, target: 1_378, start: Self.today, interval: .week)
        #expect(try Self.plan(terms).map(\.amount) == Array(1...52))
        var reverse = terms
        reverse.method = .fiftyTwoWeekReverse
        #expect(try Self.plan(reverse).map(\.amount) == Array((1...52).reversed()))
        #expect(try Self.plan(terms).last?.date == Self.today.adding(days: 7 * 51))
    }

    @Test("equal installments: 100.00 over three months is 33.33, 33.33, 33.34")
    func equalInstallments() throws {
        let terms = PlanTerms(
            method: .equal, target: 10_000, start: Self.today, deadline: LocalDate(year: 2027, month: 1, day: 23), interval: .month)
        let plan = try Self.plan(terms)
        #expect(plan.map(\.amount) == [3_333, 3_333, 3_334])
        #expect(plan.map(\.cumulative) == [3_333, 6_666, 10_000])
        #expect(plan.map(\.date.description) == ["2026-11-23", "2026-12-23", "2027-01-23"])
    }

    @Test("a percentage of income and a fixed amount save until the target; the last installment is the rest")
    func amountMethods() throws {
        let income = PlanTerms(method: .incomePercent, target: 100_000, start: Self.today, interval: .month, income: 150_000, percent: 15)
        let plan = try Self.plan(income)
        #expect(plan.map(\.amount) == [22_500, 22_500, 22_500, 22_500, 10_000])
        #expect(plan.last?.date.description == "2027-03-23")
        let fixed = PlanTerms(method: .fixedAmount, target: 1_000, start: Self.today, interval: .twoWeeks, amount: 300)
        #expect(try Self.plan(fixed).map(\.amount) == [300, 300, 300, 100])
    }

    @Test("infeasible terms name the field and the reason")
    func infeasible() {
        let start = Self.today
        #expect(Self.problem(PlanTerms(method: .equal, target: 100, start: start, deadline: start.adding(days: -1), interval: .week))?.field == "deadline")
        #expect(Self.problem(PlanTerms(method: .equal, target: 100, start: start, interval: .week))?.field == "deadline")
        #expect(Self.problem(PlanTerms(method: .equal, target: 3, start: start, deadline: start.adding(days: 28), interval: .week))?.field == "target")
        #expect(Self.problem(PlanTerms(method: .fiftyTwoWeek, target: 0, start: start, interval: .week))?.field == "target")
        #expect(Self.problem(PlanTerms(method: .equal, target: 100, start: start.adding(days: -3), deadline: start, interval: .week))?.field == "startDate")
        // A method's own parameter left out is said to be required, not too small.
        #expect(Self.problem(PlanTerms(method: .fixedAmount, target: 100, start: start, interval: .week)) == PlanProblem("params.amount", "is required for this method"))
        #expect(Self.problem(PlanTerms(method: .incomePercent, target: 100, start: start, interval: .week, percent: 10)) == PlanProblem("params.income", "is required for this method"))
        #expect(Self.problem(PlanTerms(method: .fixedAmount, target: 100, start: start, interval: .week, amount: 0))?.reason == "must be at least one minor unit")
        #expect(Self.problem(PlanTerms(method: .incomePercent, target: 100, start: start, interval: .week, income: 0, percent: 10))?.field == "params.income")
        #expect(Self.problem(PlanTerms(method: .incomePercent, target: 100, start: start, interval: .week, income: 9, percent: 10))?.reason.contains("less than one") == true)
        #expect(Self.problem(PlanTerms(method: .incomePercent, target: 100, start: start, interval: .week, income: 900, percent: 0))?.field == "params.percent")
        #expect(Self.problem(PlanTerms(method: .fixedAmount, target: 1_000_000_000, start: start, interval: .week, amount: 1))?.field == "params.amount")
        #expect(
            Self.problem(PlanTerms(method: .fixedAmount, target: 1_000, start: start, deadline: start.adding(days: 7), interval: .week, amount: 100))?
                .field == "deadline")
        #expect(
            Self.problem(PlanTerms(method: .equal, target: 1_000_000, start: start, deadline: LocalDate(year: 2200, month: 1, day: 1), interval: .week))?
                .field == "deadline")
    }

    @Test("a missed, a smaller and a larger deposit spread the rest over what is left; a part paid on the last date leaves the rest due that day; too late offers the nearest deadline")
    func rebalanceExamples() throws {
        let deadline = Self.today.adding(days: 7 * 9)
        let terms = PlanTerms(method: .equal, target: 10_000, start: Self.today, deadline: deadline, interval: .week)
        #expect(try Self.plan(terms).map(\.amount) == Array(repeating: 1_000, count: 10))
        // Week 0 missed: seen in week 1, the 10,000 over the 9 weeks left.
        let missed = PlanRebalance.remaining(terms, saved: 0, lastDeposit: nil, today: Self.today.adding(days: 7))
        guard case .onSchedule(let afterMiss) = missed else { Issue.record("\(missed)"); return }
        #expect(afterMiss.count == 9 && afterMiss.map(\.amount).reduce(0, +) == 10_000 && afterMiss.first?.amount == 1_111)
        // Week 1: 500 instead of 1,111; the other 8 weeks share 9,500.
        let smaller = PlanRebalance.remaining(terms, saved: 500, lastDeposit: Self.today.adding(days: 7), today: Self.today.adding(days: 7))
        guard case .onSchedule(let afterSmall) = smaller else { Issue.record("\(smaller)"); return }
        #expect(afterSmall.count == 8 && afterSmall.last?.cumulative == 10_000 && afterSmall.first?.date == Self.today.adding(days: 14))
        // A large deposit finishes early: nothing is due after the target.
        #expect(PlanRebalance.remaining(terms, saved: 10_000, lastDeposit: Self.today, today: Self.today) == .completed)
        // Past the deadline with money still missing: the next date of the series is offered.
        let late = PlanRebalance.remaining(terms, saved: 9_000, lastDeposit: deadline, today: deadline.adding(days: 2))
        #expect(late == .unreachable(remaining: 1_000, nearestDeadline: deadline.adding(days: 7)))
        // On the deadline itself, after a part of the last installment: the rest is still due that day.
        let lastDay = PlanRebalance.remaining(terms, saved: 9_500, lastDeposit: deadline, today: deadline)
        #expect(lastDay == .onSchedule([Installment(date: deadline, amount: 500, cumulative: 10_000)]))
        // An earlier installment paid in part keeps covering its day while later dates are left.
        let midway = PlanRebalance.remaining(terms, saved: 500, lastDeposit: Self.today, today: Self.today)
        guard case .onSchedule(let rest) = midway else { Issue.record("\(midway)"); return }
        #expect(rest.first?.date == Self.today.adding(days: 7) && rest.count == 9)
    }

    @Test("the pace: expected by today against saved, integer percent")
    func pace() throws {
        let terms = PlanTerms(method: .equal, target: 10_000, start: Self.today, deadline: Self.today.adding(days: 7 * 9), interval: .week)
        let plan = try Self.plan(terms)
        let pace = PlanPace(planned: plan, target: 10_000, saved: 1_500, today: Self.today.adding(days: 15))
        #expect(pace.expected == 3_000 && pace.behind == 1_500 && !pace.onTrack && pace.percent == 15)
        #expect(PlanPace(planned: plan, target: 10_000, saved: 9_999, today: Self.today).percent == 99)
        #expect(PlanPace(planned: plan, target: 10_000, saved: 12_000, today: Self.today).percent == 100)
    }

    // MARK: Over random plans

    static let spreading: [SavingMethod] = [.equal, .fiftyTwoWeek, .fiftyTwoWeekReverse]

    @Test("every plan spread to a deadline sums exactly to its target, each installment at least a unit, growing or shrinking monotonically")
    func spreadPlansAreExact() async {
        await propertyCheck(
            count: 400, input: Gen.int64(in: 1...1_000_000_000_000), Gen.int(in: 0...3_000), Gen.int(in: 0...40), Gen<SavingInterval>.case,
            Gen.int(in: 0...2)
        ) { target, span, offset, interval, methodIndex in
            let method = Self.spreading[methodIndex]
            let start = Self.today.adding(days: offset)
            let terms = PlanTerms(method: method, target: target, start: start, deadline: start.adding(days: span), interval: interval)
            switch SavingsSchedule.installments(terms, today: Self.today) {
            case .failure(let problem):
                // Only a target too small for the number of installments may fail here.
                #expect(problem.field == "target", "\(problem)")
            case .success(let plan):
                #expect(plan.map(\.amount).reduce(0, +) == target)
                #expect(plan.last?.cumulative == target)
                #expect(plan.allSatisfy { $0.amount >= 1 })
                #expect(plan.allSatisfy { $0.date >= start && $0.date <= start.adding(days: span) })
                #expect(zip(plan, plan.dropFirst()).allSatisfy { $0.date < $1.date })
                let amounts = plan.map(\.amount)
                switch method {
                case .fiftyTwoWeekReverse: #expect(zip(amounts, amounts.dropFirst()).allSatisfy { $0 >= $1 })
                default: #expect(zip(amounts, amounts.dropFirst()).allSatisfy { $0 <= $1 })
                }
                if method == .equal { #expect((amounts.max() ?? 0) - (amounts.min() ?? 0) <= 1) }
            }
        }
    }

    @Test("following a plan with random missed, smaller and larger deposits, rebalancing still reaches the target exactly by the deadline when any date is left")
    func rebalancingReachesTheTarget() async {
        await propertyCheck(
            count: 300, input: Gen.int64(in: 100...10_000_000), Gen.int(in: 30...800), Gen<SavingInterval>.case, Gen.int(in: 0...2),
            Gen.int(in: 0...99).array(of: 40...40)
        ) { target, span, interval, methodIndex, choices in
            let method = Self.spreading[methodIndex]
            let deadline = Self.today.adding(days: span)
            let terms = PlanTerms(method: method, target: target, start: Self.today, deadline: deadline, interval: interval)
            guard case .success(let plan) = SavingsSchedule.installments(terms, today: Self.today) else { return }
            var saved: Int64 = 0
            var lastDeposit: LocalDate?
            var day = Self.today
            var step = 0
            // Each due date: the saver pays what is asked, nothing, less or more (the choices).
            while day <= deadline {
                switch PlanRebalance.remaining(terms, saved: saved, lastDeposit: lastDeposit, today: day) {
                case .completed:
                    #expect(saved >= target)
                    return
                case .unreachable(let remaining, let nearest):
                    #expect(remaining == target - saved && nearest > deadline, "dates were left before the deadline")
                    return
                case .onSchedule(let rest):
                    #expect(rest.map(\.amount).reduce(0, +) == target - saved)
                    #expect(rest.last?.cumulative == target)
                    #expect(rest.allSatisfy { $0.amount >= 1 && $0.date >= day && $0.date <= deadline })
                    let due = rest[0]
                    let choice = choices[step % choices.count]
                    step += 1
                    let paid: Int64 =
                        switch choice {
                        case 0..<15: 0  // missed
                        case 15..<35: due.amount / 2  // smaller
                        case 35..<50: min(due.amount * 2, target - saved)  // larger
                        default: due.amount  // as planned
                        }
                    if paid > 0 {
                        saved += paid
                        lastDeposit = due.date
                    }
                    day = due.date.adding(days: 1)
                }
            }
            // The deadline passed: the plan is complete, or it says it cannot be.
            let end = PlanRebalance.remaining(terms, saved: saved, lastDeposit: lastDeposit, today: day)
            if saved >= target { #expect(end == .completed) } else if case .unreachable = end {} else { Issue.record("\(end)") }
            #expect(plan.last?.cumulative == target)
        }
    }

    @Test("a saver who pays what the rebalanced plan asks, after any deviations, finishes exactly on the target by the deadline")
    func followingTheRestFinishes() async {
        await propertyCheck(
            count: 300, input: Gen.int64(in: 1_000...10_000_000), Gen.int(in: 60...700), Gen<SavingInterval>.case, Gen.int(in: 0...2),
            Gen.int(in: 0...4)
        ) { target, span, interval, methodIndex, deviations in
            let method = Self.spreading[methodIndex]
            let deadline = Self.today.adding(days: span)
            let terms = PlanTerms(method: method, target: target, start: Self.today, deadline: deadline, interval: interval)
            guard case .success = SavingsSchedule.installments(terms, today: Self.today) else { return }
            var saved: Int64 = 0
            var lastDeposit: LocalDate?
            var day = Self.today
            var deviated = 0
            while case .onSchedule(let rest) = PlanRebalance.remaining(terms, saved: saved, lastDeposit: lastDeposit, today: day), let due = rest.first {
                // The first `deviations` installments are paid short by a third, but never the last one.
                let short = deviated < deviations && rest.count > 1
                let paid = short ? max(1, due.amount - due.amount / 3) : due.amount
                deviated += short ? 1 : 0
                saved += paid
                lastDeposit = due.date
                day = due.date
            }
            #expect(saved == target)
            #expect((lastDeposit ?? .init(year: 9999, month: 12, day: 31)) <= deadline)
        }
    }

    @Test("amount methods: every installment is the amount but the last, which is the rest; the sum is the target")
    func amountPlansAreExact() async {
        await propertyCheck(
            count: 300, input: Gen.int64(in: 1...1_000_000_000), Gen.int64(in: 1...100_000_000), Gen<SavingInterval>.case, Gen.int(in: 1...100)
        ) { target, amount, interval, percent in
            for terms in [
                PlanTerms(method: .fixedAmount, target: target, start: Self.today, interval: interval, amount: amount),
                PlanTerms(method: .incomePercent, target: target, start: Self.today, interval: interval, income: amount, percent: percent),
            ] {
                guard case .success(let plan) = SavingsSchedule.installments(terms, today: Self.today) else { continue }
                let each = terms.amountPerInterval ?? 0
                #expect(plan.map(\.amount).reduce(0, +) == target)
                #expect(plan.dropLast().allSatisfy { $0.amount == each })
                #expect((plan.last?.amount ?? 0) >= 1 && (plan.last?.amount ?? 0) <= each)
            }
        }
    }
}

/// The shortcuts the service takes for speed, checked against the plain definitions.
@Suite("Savings shortcuts")
struct SavingsShortcutTests {
    @Test("the pace from the terms alone equals the pace read off the plan as made, for every method and any day")
    func paceFromTerms() async {
        await propertyCheck(
            count: 400, input: Gen.int64(in: 1...1_000_000_000), Gen.int(in: 0...2_000), Gen<SavingInterval>.case, Gen<SavingMethod>.case,
            Gen.int(in: -30...2_500), Gen.int64(in: 1...100_000_000)
        ) { target, span, interval, method, day, each in
            let start = SavingsRulesTests.today
            let deadline: LocalDate? = method == .fiftyTwoWeek && span % 3 == 0 ? nil : start.adding(days: span)
            let terms = PlanTerms(
                method: method, target: target, start: start, deadline: method.spreadsToDeadline ? deadline : nil, interval: interval,
                income: each * 3, percent: 34, amount: each)
            guard case .success(let planned) = SavingsSchedule.installments(terms, today: start) else { return }
            let today = start.adding(days: day)
            let saved = target / 3
            #expect(PlanPace(terms: terms, saved: saved, today: today) == PlanPace(planned: planned, target: target, saved: saved, today: today))
        }
    }

    /// The rebalanced rest as the rule says it, every installment listed: the series'
    /// dates from the first one still due, the rest shared over them (equal weights, or the
    /// amount per interval with the rest last, spread evenly instead when that ends after
    /// the deadline). The oracle of ``restMadeFromItsIndex()``.
    static func listedRest(_ terms: PlanTerms, saved: Int64, from: LocalDate) -> [Installment]? {
        let remaining = terms.target - saved
        guard remaining > 0 else { return nil }
        let first = terms.interval.firstIndex(onOrAfter: from, from: terms.start)
        func evenly(through last: LocalDate) -> [Installment]? {
            let dates = terms.interval.dates(from: terms.start, fromIndex: first, through: last, limit: SavingsSchedule.maximumInstallments)
            guard !dates.isEmpty else { return nil }
            let used = Int(min(Int64(dates.count), remaining))
            let amounts = SavingsSchedule.allocate(remaining, weights: Array(repeating: 1, count: used), largestLast: true)
            return SavingsSchedule.schedule(Array(dates.prefix(used)), amounts, startingAt: saved)
        }
        if terms.method == .equal { return terms.deadline.flatMap(evenly(through:)) }
        guard let each = terms.amountPerInterval, var rest = SavingsSchedule.amountsOf(each, toReach: remaining, from: terms.start, interval: terms.interval, fromIndex: first)
        else { return nil }
        for index in rest.indices { rest[index].cumulative += saved }
        if let deadline = terms.deadline, let end = rest.last?.date, end > deadline { return evenly(through: deadline) }
        return rest
    }

    @Test("a rebalanced rest made from each installment's index is the rest listed in full, for equal, income and fixed-amount plans")
    func restMadeFromItsIndex() async {
        let methods: [SavingMethod] = [.equal, .incomePercent, .fixedAmount]
        await propertyCheck(
            count: 500, input: Gen.int64(in: 1...1_000_000_000), Gen.int(in: 0...3_000), Gen<SavingInterval>.case, Gen.int(in: 0...2),
            Gen.int(in: 0...3_200), Gen.int64(in: 1...100_000_000)
        ) { target, span, interval, methodIndex, day, each in
            let method = methods[methodIndex]
            let start = SavingsRulesTests.today
            let terms = PlanTerms(
                method: method, target: target, start: start, deadline: method == .equal || span % 2 == 0 ? start.adding(days: span) : nil,
                interval: interval, income: each * 3, percent: 34, amount: each)
            let saved = target - target / Int64(1 + day % 7)
            let today = start.adding(days: day)
            let outcome = PlanRebalance.remaining(terms, saved: saved, lastDeposit: nil, today: today)
            switch (outcome, Self.listedRest(terms, saved: saved, from: today)) {
            case (.onSchedule(let series), .some(let listed)):
                #expect(Array(series) == listed)
                #expect(series.count == listed.count && series.last == listed.last && Array(series.prefix(3)) == Array(listed.prefix(3)))
            case (.completed, _): #expect(saved >= target)
            case (.unreachable, .none): break
            default: Issue.record("\(outcome) against \(String(describing: Self.listedRest(terms, saved: saved, from: today)?.count))")
            }
        }
    }

    @Test("counting and listing a series' dates agrees with computing each date from the start")
    func seriesDates() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...3_000), Gen.int(in: 0...400), Gen<SavingInterval>.case, Gen.int(in: 0...60)) { offset, span, interval, from in
            let start = LocalDate(year: 2027, month: 1, day: 1).adding(days: offset)
            let last = start.adding(days: span)
            let expected = (0..<1_000).map { interval.date($0, from: start) }.filter { $0 <= last }
            #expect(interval.count(from: start, through: last) == expected.count)
            #expect(interval.dates(from: start, fromIndex: from, through: last, limit: 10_000) == Array(expected.dropFirst(from)))
        }
    }

    @Test("a schedule written straight to bytes is the contract's shape: each installment's date and amounts as Money, the count, the total, the reach date")
    func scheduleBytes() throws {
        let installments = try SavingsSchedule.installments(
            PlanTerms(method: .fiftyTwoWeek, target: 1_378_00, start: SavingsRulesTests.today, interval: .twoWeeks), today: SavingsRulesTests.today
        ).get()
        for (currency, list) in [("EUR", installments), ("JPY", [])] {
            var bytes: [UInt8] = []
            ScheduleView(installments: list, currency: Currency(stringLiteral: currency)).writeJSON(to: &bytes)
            // The expected tree, built from the installments with the platform's own Money.
            let expected: JSONValue = [
                "count": .integer(Int64(list.count)),
                "installments": .array(
                    list.map { item in
                        [
                            "date": .string(item.date.description), "amount": Money(minor: item.amount, currency: Currency(stringLiteral: currency)).json,
                            "cumulative": Money(minor: item.cumulative, currency: Currency(stringLiteral: currency)).json,
                        ]
                    }),
                "reachDate": list.last.map { .string($0.date.description) } ?? .null,
                "total": Money(minor: list.last?.cumulative ?? 0, currency: Currency(stringLiteral: currency)).json,
            ]
            #expect(try JSONParser.parse(Data(bytes)) == expected)
        }
    }
}

extension SavingsShortcutTests {
    @Test("equal weights share the total exactly, at most a unit apart, the larger ones at the chosen end")
    func equalWeights() async {
        await propertyCheck(count: 300, input: Gen.int64(in: 1...1_000_000_000_000), Gen.int(in: 1...1_300), Gen.bool) { total, count, largestLast in
            guard total >= Int64(count) else { return }
            let amounts = SavingsSchedule.allocate(total, weights: Array(repeating: 3, count: count), largestLast: largestLast)
            #expect(amounts.count == count && amounts.reduce(0, +) == total)
            #expect((amounts.max() ?? 0) - (amounts.min() ?? 0) <= 1 && amounts.allSatisfy { $0 >= total / Int64(count) })
            let ordered = largestLast ? zip(amounts, amounts.dropFirst()).allSatisfy { $0 <= $1 } : zip(amounts, amounts.dropFirst()).allSatisfy { $0 >= $1 }
            #expect(ordered)
        }
    }
}

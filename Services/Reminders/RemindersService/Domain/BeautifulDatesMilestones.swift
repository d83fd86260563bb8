import Platform

/// A round count of days, weeks, months or years since a personal date (a birthday, a
/// wedding): "10,000 days since the wedding", "500 months old".
struct Milestone: Sendable, Hashable {
    /// What is counted.
    enum Unit: String, CaseIterable, Sendable, Hashable, Codable {
        case days, weeks, months, years
    }

    /// The day the count is reached.
    var date: LocalDate
    var unit: Unit
    /// How many units since the personal date (at least 1).
    var count: Int

    /// A stable id, the count and the unit: `10000_days`, `1000_weeks`, `500_months`,
    /// `25_years`.
    var key: String { "\(count)_\(unit.rawValue)" }
}

/// Round counts since a personal date.
///
/// A count is a milestone when it is a multiple of its unit's step, or a repdigit (all
/// its digits the same) of at least the unit's digit count:
///
/// | Unit | Multiples of | Repdigits from | Examples |
/// |---|---|---|---|
/// | days | 1,000 | 4 digits | 1,000; 10,000; 1,111; 22,222 days |
/// | weeks | 100 | 4 digits | 100; 1,000; 1,111; 2,222 weeks |
/// | months | 100 | 3 digits | 100; 500; 111; 333 months |
/// | years | 5 | — | 5; 10; 25; 50 years |
///
/// Over a life of a hundred years that is about 36 multiples and 20 repdigits of days,
/// 52 and 5 of weeks, 12 and 9 of months, and 20 multiples of years.
///
/// Dates: `n` days is the personal date plus `n` days, `n` weeks plus `7n` days; `n`
/// months is ``LocalDate/adding(months:)`` from the personal date itself, so a 31st
/// lands on a shorter month's last day (100 months from 2000-01-31 is 2008-05-31, 101
/// would be 2008-06-30), and `n` years is `12n` months (February 29th becomes February
/// 28th in a common year).
enum Milestones {
    /// Each unit's step and the fewest digits of its repdigits (`nil`: no repdigits).
    static func rule(for unit: Milestone.Unit) -> (step: Int, repdigitDigits: Int?) {
        switch unit {
        case .days: (1_000, 4)
        case .weeks: (100, 4)
        case .months: (100, 3)
        case .years: (5, nil)
        }
    }

    /// Whether `count` units is a milestone.
    static func isRound(_ count: Int, unit: Milestone.Unit) -> Bool {
        guard count > 0 else { return false }
        let (step, repdigitDigits) = rule(for: unit)
        if count % step == 0 { return true }
        guard let repdigitDigits, count >= 10 else { return false }
        let last = count % 10
        var rest = count, digits = 0
        while rest > 0 {
            if rest % 10 != last { return false }
            rest /= 10
            digits += 1
        }
        return digits >= repdigitDigits
    }

    /// The milestones since `personal` whose dates lie in `from...to`, by date, then unit
    /// (days, weeks, months, years), then count. Empty when `to` is before `from`;
    /// nothing is before or on the personal date itself (counts start at 1).
    static func between(_ from: LocalDate, _ to: LocalDate, since personal: LocalDate) -> [Milestone] {
        guard from <= to, personal < to else { return [] }
        var milestones: [Milestone] = []
        let firstDay = personal.days(until: from), lastDay = personal.days(until: to)
        // `personal < to` makes lastDay at least 1.
        for count in counts(in: max(1, firstDay)...lastDay, unit: .days) {
            milestones.append(Milestone(date: personal.adding(days: count), unit: .days, count: count))
        }
        let firstWeek = (max(1, firstDay) + 6) / 7, lastWeek = lastDay / 7
        if firstWeek <= lastWeek {
            for count in counts(in: firstWeek...lastWeek, unit: .weeks) {
                milestones.append(Milestone(date: personal.adding(days: count * 7), unit: .weeks, count: count))
            }
        }
        // Months: from the first count whose date is not before `from` to the last whose
        // date is not after `to` (months(until:) is that last one, as adding(months:) clamps).
        var firstMonth = max(1, personal.months(until: from))
        while personal.adding(months: firstMonth) < from { firstMonth += 1 }
        let lastMonth = personal.months(until: to)
        if firstMonth <= lastMonth {
            for count in counts(in: firstMonth...lastMonth, unit: .months) {
                milestones.append(Milestone(date: personal.adding(months: count), unit: .months, count: count))
            }
        }
        let firstYear = (firstMonth + 11) / 12, lastYear = lastMonth / 12
        if firstYear <= lastYear {
            for count in counts(in: firstYear...lastYear, unit: .years) {
                milestones.append(Milestone(date: personal.adding(years: count), unit: .years, count: count))
            }
        }
        let order = Milestone.Unit.allCases
        return milestones.sorted {
            ($0.date, order.firstIndex(of: $0.unit) ?? 0, $0.count) < ($1.date, order.firstIndex(of: $1.unit) ?? 0, $1.count)
        }
    }

    /// The round counts of a unit within a range of counts, ascending: the multiples of
    /// the step, then the repdigits merged in, without walking every count.
    static func counts(in range: ClosedRange<Int>, unit: Milestone.Unit) -> [Int] {
        let (step, repdigitDigits) = rule(for: unit)
        var result: [Int] = []
        var multiple = (range.lowerBound + step - 1) / step * step
        while multiple <= range.upperBound {
            if multiple > 0 { result.append(multiple) }
            multiple += step
        }
        if let repdigitDigits {
            var ones = 0
            for _ in 0..<repdigitDigits - 1 { ones = ones * 10 + 1 }
            while ones <= range.upperBound / 10 {
                ones = ones * 10 + 1
                for digit in 1...9 {
                    let repdigit = ones * digit
                    if range.contains(repdigit), repdigit % step != 0 { result.append(repdigit) }
                }
            }
            result.sort()
        }
        return result
    }
}

import Platform

/// The calendar side of a rule anchored at a start date: which dates each period holds.
///
/// A rule repeats in periods of its frequency. Period 0 is the day, week (beginning on
/// `WKST`), month or year that holds the start; period `k` is `k × INTERVAL` of those
/// units later. Because period `k` is plain arithmetic on `k`, a series can jump straight
/// to the period holding any date (``periodIndex(containing:)``) instead of walking there.
///
/// Within a period the BY parts pick days as RFC 5545 3.3.10 says:
/// - `DAILY`: the day itself, kept if `BYMONTH`, `BYMONTHDAY` and `BYDAY` allow it.
/// - `WEEKLY`: the week's days on the `BYDAY` weekdays (the start's weekday without
///   `BYDAY`), kept if `BYMONTH` allows them.
/// - `MONTHLY` (a month `BYMONTH` allows): the `BYMONTHDAY` days, limited by `BYDAY`;
///   without `BYMONTHDAY` the month's `BYDAY` days; without either the start's day.
/// - `YEARLY`: in the `BYMONTH` months (every month when there is a `BYMONTHDAY`, else the
///   start's month), the days as for `MONTHLY`, so that without any BY part it is the
///   start's month and day. With only `BYDAY`, the year's `BYDAY` days.
///
/// Days that come from `BYMONTHDAY` or the start's day and do not exist in the month are
/// dealt with by `SKIP` before `BYDAY` limits them (RFC 7529). A `BYDAY` ordinal counts
/// within the day's month (`MONTHLY`, or `YEARLY` with `BYMONTH`) or year. `BYSETPOS` then
/// picks positions in the period's sorted, distinct days: all of the period's days, also
/// in the first period when the start falls in its middle (the series then drops the
/// days before the start).
struct RecurrencePeriods: Sendable {
    let rule: RecurrenceRule
    /// The series' first date.
    let start: LocalDate
    /// The number of the unit (day, week, month or year, see ``unit(of:rule:)``) of period 0.
    private let firstUnit: Int64

    /// Expansion ends here: the last day RFC 5545 (and RFC 3339) text can write.
    static let lastDate = LocalDate(year: 9999, month: 12, day: 31)

    init(rule: RecurrenceRule, start: LocalDate) {
        self.rule = rule
        self.start = start
        self.firstUnit = Self.unit(of: start, rule: rule)
    }

    // MARK: Period arithmetic

    /// The period holding `date`: negative before the start's, and for a `DAILY` rule with
    /// an `INTERVAL` the period at or before it.
    func periodIndex(containing date: LocalDate) -> Int {
        Int(Self.floorDivide(Self.unit(of: date, rule: rule) - firstUnit, Int64(rule.interval)))
    }

    /// The last period that can hold a date up to ``lastDate``.
    var lastPeriod: Int { periodIndex(containing: Self.lastDate) }

    /// How many empty periods in a row prove that no period will ever hold a date again.
    ///
    /// The Gregorian calendar repeats exactly every 400 years, which are 146,097 days,
    /// 20,871 weeks and 4,800 months: the days a period holds depend only on where its
    /// unit falls in that cycle. With an `INTERVAL` the periods visit those positions with
    /// a cycle at most that long, so after this many empty periods in a row every
    /// position a period can take has been seen empty. A rule that can never match
    /// (`FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30`) thus ends after at most 400 years' worth of
    /// periods instead of running on.
    var emptyPeriodLimit: Int {
        switch rule.frequency {
        case .daily: 146_097
        case .weekly: 20_871
        case .monthly: 4_800
        case .yearly: 400
        }
    }

    /// A date's unit for the rule's frequency: its day number, week number (weeks
    /// beginning on `WKST`), month number (year × 12 + month - 1) or year.
    private static func unit(of date: LocalDate, rule: RecurrenceRule) -> Int64 {
        switch rule.frequency {
        case .daily:
            return date.daysSinceEpoch
        case .weekly:
            // Day 0 (1970-01-01) is a Thursday, ISO weekday 4.
            return Self.floorDivide(date.daysSinceEpoch + 4 - Int64(rule.weekStart), 7)
        case .monthly:
            return Int64(date.year) * 12 + Int64(date.month - 1)
        case .yearly:
            return Int64(date.year)
        }
    }

    // MARK: Dates of a period

    /// The dates period `index` holds, sorted and distinct (before the start's filtering:
    /// the series drops those not after its start).
    func dates(inPeriod index: Int) -> [LocalDate] {
        let unit = firstUnit + Int64(index) * Int64(rule.interval)
        let candidates: [LocalDate]
        switch rule.frequency {
        case .daily:
            candidates = dailyCandidates(LocalDate(daysSinceEpoch: unit))
        case .weekly:
            candidates = weeklyCandidates(firstDay: unit * 7 - 4 + Int64(rule.weekStart))
        case .monthly:
            let year = Self.floorDivide(unit, 12)
            candidates = monthlyCandidates(year: Int(year), month: Int(unit - year * 12) + 1)
        case .yearly:
            candidates = yearlyCandidates(year: Int(unit))
        }
        return pickSetPositions(from: Self.sortedDistinct(candidates))
    }

    private func dailyCandidates(_ day: LocalDate) -> [LocalDate] {
        allowsMonth(day.month) && allowsMonthDay(day) && allowsByDay(day) ? [day] : []
    }

    private func weeklyCandidates(firstDay: Int64) -> [LocalDate] {
        let weekdays = rule.byDay.isEmpty ? [start.isoWeekday] : rule.byDay.map(\.weekday)
        return (0..<7).compactMap { offset in
            let day = LocalDate(daysSinceEpoch: firstDay + Int64(offset))
            return weekdays.contains(day.isoWeekday) && allowsMonth(day.month) ? day : nil
        }
    }

    private func monthlyCandidates(year: Int, month: Int) -> [LocalDate] {
        allowsMonth(month) ? daysPicked(year: year, month: month) : []
    }

    private func yearlyCandidates(year: Int) -> [LocalDate] {
        if rule.byMonth.isEmpty, rule.byMonthDay.isEmpty, !rule.byDay.isEmpty {
            // BYDAY alone: its ordinals count within the whole year.
            return weekdayDates(from: LocalDate(year: year, month: 1, day: 1), through: LocalDate(year: year, month: 12, day: 31))
        }
        let months: [Int]
        if !rule.byMonth.isEmpty {
            months = rule.byMonth
        } else if rule.byMonthDay.isEmpty {
            months = [start.month]
        } else {
            months = Array(1...12)
        }
        return months.flatMap { daysPicked(year: year, month: $0) }
    }

    /// The days a `MONTHLY` or `YEARLY` rule picks in one month: the `BYMONTHDAY` days
    /// that `BYDAY` allows; else the `BYDAY` days of the month; else the start's day of
    /// the month.
    private func daysPicked(year: Int, month: Int) -> [LocalDate] {
        if !rule.byMonthDay.isEmpty {
            return rule.byMonthDay.compactMap { monthDay($0, year: year, month: month) }.filter(allowsByDay)
        }
        if !rule.byDay.isEmpty {
            return weekdayDates(from: LocalDate(year: year, month: month, day: 1), through: LocalDate(year: year, month: month, day: LocalDate.daysIn(year: year, month: month)))
        }
        return monthDay(start.day, year: year, month: month).map { [$0] } ?? []
    }

    /// The `BYDAY` days from `first` through `last` (a month or a year, the scope its
    /// ordinals count in): every such weekday, or with an ordinal the n-th (from the end
    /// when negative) if the scope has it. Unsorted.
    private func weekdayDates(from first: LocalDate, through last: LocalDate) -> [LocalDate] {
        let firstDay = first.daysSinceEpoch, lastDay = last.daysSinceEpoch
        var days: [Int64] = []
        for value in rule.byDay {
            let firstMatch = firstDay + Int64((value.weekday - first.isoWeekday + 7) % 7)
            let lastMatch = lastDay - Int64((last.isoWeekday - value.weekday + 7) % 7)
            switch value.ordinal {
            case nil:
                days += stride(from: firstMatch, through: lastMatch, by: 7)
            case let ordinal? where ordinal > 0:
                let day = firstMatch + Int64(ordinal - 1) * 7
                if day <= lastDay { days.append(day) }
            case let ordinal?:
                let day = lastMatch + Int64(ordinal + 1) * 7
                if day >= firstDay { days.append(day) }
            }
        }
        return days.map { LocalDate(daysSinceEpoch: $0) }
    }

    /// Day `value` of a month (negative: counted from the end, -1 = the last day). A
    /// positive day past the month's end is omitted, or moved to the month's last day
    /// (`SKIP=BACKWARD`) or the next month's first (`SKIP=FORWARD`); a negative one the
    /// month is too short for is omitted.
    private func monthDay(_ value: Int, year: Int, month: Int) -> LocalDate? {
        let length = LocalDate.daysIn(year: year, month: month)
        if value < 0 {
            let day = length + 1 + value
            return day >= 1 ? LocalDate(year: year, month: month, day: day) : nil
        }
        if value <= length { return LocalDate(year: year, month: month, day: value) }
        let lastDay = LocalDate(year: year, month: month, day: length)
        switch rule.skip {
        case .omit: return nil
        case .backward: return lastDay
        case .forward: return lastDay.adding(days: 1)
        }
    }

    // MARK: Stepping over empty days

    /// The next period worth expanding after period `index` came out empty: `index + 1`,
    /// except for a `DAILY` rule with `BYMONTH` or `BYMONTHDAY`, whose walk steps
    /// straight to the next day those allow (the days between would be empty periods),
    /// so that a rare rule (`FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29`) is not walked day by day.
    func periodAfterEmptyPeriod(_ index: Int) -> Int {
        guard rule.frequency == .daily, !rule.byMonth.isEmpty || !rule.byMonthDay.isEmpty else { return index + 1 }
        let day = LocalDate(daysSinceEpoch: firstUnit + Int64(index) * Int64(rule.interval))
        let target = nextDayAllowedByMonthAndMonthDay(after: day).daysSinceEpoch
        // The first period on or after the target day.
        let periods = Self.floorDivide(target - firstUnit + Int64(rule.interval) - 1, Int64(rule.interval))
        return max(index + 1, Int(periods))
    }

    /// The first day after `day` in a month `BYMONTH` allows, on a day `BYMONTHDAY`
    /// allows. It looks at most eight years ahead (29 February can be eight years away);
    /// for a combination that never happens it returns the day it got to, and the walk's
    /// empty-period limit ends the rule.
    private func nextDayAllowedByMonthAndMonthDay(after day: LocalDate) -> LocalDate {
        var (year, month, after) = (day.year, day.month, day.day)
        for _ in 0...(8 * 12) {
            let length = LocalDate.daysIn(year: year, month: month)
            if allowsMonth(month) {
                let days = rule.byMonthDay.isEmpty ? [after + 1] : rule.byMonthDay.map { $0 > 0 ? $0 : length + 1 + $0 }
                if let next = days.filter({ $0 > after && $0 >= 1 && $0 <= length }).min() {
                    return LocalDate(year: year, month: month, day: next)
                }
            }
            (year, month, after) = month == 12 ? (year + 1, 1, 0) : (year, month + 1, 0)
        }
        return LocalDate(year: year, month: month, day: 1)
    }

    // MARK: Limits

    private func allowsMonth(_ month: Int) -> Bool { rule.byMonth.isEmpty || rule.byMonth.contains(month) }

    private func allowsMonthDay(_ date: LocalDate) -> Bool {
        rule.byMonthDay.isEmpty || rule.byMonthDay.contains(date.day) || rule.byMonthDay.contains(date.day - date.daysInMonth - 1)
    }

    private func allowsByDay(_ date: LocalDate) -> Bool {
        rule.byDay.isEmpty || rule.byDay.contains { matches($0, date) }
    }

    /// Whether `date` is the `BYDAY` value's weekday and, with an ordinal, that weekday's
    /// n-th (from the end when negative) in its month or year.
    private func matches(_ value: RecurrenceRule.WeekdayNum, _ date: LocalDate) -> Bool {
        guard date.isoWeekday == value.weekday else { return false }
        guard let ordinal = value.ordinal else { return true }
        let (position, length) = rule.ordinalsCountWithinMonth
            ? (date.day, date.daysInMonth)
            : (date.dayOfYear, LocalDate.isLeap(year: date.year) ? 366 : 365)
        return ordinal == (position - 1) / 7 + 1 || ordinal == -((length - position) / 7 + 1)
    }

    /// `BYSETPOS`: the days at the given positions (1 = the first, -1 = the last) of a
    /// period's sorted days; positions past either end pick nothing.
    private func pickSetPositions(from dates: [LocalDate]) -> [LocalDate] {
        guard !rule.bySetPos.isEmpty else { return dates }
        let indices = Set(rule.bySetPos.map { $0 > 0 ? $0 - 1 : dates.count + $0 }).filter(dates.indices.contains)
        return indices.sorted().map { dates[$0] }
    }

    // MARK: Helpers

    private static func sortedDistinct(_ dates: [LocalDate]) -> [LocalDate] {
        guard dates.count > 1 else { return dates }
        var result: [LocalDate] = []
        for date in dates.sorted() where result.last != date { result.append(date) }
        return result
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}

/// The dates a rule produces after its start, in order, each once, period by period.
///
/// It stops after ``RecurrencePeriods/lastDate`` or after ``RecurrencePeriods/emptyPeriodLimit``
/// empty periods in a row (the rule can then never match again), so it always ends.
/// COUNT, UNTIL and exceptions are the series' business.
struct RecurrenceDateWalk: IteratorProtocol {
    private let periods: RecurrencePeriods
    private let lastPeriod: Int
    private var nextPeriod: Int
    private var pending: [LocalDate] = []
    private var pendingIndex = 0
    /// Dates up to this one are done: the start, then the last date produced. A date
    /// `SKIP=FORWARD` moved into the next period is not produced again by that period.
    private var latest: LocalDate
    private var emptyPeriodsInARow = 0

    /// Walks from period `firstPeriod` (0, or later to jump ahead: it should be one
    /// period before the first one wanted, as that may move a day into the next).
    init(_ periods: RecurrencePeriods, fromPeriod firstPeriod: Int = 0) {
        self.periods = periods
        self.lastPeriod = periods.lastPeriod
        self.nextPeriod = max(0, firstPeriod)
        self.latest = periods.start
    }

    mutating func next() -> LocalDate? {
        while true {
            while pendingIndex < pending.count {
                let date = pending[pendingIndex]
                pendingIndex += 1
                guard date <= RecurrencePeriods.lastDate else { return nil }
                if date > latest {
                    latest = date
                    return date
                }
            }
            guard nextPeriod <= lastPeriod, emptyPeriodsInARow < periods.emptyPeriodLimit else { return nil }
            pending = periods.dates(inPeriod: nextPeriod)
            pendingIndex = 0
            if pending.isEmpty {
                let following = periods.periodAfterEmptyPeriod(nextPeriod)
                emptyPeriodsInARow += following - nextPeriod
                nextPeriod = following
            } else {
                emptyPeriodsInARow = 0
                nextPeriod += 1
            }
        }
    }
}

import Foundation
import Platform

/// A recurrence rule: the subset of RFC 5545's RRULE (section 3.3.10) that reminders use.
///
/// Supported parts:
/// - `FREQ` = `DAILY`, `WEEKLY`, `MONTHLY` or `YEARLY` (required).
/// - `INTERVAL` (1...1000): every n-th day, week, month or year.
/// - `BYDAY`: weekdays, with an ordinal only for `MONTHLY` and `YEARLY` as RFC 5545 says
///   (`-1FR` = the last Friday of the month; of the year for a `YEARLY` rule without
///   `BYMONTH`). A month has at most five of a weekday, so a month-relative ordinal is
///   1...5 or -5...-1; a year-relative one 1...53 or -53...-1. A list may mix the two
///   kinds: `MO,1FR` is every Monday and the first Friday.
/// - `BYMONTHDAY` (1...31, -31...-1, not with `WEEKLY`), `BYMONTH` (1...12).
/// - `BYSETPOS` (1...366, -366...-1), which needs another BY part to pick from, and
///   positions a period can have: ±1 for `DAILY`, up to ±7 for `WEEKLY`, ±31 for `MONTHLY`.
/// - `COUNT` (1...10,000) or `UNTIL` (never both), `WKST`.
/// - `SKIP` (RFC 7529), accepted without `RSCALE`: what to do with the 31st of a
///   30-day month or 29 February of a common year (see ``Skip``).
///
/// Each BY list holds at most 31 values. `BYHOUR`, `BYMINUTE`, `BYSECOND`, `BYWEEKNO`,
/// `BYYEARDAY`, `RSCALE` and the `HOURLY`, `MINUTELY` and `SECONDLY` frequencies are
/// refused with a reason saying they are not supported: every occurrence of a series is
/// at its start's wall-clock time.
///
/// A rule is only a pattern; ``RecurrenceSeries`` anchors it at a start in a zone and
/// expands it.
struct RecurrenceRule: Sendable, Hashable {
    /// How often the rule repeats: the length of one period.
    enum Frequency: String, Sendable, CaseIterable {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
    }

    /// What to do with a day that does not exist in a month (the 31st of a 30-day month,
    /// 29 February of a common year) when `BYMONTHDAY` or the start's day asks for it in a
    /// `MONTHLY` or `YEARLY` rule.
    ///
    /// RFC 5545's own rule is ``omit``: the day is skipped. RFC 7529's `SKIP` offers
    /// ``backward`` (the month's last day) and ``forward`` (the first day of the next
    /// month). A moved day that another value also produces counts once. `DAILY` and
    /// `WEEKLY` rules only ever see days that exist, so `SKIP` changes nothing there, and
    /// negative `BYMONTHDAY` values a month is too short for (-31 in April) are always
    /// omitted: only days past a month's end move.
    enum Skip: String, Sendable, CaseIterable {
        case omit = "OMIT", backward = "BACKWARD", forward = "FORWARD"
    }

    /// A `BYDAY` value: a weekday, optionally with an ordinal (`2MO`, `-1FR`).
    struct WeekdayNum: Sendable, Hashable {
        /// 1 = the first such weekday of the month or year, -1 = the last; `nil` = every one.
        var ordinal: Int?
        /// ISO weekday: 1 = Monday ... 7 = Sunday.
        var weekday: Int
    }

    /// When the rule ends, inclusive.
    enum Until: Sendable, Hashable {
        /// Through the whole of this local date (`UNTIL=20270310`).
        case date(LocalDate)
        /// Through this local date and time in the series' zone (`UNTIL=20270310T090000`).
        case local(LocalDateTime)
        /// Through this instant (`UNTIL=20270310T080000Z`).
        case utc(Date)
    }

    var frequency: Frequency
    var interval: Int = 1
    var byDay: [WeekdayNum] = []
    /// 1...31 and -31...-1 (-1 = the month's last day).
    var byMonthDay: [Int] = []
    /// 1...12.
    var byMonth: [Int] = []
    /// ±1...366: positions in each period's set of days (-1 = the last).
    var bySetPos: [Int] = []
    var count: Int?
    var until: Until?
    /// `WKST`, ISO weekday: the day a week starts on, which matters for `WEEKLY` rules
    /// with an `INTERVAL` above 1 (every other week counts whole weeks from the start's).
    var weekStart: Int = 1
    var skip: Skip = .omit

    /// The largest `INTERVAL`, `COUNT` and BY list accepted.
    static let maximumInterval = 1_000
    static let maximumCount = 10_000
    static let maximumListLength = 31

    /// Two-letter weekday codes, indexed by ISO weekday - 1.
    static let weekdayCodes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
}

// MARK: - Validation

extension RecurrenceRule {
    /// Whether an ordinal in `BYDAY` counts within a month (a `MONTHLY` rule, or a
    /// `YEARLY` one with `BYMONTH`) rather than within the year.
    var ordinalsCountWithinMonth: Bool { frequency == .monthly || (frequency == .yearly && !byMonth.isEmpty) }

    /// Checks every value and combination of parts, so a rule built in code is held to
    /// the same limits as a parsed one. Throws the first problem found, naming its part.
    func validate() throws(RecurrenceError) {
        try validateCounts()
        try validateUntil()
        try validateLists()
        try validateByDay()
        try validateCombinations()
    }

    /// The seconds since 1970 a UTC `UNTIL` may name: the years 1 to 9999.
    private static let untilSeconds = TimeInterval(Instant.days(year: 1, month: 1, day: 1) * 86_400)
        ... TimeInterval(Instant.days(year: 10_000, month: 1, day: 1) * 86_400 - 1)

    /// A rule built in code could hold a date that does not exist or an instant no RRULE
    /// text can write; parsed ones never do.
    private func validateUntil() throws(RecurrenceError) {
        let problem = RecurrenceError("UNTIL: not a date and time in the years 1 to 9999")
        switch until {
        case nil:
            return
        case .date(let date):
            guard (1...9_999).contains(date.year), LocalDate(validYear: date.year, month: date.month, day: date.day) != nil else { throw problem }
        case .local(let local):
            guard (1...9_999).contains(local.date.year), LocalDate(validYear: local.date.year, month: local.date.month, day: local.date.day) != nil else { throw problem }
        case .utc(let instant):
            // Compared as numbers, which (unlike dates) refuse NaN.
            guard Self.untilSeconds.contains(instant.timeIntervalSince1970) else { throw problem }
        }
    }

    private func validateCounts() throws(RecurrenceError) {
        guard (1...Self.maximumInterval).contains(interval) else {
            throw RecurrenceError("INTERVAL: \(interval) is not a whole number from 1 to \(Self.maximumInterval)")
        }
        if let count, !(1...Self.maximumCount).contains(count) {
            throw RecurrenceError("COUNT: \(count) is not a whole number from 1 to \(Self.maximumCount)")
        }
        guard (1...7).contains(weekStart) else {
            throw RecurrenceError("WKST: \(weekStart) is not a weekday (1 = Monday to 7 = Sunday)")
        }
    }

    private func validateLists() throws(RecurrenceError) {
        for (name, length) in [("BYDAY", byDay.count), ("BYMONTHDAY", byMonthDay.count), ("BYMONTH", byMonth.count), ("BYSETPOS", bySetPos.count)]
        where length > Self.maximumListLength {
            throw RecurrenceError("\(name): \(length) values is too many (at most \(Self.maximumListLength))")
        }
        for day in byMonthDay where day == 0 || !(-31...31).contains(day) {
            throw RecurrenceError("BYMONTHDAY: \(day) is not a day of a month (1 to 31 or -31 to -1)")
        }
        for month in byMonth where !(1...12).contains(month) {
            throw RecurrenceError("BYMONTH: \(month) is not a month (1 to 12)")
        }
        for position in bySetPos where position == 0 || !(-366...366).contains(position) {
            throw RecurrenceError("BYSETPOS: \(position) is not a position (1 to 366 or -366 to -1)")
        }
    }

    private func validateByDay() throws(RecurrenceError) {
        for day in byDay {
            guard (1...7).contains(day.weekday) else {
                throw RecurrenceError("BYDAY: \(day.weekday) is not a weekday (1 = Monday to 7 = Sunday)")
            }
            guard let ordinal = day.ordinal else { continue }
            let code = RecurrenceRule.text(of: day)
            guard frequency == .monthly || frequency == .yearly else {
                throw RecurrenceError("BYDAY: \(code) has an ordinal, which only FREQ=MONTHLY or FREQ=YEARLY allows; write \(Self.weekdayCodes[day.weekday - 1]) for every one")
            }
            let limit = ordinalsCountWithinMonth ? 5 : 53
            guard ordinal != 0, (-limit...limit).contains(ordinal) else {
                let scope = ordinalsCountWithinMonth ? "a month" : "a year"
                throw RecurrenceError("BYDAY: \(code) cannot happen, \(scope) has at most \(limit) of a weekday (use 1 to \(limit) or -\(limit) to -1)")
            }
        }
    }

    private func validateCombinations() throws(RecurrenceError) {
        if count != nil, until != nil {
            throw RecurrenceError("COUNT and UNTIL cannot both be given: keep one of them")
        }
        if frequency == .weekly, !byMonthDay.isEmpty {
            throw RecurrenceError("BYMONTHDAY cannot be used with FREQ=WEEKLY; use BYDAY, or FREQ=MONTHLY")
        }
        if !bySetPos.isEmpty, byDay.isEmpty, byMonthDay.isEmpty, byMonth.isEmpty {
            throw RecurrenceError("BYSETPOS needs another BY part to pick from (BYDAY, BYMONTHDAY or BYMONTH)")
        }
        let (days, period) = switch frequency {
        case .daily: (1, "a day")
        case .weekly: (7, "a week")
        case .monthly: (31, "a month")
        case .yearly: (366, "a year")
        }
        for position in bySetPos where abs(position) > days {
            let range = days == 1 ? "1 or -1" : "1 to \(days) or -\(days) to -1"
            throw RecurrenceError("BYSETPOS: \(position) can never pick a day, FREQ=\(frequency.rawValue) picks from \(period) at a time (use \(range))")
        }
    }
}

/// A calendar date without a time zone (`YYYY-MM-DD`, proleptic Gregorian): a birthday,
/// a holiday, a day of a park's schedule. It becomes an instant only together with a
/// local time and a zone (``ZoneClock``).
public struct LocalDate: Sendable, Hashable, Comparable, TextCodable {
    public var year: Int
    public var month: Int
    public var day: Int

    public static let textProblem = "not a date (YYYY-MM-DD)"

    /// Parses `YYYY-MM-DD`; `nil` for anything else or a date that does not exist.
    public init?(_ text: String) {
        guard let components = Formats.date(text), let year = components.year, let month = components.month,
            let day = components.day
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Creates a date (not checked: use ``init(validYear:month:day:)`` for input).
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date, or `nil` when it does not exist (February 30th, month 13).
    public init?(validYear year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= LocalDate.daysIn(year: year, month: month) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The `day` of a month, or the month's last day when it is shorter: the 31st of
    /// April is April 30th, February 29th in 2027 is February 28th.
    public init(clampingYear year: Int, month: Int, day: Int) {
        self.init(year: year, month: month, day: min(max(day, 1), LocalDate.daysIn(year: year, month: month)))
    }

    /// The date `days` after 1970-01-01.
    public init(daysSinceEpoch days: Int64) {
        let (year, month, day) = Instant.civil(fromDays: days)
        self.init(year: Int(year), month: Int(month), day: Int(day))
    }

    /// Days since 1970-01-01 (negative before).
    public var daysSinceEpoch: Int64 { Instant.days(year: Int64(year), month: Int64(month), day: Int64(day)) }

    public var description: String {
        Instant.digits(year, width: 4) + "-" + Instant.digits(month, width: 2) + "-" + Instant.digits(day, width: 2)
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }


    // MARK: Calendar arithmetic

    /// The date `days` later (earlier when negative).
    public func adding(days: Int) -> LocalDate {
        // Steps of up to four weeks forward (a series of weekly dates) stay in this month or
        // land in the next, which has at least 28 days: no trip through day numbers.
        if days >= 0 && days <= 28 {
            let length = daysInMonth
            let next = day + days
            if next <= length { return LocalDate(year: year, month: month, day: next) }
            return month == 12 ? LocalDate(year: year + 1, month: 1, day: next - length) : LocalDate(year: year, month: month + 1, day: next - length)
        }
        return LocalDate(daysSinceEpoch: daysSinceEpoch + Int64(days))
    }

    /// Appends `YYYY-MM-DD` (as ``description``) to JSON or text being written.
    public func writeText(to output: inout [UInt8]) {
        guard (0...9_999).contains(year) else {
            output.append(contentsOf: description.utf8)
            return
        }
        // The ten bytes made on the stack and appended at once (a byte at a time, each
        // append checked the array's capacity and uniqueness).
        let zero = UInt8(ascii: "0"), dash = UInt8(ascii: "-")
        // The last two digits of the month and day, as before for any value one was made with.
        let text = (
            zero &+ UInt8(year / 1_000), zero &+ UInt8(year / 100 % 10), zero &+ UInt8(year / 10 % 10), zero &+ UInt8(year % 10), dash,
            zero &+ UInt8(month / 10 % 10), zero &+ UInt8(month % 10), dash, zero &+ UInt8(day / 10 % 10), zero &+ UInt8(day % 10)
        )
        withUnsafeBytes(of: text) { output.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// The same day `months` calendar months later, clamped to the end of a shorter
    /// month: January 31st plus one month is February 28th (29th in a leap year).
    ///
    /// Clamping loses the anchor, so a series ("every month on the 31st") computes each
    /// occurrence from its first date (`first.adding(months: n)`), never from the
    /// previous one: that gives Jan 31, Feb 28, Mar 31, not Jan 31, Feb 28, Mar 28.
    public func adding(months: Int) -> LocalDate {
        let index = year * 12 + (month - 1) + months
        let newYear = index >= 0 ? index / 12 : (index - 11) / 12
        return LocalDate(clampingYear: newYear, month: index - newYear * 12 + 1, day: day)
    }

    /// The same day `years` later; February 29th becomes February 28th in a common year.
    public func adding(years: Int) -> LocalDate { adding(months: years * 12) }

    /// Whole days from this date to `other` (negative when `other` is earlier).
    public func days(until other: LocalDate) -> Int { Int(other.daysSinceEpoch - daysSinceEpoch) }

    /// Whole calendar months from this date to `other`, towards zero: the largest `n`
    /// with `adding(months: n) <= other` (the smallest with `>=` going back). From
    /// January 31st, February 28th is one month, as ``adding(months:)`` clamps.
    public func months(until other: LocalDate) -> Int {
        var months = (other.year - year) * 12 + (other.month - month)
        if months > 0, adding(months: months) > other { months -= 1 }
        if months < 0, adding(months: months) < other { months += 1 }
        return months
    }

    /// 1 = Monday ... 7 = Sunday (ISO 8601).
    public var isoWeekday: Int {
        // 1970-01-01 was a Thursday (4).
        let offset = (daysSinceEpoch + 3) % 7
        return Int(offset < 0 ? offset + 7 : offset) + 1
    }

    /// Day of the year, 1...366.
    public var dayOfYear: Int { LocalDate(year: year, month: 1, day: 1).days(until: self) + 1 }

    /// The number of days of this date's month.
    public var daysInMonth: Int { LocalDate.daysIn(year: year, month: month) }

    /// Whether `year` has a February 29th.
    public static func isLeap(year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    /// The number of days of a month (1-12) of a year.
    public static func daysIn(year: Int, month: Int) -> Int { Int(Instant.daysInMonth(year: Int64(year), month: Int64(month))) }

    /// The `ordinal`-th `isoWeekday` of a month (1 = first; -1 = last), or `nil` when the
    /// month has no such day (a fifth Monday): "the second Sunday of May",
    /// "the last Friday of November".
    public static func weekday(_ isoWeekday: Int, ordinal: Int, year: Int, month: Int) -> LocalDate? {
        guard (1...7).contains(isoWeekday), ordinal != 0, (1...12).contains(month) else { return nil }
        if ordinal > 0 {
            let first = LocalDate(year: year, month: month, day: 1)
            let day = 1 + (isoWeekday - first.isoWeekday + 7) % 7 + (ordinal - 1) * 7
            return LocalDate(validYear: year, month: month, day: day)
        }
        let lastDay = daysIn(year: year, month: month)
        let last = LocalDate(year: year, month: month, day: lastDay)
        let day = lastDay - (last.isoWeekday - isoWeekday + 7) % 7 + (ordinal + 1) * 7
        return LocalDate(validYear: year, month: month, day: day)
    }
}

/// A wall-clock time of day without a zone, to the second: `09:30`, `23:59:59`.
public struct LocalTime: Sendable, Hashable, Comparable, TextCodable {
    /// Seconds after midnight, 0..<86,400.
    public let secondOfDay: Int

    /// The time `secondOfDay` seconds after midnight, or `nil` outside a day.
    public init?(secondOfDay: Int) {
        guard (0..<86_400).contains(secondOfDay) else { return nil }
        self.secondOfDay = secondOfDay
    }

    /// `hour:minute:second`, or `nil` when out of range.
    public init?(hour: Int, minute: Int, second: Int = 0) {
        guard (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) else { return nil }
        self.secondOfDay = hour * 3_600 + minute * 60 + second
    }

    public static let textProblem = "not a time (HH:MM)"

    /// Parses `HH:MM` or `HH:MM:SS`.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        func number(_ at: Int) -> Int? {
            guard bytes[at] >= 48, bytes[at] <= 57, bytes[at + 1] >= 48, bytes[at + 1] <= 57 else { return nil }
            return Int(bytes[at] - 48) * 10 + Int(bytes[at + 1] - 48)
        }
        guard bytes.count == 5 || bytes.count == 8, bytes[2] == UInt8(ascii: ":"), let hour = number(0), let minute = number(3) else { return nil }
        var second = 0
        if bytes.count == 8 {
            guard bytes[5] == UInt8(ascii: ":"), let parsed = number(6) else { return nil }
            second = parsed
        }
        self.init(hour: hour, minute: minute, second: second)
    }

    /// Midnight.
    public static let midnight = LocalTime(secondOfDay: 0)!

    public var hour: Int { secondOfDay / 3_600 }
    public var minute: Int { secondOfDay / 60 % 60 }
    public var second: Int { secondOfDay % 60 }
    /// Minutes after midnight (seconds dropped).
    public var minuteOfDay: Int { secondOfDay / 60 }

    /// `HH:MM`, or `HH:MM:SS` when the seconds are not zero.
    public var description: String {
        let clock = Instant.digits(hour, width: 2) + ":" + Instant.digits(minute, width: 2)
        return second == 0 ? clock : clock + ":" + Instant.digits(second, width: 2)
    }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool { lhs.secondOfDay < rhs.secondOfDay }

}

/// A value that JSON carries as its text (`"2026-07-01"`, `"09:30"`): encoded as its
/// `description`, decoded with its failable text initializer.
public protocol TextCodable: Codable, CustomStringConvertible {
    init?(_ text: String)
    /// What a decoding error says about text that is not such a value.
    static var textProblem: String { get }
}

extension TextCodable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: Self.textProblem))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

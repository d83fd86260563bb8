import Platform

/// A built-in rule that makes a date "beautiful".
///
/// Every rule looks at the date as Russians write it, `DD.MM.YYYY` (eight digits, the
/// year zero-padded to four), or at the short form `DD.MM.YY` (`YY` = the year's last two
/// digits, `year % 100`). Dates outside the years 0000-9999 have no four-digit form and
/// match nothing.
///
/// | Pattern | Rule | Examples |
/// |---|---|---|
/// | `palindrome_ddmmyyyy` | `DDMMYYYY` reads the same backwards | 22.02.2022, 02.02.2020, 12.02.2021, 29.02.2092 |
/// | `palindrome_yyyymmdd` | `YYYYMMDD` reads the same backwards | 2021-12-02 (20211202), 2030-03-02, 2011-11-02 |
/// | `day_equals_month` | day == month | 11.11.2023, 02.02.2022, 07.07.2007 |
/// | `day_equals_year_suffix` | day == `YY` | 25.05.2025, 22.02.2022, 07.11.2007 |
/// | `repeating_pairs` | day == `YY`, and the month repeats the day or mirrors the century | 12.12.2012, 22.02.2022, 01.01.2001 |
/// | `single_digit` | all non-zero digits of `DDMMYYYY` are one digit | 22.02.2022, 20.02.2020, 02.02.2002, 11.11.1111 |
/// | `ascending` | day, month, `YY` are consecutive ascending numbers | 01.02.2003, 03.04.2005, 10.11.2012 |
/// | `descending` | day, month, `YY` are consecutive descending numbers | 03.02.2001, 12.11.2010, 13.12.2011 |
/// | `mirrored` | the short form `DDMMYY` reads the same backwards | 21.11.2012, 22.11.2022, 02.11.2020 |
/// | `doubled_year` | `DDMM` == `YYYY`: the year written twice | 20.12.2012 (2012·2012), 20.01.2001, 19.05.1905 |
enum BeautifulPattern: String, CaseIterable, Sendable, Codable {
    /// The eight digits `DDMMYYYY` read the same backwards: 22.02.2022 (22022022),
    /// 02.02.2020 (02022020), 12.02.2021 (12022021).
    case palindromeDDMMYYYY = "palindrome_ddmmyyyy"
    /// The eight digits `YYYYMMDD` (ISO order) read the same backwards: 2021-12-02
    /// (20211202), 2030-03-02 (20300302). Not the same as ``palindromeDDMMYYYY``:
    /// 02.02.2020 is both, 12.02.2021 only the Russian one, 2021-12-02 only this one.
    case palindromeYYYYMMDD = "palindrome_yyyymmdd"
    /// The day equals the month: 11.11.2023, 02.02.2022 (twelve dates a year).
    case dayEqualsMonth = "day_equals_month"
    /// The day equals the year's last two digits (`year % 100`): 25.05.2025,
    /// 22.02.2022. Years ending in `00` have none (there is no day 0).
    case dayEqualsYearSuffix = "day_equals_year_suffix"
    /// The date's pairs `DD·MM·CC·YY` repeat: the day's pair comes back as the year's
    /// last two digits (`YY`), and the month either repeats it too (12·12·20·12:
    /// 12.12.2012, 01.01.2001, 10.10.2010) or mirrors the century (22·02·20·22:
    /// 22.02.2022, 25.02.2025), the two examples. Twelve dates a century, and in
    /// the 2000s also the 28 `DD.02.20DD`.
    ///
    /// Looser readings take a date every year ("the day's pair occurs three times in
    /// `DDMMYYYY`" takes 11.11 of every year and 19.01-19.12 of 1919).
    case repeatingPairs = "repeating_pairs"
    /// Every digit of `DDMMYYYY` other than zero is the same digit: 22.02.2022,
    /// 20.02.2020, 02.02.2002, 11.11.1111, 10.01.1100. Zeros are allowed because almost
    /// no date is a single repeated digit (11.11.1111 is the only one in 0000-9999);
    /// in 1900-2100 this gives the twelve "twos and zeros" dates of 2000, 2002, 2020
    /// and 2022.
    case singleDigit = "single_digit"
    /// Day, month and `YY` are three consecutive ascending numbers (month = day + 1,
    /// `YY` = day + 2): 01.02.2003, 03.04.2005, 10.11.2012, 11.12.2013 (eleven a
    /// century). Digit runs such as 12.34.56 cannot be dates, so the run is over the
    /// three numbers.
    case ascending = "ascending"
    /// Day, month and `YY` are three consecutive descending numbers (month = day - 1,
    /// `YY` = day - 2): 02.01.2000, 03.02.2001, 12.11.2010, 13.12.2011 (twelve a century).
    case descending = "descending"
    /// The short form `DDMMYY` reads the same backwards (the month is then 11 and `YY`
    /// is the day mirrored): 21.11.2012, 22.11.2022, 02.11.2020, 10.11.2001, 30.11.2003
    /// (thirty a century).
    case mirrored = "mirrored"
    /// The day and month written together are the year (`DDMM` == `YYYY`), so the date
    /// reads as the year twice: 20.12.2012 (2012 2012), 20.01.2001, 19.05.1905. Twelve a
    /// century (19.01.1901-19.12.1912, 20.01.2001-20.12.2012), none in the years that end
    /// in 13-99.
    case doubledYear = "doubled_year"

    /// The patterns ``BeautifulDates/find(from:to:patterns:custom:limit:)`` uses when the
    /// caller names none: all of them.
    static let defaults: [BeautifulPattern] = allCases

    /// Whether a written date follows this pattern.
    func matches(_ date: WrittenDate) -> Bool { BeautifulPattern.matching(date, among: bit) != 0 }

    /// This pattern's bit in a set of patterns: bit `i` is `allCases[i]`.
    var bit: UInt32 {
        switch self {
        case .palindromeDDMMYYYY: 1 << 0
        case .palindromeYYYYMMDD: 1 << 1
        case .dayEqualsMonth: 1 << 2
        case .dayEqualsYearSuffix: 1 << 3
        case .repeatingPairs: 1 << 4
        case .singleDigit: 1 << 5
        case .ascending: 1 << 6
        case .descending: 1 << 7
        case .mirrored: 1 << 8
        case .doubledYear: 1 << 9
        }
    }

    /// The patterns of `selected` (a set of ``bit``s) that a written date follows, as
    /// bits: every rule in one pass over digits read once, as the search runs it for each
    /// day.
    static func matching(_ date: WrittenDate, among selected: UInt32) -> UInt32 {
        let packed = date.digits
        // DDMMYYYY = d0 d1 m0 m1 y0 y1 y2 y3.
        let d0 = packed >> 28, d1 = packed >> 24 & 0xF, m0 = packed >> 20 & 0xF, m1 = packed >> 16 & 0xF
        let y0 = packed >> 12 & 0xF, y1 = packed >> 8 & 0xF, y2 = packed >> 4 & 0xF, y3 = packed & 0xF
        let day = date.day, month = date.month, suffix = date.year % 100
        func only(_ rule: Bool, _ pattern: BeautifulPattern) -> UInt32 { rule ? pattern.bit : 0 }
        var result = only(day == month, .dayEqualsMonth)
            | only(day == suffix, .dayEqualsYearSuffix)
            | only(day == suffix && (month == day || (m0 == y1 && m1 == y0)), .repeatingPairs)
            | only(month == day + 1 && suffix == day + 2, .ascending)
            | only(month == day - 1 && suffix == day - 2, .descending)
            // DDMMYY = d0 d1 m0 m1 y2 y3.
            | only(d0 == y3 && d1 == y2 && m0 == m1, .mirrored)
            | only(day * 100 + month == date.year, .doubledYear)
        result |= only(d0 == y3 && d1 == y2 && m0 == y1 && m1 == y0, .palindromeDDMMYYYY)
            // YYYYMMDD = y0 y1 y2 y3 m0 m1 d0 d1.
            | only(y0 == d1 && y1 == d0 && y2 == m1 && y3 == m0, .palindromeYYYYMMDD)
        // The day is at least 1, so d0 or d1 is the non-zero digit all others must be.
        let digit = d0 != 0 ? d0 : d1
        func zeroOrDigit(_ value: UInt32) -> Bool { value == 0 || value == digit }
        result |= only(zeroOrDigit(d1) && zeroOrDigit(m0) && zeroOrDigit(m1) && zeroOrDigit(y0) && zeroOrDigit(y1)
                       && zeroOrDigit(y2) && zeroOrDigit(y3), .singleDigit)
        return result & selected
    }
}

/// A date as written `DD.MM.YYYY`: its numbers and its eight decimal digits packed four
/// bits each (binary-coded decimal, the first day digit in the highest nibble), so rules
/// read digits without building a string.
struct WrittenDate: Sendable, Hashable {
    let day: Int
    let month: Int
    let year: Int
    /// `DDMMYYYY`, one digit per nibble: 22.02.2022 is `0x2202_2022`.
    let digits: UInt32

    /// The written form of a date, or `nil` when its year has no four-digit form
    /// (outside 0000-9999).
    init?(_ date: LocalDate) {
        guard (0...9_999).contains(date.year), (1...12).contains(date.month), (1...31).contains(date.day) else { return nil }
        self.init(day: date.day, month: date.month, year: date.year, yearDigits: WrittenDate.bcd(date.year))
    }

    /// A date whose year's digits are already packed (the search packs each year once).
    init(day: Int, month: Int, year: Int, yearDigits: UInt32) {
        self.day = day
        self.month = month
        self.year = year
        digits = WrittenDate.bcd(day) << 24 | WrittenDate.bcd(month) << 16 | yearDigits
    }

    /// The decimal digits of 0...9999, four bits each.
    static func bcd(_ value: Int) -> UInt32 {
        var packed: UInt32 = 0, rest = value, shift: UInt32 = 0
        while rest > 0, shift < 16 {
            packed |= UInt32(rest % 10) << shift
            rest /= 10
            shift += 4
        }
        return packed
    }
}

/// The search for beautiful dates.
enum BeautifulDates {
    /// The longest span ``find(from:to:patterns:custom:limit:)`` searches: 200 years.
    static let maximumSpanYears = 200

    /// The dates in `from...to` that match any of `patterns` or `custom`, in date order,
    /// each with the names of what it matches: first the built-in patterns' raw values in
    /// the order of ``BeautifulPattern/allCases``, then the names of the custom patterns
    /// in the order given (a name given twice is listed once).
    ///
    /// - The search covers at most ``maximumSpanYears`` years: `to` is cut to
    ///   `from.adding(years: 200)` (1900-01-01...2100-01-01 is the longest span from
    ///   1900-01-01). `to` before `from` finds nothing.
    /// - It stops after `limit` dates (none when `limit` is not positive).
    /// - Dates outside the years 0000-9999 match nothing.
    ///
    /// The search walks the days once, counting day, month and year by hand and packing
    /// a year's digits once per year; a day that matches nothing allocates nothing.
    static func find(
        from: LocalDate, to: LocalDate, patterns: [BeautifulPattern] = BeautifulPattern.defaults,
        custom: [(name: String, pattern: CustomDatePattern)] = [], limit: Int = 1000
    ) -> [(date: LocalDate, patterns: [String])] {
        guard limit > 0, !patterns.isEmpty || !custom.isEmpty else { return [] }
        // Normalize (an unchecked date such as February 30th becomes March 1st or 2nd) and
        // keep to the written years and the span.
        let lowest = LocalDate(year: 0, month: 1, day: 1), highest = LocalDate(year: 9_999, month: 12, day: 31)
        let start = max(LocalDate(daysSinceEpoch: from.daysSinceEpoch), lowest)
        let end = min(LocalDate(daysSinceEpoch: to.daysSinceEpoch), start.adding(years: maximumSpanYears), highest)
        guard start <= end else { return [] }

        let all = BeautifulPattern.allCases
        let selected = patterns.reduce(UInt32(0)) { $0 | $1.bit }
        var results: [(date: LocalDate, patterns: [String])] = []
        var year = start.year, month = start.month, day = start.day
        var yearDigits = WrittenDate.bcd(year)
        var monthLength = LocalDate.daysIn(year: year, month: month)
        for _ in 0...start.days(until: end) {
            let written = WrittenDate(day: day, month: month, year: year, yearDigits: yearDigits)
            let matched = selected == 0 ? 0 : BeautifulPattern.matching(written, among: selected)
            var customMatched = false
            for entry in custom where entry.pattern.matches(written) {
                customMatched = true
                break
            }
            if matched != 0 || customMatched {
                var names: [String] = []
                for pattern in all where matched & pattern.bit != 0 {
                    names.append(pattern.rawValue)
                }
                for entry in custom where !names.contains(entry.name) && entry.pattern.matches(written) {
                    names.append(entry.name)
                }
                results.append((LocalDate(year: year, month: month, day: day), names))
                if results.count >= limit { break }
            }
            // The next day.
            day += 1
            if day > monthLength {
                day = 1
                month += 1
                if month > 12 {
                    month = 1
                    year += 1
                    yearDigits = WrittenDate.bcd(year)
                }
                monthLength = LocalDate.daysIn(year: year, month: month)
            }
        }
        return results
    }

    /// The built-in patterns a date matches, in the order of ``BeautifulPattern/allCases``
    /// (none for a date that does not exist or lies outside the years 0000-9999).
    static func patterns(of date: LocalDate) -> [BeautifulPattern] {
        guard LocalDate(validYear: date.year, month: date.month, day: date.day) != nil, let written = WrittenDate(date) else { return [] }
        return BeautifulPattern.allCases.filter { $0.matches(written) }
    }
}

import Platform

/// The date of Easter, and the Julian calendar the Orthodox Church keeps.
///
/// Both computations are pure integer arithmetic; they are exact for the years 1583-4099
/// (the Gregorian calendar's first full year to the end of the range the algorithms are
/// published for) and give some Sunday in spring for any other year.
enum Computus {
    /// Western (Catholic and Protestant) Easter Sunday in the Gregorian calendar, by the
    /// anonymous Gregorian algorithm (Meeus/Jones/Butcher): 2024-03-31, 2025-04-20,
    /// 2026-04-05.
    static func westernEaster(year: Int) -> LocalDate {
        let a = floorMod(year, 19)
        let b = floorDivide(year, 100), c = floorMod(year, 100)
        let d = floorDivide(b, 4), e = floorMod(b, 4)
        let f = floorDivide(b + 8, 25)
        let g = floorDivide(b - f + 1, 3)
        // h: days from the spring equinox (March 21st) to the paschal full moon.
        let h = floorMod(19 * a + b - d - g + 15, 30)
        let i = c / 4, k = c % 4
        // l: days from the full moon to the following Sunday.
        let l = floorMod(32 + 2 * e + 2 * i - h - k, 7)
        let m = (a + 11 * h + 22 * l) / 451
        let monthAndDay = h + l - 7 * m + 114
        return LocalDate(year: year, month: monthAndDay / 31, day: monthAndDay % 31 + 1)
    }

    /// Orthodox Easter Sunday as a Gregorian date: Easter by the Julian computus (Meeus's
    /// Julian algorithm) gives a date of the Julian calendar, converted exactly through
    /// day numbers (``gregorian(julianYear:month:day:)``), so the 13-day difference of
    /// 1900-2099 becomes 14 days from March 2100 on and was 10 days before 1700:
    /// 2024-05-05, 2025-04-20, 2026-04-12.
    static func orthodoxEaster(year: Int) -> LocalDate {
        let a = floorMod(year, 4), b = floorMod(year, 7), c = floorMod(year, 19)
        let d = (19 * c + 15) % 30
        let e = (2 * a + 4 * b - d + 34) % 7
        let monthAndDay = d + e + 114
        return gregorian(julianYear: year, month: monthAndDay / 31, day: monthAndDay % 31 + 1)
    }

    /// The Gregorian date of a Julian calendar date: Julian 2025-01-06 (Orthodox
    /// Epiphany) is 2025-01-19; Julian 1582-10-05 is 1582-10-15, the day the Gregorian
    /// calendar began.
    ///
    /// Counts the Julian date's days since 1970-01-01 (Gregorian) the way
    /// ``Instant/days(year:month:day:)`` counts Gregorian ones (years starting in March,
    /// so a leap day ends its year), with every fourth year leap and no century rule.
    static func gregorian(julianYear year: Int, month: Int, day: Int) -> LocalDate {
        let shiftedYear = month <= 2 ? year - 1 : year
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        // 719,470: Julian and Gregorian agree from 0200-03-01 to 0300-02-28, and the
        // Gregorian count of 0200-03-01 is 365 * 200 + 50 - 2 + 0 - 719,468.
        let days = 365 * shiftedYear + floorDivide(shiftedYear, 4) + dayOfYear - 719_470
        return LocalDate(daysSinceEpoch: Int64(days))
    }

    private static func floorDivide(_ value: Int, _ divisor: Int) -> Int {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private static func floorMod(_ value: Int, _ divisor: Int) -> Int {
        let remainder = value % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}

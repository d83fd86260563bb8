import Foundation

/// RFC 3339 instants in UTC with milliseconds, as the contract writes them:
/// `2026-11-22T10:00:00.000Z`.
///
/// Instants are formatted and parsed on every write (bookings, events, idempotency rows),
/// so both are plain arithmetic on the civil calendar (Howard Hinnant's `days_from_civil`
/// and its inverse) over fixed-width digits, without `String(format:)`, `tm` or
/// Foundation's format styles.
public enum Instant {
    /// Milliseconds since 1970, rounded down: how instants are stored and compared.
    public static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000).rounded(.down)) }

    /// The date of milliseconds since 1970.
    public static func date(milliseconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1_000) }

    /// Formats a date.
    public static func format(_ date: Date) -> String {
        // Whole microseconds first (a parsed instant like 1969-12-31T23:59:59.123Z is not
        // exact in binary and would floor to .122), then down to the millisecond.
        // Dates beyond the years 0000-9999 cannot be written in four digits; clamp.
        // The bounds compared as integers: 253,402,300,799,999,999 as a Double rounds up into
        // the year 10000, which four digits would write as 0000.
        let exact = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let last: Int64 = 253_402_300_799_999_999, first: Int64 = -62_167_219_200_000_000
        let microseconds = exact >= Double(last) ? last : exact <= Double(first) ? first : min(last, Int64(exact))
        return format(epochMilliseconds: floorDivide(microseconds, 1000).0)
    }

    /// Formats milliseconds since 1970.
    public static func format(epochMilliseconds: Int64) -> String {
        let (seconds, millis) = floorDivide(epochMilliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        let hour = secondOfDay / 3600, minute = secondOfDay % 3600 / 60, second = secondOfDay % 60
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int64, at offset: Int, digits: Int) {
                var rest = value
                for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                    buffer[position] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                    rest /= 10
                }
            }
            put(year, at: 0, digits: 4)
            buffer[4] = UInt8(ascii: "-")
            put(month, at: 5, digits: 2)
            buffer[7] = UInt8(ascii: "-")
            put(day, at: 8, digits: 2)
            buffer[10] = UInt8(ascii: "T")
            put(hour, at: 11, digits: 2)
            buffer[13] = UInt8(ascii: ":")
            put(minute, at: 14, digits: 2)
            buffer[16] = UInt8(ascii: ":")
            put(second, at: 17, digits: 2)
            buffer[19] = UInt8(ascii: ".")
            put(millis, at: 20, digits: 3)
            buffer[23] = UInt8(ascii: "Z")
            return 24
        }
    }

    /// Zero-padded decimal digits of a non-negative number (`digits(7, width: 2)` is `07`).
    public static func digits(_ value: Int, width: Int) -> String {
        let value = max(0, value)
        var count = 1, rest = value / 10
        while rest > 0 { count += 1; rest /= 10 }
        let length = max(width, count)
        return String(unsafeUninitializedCapacity: length) { buffer in
            var rest = value
            for position in stride(from: length - 1, through: 0, by: -1) {
                buffer[position] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
            }
            return length
        }
    }

    /// Parses an RFC 3339 instant: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of up to
    /// nine digits, then `Z` or an offset `±HH:MM`. Anything else (no offset, an
    /// impossible date, a leap second) is `nil`.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count >= 20 else { return nil }
            func digits(_ offset: Int, _ count: Int) -> Int64? {
                guard offset + count <= bytes.count else { return nil }
                var value: Int64 = 0
                for index in offset..<(offset + count) {
                    let byte = bytes[index]
                    guard byte >= 48, byte <= 57 else { return nil }
                    value = value * 10 + Int64(byte - 48)
                }
                return value
            }
            guard let year = digits(0, 4), bytes[4] == UInt8(ascii: "-"), let month = digits(5, 2), bytes[7] == UInt8(ascii: "-"),
                let day = digits(8, 2), bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
                let hour = digits(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = digits(14, 2),
                bytes[16] == UInt8(ascii: ":"), let second = digits(17, 2),
                (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
                hour < 24, minute < 60, second < 60
            else { return nil }
            var index = 19
            var nanoseconds: Int64 = 0
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                var scale: Int64 = 100_000_000
                let fractionStart = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                    guard index - fractionStart < 9 else { return nil }
                    nanoseconds += Int64(bytes[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
                guard index > fractionStart else { return nil }
            }
            guard index < bytes.count else { return nil }
            var offsetSeconds: Int64 = 0
            switch bytes[index] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                index += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard let offsetHours = digits(index + 1, 2), index + 3 < bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                    let offsetMinutes = digits(index + 4, 2), offsetHours < 24, offsetMinutes < 60
                else { return nil }
                offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
                index += 6
            default:
                return nil
            }
            guard index == bytes.count else { return nil }
            let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
            return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
        }
    }

    /// Days from 1970-01-01 to a civil date (proleptic Gregorian).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivide(shiftedYear, 400).quotient
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day number counted from 1970-01-01.
    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The number of days of a month (1-12) of a year.
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value / divisor, remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}

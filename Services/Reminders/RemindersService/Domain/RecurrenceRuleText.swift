import Foundation
import Platform

// RRULE text: parsing (`RecurrenceRule.parse`) and the canonical form (`rule.text`).

extension RecurrenceRule {
    /// Parses RRULE text such as `FREQ=MONTHLY;INTERVAL=2;BYDAY=-1FR;COUNT=5`, with or
    /// without an `RRULE:` prefix.
    ///
    /// Part names and values are case-insensitive, parts may come in any order, each at
    /// most once, and `FREQ` is required. Empty parts (`;;`, a trailing `;`) are ignored
    /// and repeated values in a list count once. The rule is then checked with
    /// ``validate()``. Every problem is a ``RecurrenceError`` naming the part; nothing
    /// in the input can make this trap.
    static func parse(_ text: String) throws(RecurrenceError) -> RecurrenceRule {
        let parts = try splitParts(of: text)
        for (name, _) in parts { try checkSupported(name) }
        guard let frequencyText = parts.first(where: { $0.name == "FREQ" })?.value else {
            throw RecurrenceError("FREQ is missing: say how often the rule repeats (FREQ=DAILY, WEEKLY, MONTHLY or YEARLY)")
        }
        var rule = RecurrenceRule(frequency: try parseFrequency(frequencyText))
        for (name, value) in parts {
            try rule.apply(name: name, value: value)
        }
        try rule.validate()
        return rule
    }

    /// The canonical text: `FREQ`, then `INTERVAL`, `BYMONTH`, `BYMONTHDAY`, `BYDAY`,
    /// `BYSETPOS`, `WKST`, `SKIP`, `COUNT`, `UNTIL`, leaving out parts at their default
    /// (`INTERVAL=1`, `WKST=MO`, `SKIP=OMIT`). `parse(rule.text) == rule` for any valid
    /// rule (a UTC `UNTIL` to the whole second).
    var text: String {
        var parts = ["FREQ=\(frequency.rawValue)"]
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        if !byMonth.isEmpty { parts.append("BYMONTH=" + byMonth.map(String.init).joined(separator: ",")) }
        if !byMonthDay.isEmpty { parts.append("BYMONTHDAY=" + byMonthDay.map(String.init).joined(separator: ",")) }
        if !byDay.isEmpty { parts.append("BYDAY=" + byDay.map(Self.text(of:)).joined(separator: ",")) }
        if !bySetPos.isEmpty { parts.append("BYSETPOS=" + bySetPos.map(String.init).joined(separator: ",")) }
        if weekStart != 1 { parts.append("WKST=" + Self.weekdayCode(weekStart)) }
        if skip != .omit { parts.append("SKIP=\(skip.rawValue)") }
        if let count { parts.append("COUNT=\(count)") }
        if let until { parts.append("UNTIL=" + Self.text(of: until)) }
        return parts.joined(separator: ";")
    }
}

// MARK: - In an iCalendar file

extension RecurrenceRule {
    /// The rule as an iCalendar file writes it beside a `DTSTART` of this kind: `UNTIL` of
    /// `DTSTART`'s value type (RFC 5545, 3.3.10: a date for an all-day start, UTC for one
    /// in a zone, local for a floating one; the same moment as far as the kind can say),
    /// and `SKIP` after `RSCALE=GREGORIAN` (RFC 7529 defines it only with `RSCALE`).
    /// Reminders reads both forms back.
    func icalendarText(allDay: Bool, zone: String?) -> String {
        var rule = self
        let clock = zone.flatMap(ZoneClock.init(identifier:))
        switch until {
        case nil: break
        case .date(let date)?:
            guard !allDay else { break }
            if let clock {
                // Through the whole of that local day: the last second before the next one.
                if let next = clock.instant(date.adding(days: 1), .midnight) { rule.until = .utc(next.addingTimeInterval(-1)) }
            } else {
                rule.until = .local(LocalDateTime(date: date, time: LocalTime(secondOfDay: 86_399)!))
            }
        case .local(let local)?:
            if allDay {
                rule.until = .date(local.date)
            } else if let clock, let instant = clock.instant(local.date, local.time) {
                rule.until = .utc(instant)
            }
        case .utc(let instant)?:
            if allDay {
                rule.until = .date((clock ?? .utc).localDate(of: instant))
            } else if clock == nil {
                rule.until = .local(ZoneClock.utc.local(instant))
            }
        }
        return skip == .omit ? rule.text : "RSCALE=GREGORIAN;" + rule.text
    }
}

// MARK: - Splitting and part names

extension RecurrenceRule {
    /// Parts this module knows but does not expand, with why.
    private static let unsupportedParts: [String: String] = [
        "BYHOUR": "BYHOUR is not supported: every occurrence is at the start's time of day",
        "BYMINUTE": "BYMINUTE is not supported: every occurrence is at the start's time of day",
        "BYSECOND": "BYSECOND is not supported: every occurrence is at the start's time of day",
        "BYWEEKNO": "BYWEEKNO is not supported; use BYMONTH, BYMONTHDAY or BYDAY",
        "BYYEARDAY": "BYYEARDAY is not supported; use BYMONTH with BYMONTHDAY",
    ]

    private static let supportedParts: Set<String> = ["FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY", "BYMONTHDAY", "BYMONTH", "BYSETPOS", "WKST", "SKIP", "RSCALE"]

    /// `NAME=VALUE` pairs in order, names upper-cased, values trimmed and upper-cased.
    private static func splitParts(of text: String) throws(RecurrenceError) -> [(name: String, value: String)] {
        var body = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        if body.prefix(6).uppercased() == "RRULE:" { body = body.dropFirst("RRULE:".count) }
        var parts: [(name: String, value: String)] = []
        var seen: Set<String> = []
        for piece in body.split(separator: ";") where !piece.allSatisfy(\.isWhitespace) {
            guard let equals = piece.firstIndex(of: "=") else {
                throw RecurrenceError("\"\(RecurrenceError.quote(piece))\" is not a part of a rule (NAME=VALUE, such as FREQ=WEEKLY)")
            }
            let name = piece[..<equals].trimmingCharacters(in: .whitespaces).uppercased()
            let value = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces).uppercased()
            guard seen.insert(name).inserted else {
                throw RecurrenceError("\(RecurrenceError.quote(name)) is given more than once: give each part once")
            }
            guard !value.isEmpty else { throw RecurrenceError("\(RecurrenceError.quote(name)) has no value") }
            parts.append((name, value))
        }
        guard !parts.isEmpty else {
            throw RecurrenceError("The rule is empty: give at least FREQ (DAILY, WEEKLY, MONTHLY or YEARLY)")
        }
        return parts
    }

    private static func checkSupported(_ name: String) throws(RecurrenceError) {
        if let reason = unsupportedParts[name] { throw RecurrenceError(reason) }
        guard supportedParts.contains(name) else {
            throw RecurrenceError("\(RecurrenceError.quote(name)) is not a supported rule part (FREQ, INTERVAL, COUNT, UNTIL, BYDAY, BYMONTHDAY, BYMONTH, BYSETPOS, WKST or SKIP)")
        }
    }

    /// Sets the part `name` (already known to be supported) from its text.
    private mutating func apply(name: String, value: String) throws(RecurrenceError) {
        switch name {
        case "INTERVAL": interval = try Self.parseInteger(value, part: name, meaning: "a whole number from 1 to \(Self.maximumInterval)")
        case "COUNT": count = try Self.parseInteger(value, part: name, meaning: "a whole number from 1 to \(Self.maximumCount)")
        case "UNTIL": until = try Self.parseUntil(value)
        case "BYDAY": byDay = try Self.parseList(value, part: name, item: Self.parseWeekdayNum)
        case "BYMONTHDAY": byMonthDay = try Self.parseIntegerList(value, part: name, meaning: "a day of a month (1 to 31 or -31 to -1)")
        case "BYMONTH": byMonth = try Self.parseIntegerList(value, part: name, meaning: "a month (1 to 12)")
        case "BYSETPOS": bySetPos = try Self.parseIntegerList(value, part: name, meaning: "a position (1 to 366 or -366 to -1)")
        case "WKST": weekStart = try Self.parseWeekday(value, part: name)
        case "RSCALE":
            // RFC 7529: rules are counted in the Gregorian calendar, the one RSCALE this reads.
            guard value == "GREGORIAN" else {
                throw RecurrenceError("RSCALE=\(RecurrenceError.quote(value)) is not supported: rules are counted in the Gregorian calendar (RSCALE=GREGORIAN)")
            }
        case "SKIP":
            guard let parsed = Skip(rawValue: value) else {
                throw RecurrenceError("SKIP: \(RecurrenceError.quote(value)) is not OMIT, BACKWARD or FORWARD")
            }
            skip = parsed
        default: break  // FREQ, read first
        }
    }
}

// MARK: - Values

extension RecurrenceRule {
    private static func parseFrequency(_ value: String) throws(RecurrenceError) -> Frequency {
        if let frequency = Frequency(rawValue: value) { return frequency }
        if ["HOURLY", "MINUTELY", "SECONDLY"].contains(value) {
            throw RecurrenceError("FREQ: \(value) is not supported; use DAILY, WEEKLY, MONTHLY or YEARLY")
        }
        throw RecurrenceError("FREQ: \(RecurrenceError.quote(value)) is not a frequency (DAILY, WEEKLY, MONTHLY or YEARLY)")
    }

    /// An optionally signed decimal number of at most six digits (anything longer is out
    /// of every range here, and this keeps `Int` from overflowing).
    private static func integer(_ text: some StringProtocol) -> Int? {
        var digits = Substring(text)
        var sign = 1
        if let first = digits.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            digits = digits.dropFirst()
        }
        guard (1...6).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else { return nil }
        return sign * value
    }

    private static func parseInteger(_ text: some StringProtocol, part: String, meaning: String) throws(RecurrenceError) -> Int {
        guard let value = integer(text) else {
            throw RecurrenceError("\(part): \(RecurrenceError.quote(text)) is not \(meaning)")
        }
        return value
    }

    private static func parseIntegerList(_ text: String, part: String, meaning: String) throws(RecurrenceError) -> [Int] {
        try parseList(text, part: part) { (item: Substring) throws(RecurrenceError) -> Int in
            try parseInteger(item, part: part, meaning: meaning)
        }
    }

    /// A comma-separated list, each item parsed by `item`, repeated values dropped (the
    /// first kept), at most ``maximumListLength`` values.
    private static func parseList<Value: Hashable>(
        _ text: String, part: String, item: (Substring) throws(RecurrenceError) -> Value
    ) throws(RecurrenceError) -> [Value] {
        var values: [Value] = []
        var seen: Set<Value> = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = piece.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { throw RecurrenceError("\(part) has an empty value (two commas in a row?)") }
            let value = try item(Substring(trimmed))
            if seen.insert(value).inserted { values.append(value) }
            guard values.count <= maximumListLength else {
                throw RecurrenceError("\(part): too many values (at most \(maximumListLength))")
            }
        }
        return values
    }

    private static func parseWeekday(_ text: some StringProtocol, part: String) throws(RecurrenceError) -> Int {
        guard let index = weekdayCodes.firstIndex(of: String(text)) else {
            throw RecurrenceError("\(part): \(RecurrenceError.quote(text)) is not a weekday (MO, TU, WE, TH, FR, SA or SU)")
        }
        return index + 1
    }

    /// `MO`, `2TU`, `+3WE`, `-1FR`.
    private static func parseWeekdayNum(_ text: Substring) throws(RecurrenceError) -> WeekdayNum {
        let problem = RecurrenceError("BYDAY: \(RecurrenceError.quote(text)) is not a weekday (MO, TU, WE, TH, FR, SA or SU, optionally with an ordinal such as 1MO or -1FR)")
        guard text.count >= 2, let weekday = weekdayCodes.firstIndex(of: String(text.suffix(2))) else { throw problem }
        let ordinalText = text.dropLast(2)
        guard !ordinalText.isEmpty else { return WeekdayNum(ordinal: nil, weekday: weekday + 1) }
        guard let ordinal = integer(ordinalText) else { throw problem }
        return WeekdayNum(ordinal: ordinal, weekday: weekday + 1)
    }

    /// `20270310` (a date), `20270310T090000` (local) or `20270310T080000Z` (UTC).
    private static func parseUntil(_ text: String) throws(RecurrenceError) -> Until {
        let problem = RecurrenceError("UNTIL: \(RecurrenceError.quote(text)) is not a date (20270310), local date and time (20270310T090000) or UTC date and time (20270310T080000Z)")
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard [8, 15, 16].contains(bytes.count), let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let date = LocalDate(validYear: year, month: month, day: day)
        else { throw problem }
        if bytes.count == 8 { return .date(date) }
        guard bytes[8] == UInt8(ascii: "T"), let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            let time = LocalTime(hour: hour, minute: minute, second: second)
        else { throw problem }
        if bytes.count == 15 { return .local(LocalDateTime(date: date, time: time)) }
        guard bytes[15] == UInt8(ascii: "Z") else { throw problem }
        let seconds = date.daysSinceEpoch * 86_400 + Int64(time.secondOfDay)
        return .utc(Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

// MARK: - Writing values

extension RecurrenceRule {
    static func weekdayCode(_ isoWeekday: Int) -> String {
        weekdayCodes.indices.contains(isoWeekday - 1) ? weekdayCodes[isoWeekday - 1] : "?\(isoWeekday)"
    }

    /// `MO`, `-1FR`.
    static func text(of day: WeekdayNum) -> String {
        (day.ordinal.map(String.init) ?? "") + weekdayCode(day.weekday)
    }

    /// `20270310`, `20270310T090000` or `20270310T080000Z`.
    static func text(of until: Until) -> String {
        func compact(_ date: LocalDate) -> String {
            Instant.digits(date.year, width: 4) + Instant.digits(date.month, width: 2) + Instant.digits(date.day, width: 2)
        }
        func compact(_ time: LocalTime) -> String {
            "T" + Instant.digits(time.hour, width: 2) + Instant.digits(time.minute, width: 2) + Instant.digits(time.second, width: 2)
        }
        switch until {
        case .date(let date):
            return compact(date)
        case .local(let local):
            return compact(local.date) + compact(local.time)
        case .utc(let instant):
            let local = ZoneClock.utc.local(instant)
            return compact(local.date) + compact(local.time) + "Z"
        }
    }
}

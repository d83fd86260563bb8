import Foundation
import Platform

// The value types of iCalendar (RFC 5545 3.3) the parser and the writer share: TEXT,
// DATE, DATE-TIME, DURATION, and time zone names.

/// TEXT values (RFC 5545 3.3.11).
enum ICalText {
    /// Unescapes a TEXT value: `\\` is `\`, `\;` is `;`, `\,` is `,`, `\n` and `\N` are a
    /// line feed. Any other backslash is kept as written (a Windows path stays a path).
    static func unescape(_ value: some StringProtocol) -> String {
        let bytes = Array(value.utf8)
        guard bytes.contains(ICalASCII.backslash) else { return String(value) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == ICalASCII.backslash, index + 1 < bytes.count else {
                output.append(byte)
                index += 1
                continue
            }
            switch bytes[index + 1] {
            case ICalASCII.backslash, ICalASCII.semicolon, ICalASCII.comma: output.append(bytes[index + 1])
            case UInt8(ascii: "n"), UInt8(ascii: "N"): output.append(ICalASCII.lineFeed)
            default: output.append(contentsOf: bytes[index...(index + 1)])
            }
            index += 2
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Splits a multi-valued TEXT (CATEGORIES) at the commas that are not escaped, and
    /// unescapes each value.
    static func list(_ value: String) -> [String] {
        let bytes = Array(value.utf8)
        var values: [String] = []
        var start = 0, index = 0
        while index < bytes.count {
            if bytes[index] == ICalASCII.backslash {
                index += 2
                continue
            }
            if bytes[index] == ICalASCII.comma {
                values.append(unescape(String(decoding: bytes[start..<index], as: UTF8.self)))
                start = index + 1
            }
            index += 1
        }
        values.append(unescape(String(decoding: bytes[min(start, bytes.count)...], as: UTF8.self)))
        return values
    }

    /// Escapes text for a TEXT value: `\`, `;`, `,` and line breaks (CRLF, CR or LF, all
    /// written `\n`). Other control characters (not allowed in a content line) are
    /// dropped; a tab is kept.
    static func escape(_ text: String) -> String {
        var output = String.UnicodeScalarView()
        var previousWasCarriageReturn = false
        for scalar in text.unicodeScalars {
            defer { previousWasCarriageReturn = scalar == "\r" }
            switch scalar {
            case "\\": output.append(contentsOf: "\\\\".unicodeScalars)
            case ";": output.append(contentsOf: "\\;".unicodeScalars)
            case ",": output.append(contentsOf: "\\,".unicodeScalars)
            case "\r": output.append(contentsOf: "\\n".unicodeScalars)
            case "\n": if !previousWasCarriageReturn { output.append(contentsOf: "\\n".unicodeScalars) }
            case "\t": output.append(scalar)
            default: if scalar.value >= 0x20, scalar.value != 0x7F { output.append(scalar) }
            }
        }
        return String(output)
    }

    /// Drops control characters (all but the tab) from a value written as is (RRULE, a
    /// parameter), so that it cannot break the line.
    static func sanitized(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }))
    }
}

/// DATE (`YYYYMMDD`), DATE-TIME (`YYYYMMDDTHHMMSS[Z]`) and DURATION values.
enum ICalTime {
    /// `YYYYMMDD`, a date that exists.
    static func date(_ text: some StringProtocol) -> LocalDate? {
        let bytes = Array(text.utf8)
        guard bytes.count == 8, let year = number(bytes[0..<4]), let month = number(bytes[4..<6]), let day = number(bytes[6..<8])
        else { return nil }
        return LocalDate(validYear: year, month: month, day: day)
    }

    /// `YYYYMMDDTHHMMSS` with an optional `Z` (UTC): a date that exists and a time of
    /// 00:00:00-23:59:59. A leap second (`60`, which RFC 5545 allows) is read as `59`.
    static func dateTime(_ text: some StringProtocol) -> (local: LocalDateTime, isUTC: Bool)? {
        let bytes = Array(text.utf8)
        guard bytes.count == 15 || bytes.count == 16, bytes[8] == UInt8(ascii: "T") || bytes[8] == UInt8(ascii: "t"),
            let date = date(String(decoding: bytes[0..<8], as: UTF8.self)),
            let hour = number(bytes[9..<11]), let minute = number(bytes[11..<13]), let second = number(bytes[13..<15]),
            second <= 60, let time = LocalTime(hour: hour, minute: minute, second: min(second, 59))
        else { return nil }
        if bytes.count == 16 {
            guard bytes[15] == UInt8(ascii: "Z") || bytes[15] == UInt8(ascii: "z") else { return nil }
        }
        return (LocalDateTime(date: date, time: time), bytes.count == 16)
    }

    /// The instant of a local date and time read as UTC.
    static func utcInstant(_ local: LocalDateTime) -> Date {
        Date(timeIntervalSince1970: TimeInterval(local.date.daysSinceEpoch * 86_400 + Int64(local.time.secondOfDay)))
    }

    /// The UTC date and time of an instant (to the second, rounded down).
    static func utcLocal(_ instant: Date) -> LocalDateTime {
        let interval = instant.timeIntervalSince1970
        let seconds = interval.isFinite ? Int64(interval.rounded(.down).clamped(to: -1e15...1e15)) : 0
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        return LocalDateTime(date: LocalDate(daysSinceEpoch: days), time: LocalTime(secondOfDay: secondOfDay) ?? .midnight)
    }

    /// `YYYYMMDD`.
    static func format(_ date: LocalDate) -> String {
        Instant.digits(date.year, width: 4) + Instant.digits(date.month, width: 2) + Instant.digits(date.day, width: 2)
    }

    /// `YYYYMMDDTHHMMSS`.
    static func format(_ local: LocalDateTime) -> String {
        format(local.date) + "T" + Instant.digits(local.time.hour, width: 2) + Instant.digits(local.time.minute, width: 2)
            + Instant.digits(local.time.second, width: 2)
    }

    /// `YYYYMMDDTHHMMSSZ`.
    static func formatUTC(_ instant: Date) -> String { format(utcLocal(instant)) + "Z" }

    /// A DURATION (RFC 5545 3.3.6) in seconds: `P1W`, `P1DT2H`, `-PT15M`, `PT0S`, `+P2D`.
    /// The units come in the order W, D, then after `T` H, M, S, each at most once and
    /// with at most 9 digits; a week together with days (`P1W2D`, which some programs
    /// write) is accepted. Letters may be lower-case.
    static func duration(_ text: some StringProtocol) -> Int? {
        let bytes = Array(text.uppercased().utf8)
        var index = 0
        var sign = 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "P") else { return nil }
        index += 1
        let dateUnits: [(UInt8, Int)] = [(UInt8(ascii: "W"), 604_800), (UInt8(ascii: "D"), 86_400)]
        let timeUnits: [(UInt8, Int)] = [(UInt8(ascii: "H"), 3_600), (UInt8(ascii: "M"), 60), (UInt8(ascii: "S"), 1)]
        var total = 0
        var components = 0
        // Reads `digits unit` pairs whose units come in the order of `units`.
        func read(_ units: [(UInt8, Int)]) -> Bool {
            var next = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: "T") {
                let start = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
                guard index > start, index - start <= 9, index < bytes.count, let value = number(bytes[start..<index]),
                    let position = units[next...].firstIndex(where: { $0.0 == bytes[index] })
                else { return false }
                total += value * units[position].1
                components += 1
                next = position + 1
                index += 1
            }
            return true
        }
        guard read(dateUnits) else { return nil }
        if index < bytes.count {  // at the T
            index += 1
            let before = components
            guard read(timeUnits), components > before else { return nil }
        }
        guard components > 0, index == bytes.count else { return nil }
        return sign * total
    }

    /// A DURATION for `seconds`: `P1W`, `P1DT2H`, `-PT15M`, `PT0S`.
    static func formatDuration(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : ""
        let magnitude = seconds.magnitude
        guard magnitude > 0 else { return "PT0S" }
        if magnitude % 604_800 == 0 { return sign + "P\(magnitude / 604_800)W" }
        let days = magnitude / 86_400, rest = magnitude % 86_400
        var text = sign + "P"
        if days > 0 { text += "\(days)D" }
        if rest > 0 {
            text += "T"
            if rest >= 3_600 { text += "\(rest / 3_600)H" }
            if rest % 3_600 >= 60 { text += "\(rest % 3_600 / 60)M" }
            if rest % 60 > 0 { text += "\(rest % 60)S" }
        }
        return text
    }

    /// A plain non-negative integer of at most 9 digits.
    static func integer(_ text: some StringProtocol) -> Int? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 9 else { return nil }
        return number(bytes[...])
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }
}

/// Turns the TZID parameters of a file into IANA zone names.
///
/// A TZID is, in this order:
/// 1. a tz database name `ZoneClock(identifier:)` accepts (`Europe/Berlin`, `UTC`, `GMT`;
///    not an abbreviation such as `EST`), kept as written;
/// 2. the TZID of one of the calendar's VTIMEZONEs whose X-LIC-LOCATION is such a name
///    (the VTIMEZONE's own rules are not read: the zone's IANA rules are used);
/// 3. a path in the style of Mozilla and Evolution (`/mozilla.org/20050126_1/Europe/Berlin`,
///    `/freeassociation.sourceforge.net/Tzfile/America/Argentina/Buenos_Aires`): its
///    trailing Area/City (three or two components);
/// 4. one of the Windows names in ``windowsZones`` (as Outlook and Exchange write them),
///    compared case-insensitively.
///
/// Anything else is not a zone, and the parser refuses the file naming it.
struct ICalZoneResolver {
    /// VTIMEZONE TZIDs and the IANA zone their X-LIC-LOCATION names.
    var locations: [String: String] = [:]
    private var known: [String: String?] = [:]

    /// The IANA name of a TZID, or `nil` when it is none of the forms above.
    mutating func ianaName(for tzid: String) -> String? {
        if let cached = known[tzid] { return cached }
        let name = Self.resolve(tzid, locations: locations)
        known[tzid] = name
        return name
    }

    /// Whether `name` is a zone this platform knows, by the same rule as every request's
    /// zone (the `time-zone` format): an abbreviation Foundation resolves (`EST`) is not
    /// one, or a reminder imported with it could not be sent back in an update.
    static func isZone(_ name: some StringProtocol) -> Bool {
        !name.isEmpty && StringFormat.timeZone.accepts(String(name)) && ZoneClock(identifier: String(name)) != nil
    }

    private static func resolve(_ tzid: String, locations: [String: String]) -> String? {
        if isZone(tzid) { return tzid }
        if let location = locations[tzid] { return location }
        if tzid.hasPrefix("/") {
            let parts = tzid.split(separator: "/")
            for count in [3, 2] where parts.count >= count {
                let candidate = parts.suffix(count).joined(separator: "/")
                if isZone(candidate) { return candidate }
            }
        }
        let trimmed = tzid.trimmingCharacters(in: .whitespaces)
        if let windows = windowsZones.first(where: { $0.key.caseInsensitiveCompare(trimmed) == .orderedSame }) {
            return windows.value
        }
        return nil
    }

    /// Common Windows time zone names and their IANA zones (CLDR's windowsZones.xml,
    /// territory 001).
    static let windowsZones: [String: String] = [
        "UTC": "UTC",
        "GMT Standard Time": "Europe/London",
        "Greenwich Standard Time": "Atlantic/Reykjavik",
        "W. Europe Standard Time": "Europe/Berlin",
        "Romance Standard Time": "Europe/Paris",
        "Central Europe Standard Time": "Europe/Budapest",
        "Central European Standard Time": "Europe/Warsaw",
        "E. Europe Standard Time": "Europe/Chisinau",
        "FLE Standard Time": "Europe/Kiev",
        "GTB Standard Time": "Europe/Bucharest",
        "Belarus Standard Time": "Europe/Minsk",
        "Russian Standard Time": "Europe/Moscow",
        "Turkey Standard Time": "Europe/Istanbul",
        "Eastern Standard Time": "America/New_York",
        "Central Standard Time": "America/Chicago",
        "Mountain Standard Time": "America/Denver",
        "US Mountain Standard Time": "America/Phoenix",
        "Pacific Standard Time": "America/Los_Angeles",
        "Alaskan Standard Time": "America/Anchorage",
        "Hawaiian Standard Time": "Pacific/Honolulu",
        "India Standard Time": "Asia/Kolkata",
        "China Standard Time": "Asia/Shanghai",
        "Tokyo Standard Time": "Asia/Tokyo",
        "AUS Eastern Standard Time": "Australia/Sydney",
    ]
}

extension Comparable {
    fileprivate func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}

import Foundation
import Platform

/// Reads and writes iCalendar (RFC 5545) files: the events of a user's `.ics` file
/// become ``ICalEvent``s for the reminders import, and reminders are exported as one.
///
/// ## Reading
/// The `parse` functions read the whole file and check all of it before returning, so an
/// import is all-or-nothing: either every event of the file is returned, or an
/// ``ICalError`` says where (the physical line, 1-based) and what is wrong.
///
/// Syntax (see ``ICalLexer``): CRLF or LF line ends, unfolding (also of UTF-8 characters
/// split by a fold), case-insensitive names, quoted parameter values, UTF-8 only (a
/// leading byte order mark is dropped), BEGIN/END nesting checked, VCALENDAR around
/// everything (several VCALENDARs in a row are merged into one ``ICalCalendar``: the first
/// PRODID and X-WR-CALNAME win).
///
/// Components: VEVENT and its VALARMs are read. VTIMEZONE is skipped, except that its TZID
/// and X-LIC-LOCATION map a custom TZID to an IANA zone (``ICalZoneResolver``); zones are
/// always IANA rules, never a VTIMEZONE's. VTODO, VJOURNAL, VFREEBUSY and unknown
/// components are skipped (their BEGIN/END nesting and line syntax are still checked,
/// their values are not). Unknown properties, X- properties (X-WR-TIMEZONE included) and
/// properties this model has no place for (ATTENDEE, ORGANIZER, RDATE, ...) are ignored.
///
/// VCALENDAR: VERSION, when present, must be `2.0` (vCalendar 1.0 is refused).
///
/// VEVENT:
/// - UID (non-empty) and DTSTART are required (RFC 5545); SUMMARY may be missing (empty
///   string). DTSTAMP is not required and not read.
/// - UID, SUMMARY, DESCRIPTION, LOCATION, DTSTART, DTEND, DURATION, STATUS, SEQUENCE,
///   CREATED, LAST-MODIFIED and RECURRENCE-ID may appear once each; a second one is an
///   error (which one to keep would be a guess).
/// - RRULE: at most one (RFC 5545 says it SHOULD NOT occur twice); a second is refused
///   rather than dropped, since dropping it would lose occurrences. Its value is kept as
///   written.
/// - DTEND and DURATION together are refused (RFC 5545: MUST NOT). DTEND must be of the
///   kind of DTSTART (both dates, or both date-times) and not before it; DURATION must not
///   be negative.
/// - EXDATE: any number of lines, each a comma list, with its own VALUE=DATE or TZID; at
///   most ``maximumExceptionDates`` values. RECURRENCE-ID is kept as written (RANGE is
///   ignored) for the importer to match it against the recurring event with the same UID.
/// - CATEGORIES: any number of lines, comma lists, values trimmed, empty ones dropped.
/// - STATUS and VALARM ACTION are upper-cased (enumerated values are case-insensitive).
/// - CREATED and LAST-MODIFIED should be UTC; other forms are converted (a zoned time
///   with its zone, a floating time or date as UTC) rather than refused.
/// - TEXT values are unescaped (``ICalText/unescape(_:)``).
///
/// DATE and DATE-TIME (``ICalTime``): `VALUE=DATE` takes `YYYYMMDD`; otherwise
/// `YYYYMMDDTHHMMSS`, with `Z` for UTC or a TZID (``ICalZoneResolver``; an unknown TZID is
/// an error naming it), else floating. A bare `YYYYMMDD` without `VALUE=DATE` is read as
/// a date. A TZID on a UTC (`Z`) value is ignored. Dates must exist, times be 00:00:00 to
/// 23:59:59 (a leap second `60` reads as 59). Other VALUE types (PERIOD) are refused.
///
/// VALARM: ACTION and TRIGGER are required; DESCRIPTION optional; REPEAT and DURATION
/// both or neither. TRIGGER is a duration (RELATED=START or END) or, with
/// `VALUE=DATE-TIME` or when the value simply is one (as Python's icalendar writes it), a
/// UTC date-time. At most ``maximumAlarms`` per event.
///
/// Limits: ``maximumBytes`` per file, ``maximumEvents`` VEVENTs,
/// ``maximumAlarms`` alarms and ``maximumExceptionDates`` EXDATE values per event,
/// ``ICalLexer/maximumLineOctets`` per unfolded line.
///
/// ## Writing
/// See ``write(_:productID:now:)``.
enum ICalendar {
    /// The largest file read, in bytes.
    static let maximumBytes = 2_000_000
    /// The most VEVENTs a file may have.
    static let maximumEvents = 5_000
    /// The most VALARMs one event may have.
    static let maximumAlarms = 100
    /// The most EXDATE values one event may have.
    static let maximumExceptionDates = 1_000

    /// Reads a calendar from text. See ``ICalendar`` for the rules.
    static func parse(_ text: String) throws(ICalError) -> ICalCalendar {
        guard text.utf8.count <= maximumBytes else { throw tooLarge(text.utf8.count) }
        return try parse(utf8: Array(text.utf8))
    }

    /// Reads a calendar from the bytes of a file: UTF-8, with or without a byte order
    /// mark. Other encodings and files that are not text (an image, a PDF, an archive) are
    /// refused with a reason. See ``ICalendar`` for the rules.
    static func parse(_ data: [UInt8]) throws(ICalError) -> ICalCalendar {
        guard data.count <= maximumBytes else { throw tooLarge(data.count) }
        if let kind = binaryKind(data) {
            throw ICalError(line: nil, "not an iCalendar file: this is \(kind)")
        }
        return try parse(utf8: data)
    }

    private static func tooLarge(_ count: Int) -> ICalError {
        ICalError(line: nil, "the file is \(count) bytes; at most \(maximumBytes) can be imported")
    }

    /// What a file that is not UTF-8 text is, from its first bytes.
    private static func binaryKind(_ data: [UInt8]) -> String? {
        let signatures: [([UInt8], String)] = [
            ([0x89, 0x50, 0x4E, 0x47], "a PNG image"),
            ([0xFF, 0xD8, 0xFF], "a JPEG image"),
            (Array("GIF8".utf8), "a GIF image"),
            (Array("%PDF".utf8), "a PDF document"),
            ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive"),
            ([0x1F, 0x8B], "a gzip archive"),
            ([0xFF, 0xFE], "UTF-16 text; save it as UTF-8"),
            ([0xFE, 0xFF], "UTF-16 text; save it as UTF-8"),
        ]
        return signatures.first { data.starts(with: $0.0) }?.1
    }

    /// Reads UTF-8 bytes (a leading byte order mark is skipped).
    private static func parse(utf8 bytes: [UInt8]) throws(ICalError) -> ICalCalendar {
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        let components = try ICalLexer.calendars(body, maximumEvents: maximumEvents)
        var calendar = ICalCalendar(productID: nil, name: nil, events: [])
        for component in components {
            try ICalReader.read(component, into: &calendar)
        }
        return calendar
    }
}

/// Reads the meaning of a VCALENDAR's components (see ``ICalendar`` for the rules).
enum ICalReader {
    /// Adds a VCALENDAR's properties and events to `calendar`.
    static func read(_ component: ICalComponent, into calendar: inout ICalCalendar) throws(ICalError) {
        for property in component.properties {
            switch property.name {
            case "VERSION":
                let version = property.value.trimmingCharacters(in: .whitespaces)
                guard version == "2.0" || version.hasSuffix(";2.0") else {
                    throw ICalError(line: property.line, "VERSION:\(ICalLexer.preview(version)) is not supported: only iCalendar 2.0 files can be imported")
                }
            case "PRODID":
                if calendar.productID == nil { calendar.productID = ICalText.unescape(property.value) }
            case "X-WR-CALNAME":
                if calendar.name == nil { calendar.name = ICalText.unescape(property.value) }
            default:
                break
            }
        }
        var zones = ICalZoneResolver()
        for child in component.children where child.name == "VTIMEZONE" {
            guard let tzid = child.properties.first(where: { $0.name == "TZID" }).map({ ICalText.unescape($0.value) }),
                let location = child.properties.first(where: { $0.name == "X-LIC-LOCATION" })?.value,
                ICalZoneResolver.isZone(location)
            else { continue }
            zones.locations[tzid] = location
        }
        for child in component.children where child.name == "VEVENT" {
            calendar.events.append(try event(child, zones: &zones))
        }
    }

    /// Properties a VEVENT may have at most once.
    private static let singleInEvent: Set<String> = [
        "UID", "SUMMARY", "DESCRIPTION", "LOCATION", "DTSTART", "DTEND", "DURATION", "STATUS", "SEQUENCE", "CREATED",
        "LAST-MODIFIED", "RECURRENCE-ID", "RRULE",
    ]
    /// Properties of a VALARM read here, each allowed once.
    private static let singleInAlarm: Set<String> = ["ACTION", "TRIGGER", "DESCRIPTION", "REPEAT", "DURATION"]

    /// Refuses a second occurrence of a property that may appear once.
    private static func checkSingle(_ component: ICalComponent, _ names: Set<String>) throws(ICalError) {
        var first: [String: Int] = [:]
        for property in component.properties where names.contains(property.name) {
            if let line = first[property.name] {
                let reason = property.name == "RRULE"
                    ? "a second RRULE in one VEVENT (the first is on line \(line)); only one is supported"
                    : "\(property.name) appears twice in one \(component.name) (first on line \(line))"
                throw ICalError(line: property.line, reason)
            }
            first[property.name] = property.line
        }
    }

    static func event(_ component: ICalComponent, zones: inout ICalZoneResolver) throws(ICalError) -> ICalEvent {
        try checkSingle(component, singleInEvent)
        var uid: String?
        var start: (value: ICalDateTime, line: Int)?
        var end: (value: ICalDateTime, line: Int)?
        var durationLine: Int?
        // UID and DTSTART are filled in once they are known to be there.
        var event = ICalEvent(uid: "", start: .date(LocalDate(year: 1970, month: 1, day: 1)))
        for property in component.properties {
            switch property.name {
            case "UID":
                let value = ICalText.unescape(property.value)
                guard !value.isEmpty else { throw ICalError(line: property.line, "UID is empty") }
                uid = value
            case "SUMMARY": event.summary = ICalText.unescape(property.value)
            case "DESCRIPTION": event.description = ICalText.unescape(property.value)
            case "LOCATION": event.location = ICalText.unescape(property.value)
            case "DTSTART": start = (try dateTime(property, zones: &zones), property.line)
            case "DTEND": end = (try dateTime(property, zones: &zones), property.line)
            case "DURATION":
                let seconds = try duration(property)
                guard seconds >= 0 else { throw ICalError(line: property.line, "DURATION: \(ICalLexer.preview(property.value)) is negative") }
                event.durationSeconds = seconds
                durationLine = property.line
            case "RRULE":
                guard !property.value.isEmpty else { throw ICalError(line: property.line, "RRULE is empty") }
                event.rrule = property.value
            case "EXDATE":
                event.exdates += try dateTimes(property, zones: &zones)
                guard event.exdates.count <= ICalendar.maximumExceptionDates else {
                    throw ICalError(line: property.line, "more than \(ICalendar.maximumExceptionDates) EXDATE values in one event")
                }
            case "CATEGORIES":
                event.categories += ICalText.list(property.value)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }
            case "STATUS": event.status = ICalText.unescape(property.value).uppercased()
            case "SEQUENCE":
                guard let sequence = ICalTime.integer(property.value) else {
                    throw ICalError(line: property.line, "SEQUENCE: \(ICalLexer.preview(property.value)) is not a whole number")
                }
                event.sequence = sequence
            case "CREATED": event.created = try timestamp(property, zones: &zones)
            case "LAST-MODIFIED": event.lastModified = try timestamp(property, zones: &zones)
            case "RECURRENCE-ID": event.recurrenceID = try dateTime(property, zones: &zones)
            default: break
            }
        }
        guard let uid else { throw ICalError(line: component.line, "a VEVENT without a UID (every event needs one)") }
        guard let start else { throw ICalError(line: component.line, "the VEVENT \(ICalLexer.preview(uid)) has no DTSTART") }
        event.uid = uid
        event.start = start.value
        if let end {
            if let durationLine { throw ICalError(line: max(durationLine, end.line), "DTEND and DURATION in one VEVENT (give one of them)") }
            try checkEnd(end.value, line: end.line, start: start.value)
            event.end = end.value
        }

        for child in component.children where child.name == "VALARM" {
            guard event.alarms.count < ICalendar.maximumAlarms else {
                throw ICalError(line: child.line, "more than \(ICalendar.maximumAlarms) alarms in one event")
            }
            event.alarms.append(try alarm(child))
        }
        return event
    }

    /// Checks DTEND against DTSTART: the same kind (date or date-time) and not earlier.
    private static func checkEnd(_ end: ICalDateTime, line: Int, start: ICalDateTime) throws(ICalError) {
        switch (start, end) {
        case (.date, .date): break
        case (.date, _): throw ICalError(line: line, "DTEND must be a date (VALUE=DATE) like DTSTART")
        case (_, .date): throw ICalError(line: line, "DTEND must be a date-time like DTSTART")
        default: break
        }
        if let startSeconds = comparableSeconds(start), let endSeconds = comparableSeconds(end), endSeconds < startSeconds,
            isFloating(start) == isFloating(end)
        {
            throw ICalError(line: line, "DTEND is before DTSTART")
        }
    }

    private static func isFloating(_ value: ICalDateTime) -> Bool {
        if case .floating = value { return true }
        if case .date = value { return true }
        return false
    }

    /// Seconds since 1970 of a value, local values read as UTC: comparable among
    /// instants, and among local values.
    private static func comparableSeconds(_ value: ICalDateTime) -> Double? {
        switch value {
        case .date(let date): Double(date.daysSinceEpoch * 86_400)
        case .floating(let local): ICalTime.utcInstant(local).timeIntervalSince1970
        case .utc(let instant): instant.timeIntervalSince1970
        case .zoned(let local, let zone): ZoneClock(identifier: zone)?.instant(local.date, local.time)?.timeIntervalSince1970
        }
    }

    static func alarm(_ component: ICalComponent) throws(ICalError) -> ICalAlarm {
        try checkSingle(component, singleInAlarm)
        var action: String?
        var trigger: ICalAlarm.Trigger?
        var description: String?
        var repeatCount: Int?
        var interval: Int?
        for property in component.properties {
            switch property.name {
            case "ACTION":
                let value = ICalText.unescape(property.value).trimmingCharacters(in: .whitespaces).uppercased()
                guard !value.isEmpty else { throw ICalError(line: property.line, "ACTION is empty") }
                action = value
            case "TRIGGER": trigger = try self.trigger(property)
            case "DESCRIPTION": description = ICalText.unescape(property.value)
            case "REPEAT":
                guard let count = ICalTime.integer(property.value) else {
                    throw ICalError(line: property.line, "REPEAT: \(ICalLexer.preview(property.value)) is not a whole number")
                }
                repeatCount = count
            case "DURATION":
                let seconds = try duration(property)
                guard seconds >= 0 else { throw ICalError(line: property.line, "DURATION: \(ICalLexer.preview(property.value)) is negative") }
                interval = seconds
            default: break
            }
        }
        guard let action else { throw ICalError(line: component.line, "a VALARM without an ACTION") }
        guard let trigger else { throw ICalError(line: component.line, "a VALARM without a TRIGGER") }
        guard (repeatCount == nil) == (interval == nil) else {
            throw ICalError(line: component.line, "a VALARM needs REPEAT and DURATION together (or neither)")
        }
        return ICalAlarm(trigger: trigger, action: action, description: description, repeatCount: repeatCount, repeatIntervalSeconds: interval)
    }

    private static func trigger(_ property: ICalContentLine) throws(ICalError) -> ICalAlarm.Trigger {
        let value = property.value.trimmingCharacters(in: .whitespaces)
        let kind = property.parameter("VALUE")?.uppercased()
        if kind == "DATE-TIME" || (kind == nil && ICalTime.duration(value) == nil && ICalTime.dateTime(value) != nil) {
            guard let (local, isUTC) = ICalTime.dateTime(value), isUTC else {
                throw ICalError(line: property.line, "TRIGGER: \(ICalLexer.preview(value)) is not a UTC date-time (YYYYMMDDTHHMMSSZ)")
            }
            return .absolute(ICalTime.utcInstant(local))
        }
        guard kind == nil || kind == "DURATION" else {
            throw ICalError(line: property.line, "TRIGGER: VALUE=\(ICalLexer.preview(kind ?? "")) is not supported (DURATION or DATE-TIME)")
        }
        guard let seconds = ICalTime.duration(value) else {
            throw ICalError(line: property.line, "TRIGGER: \(ICalLexer.preview(value)) is not a duration (like -PT15M)")
        }
        let related = property.parameter("RELATED")?.uppercased()
        guard related == nil || related == "START" || related == "END" else {
            throw ICalError(line: property.line, "TRIGGER: RELATED=\(ICalLexer.preview(related ?? "")) (START or END)")
        }
        return .relative(seconds: seconds, fromEnd: related == "END")
    }

    private static func duration(_ property: ICalContentLine) throws(ICalError) -> Int {
        let value = property.value.trimmingCharacters(in: .whitespaces)
        guard let seconds = ICalTime.duration(value) else {
            throw ICalError(line: property.line, "\(property.name): \(ICalLexer.preview(value)) is not a duration (like PT1H)")
        }
        return seconds
    }

    // MARK: Dates and times

    /// The single DATE or DATE-TIME value of a property.
    static func dateTime(_ property: ICalContentLine, zones: inout ICalZoneResolver) throws(ICalError) -> ICalDateTime {
        guard !property.value.contains(",") else {
            throw ICalError(line: property.line, "\(property.name) has several values; it takes one")
        }
        guard let value = try dateTimes(property, zones: &zones).first else {
            throw ICalError(line: property.line, "\(property.name) has no value")
        }
        return value
    }

    /// The comma-separated DATE or DATE-TIME values of a property (EXDATE), all with the
    /// property's VALUE and TZID parameters.
    static func dateTimes(_ property: ICalContentLine, zones: inout ICalZoneResolver) throws(ICalError) -> [ICalDateTime] {
        let kind = property.parameter("VALUE")?.uppercased()
        guard kind == nil || kind == "DATE" || kind == "DATE-TIME" else {
            throw ICalError(line: property.line, "\(property.name): VALUE=\(ICalLexer.preview(kind ?? "")) is not supported (DATE or DATE-TIME)")
        }
        var zone: String?
        var values: [ICalDateTime] = []
        for part in property.value.split(separator: ",", omittingEmptySubsequences: false) {
            let text = part.trimmingCharacters(in: .whitespaces)
            if kind == "DATE" || (kind == nil && text.utf8.count == 8) {
                guard let date = ICalTime.date(text) else {
                    throw ICalError(line: property.line, "\(property.name): \(ICalLexer.preview(text)) is not a date (YYYYMMDD)")
                }
                values.append(.date(date))
                continue
            }
            guard let (local, isUTC) = ICalTime.dateTime(text) else {
                throw ICalError(line: property.line, "\(property.name): \(ICalLexer.preview(text)) is not a date-time")
            }
            if isUTC {
                values.append(.utc(ICalTime.utcInstant(local)))
            } else if let tzid = property.parameter("TZID") {
                if zone == nil {
                    guard let name = zones.ianaName(for: tzid) else {
                        throw ICalError(line: property.line, "\(property.name): unknown time zone TZID=\(ICalLexer.preview(tzid)) (use an IANA name such as Europe/Berlin)")
                    }
                    zone = name
                }
                values.append(.zoned(local, zone: zone ?? tzid))
            } else {
                values.append(.floating(local))
            }
        }
        return values
    }

    /// CREATED and LAST-MODIFIED: UTC by the RFC; a zoned time is converted with its
    /// zone, a floating time or a date read as UTC.
    private static func timestamp(_ property: ICalContentLine, zones: inout ICalZoneResolver) throws(ICalError) -> Date {
        switch try dateTime(property, zones: &zones) {
        case .utc(let instant): return instant
        case .floating(let local): return ICalTime.utcInstant(local)
        case .date(let date): return ICalTime.utcInstant(LocalDateTime(date: date, time: .midnight))
        case .zoned(let local, let zone):
            return ZoneClock(identifier: zone)?.instant(local.date, local.time) ?? ICalTime.utcInstant(local)
        }
    }
}

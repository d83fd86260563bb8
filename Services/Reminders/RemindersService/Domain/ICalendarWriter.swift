import Foundation
import Platform

extension ICalendar {
    /// Writes a calendar as an iCalendar file that ``parse(_:)`` reads back to the
    /// same events (`parse(write(c, productID: p)) == c` when `c.productID == p`).
    ///
    /// - CRLF line ends; lines folded at 75 octets (the continuation's leading space
    ///   included), never inside a UTF-8 sequence.
    /// - VCALENDAR with VERSION:2.0, PRODID (`productID`, not `calendar.productID`),
    ///   CALSCALE:GREGORIAN and X-WR-CALNAME when the calendar has a name.
    /// - One VTIMEZONE per zone the events use (TZID and X-LIC-LOCATION its IANA name),
    ///   for programs that need one (Outlook): the zone's rule in the year of `now` as a
    ///   yearly BYMONTH/BYDAY pair (fixed offset when it has no daylight saving time). The
    ///   parser itself uses the IANA name.
    /// - Each VEVENT with DTSTAMP (`now`), then the event's values. TEXT is escaped; line
    ///   breaks become `\n` (a CRLF or CR is written as a line feed) and other control
    ///   characters are dropped. The RRULE is written as it is (control characters
    ///   dropped). When both `end` and `durationSeconds` are set only DTEND is written;
    ///   an empty summary writes no SUMMARY. UTC times are written to the second.
    /// - EXDATE values with the same parameters share a line (and CATEGORIES share one),
    ///   a new line starting after about 1,000 octets, so no line reaches the parser's
    ///   limit. A single TEXT value longer than ``ICalLexer/maximumLineOctets`` cannot be
    ///   read back.
    /// - An alarm's REPEAT and DURATION are written only when both are set.
    ///
    /// The values are taken as they are: a UID or ACTION must not be empty, a zone must be
    /// an IANA name, for the file to be readable.
    static func write(_ calendar: ICalCalendar, productID: String, now: Date = Date()) -> String {
        var writer = ICalWriter()
        writer.add("BEGIN:VCALENDAR")
        writer.add("VERSION:2.0")
        writer.add("PRODID:" + ICalText.escape(productID))
        writer.add("CALSCALE:GREGORIAN")
        if let name = calendar.name { writer.add("X-WR-CALNAME:" + ICalText.escape(name)) }
        for zone in ICalWriter.zones(of: calendar.events) {
            for line in ICalWriter.timeZone(zone, now: now) { writer.add(line) }
        }
        for event in calendar.events { writer.add(event, now: now) }
        writer.add("END:VCALENDAR")
        return writer.output
    }
}

/// Builds the text of a file, folding each line as it is added.
struct ICalWriter {
    /// The longest physical line, in octets (without its CRLF).
    static let foldOctets = 75
    /// About how long a line of several EXDATE or CATEGORIES values grows.
    static let listOctets = 1_000

    private(set) var output = ""

    /// Adds a content line, folded, with its CRLF.
    mutating func add(_ line: String) {
        var octets = 0
        for scalar in line.unicodeScalars {
            let width = UTF8.width(scalar)
            if octets + width > Self.foldOctets {
                output += "\r\n "
                octets = 1
            }
            output.unicodeScalars.append(scalar)
            octets += width
        }
        output += "\r\n"
    }

    mutating func add(_ event: ICalEvent, now: Date) {
        add("BEGIN:VEVENT")
        add("UID:" + ICalText.escape(event.uid))
        add("DTSTAMP:" + ICalTime.formatUTC(now))
        add(Self.property("DTSTART", event.start))
        if let end = event.end {
            add(Self.property("DTEND", end))
        } else if let duration = event.durationSeconds {
            add("DURATION:" + ICalTime.formatDuration(duration))
        }
        if let recurrenceID = event.recurrenceID { add(Self.property("RECURRENCE-ID", recurrenceID)) }
        if !event.summary.isEmpty { add("SUMMARY:" + ICalText.escape(event.summary)) }
        if let description = event.description { add("DESCRIPTION:" + ICalText.escape(description)) }
        if let location = event.location { add("LOCATION:" + ICalText.escape(location)) }
        if let rrule = event.rrule { add("RRULE:" + ICalText.sanitized(rrule)) }
        addLists(event.exdates.map { Self.parts(of: $0) }, name: "EXDATE")
        addLists(event.categories.map { (parameters: "", value: ICalText.escape($0)) }, name: "CATEGORIES")
        if let status = event.status { add("STATUS:" + ICalText.escape(status)) }
        if let sequence = event.sequence { add("SEQUENCE:\(sequence)") }
        if let created = event.created { add("CREATED:" + ICalTime.formatUTC(created)) }
        if let lastModified = event.lastModified { add("LAST-MODIFIED:" + ICalTime.formatUTC(lastModified)) }
        for alarm in event.alarms { add(alarm) }
        add("END:VEVENT")
    }

    mutating func add(_ alarm: ICalAlarm) {
        add("BEGIN:VALARM")
        add("ACTION:" + ICalText.escape(alarm.action))
        switch alarm.trigger {
        case .relative(let seconds, let fromEnd):
            add("TRIGGER" + (fromEnd ? ";RELATED=END" : "") + ":" + ICalTime.formatDuration(seconds))
        case .absolute(let instant):
            add("TRIGGER;VALUE=DATE-TIME:" + ICalTime.formatUTC(instant))
        }
        if let description = alarm.description { add("DESCRIPTION:" + ICalText.escape(description)) }
        if let count = alarm.repeatCount, let interval = alarm.repeatIntervalSeconds {
            add("REPEAT:\(count)")
            add("DURATION:" + ICalTime.formatDuration(interval))
        }
        add("END:VALARM")
    }

    /// Adds values as `NAME<parameters>:v1,v2,...` lines: consecutive values with the same
    /// parameters share a line of up to about ``listOctets`` octets.
    private mutating func addLists(_ values: [(parameters: String, value: String)], name: String) {
        var index = 0
        while index < values.count {
            let parameters = values[index].parameters
            var line = name + parameters + ":" + values[index].value
            index += 1
            while index < values.count, values[index].parameters == parameters,
                line.utf8.count + values[index].value.utf8.count < Self.listOctets
            {
                line += "," + values[index].value
                index += 1
            }
            add(line)
        }
    }

    // MARK: Values

    /// `NAME;VALUE=DATE:20270101`, `NAME;TZID=Europe/Berlin:20270101T090000`,
    /// `NAME:20270101T080000Z`, `NAME:20270101T090000`.
    static func property(_ name: String, _ value: ICalDateTime) -> String {
        let (parameters, text) = parts(of: value)
        return name + parameters + ":" + text
    }

    /// The parameters (`;VALUE=DATE`, `;TZID=...` or nothing) and the text of a value.
    static func parts(of value: ICalDateTime) -> (parameters: String, value: String) {
        switch value {
        case .date(let date): (";VALUE=DATE", ICalTime.format(date))
        case .floating(let local): ("", ICalTime.format(local))
        case .zoned(let local, let zone): (";TZID=" + parameterValue(zone), ICalTime.format(local))
        case .utc(let instant): ("", ICalTime.formatUTC(instant))
        }
    }

    /// A parameter value, quoted when it holds `;`, `:` or `,` (a double quote cannot be
    /// written in one and is dropped, as are control characters).
    static func parameterValue(_ text: String) -> String {
        let clean = ICalText.sanitized(text).replacingOccurrences(of: "\"", with: "")
        return clean.contains(where: { $0 == ";" || $0 == ":" || $0 == "," }) ? "\"" + clean + "\"" : clean
    }

    // MARK: Time zones

    /// The zones of the events' zoned values, in order of first use.
    static func zones(of events: [ICalEvent]) -> [String] {
        var zones: [String] = []
        var seen: Set<String> = []
        func note(_ value: ICalDateTime?) {
            if case .zoned(_, let zone)? = value, seen.insert(zone).inserted { zones.append(zone) }
        }
        for event in events {
            note(event.start)
            note(event.end)
            note(event.recurrenceID)
            event.exdates.forEach(note)
        }
        return zones
    }

    /// The lines of a VTIMEZONE for an IANA zone: the rule in force in the year of `now`
    /// (its two daylight-saving transitions as yearly rules from 1970), or one fixed
    /// offset when the zone has no transition that year. Nothing for a zone this platform
    /// does not know.
    static func timeZone(_ identifier: String, now: Date) -> [String] {
        guard let zone = TimeZone(identifier: identifier) else { return [] }
        let name = ICalText.sanitized(identifier)
        var lines = ["BEGIN:VTIMEZONE", "TZID:" + parameterValue(identifier), "X-LIC-LOCATION:" + name]
        let year = ICalTime.utcLocal(now).date.year
        let yearStart = ICalTime.utcInstant(LocalDateTime(date: LocalDate(year: year, month: 1, day: 1), time: .midnight))
        let yearEnd = yearStart.addingTimeInterval(366 * 86_400)
        if let first = zone.nextDaylightSavingTimeTransition(after: yearStart), first < yearEnd,
            let second = zone.nextDaylightSavingTimeTransition(after: first), second < yearEnd
        {
            lines += observance(zone, at: first) + observance(zone, at: second)
        } else {
            let offset = formatOffset(zone.secondsFromGMT(for: now))
            lines += ["BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:" + offset, "TZOFFSETTO:" + offset, "END:STANDARD"]
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    /// A STANDARD or DAYLIGHT block for the transition at `instant`, repeated yearly on
    /// the same weekday of the month (`-1SU` when it falls in the month's last week).
    private static func observance(_ zone: TimeZone, at instant: Date) -> [String] {
        let before = zone.secondsFromGMT(for: instant.addingTimeInterval(-1))
        let after = zone.secondsFromGMT(for: instant)
        let kind = zone.isDaylightSavingTime(for: instant) ? "DAYLIGHT" : "STANDARD"
        let local = ICalTime.utcLocal(instant.addingTimeInterval(TimeInterval(before)))
        let date = local.date
        let ordinal = date.day + 7 > date.daysInMonth ? -1 : (date.day - 1) / 7 + 1
        let weekdays = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
        let first = LocalDate.weekday(date.isoWeekday, ordinal: ordinal, year: 1970, month: date.month) ?? date
        return [
            "BEGIN:" + kind,
            "DTSTART:" + ICalTime.format(LocalDateTime(date: first, time: local.time)),
            "RRULE:FREQ=YEARLY;BYMONTH=\(date.month);BYDAY=\(ordinal)\(weekdays[date.isoWeekday - 1])",
            "TZOFFSETFROM:" + formatOffset(before),
            "TZOFFSETTO:" + formatOffset(after),
            "END:" + kind,
        ]
    }

    /// `+0300`, `-0530`, `+013045` (seconds only when there are some).
    static func formatOffset(_ seconds: Int) -> String {
        let magnitude = abs(seconds)
        var text = (seconds < 0 ? "-" : "+") + Instant.digits(magnitude / 3_600, width: 2) + Instant.digits(magnitude % 3_600 / 60, width: 2)
        if magnitude % 60 != 0 { text += Instant.digits(magnitude % 60, width: 2) }
        return text
    }
}

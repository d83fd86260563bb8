import Foundation
import Platform

// The values an iCalendar (RFC 5545) file is read into and written from. The parser and
// writer are in `ICalendar` (ICalendarParser.swift, ICalendarWriter.swift); these types
// only hold what a reminders import needs of a calendar.

/// A DATE or DATE-TIME value (RFC 5545 3.3.4, 3.3.5) in the form it was written in: the
/// importer decides what a floating time or an all-day date means for a reminder.
enum ICalDateTime: Sendable, Hashable {
    /// `VALUE=DATE`: a whole day (an all-day event, a birthday).
    case date(LocalDate)
    /// A local date and time with no zone (no TZID, no `Z`): the same wall-clock time
    /// wherever the user is.
    case floating(LocalDateTime)
    /// A local date and time in a zone: `TZID=Europe/Berlin`. `zone` is always an IANA
    /// name that `ZoneClock(identifier:)` accepts, whatever form the file used for it
    /// (a Mozilla path, a Windows name, a VTIMEZONE's X-LIC-LOCATION).
    case zoned(LocalDateTime, zone: String)
    /// A UTC date-time (`...Z`), to the second.
    case utc(Date)
}

/// A VALARM (RFC 5545 3.6.6) of an event.
struct ICalAlarm: Sendable, Hashable {
    /// When the alarm goes off (the TRIGGER property).
    enum Trigger: Sendable, Hashable {
        /// Seconds from the event's start (or its end when `fromEnd`, `RELATED=END`);
        /// negative is before it: `-PT15M` is `-900`.
        case relative(seconds: Int, fromEnd: Bool)
        /// An absolute UTC instant (`TRIGGER;VALUE=DATE-TIME:...Z`).
        case absolute(Date)
    }

    var trigger: Trigger
    /// ACTION, upper-cased: `DISPLAY`, `AUDIO`, `EMAIL` (or whatever else a file says,
    /// such as Apple's `NONE`: the importer decides which it keeps).
    var action: String
    /// DESCRIPTION: the text a DISPLAY alarm shows, the body of an EMAIL one.
    var description: String?
    /// REPEAT: how many more times the alarm goes off after the first. Always set
    /// together with ``repeatIntervalSeconds`` (RFC 5545 requires both or neither).
    var repeatCount: Int?
    /// DURATION: the seconds between repetitions.
    var repeatIntervalSeconds: Int?
}

/// A VEVENT (RFC 5545 3.6.1).
struct ICalEvent: Sendable, Hashable {
    /// UID, never empty. A recurring event and its modified instances share it.
    var uid: String
    /// SUMMARY; the empty string when the event has none.
    var summary: String
    var description: String?
    var location: String?
    /// DTSTART.
    var start: ICalDateTime
    /// DTEND (exclusive), when given. Never set together with ``durationSeconds``.
    var end: ICalDateTime?
    /// DURATION in seconds, when given instead of DTEND (never negative).
    var durationSeconds: Int?
    /// The RRULE value exactly as written (`FREQ=WEEKLY;BYDAY=MO`): the recurrence
    /// module parses it. A file with more than one RRULE in an event is refused.
    var rrule: String?
    /// Every EXDATE value of every EXDATE line, in file order, each in its own form
    /// (`VALUE=DATE`, TZID, UTC).
    var exdates: [ICalDateTime]
    var alarms: [ICalAlarm]
    /// CATEGORIES of every CATEGORIES line, in order (trimmed, empty ones dropped).
    var categories: [String]
    /// STATUS, upper-cased: `TENTATIVE`, `CONFIRMED`, `CANCELLED`.
    var status: String?
    /// SEQUENCE: the revision number (0 or more).
    var sequence: Int?
    var lastModified: Date?
    var created: Date?
    /// RECURRENCE-ID: set when this VEVENT replaces one occurrence of the recurring
    /// event with the same ``uid`` (kept as written; the importer matches it up). A
    /// `RANGE=THISANDFUTURE` parameter is not kept.
    var recurrenceID: ICalDateTime?

    init(
        uid: String, summary: String = "", description: String? = nil, location: String? = nil,
        start: ICalDateTime, end: ICalDateTime? = nil, durationSeconds: Int? = nil, rrule: String? = nil,
        exdates: [ICalDateTime] = [], alarms: [ICalAlarm] = [], categories: [String] = [], status: String? = nil,
        sequence: Int? = nil, lastModified: Date? = nil, created: Date? = nil, recurrenceID: ICalDateTime? = nil
    ) {
        self.uid = uid
        self.summary = summary
        self.description = description
        self.location = location
        self.start = start
        self.end = end
        self.durationSeconds = durationSeconds
        self.rrule = rrule
        self.exdates = exdates
        self.alarms = alarms
        self.categories = categories
        self.status = status
        self.sequence = sequence
        self.lastModified = lastModified
        self.created = created
        self.recurrenceID = recurrenceID
    }
}

/// A VCALENDAR: its events and the little of its own properties an import shows.
struct ICalCalendar: Sendable, Hashable {
    /// PRODID: the program that wrote the file.
    var productID: String?
    /// X-WR-CALNAME: the calendar's name as Google Calendar and Apple write it.
    var name: String?
    /// The VEVENTs in file order (modified instances included, see
    /// ``ICalEvent/recurrenceID``).
    var events: [ICalEvent]
}

/// Why a file could not be read: the (physical, 1-based) line where the problem is, when
/// it has one, and what is wrong in words a user can act on.
struct ICalError: Error, Hashable, Sendable, CustomStringConvertible {
    var line: Int?
    var reason: String

    /// `line 12: DTSTART: 20271340T090000 is not a date-time`.
    var description: String { line.map { "line \($0): \(reason)" } ?? reason }
}

extension ICalError {
    init(line: Int?, _ reason: String) { self.init(line: line, reason: reason) }
}

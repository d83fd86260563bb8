import Foundation
import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// The files in `Fixtures/`, next to this source file.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    static func text(_ name: String) throws -> String {
        try #require(String(validating: bytes(name), as: UTF8.self), "\(name) is not UTF-8")
    }

    /// Parses a fixture from its bytes.
    static func calendar(_ name: String) throws -> ICalCalendar {
        try ICalendar.parse(bytes(name))
    }
}

/// `2027-01-05T09:30:00Z` as a date.
func utc(_ text: String) throws -> Date {
    try #require(Instant.parse(text), "\(text) is not an RFC 3339 instant")
}

/// `2027-01-05` as a local date.
func day(_ text: String) throws -> LocalDate {
    try #require(LocalDate(text), "\(text) is not a date")
}

/// `2027-01-05T09:30:00` as a local date and time.
func local(_ text: String) throws -> LocalDateTime {
    let parts = text.split(separator: "T")
    guard parts.count == 2 else { throw ICalError(line: nil, "\(text) is not YYYY-MM-DDTHH:MM:SS") }
    return LocalDateTime(date: try day(String(parts[0])), time: try #require(LocalTime(String(parts[1]))))
}

/// The error `body` throws, or a recorded issue when it parses.
func parseError(_ body: () throws(ICalError) -> ICalCalendar, sourceLocation: SourceLocation = #_sourceLocation) -> ICalError? {
    do {
        let calendar = try body()
        Issue.record("parsed, with \(calendar.events.count) events, instead of failing", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The error parsing `text` throws (see ``parseError(_:sourceLocation:)``).
func parseError(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> ICalError? {
    parseError({ () throws(ICalError) in try ICalendar.parse(text) }, sourceLocation: sourceLocation)
}

/// A calendar file around `body` lines (LF line ends): header on lines 1-3, `body` from
/// line 4.
func wrapped(_ body: [String]) -> String {
    (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"] + body + ["END:VCALENDAR"]).joined(separator: "\n") + "\n"
}

/// A minimal VEVENT's lines with extra `lines` before its END.
func eventLines(uid: String = "e@example.com", _ lines: [String] = []) -> [String] {
    ["BEGIN:VEVENT", "UID:\(uid)", "DTSTART:20270105T093000Z"] + lines + ["END:VEVENT"]
}

// MARK: Expected values in JSON (icalendar-python-expected.json)

/// A calendar as `make_ics_fixtures.py` writes what a file must parse to.
struct ExpectedCalendar: Decodable {
    var productID: String?
    var name: String?
    var events: [ExpectedEvent]

    func calendar() throws -> ICalCalendar {
        ICalCalendar(productID: productID, name: name, events: try events.map { try $0.event() })
    }
}

struct ExpectedDateTime: Decodable {
    var date: String?
    var floating: String?
    var zoned: String?
    var zone: String?
    var utc: String?

    func value() throws -> ICalDateTime {
        if let date { return .date(try day(date)) }
        if let floating { return .floating(try local(floating)) }
        if let zoned, let zone { return .zoned(try local(zoned), zone: zone) }
        if let utc { return .utc(try RemindersTests.utc(utc)) }
        throw ICalError(line: nil, "an expected date-time of no known form")
    }
}

struct ExpectedAlarm: Decodable {
    struct Trigger: Decodable {
        var relative: Int?
        var fromEnd: Bool?
        var absolute: String?
    }
    var trigger: Trigger
    var action: String
    var description: String?
    var repeatCount: Int?
    var repeatIntervalSeconds: Int?

    func alarm() throws -> ICalAlarm {
        let value: ICalAlarm.Trigger
        if let seconds = trigger.relative {
            value = .relative(seconds: seconds, fromEnd: trigger.fromEnd ?? false)
        } else {
            value = .absolute(try utc(try #require(trigger.absolute)))
        }
        return ICalAlarm(trigger: value, action: action, description: description, repeatCount: repeatCount, repeatIntervalSeconds: repeatIntervalSeconds)
    }
}

struct ExpectedEvent: Decodable {
    var uid: String
    var summary: String
    var description: String?
    var location: String?
    var start: ExpectedDateTime
    var end: ExpectedDateTime?
    var durationSeconds: Int?
    var rrule: String?
    var exdates: [ExpectedDateTime]
    var alarms: [ExpectedAlarm]
    var categories: [String]
    var status: String?
    var sequence: Int?
    var lastModified: String?
    var created: String?
    var recurrenceID: ExpectedDateTime?

    func event() throws -> ICalEvent {
        ICalEvent(
            uid: uid, summary: summary, description: description, location: location, start: try start.value(),
            end: try end?.value(), durationSeconds: durationSeconds, rrule: rrule, exdates: try exdates.map { try $0.value() },
            alarms: try alarms.map { try $0.alarm() }, categories: categories, status: status, sequence: sequence,
            lastModified: try lastModified.map(utc), created: try created.map(utc), recurrenceID: try recurrenceID?.value())
    }
}

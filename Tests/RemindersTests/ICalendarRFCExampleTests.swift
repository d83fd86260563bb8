import Foundation
import Platform
import Testing

@testable import RemindersService

/// The examples of RFC 5545, copied from its text into `Fixtures/rfc5545-*.ics` (the
/// 7-space indentation and the page breaks removed). Section 4's objects are whole files;
/// the VEVENT examples of 3.6.1 are wrapped in one VCALENDAR, and the VALARM examples of
/// 3.6.6 in one VEVENT (the wrapping lines are ours, the examples untouched).
@Suite struct ICalendarRFCExampleTests {
    @Test func section4Conference() throws {
        let calendar = try Fixture.calendar("rfc5545-4-conference.ics")
        let expected = ICalCalendar(
            productID: "-//xyz Corp//NONSGML PDA Calendar Version 1.0//EN", name: nil,
            events: [
                ICalEvent(
                    uid: "uid1@example.com", summary: "Networld+Interop Conference",
                    description: "Networld+Interop Conference and Exhibit\nAtlanta World Congress Center\nAtlanta, Georgia",
                    start: .utc(try utc("1996-09-18T14:30:00Z")), end: .utc(try utc("1996-09-20T22:00:00Z")),
                    categories: ["CONFERENCE"], status: "CONFIRMED")
            ])
        #expect(calendar == expected)
    }

    @Test func section4GroupMeetingWithTimeZone() throws {
        let calendar = try Fixture.calendar("rfc5545-4-meeting.ics")
        let expected = ICalCalendar(
            productID: "-//RDU Software//NONSGML HandCal//EN", name: nil,
            events: [
                ICalEvent(
                    uid: "guid-1.example.com", summary: "XYZ Project Review", description: "Project XYZ Review Meeting",
                    location: "1CP Conference Room 4350",
                    start: .zoned(try local("1998-03-12T08:30:00"), zone: "America/New_York"),
                    end: .zoned(try local("1998-03-12T09:30:00"), zone: "America/New_York"),
                    categories: ["MEETING"], created: try utc("1998-03-09T13:00:00Z"))
            ])
        #expect(calendar == expected)
    }

    @Test func section4MIMEBody() throws {
        let calendar = try Fixture.calendar("rfc5545-4-mime-body.ics")
        let expected = ICalCalendar(
            productID: "-//ABC Corporation//NONSGML My Product//EN", name: nil,
            events: [
                ICalEvent(
                    uid: "uid3@example.com", summary: "Calendaring Interoperability Planning Meeting",
                    description: "Discuss how we can test c&s interoperability\nusing iCalendar and other IETF standards.",
                    location: "LDB Lobby", start: .utc(try utc("1997-03-24T12:30:00Z")), end: .utc(try utc("1997-03-24T21:00:00Z")),
                    categories: ["MEETING", "PROJECT"], sequence: 0)
            ])
        #expect(calendar == expected)
    }

    /// The to-do, journal and free/busy objects hold no VEVENT: they parse (their nesting
    /// checked) to calendars without events.
    @Test(arguments: [
        ("rfc5545-4-todo.ics", "-//ABC Corporation//NONSGML My Product//EN"),
        ("rfc5545-4-journal.ics", "-//ABC Corporation//NONSGML My Product//EN"),
        ("rfc5545-4-freebusy.ics", "-//RDU Software//NONSGML HandCal//EN"),
    ])
    func section4ComponentsThatAreNotEvents(file: String, productID: String) throws {
        let calendar = try Fixture.calendar(file)
        #expect(calendar == ICalCalendar(productID: productID, name: nil, events: []))
    }

    @Test func section361Events() throws {
        let calendar = try Fixture.calendar("rfc5545-3.6.1-events.ics")
        let expected: [ICalEvent] = [
            ICalEvent(
                uid: "19970901T130000Z-123401@example.com", summary: "Annual Employee Review",
                start: .utc(try utc("1997-09-03T16:30:00Z")), end: .utc(try utc("1997-09-03T19:00:00Z")),
                categories: ["BUSINESS", "HUMAN RESOURCES"]),
            ICalEvent(
                uid: "19970901T130000Z-123402@example.com", summary: "Laurel is in sensitivity awareness class.",
                start: .utc(try utc("1997-04-01T16:30:00Z")), end: .utc(try utc("1997-04-02T01:00:00Z")),
                categories: ["BUSINESS", "HUMAN RESOURCES"]),
            ICalEvent(
                uid: "19970901T130000Z-123403@example.com", summary: "Our Blissful Anniversary",
                start: .date(try day("1997-11-02")), rrule: "FREQ=YEARLY",
                categories: ["ANNIVERSARY", "PERSONAL", "SPECIAL OCCASION"]),
            ICalEvent(
                uid: "20070423T123432Z-541111@example.com", summary: "Festival International de Jazz de Montreal",
                start: .date(try day("2007-06-28")), end: .date(try day("2007-07-09"))),
        ]
        #expect(calendar.events == expected)
        #expect(calendar.productID == "-//RFC 5545 section 3.6.1 examples//EN")
    }

    @Test func section366Alarms() throws {
        let calendar = try Fixture.calendar("rfc5545-3.6.6-alarms.ics")
        let event = try #require(calendar.events.first)
        #expect(calendar.events.count == 1)
        #expect(event.summary == "The section 3.6.6 alarms")
        #expect(event.alarms == [
            ICalAlarm(trigger: .absolute(try utc("1997-03-17T13:30:00Z")), action: "AUDIO", description: nil, repeatCount: 4, repeatIntervalSeconds: 900),
            ICalAlarm(
                trigger: .relative(seconds: -1800, fromEnd: false), action: "DISPLAY",
                description: "Breakfast meeting with executive\nteam at 8:30 AM EST.", repeatCount: 2, repeatIntervalSeconds: 900),
            ICalAlarm(
                trigger: .relative(seconds: -2 * 86_400, fromEnd: true), action: "EMAIL",
                description: "A draft agenda needs to be sent out to the attendees to the weekly managers meeting (MGR-LIST). Attached is a pointer the document template for the agenda file.",
                repeatCount: nil, repeatIntervalSeconds: nil),
        ])
    }

    /// The fixtures have LF line ends; the same text with CRLF (as the RFC's wire format
    /// has it) reads the same.
    @Test(arguments: ["rfc5545-4-conference.ics", "rfc5545-4-meeting.ics", "rfc5545-3.6.6-alarms.ics", "rfc5545-4-journal.ics"])
    func crlfReadsLikeLF(file: String) throws {
        let text = try Fixture.text(file)
        #expect(!text.contains("\r"))
        let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try ICalendar.parse(crlf) == ICalendar.parse(text))
    }
}

import Foundation
import Platform
import Testing

@testable import RemindersService

@Suite struct ICalendarValueTests {
    // MARK: DURATION

    @Test(arguments: [
        ("P1W", 604_800), ("P1DT2H", 93_600), ("-PT15M", -900), ("+PT15M", 900), ("PT0S", 0), ("P0D", 0),
        ("-P0DT0H10M0S", -600), ("PT1H30M", 5_400), ("P2D", 172_800), ("PT90M", 5_400), ("P1W2D", 777_600),
        ("pt5m", 300), ("P1DT1S", 86_401),
    ])
    func durations(text: String, seconds: Int) {
        #expect(ICalTime.duration(text) == seconds)
    }

    @Test(arguments: ["", "P", "PT", "P1DT", "1H", "P1H", "PT1D", "PT30M1H", "P1D1W", "P-1D", "PT1.5H", "P1234567890D", "--PT1M", "P1DT2H extra"])
    func notDurations(text: String) {
        #expect(ICalTime.duration(text) == nil)
    }

    @Test func durationsFormatAndReadBack() {
        for seconds in [0, 1, 59, 60, 3_600, 86_400, 604_800, 1_209_600, 93_784, -900, -172_800, 90_061, Int(Int32.max)] {
            let text = ICalTime.formatDuration(seconds)
            #expect(ICalTime.duration(text) == seconds, "\(seconds) -> \(text)")
        }
        #expect(ICalTime.formatDuration(-900) == "-PT15M")
        #expect(ICalTime.formatDuration(604_800) == "P1W")
        #expect(ICalTime.formatDuration(93_600) == "P1DT2H")
    }

    // MARK: DATE, DATE-TIME

    @Test func dateTimes() throws {
        #expect(ICalTime.date("20240229") == LocalDate(validYear: 2024, month: 2, day: 29))
        #expect(ICalTime.date("20230229") == nil)
        #expect(ICalTime.date("2024022") == nil)
        let parsed = try #require(ICalTime.dateTime("20270105T093015Z"))
        #expect(parsed.local == (try local("2027-01-05T09:30:15")))
        #expect(parsed.isUTC)
        #expect(ICalTime.dateTime("20270105t093015")?.isUTC == false)
        #expect(ICalTime.dateTime("19981231T235960Z")?.local == (try local("1998-12-31T23:59:59")), "a leap second reads as :59")
        for bad in ["20270105T093015X", "20270105 093015", "20270105T246000", "20270105T093061", "20270105T0930150", "+2027015T093015"] {
            #expect(ICalTime.dateTime(bad) == nil, "\(bad)")
        }
    }

    @Test func bareDateWithoutValueParameterIsADate() throws {
        let calendar = try ICalendar.parse(wrapped(["BEGIN:VEVENT", "UID:a", "DTSTART:20270105", "END:VEVENT"]))
        #expect(calendar.events.first?.start == .date(try day("2027-01-05")))
    }

    @Test func utcWinsOverTZID() throws {
        let calendar = try ICalendar.parse(wrapped(["BEGIN:VEVENT", "UID:a", "DTSTART;TZID=Unknown/Zone:20270105T093000Z", "END:VEVENT"]))
        #expect(calendar.events.first?.start == .utc(try utc("2027-01-05T09:30:00Z")))
    }

    @Test func timestampsInOtherFormsAreConverted() throws {
        let calendar = try ICalendar.parse(wrapped(eventLines([
            "CREATED;TZID=Europe/Moscow:20270105T120000", "LAST-MODIFIED:20270106T080000",
        ])))
        #expect(calendar.events.first?.created == (try utc("2027-01-05T09:00:00Z")))
        #expect(calendar.events.first?.lastModified == (try utc("2027-01-06T08:00:00Z")))
    }

    // MARK: TEXT

    @Test func textUnescaping() {
        #expect(ICalText.unescape(#"a\,b\;c\\d\ne\Nf"#) == "a,b;c\\d\ne\nf")
        #expect(ICalText.unescape(#"C:\Users\x"#) == #"C:\Users\x"#, "unknown escapes are kept as written")
        #expect(ICalText.unescape(#"trailing\"#) == #"trailing\"#)
        #expect(ICalText.list(#"a,b\,c,,d\\,e"#) == ["a", "b,c", "", "d\\", "e"])
    }

    @Test func categoriesFromSeveralLines() throws {
        let calendar = try ICalendar.parse(wrapped(eventLines(["CATEGORIES:Work, Family ,", "categories:School\\, 5B"])))
        #expect(calendar.events.first?.categories == ["Work", "Family", "School, 5B"])
    }

    // MARK: Content lines

    @Test func contentLineParameters() throws {
        let line = try ICalLexer.contentLine(Array(#"attendee;cn="Doe, John: Team; Lead";Member="a:b","c";x-y=1,2:mailto:j@example.com"#.utf8), line: 3)
        #expect(line == ICalContentLine(
            name: "ATTENDEE",
            parameters: [
                ICalParameter(name: "CN", values: ["Doe, John: Team; Lead"]), ICalParameter(name: "MEMBER", values: ["a:b", "c"]),
                ICalParameter(name: "X-Y", values: ["1", "2"]),
            ],
            value: "mailto:j@example.com", line: 3))
        let empty = try ICalLexer.contentLine(Array("LOCATION:".utf8), line: 1)
        #expect(empty.value == "")
        let colonInValue = try ICalLexer.contentLine(Array("URL:http://example.com:8080/a;b".utf8), line: 1)
        #expect(colonInValue.value == "http://example.com:8080/a;b")
    }

    @Test func namesAreCaseInsensitive() throws {
        let text = "begin:vcalendar\nversion:2.0\nbegin:vevent\nuid:a\ndtstart;value=date:20270105\nsummary:lower\nrrule:FREQ=DAILY\nbegin:valarm\naction:display\ntrigger;related=end:-pt5m\nend:valarm\nend:vevent\nend:vcalendar\n"
        let event = try #require(try ICalendar.parse(text).events.first)
        #expect(event.summary == "lower")
        #expect(event.start == .date(try day("2027-01-05")))
        #expect(event.alarms == [ICalAlarm(trigger: .relative(seconds: -300, fromEnd: true), action: "DISPLAY")])
    }

    @Test func unfoldingWithTabsAndBlankLines() throws {
        let text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20270105T093000Z\r\nSUMMARY:one\r\n\ttwo\r\n  three\r\n\r\nEND:VEVENT\r\nEND:VCALENDAR"
        #expect(try ICalendar.parse(text).events.first?.summary == "onetwo three")
    }

    @Test func extraCarriageReturnsBeforeLineFeed() throws {
        let text = wrapped(eventLines(["SUMMARY:doubled"])).replacingOccurrences(of: "\n", with: "\r\r\n")
        #expect(try ICalendar.parse(text).events.first?.summary == "doubled")
    }

    @Test func severalCalendarsAreMerged() throws {
        let first = wrapped(["X-WR-CALNAME:First"] + eventLines(uid: "1"))
        let second = wrapped(["X-WR-CALNAME:Second"] + eventLines(uid: "2"))
        let calendar = try ICalendar.parse(first + "\n" + second)
        #expect(calendar.name == "First")
        #expect(calendar.events.map(\.uid) == ["1", "2"])
    }

    @Test func skippedComponentsAreNotRead() throws {
        let todo = ["BEGIN:VTODO", "UID:t", "DUE:not a date", "BEGIN:VALARM", "TRIGGER:nonsense", "END:VALARM", "END:VTODO"]
        let calendar = try ICalendar.parse(wrapped(todo + eventLines(["BEGIN:X-APPLE-STRUCTURED", "X:1", "END:X-APPLE-STRUCTURED"])))
        #expect(calendar.events.count == 1)
    }

    // MARK: Time zones

    @Test(arguments: [
        ("Europe/Berlin", "Europe/Berlin"), ("UTC", "UTC"), ("America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"),
        ("/mozilla.org/20050126_1/Europe/Berlin", "Europe/Berlin"),
        ("/freeassociation.sourceforge.net/Tzfile/Europe/Berlin", "Europe/Berlin"),
        ("/freeassociation.sourceforge.net/Tzfile/America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"),
        ("/softwarestudio.org/Olson_20011030_5/America/New_York", "America/New_York"),
        ("W. Europe Standard Time", "Europe/Berlin"), ("Russian Standard Time", "Europe/Moscow"),
        ("Eastern Standard Time", "America/New_York"), ("Central Standard Time", "America/Chicago"),
        ("Mountain Standard Time", "America/Denver"), ("Pacific Standard Time", "America/Los_Angeles"),
        ("GMT Standard Time", "Europe/London"), ("pacific standard time", "America/Los_Angeles"),
    ])
    func tzidForms(tzid: String, zone: String) {
        var resolver = ICalZoneResolver()
        #expect(resolver.ianaName(for: tzid) == zone)
    }

    @Test func unknownTZIDs() {
        var resolver = ICalZoneResolver()
        for tzid in ["", "Mars/Olympus_Mons", "/mozilla.org/20050126_1/Mars/Olympus", "Some Standard Time", "europe/berlin"] {
            #expect(resolver.ianaName(for: tzid) == nil, "\(tzid)")
        }
    }

    @Test func everyWindowsNameMapsToAKnownZone() {
        for (windows, iana) in ICalZoneResolver.windowsZones {
            #expect(ICalZoneResolver.isZone(iana), "\(windows) -> \(iana)")
        }
    }

    @Test func customTZIDWithXLICLocation() throws {
        let text = wrapped([
            "BEGIN:VTIMEZONE", "TZID:Berlin, Germany (custom)", "X-LIC-LOCATION:Europe/Berlin", "BEGIN:STANDARD", "DTSTART:19701025T030000",
            "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "END:STANDARD", "END:VTIMEZONE",
        ] + eventLines(["DTEND;TZID=\"Berlin, Germany (custom)\":20270105T110000"]))
        #expect(try ICalendar.parse(text).events.first?.end == .zoned(try local("2027-01-05T11:00:00"), zone: "Europe/Berlin"))
    }

    /// The VTIMEZONE may come after the events that use it.
    @Test func timeZoneDefinedAfterItsUse() throws {
        let text = wrapped(eventLines(["DTEND;TZID=Custom:20270105T200000"]) + [
            "BEGIN:VTIMEZONE", "TZID:Custom", "X-LIC-LOCATION:Asia/Tokyo", "END:VTIMEZONE",
        ])
        #expect(try ICalendar.parse(text).events.first?.end == .zoned(try local("2027-01-05T20:00:00"), zone: "Asia/Tokyo"))
    }
}

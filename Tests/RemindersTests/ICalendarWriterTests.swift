import Foundation
import Platform
import PropertyBased
import SharedTesting
import Testing

@testable import RemindersService

@Suite struct ICalendarWriterTests {
    static let now = Date(timeIntervalSince1970: 1_798_761_600)  // 2027-01-01T00:00:00Z

    static func sample() throws -> ICalCalendar {
        let moscow = "Europe/Moscow"
        let event = ICalEvent(
            uid: "weekly@example.com", summary: "Планёрка, важная; очень\nвторая строка \\ с обратной косой",
            description: String(repeating: "Длинное описание, которое придётся сложить. ", count: 6), location: "Room 5",
            start: .zoned(try local("2027-01-11T10:00:00"), zone: moscow), end: .zoned(try local("2027-01-11T11:00:00"), zone: moscow),
            rrule: "FREQ=WEEKLY;BYDAY=MO",
            exdates: [
                .zoned(try local("2027-02-22T10:00:00"), zone: moscow), .zoned(try local("2027-03-08T10:00:00"), zone: moscow),
                .date(try day("2027-05-03")), .utc(try utc("2027-05-10T07:00:00Z")),
            ],
            alarms: [
                ICalAlarm(trigger: .relative(seconds: -900, fromEnd: false), action: "DISPLAY", description: "Через 15 минут"),
                ICalAlarm(trigger: .absolute(try utc("2027-01-10T18:00:00Z")), action: "AUDIO", repeatCount: 2, repeatIntervalSeconds: 300),
            ],
            categories: ["Работа", "a, b"], status: "CONFIRMED", sequence: 3,
            lastModified: try utc("2026-12-01T10:00:00Z"), created: try utc("2026-11-01T09:00:00Z"))
        return ICalCalendar(productID: "-//Reminders//EN", name: "Напоминания", events: [event])
    }

    @Test func writesTheRequiredFrame() throws {
        let text = ICalendar.write(try Self.sample(), productID: "-//Reminders//EN", now: Self.now)
        let lines = text.components(separatedBy: "\r\n")
        #expect(Array(lines.prefix(5)) == ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Reminders//EN", "CALSCALE:GREGORIAN", "X-WR-CALNAME:Напоминания"])
        #expect(text.hasSuffix("END:VCALENDAR\r\n"))
        #expect(lines.filter { $0 == "DTSTAMP:20270101T000000Z" }.count == 1)
        #expect(lines.contains("DTSTART;TZID=Europe/Moscow:20270111T100000"))
        #expect(lines.contains("EXDATE;TZID=Europe/Moscow:20270222T100000,20270308T100000"))
        #expect(lines.contains("EXDATE;VALUE=DATE:20270503"))
        #expect(lines.contains("EXDATE:20270510T070000Z"))
        #expect(lines.contains("TRIGGER:-PT15M"))
        #expect(lines.contains("TRIGGER;VALUE=DATE-TIME:20270110T180000Z"))
        #expect(lines.contains("CATEGORIES:Работа,a\\, b"))
        #expect(lines.contains("CREATED:20261101T090000Z"))
    }

    @Test func linesAreCRLFAndFoldedAt75OctetsOnCharacterBoundaries() throws {
        let text = ICalendar.write(try Self.sample(), productID: "-//Reminders//EN", now: Self.now)
        let bytes = Array(text.utf8)
        // Every LF is preceded by a CR, every CR followed by an LF.
        for (index, byte) in bytes.enumerated() where byte == ICalASCII.lineFeed {
            #expect(index > 0 && bytes[index - 1] == ICalASCII.carriageReturn)
        }
        #expect(bytes.enumerated().allSatisfy { $0.element != ICalASCII.carriageReturn || bytes.indices.contains($0.offset + 1) && bytes[$0.offset + 1] == ICalASCII.lineFeed })
        let physical = bytes.split(separator: ICalASCII.lineFeed).map { Array($0.dropLast()) }
        #expect(physical.allSatisfy { $0.count <= 75 })
        #expect(physical.allSatisfy { String(validating: $0, as: UTF8.self) != nil }, "no UTF-8 sequence split")
        #expect(physical.filter { $0.first == ICalASCII.space }.count >= 4, "the long Cyrillic description is folded")
    }

    @Test func textIsEscaped() throws {
        let event = ICalEvent(uid: "u;1,2", summary: "a, b; c \\ d\nnext\r\nthird\rfourth\u{7}", start: .date(try day("2027-01-01")))
        let text = ICalendar.write(ICalCalendar(productID: nil, name: nil, events: [event]), productID: "p", now: Self.now)
        #expect(text.contains("\r\nUID:u\\;1\\,2\r\n"))
        #expect(text.contains("\r\nSUMMARY:a\\, b\\; c \\\\ d\\nnext\\nthird\\nfourth\r\n"))
        #expect(try ICalendar.parse(text).events.first?.summary == "a, b; c \\ d\nnext\nthird\nfourth")
    }

    @Test func foldKeepsMultiByteCharactersWhole() {
        var writer = ICalWriter()
        let line = "SUMMARY:" + String(repeating: "ж", count: 40) + String(repeating: "😀", count: 30)
        writer.add(line)
        let physical = writer.output.components(separatedBy: "\r\n").dropLast()
        #expect(physical.allSatisfy { $0.utf8.count <= 75 })
        #expect(physical.first?.utf8.count == 74, "8 + 33 Cyrillic letters of 2 octets; a 34th would make 76")
        #expect(physical.dropFirst().allSatisfy { $0.hasPrefix(" ") })
        #expect(physical.enumerated().map { $0.offset == 0 ? $0.element : String($0.element.dropFirst()) }.joined() == line)
    }

    @Test func durationAndRelatedEnd() throws {
        let event = ICalEvent(
            uid: "d", start: .floating(try local("2027-01-01T09:00:00")), durationSeconds: 93_784,
            alarms: [ICalAlarm(trigger: .relative(seconds: 300, fromEnd: true), action: "DISPLAY")])
        let text = ICalendar.write(ICalCalendar(productID: nil, name: nil, events: [event]), productID: "p", now: Self.now)
        #expect(text.contains("\r\nDTSTART:20270101T090000\r\n"))
        #expect(text.contains("\r\nDURATION:P1DT2H3M4S\r\n"))
        #expect(text.contains("\r\nTRIGGER;RELATED=END:PT5M\r\n"))
        #expect(!text.contains("SUMMARY"), "an empty summary is not written")
    }

    /// The VTIMEZONE written for a zone: the current rule as yearly BYDAY rules.
    @Test func timeZoneBlocks() {
        #expect(ICalWriter.timeZone("Europe/Berlin", now: Self.now) == [
            "BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "X-LIC-LOCATION:Europe/Berlin",
            "BEGIN:DAYLIGHT", "DTSTART:19700329T020000", "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200", "END:DAYLIGHT",
            "BEGIN:STANDARD", "DTSTART:19701025T030000", "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "END:STANDARD",
            "END:VTIMEZONE",
        ])
        #expect(ICalWriter.timeZone("America/New_York", now: Self.now).filter { $0.hasPrefix("RRULE") || $0.hasPrefix("DTSTART") } == [
            "DTSTART:19700308T020000", "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU", "DTSTART:19701101T020000", "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU",
        ])
        #expect(ICalWriter.timeZone("Asia/Kolkata", now: Self.now) == [
            "BEGIN:VTIMEZONE", "TZID:Asia/Kolkata", "X-LIC-LOCATION:Asia/Kolkata", "BEGIN:STANDARD", "DTSTART:19700101T000000",
            "TZOFFSETFROM:+0530", "TZOFFSETTO:+0530", "END:STANDARD", "END:VTIMEZONE",
        ])
        #expect(ICalWriter.timeZone("Not/AZone", now: Self.now).isEmpty)
    }

    @Test func oneTimeZoneBlockPerZoneUsed() throws {
        let text = ICalendar.write(try Self.sample(), productID: "p", now: Self.now)
        #expect(text.components(separatedBy: "BEGIN:VTIMEZONE").count == 2)
        #expect(text.contains("TZID:Europe/Moscow\r\nX-LIC-LOCATION:Europe/Moscow\r\n"))
    }

    @Test func sampleRoundTrips() throws {
        let calendar = try Self.sample()
        #expect(try ICalendar.parse(ICalendar.write(calendar, productID: "-//Reminders//EN", now: Self.now)) == calendar)
    }

    // MARK: Generated events

    /// `parse(write(x)) == x` for generated calendars: all four kinds of date-time,
    /// Cyrillic, emoji, long text, `,` `;` `\` and line breaks in text, EXDATEs of every
    /// kind, relative and absolute alarms, optional fields present and absent.
    @Test func generatedCalendarsRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed in
            var generator = SplitMix64(seed: seed)
            let calendar = Self.randomCalendar(using: &generator)
            let text = ICalendar.write(calendar, productID: "-//Reminders//Test//EN", now: Self.now)
            do {
                let parsed = try ICalendar.parse(text)
                #expect(parsed == calendar, "seed \(seed)")
            } catch {
                Issue.record("seed \(seed): \(error)\n\(text)")
            }
        }
    }

    static let zones = ["Europe/Moscow", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "UTC", "Australia/Lord_Howe", "America/Argentina/Buenos_Aires"]
    static let alphabet = Array("abcXYZ019 ,;:\\\"\n\tЖжЁёщ«»—€😀👩‍👩‍👧é")

    static func randomText(using generator: inout SplitMix64, maximum: Int = 120) -> String {
        let count = Int.random(in: 0...maximum, using: &generator)
        return String((0..<count).map { _ in alphabet.randomElement(using: &generator) ?? "a" })
    }

    static func randomLocal(using generator: inout SplitMix64) -> LocalDateTime {
        let date = LocalDate(daysSinceEpoch: Int64.random(in: -25_000...40_000, using: &generator))
        return LocalDateTime(date: date, time: LocalTime(secondOfDay: Int.random(in: 0..<86_400, using: &generator)) ?? .midnight)
    }

    static func randomDateTime(using generator: inout SplitMix64) -> ICalDateTime {
        let local = randomLocal(using: &generator)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return .date(local.date)
        case 1: return .floating(local)
        case 2: return .zoned(local, zone: zones.randomElement(using: &generator) ?? "UTC")
        default: return .utc(ICalTime.utcInstant(local))
        }
    }

    /// A later value of the same kind (and zone), for DTEND.
    static func later(_ start: ICalDateTime, using generator: inout SplitMix64) -> ICalDateTime {
        let days = Int.random(in: 0...3, using: &generator)
        switch start {
        case .date(let date): return .date(date.adding(days: days + 1))
        case .floating(let local): return .floating(LocalDateTime(date: local.date.adding(days: days + 1), time: local.time))
        case .zoned(let local, let zone): return .zoned(LocalDateTime(date: local.date.adding(days: days + 1), time: local.time), zone: zone)
        case .utc(let instant): return .utc(instant.addingTimeInterval(TimeInterval(Int.random(in: 0...200_000, using: &generator))))
        }
    }

    static func randomAlarm(using generator: inout SplitMix64) -> ICalAlarm {
        let trigger: ICalAlarm.Trigger = Bool.random(using: &generator)
            ? .relative(seconds: Int.random(in: -2_000_000...2_000_000, using: &generator), fromEnd: Bool.random(using: &generator))
            : .absolute(ICalTime.utcInstant(randomLocal(using: &generator)))
        let repeats = Bool.random(using: &generator)
        return ICalAlarm(
            trigger: trigger, action: ["DISPLAY", "AUDIO", "EMAIL"].randomElement(using: &generator) ?? "DISPLAY",
            description: Bool.random(using: &generator) ? randomText(using: &generator) : nil,
            repeatCount: repeats ? Int.random(in: 0...10, using: &generator) : nil,
            repeatIntervalSeconds: repeats ? Int.random(in: 0...100_000, using: &generator) : nil)
    }

    static func randomEvent(using generator: inout SplitMix64) -> ICalEvent {
        func maybe<T>(_ make: (inout SplitMix64) -> T) -> T? { Bool.random(using: &generator) ? make(&generator) : nil }
        let start = randomDateTime(using: &generator)
        var event = ICalEvent(uid: "uid-" + randomText(using: &generator, maximum: 20) + "@example.com", start: start)
        event.summary = randomText(using: &generator, maximum: 400)
        event.description = maybe { randomText(using: &$0, maximum: 800) }
        event.location = maybe { randomText(using: &$0) }
        if Bool.random(using: &generator) {
            event.end = later(start, using: &generator)
        } else {
            event.durationSeconds = maybe { Int.random(in: 0...3_000_000, using: &$0) }
        }
        event.rrule = maybe { ["FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE", "FREQ=MONTHLY;BYDAY=-1FR", "FREQ=YEARLY;UNTIL=20301231T000000Z"].randomElement(using: &$0) ?? "FREQ=DAILY" }
        event.exdates = (0..<Int.random(in: 0...6, using: &generator)).map { _ in randomDateTime(using: &generator) }
        event.alarms = (0..<Int.random(in: 0...3, using: &generator)).map { _ in randomAlarm(using: &generator) }
        event.categories = (0..<Int.random(in: 0...3, using: &generator))
            .map { _ in randomText(using: &generator, maximum: 15).trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        event.status = maybe { ["TENTATIVE", "CONFIRMED", "CANCELLED"].randomElement(using: &$0) ?? "CONFIRMED" }
        event.sequence = maybe { Int.random(in: 0...1_000, using: &$0) }
        event.lastModified = maybe { ICalTime.utcInstant(randomLocal(using: &$0)) }
        event.created = maybe { ICalTime.utcInstant(randomLocal(using: &$0)) }
        event.recurrenceID = maybe { randomDateTime(using: &$0) }
        return event
    }

    static func randomCalendar(using generator: inout SplitMix64) -> ICalCalendar {
        let name = Bool.random(using: &generator) ? randomText(using: &generator) : nil
        let events = (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomEvent(using: &generator) }
        return ICalCalendar(productID: "-//Reminders//Test//EN", name: name, events: events)
    }
}

import Foundation
import Platform
import PropertyBased
import SharedTesting
import Testing

@testable import RemindersService

/// Files the parser refuses, each with a clear reason (and its line where it has one), and
/// random damage to valid files, which must never crash it.
@Suite struct ICalendarErrorTests {
    // MARK: Structure

    @Test func eventNeverClosed() throws {
        let error = parseError("BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:a\nDTSTART:20270101T090000Z\n")
        #expect(error == ICalError(line: 3, reason: "BEGIN:VEVENT is never closed (no END:VEVENT)"))
    }

    @Test func mismatchedEnd() throws {
        let error = parseError(wrapped(["BEGIN:VEVENT", "UID:a", "DTSTART:20270101T090000Z", "END:VALARM"]))
        #expect(error?.line == 7)
        #expect(error?.description == "line 7: END:VALARM where END:VEVENT was expected (BEGIN:VEVENT is on line 4)")
    }

    @Test func calendarClosedWhileEventOpen() throws {
        let error = parseError("BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nDTSTART:20270101T090000Z\nEND:VCALENDAR\n")
        #expect(error == ICalError(line: 5, reason: "END:VCALENDAR where END:VEVENT was expected (BEGIN:VEVENT is on line 2)"))
    }

    @Test func endWithoutBegin() throws {
        let error = parseError(wrapped(eventLines()) + "END:VEVENT\n")
        #expect(error == ICalError(line: 9, reason: "END:VEVENT without a BEGIN:VEVENT"))
    }

    @Test func contentOutsideCalendar() throws {
        #expect(parseError("SUMMARY:hello\n")?.description == "line 1: not an iCalendar file: it must start with BEGIN:VCALENDAR")
        #expect(parseError("BEGIN:VEVENT\nEND:VEVENT\n")?.description == "line 1: not an iCalendar file: it must start with BEGIN:VCALENDAR, not BEGIN:VEVENT")
        #expect(parseError(wrapped([]) + "X-TRAILER:1\n")?.description == "line 5: X-TRAILER outside BEGIN:VCALENDAR ... END:VCALENDAR")
    }

    @Test func textThatIsNotACalendar() throws {
        let html = "<!DOCTYPE html>\n<html><body>Not found</body></html>\n"
        #expect(parseError(html) == ICalError(line: 1, reason: "not an iCalendar file: it must start with BEGIN:VCALENDAR"))
        #expect(parseError("name,date\nAnna,1990-03-14\n") == ICalError(line: 1, reason: "not an iCalendar file: it must start with BEGIN:VCALENDAR"))
    }

    @Test func emptyFile() throws {
        #expect(parseError("") == ICalError(line: nil, reason: "not an iCalendar file: there is no BEGIN:VCALENDAR"))
        #expect(parseError("\r\n\n  \n")?.line == 3)  // a continuation with nothing before it
    }

    @Test func nestingTooDeep() throws {
        let depth = ICalLexer.maximumDepth + 1
        let body = (1..<depth).map { "BEGIN:X-LEVEL\($0)" } + (1..<depth).reversed().map { "END:X-LEVEL\($0)" }
        let error = parseError(wrapped(body))
        #expect(error?.line == 4 + depth - 2)
        #expect(error?.reason == "components nested more than 10 deep")
    }

    // MARK: Lines

    @Test func malformedContentLines() throws {
        #expect(parseError(wrapped(eventLines(["this line has no colon"])))?.description == "line 7: this line has no colon is not a content line (NAME:value)")
        #expect(parseError(wrapped(eventLines(["SUMMARY;LANGUAGE:x"])))?.reason == "SUMMARY: a parameter is not of the form NAME=value")
        #expect(parseError(wrapped(eventLines(["SUMMARY;X-A=\"open:value"])))?.reason == "SUMMARY: the quoted value of X-A is not closed")
        #expect(parseError(wrapped(eventLines([":value"])))?.line == 7)
    }

    @Test func lineTooLong() throws {
        let long = "DESCRIPTION:" + String(repeating: "a", count: ICalLexer.maximumLineOctets)
        let error = parseError(wrapped(eventLines([long])))
        #expect(error == ICalError(line: 7, reason: "a line longer than 10000 octets (after unfolding)"))
        // Also when the length comes from folded continuation lines.
        let folded = ["DESCRIPTION:start"] + Array(repeating: " " + String(repeating: "b", count: 74), count: 140)
        #expect(parseError(wrapped(eventLines(folded)))?.line == 7)
        // Exactly at the limit is fine.
        let atLimit = "DESCRIPTION:" + String(repeating: "c", count: ICalLexer.maximumLineOctets - 12)
        #expect(try ICalendar.parse(wrapped(eventLines([atLimit]))).events.first?.description?.count == ICalLexer.maximumLineOctets - 12)
    }

    @Test func controlCharacter() throws {
        let error = parseError(wrapped(eventLines(["SUMMARY:a\u{0}b"])))
        #expect(error == ICalError(line: 7, reason: "a control character (0x00) in the text"))
        // A tab is allowed.
        #expect(try ICalendar.parse(wrapped(eventLines(["SUMMARY:a\tb"]))).events.first?.summary == "a\tb")
    }

    // MARK: Encodings and other files

    @Test func invalidUTF8() throws {
        var bytes = Array(wrapped(eventLines(["SUMMARY:caf"])).utf8)
        let index = try #require(bytes.firstIndex(of: UInt8(ascii: "f")))
        bytes.insert(0xE9, at: index + 1)  // Latin-1 é
        let error = parseError { () throws(ICalError) in try ICalendar.parse(bytes) }
        #expect(error == ICalError(line: 7, reason: "the text is not UTF-8 (byte 0xE9); save the file as UTF-8"))
    }

    @Test func byteOrderMarkIsSkipped() throws {
        let text = wrapped(eventLines(["SUMMARY:with BOM"]))
        #expect(try ICalendar.parse([0xEF, 0xBB, 0xBF] + Array(text.utf8)).events.first?.summary == "with BOM")
        #expect(try ICalendar.parse("\u{FEFF}" + text).events.first?.summary == "with BOM")
    }

    @Test func pngFile() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x01, 0x00]
        let error = parseError { () throws(ICalError) in try ICalendar.parse(png) }
        #expect(error == ICalError(line: nil, reason: "not an iCalendar file: this is a PNG image"))
    }

    @Test func otherBinaryFiles() throws {
        let utf16: [UInt8] = [0xFF, 0xFE] + wrapped(eventLines()).utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(parseError { () throws(ICalError) in try ICalendar.parse(utf16) }?.reason == "not an iCalendar file: this is UTF-16 text; save it as UTF-8")
        #expect(parseError { () throws(ICalError) in try ICalendar.parse(Array("%PDF-1.7\n".utf8)) }?.reason == "not an iCalendar file: this is a PDF document")
        // Bytes without a known signature: refused on line 1 all the same.
        var generator = SplitMix64(seed: 7)
        let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(parseError { () throws(ICalError) in try ICalendar.parse(noise) }?.line == 1)
    }

    @Test func fileOverTheLimit() throws {
        let text = wrapped(eventLines(["DESCRIPTION:" + String(repeating: "x", count: 5_000)]))
        let copies = ICalendar.maximumBytes / text.utf8.count + 1
        let big = String(repeating: text, count: copies)
        let reason = "the file is \(big.utf8.count) bytes; at most 2000000 can be imported"
        #expect(parseError(big) == ICalError(line: nil, reason: reason))
        #expect(parseError { () throws(ICalError) in try ICalendar.parse(Array(big.utf8)) } == ICalError(line: nil, reason: reason))
    }

    @Test func tooManyEvents() throws {
        let events = (0...ICalendar.maximumEvents).flatMap { eventLines(uid: "e\($0)") }
        let error = parseError(wrapped(events))
        #expect(error == ICalError(line: 4 + 4 * ICalendar.maximumEvents, reason: "more than 5000 events: split the file"))
        #expect(try ICalendar.parse(wrapped(Array(events.dropLast(4)))).events.count == ICalendar.maximumEvents)
    }

    @Test func tooManyAlarmsAndExceptionDates() throws {
        let alarm = ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT5M", "END:VALARM"]
        let alarms = Array(Array(repeating: alarm, count: ICalendar.maximumAlarms + 1).joined())
        #expect(parseError(wrapped(eventLines(alarms)))?.reason == "more than 100 alarms in one event")

        let exdates = (1...1_001).map { "EXDATE:" + ICalTime.format(LocalDate(daysSinceEpoch: 20_000 + Int64($0))) }
        let error = parseError(wrapped(eventLines(exdates)))
        #expect(error == ICalError(line: 7 + 1_000, reason: "more than 1000 EXDATE values in one event"))
    }

    // MARK: Values

    @Test func badDateTime() throws {
        let error = parseError(wrapped(["BEGIN:VEVENT", "UID:a", "DTSTART:20271340T090000", "END:VEVENT"]))
        #expect(error?.description == "line 6: DTSTART: 20271340T090000 is not a date-time")
        for value in ["20270230T090000", "20270101T240000", "20270101T096000", "2027-01-01T09:00:00", "20270101T0900", "20270101T090000+01"] {
            let error = parseError(wrapped(["BEGIN:VEVENT", "UID:a", "DTSTART:\(value)", "END:VEVENT"]))
            #expect(error == ICalError(line: 6, reason: "DTSTART: \(value) is not a date-time"))
        }
        #expect(parseError(wrapped(["BEGIN:VEVENT", "UID:a", "DTSTART;VALUE=DATE:20270229", "END:VEVENT"]))?.reason == "DTSTART: 20270229 is not a date (YYYYMMDD)")
        #expect(parseError(wrapped(eventLines(["EXDATE:20270105T093000Z,2027010"])))?.reason == "EXDATE: 2027010 is not a date-time")
        #expect(parseError(wrapped(eventLines(["RECURRENCE-ID;VALUE=PERIOD:20270105T093000Z/PT1H"])))?.reason == "RECURRENCE-ID: VALUE=PERIOD is not supported (DATE or DATE-TIME)")
    }

    @Test func missingUIDOrStart() throws {
        let noUID = parseError(wrapped(["BEGIN:VEVENT", "DTSTART:20270101T090000Z", "SUMMARY:x", "END:VEVENT"]))
        #expect(noUID?.description == "line 4: a VEVENT without a UID (every event needs one)")
        let noStart = parseError(wrapped(["BEGIN:VEVENT", "UID:abc", "END:VEVENT"]))
        #expect(noStart?.description == "line 4: the VEVENT abc has no DTSTART")
        #expect(parseError(wrapped(["BEGIN:VEVENT", "UID:", "DTSTART:20270101T090000Z", "END:VEVENT"]))?.reason == "UID is empty")
    }

    @Test func unknownTimeZone() throws {
        let error = parseError(wrapped(eventLines(["DTEND;TZID=Mars/Olympus_Mons:20270105T100000"])))
        #expect(error?.description == "line 7: DTEND: unknown time zone TZID=Mars/Olympus_Mons (use an IANA name such as Europe/Berlin)")
        // A VTIMEZONE without X-LIC-LOCATION does not make a custom name known.
        let custom = wrapped(["BEGIN:VTIMEZONE", "TZID:My Zone", "BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:+0100",
            "TZOFFSETTO:+0100", "END:STANDARD", "END:VTIMEZONE"] + eventLines(["DTEND;TZID=My Zone:20270105T100000"]))
        #expect(parseError(custom)?.reason == "DTEND: unknown time zone TZID=My Zone (use an IANA name such as Europe/Berlin)")
        // An abbreviation Foundation resolves is not a zone a reminder may keep; GMT is one.
        #expect(parseError(wrapped(eventLines(["DTEND;TZID=EST:20270105T100000"])))?.reason == "DTEND: unknown time zone TZID=EST (use an IANA name such as Europe/Berlin)")
        #expect(try ICalendar.parse(wrapped(eventLines(["DTEND;TZID=GMT:20270105T100000"]))).events.count == 1)
    }

    @Test func propertyRules() throws {
        #expect(parseError(wrapped(eventLines(["RRULE:FREQ=DAILY", "RRULE:FREQ=WEEKLY"]))) == ICalError(line: 8, reason: "a second RRULE in one VEVENT (the first is on line 7); only one is supported"))
        #expect(parseError(wrapped(eventLines(["SUMMARY:a", "SUMMARY:b"])))?.description == "line 8: SUMMARY appears twice in one VEVENT (first on line 7)")
        #expect(parseError(wrapped(eventLines(["DTEND:20270105T103000Z", "DURATION:PT1H"])))?.reason == "DTEND and DURATION in one VEVENT (give one of them)")
        #expect(parseError(wrapped(eventLines(["DTEND:20270105T083000Z"])))?.reason == "DTEND is before DTSTART")
        #expect(parseError(wrapped(eventLines(["DTEND;VALUE=DATE:20270106"])))?.reason == "DTEND must be a date-time like DTSTART")
        #expect(parseError(wrapped(eventLines(["DURATION:-PT1H"])))?.reason == "DURATION: -PT1H is negative")
        #expect(parseError(wrapped(eventLines(["DURATION:1H"])))?.reason == "DURATION: 1H is not a duration (like PT1H)")
        #expect(parseError(wrapped(eventLines(["SEQUENCE:-1"])))?.reason == "SEQUENCE: -1 is not a whole number")
        #expect(parseError(wrapped(eventLines(["DTSTART:20270105T093000Z"])))?.reason == "DTSTART appears twice in one VEVENT (first on line 6)")
        #expect(parseError(wrapped(["VERSION:1.0"] + eventLines()))?.description == "line 4: VERSION:1.0 is not supported: only iCalendar 2.0 files can be imported")
    }

    @Test func alarmRules() throws {
        func alarmError(_ lines: [String]) -> ICalError? {
            parseError(wrapped(eventLines(["BEGIN:VALARM"] + lines + ["END:VALARM"])))
        }
        #expect(alarmError(["ACTION:DISPLAY"]) == ICalError(line: 7, reason: "a VALARM without a TRIGGER"))
        #expect(alarmError(["TRIGGER:-PT5M"]) == ICalError(line: 7, reason: "a VALARM without an ACTION"))
        #expect(alarmError(["ACTION:DISPLAY", "TRIGGER:-PT5M", "REPEAT:3"])?.reason == "a VALARM needs REPEAT and DURATION together (or neither)")
        #expect(alarmError(["ACTION:DISPLAY", "TRIGGER:soon"])?.reason == "TRIGGER: soon is not a duration (like -PT15M)")
        #expect(alarmError(["ACTION:DISPLAY", "TRIGGER;VALUE=DATE-TIME:20270105T093000"])?.reason == "TRIGGER: 20270105T093000 is not a UTC date-time (YYYYMMDDTHHMMSSZ)")
        #expect(alarmError(["ACTION:DISPLAY", "TRIGGER;RELATED=MIDDLE:-PT5M"])?.reason == "TRIGGER: RELATED=MIDDLE (START or END)")
        #expect(alarmError(["ACTION:DISPLAY", "TRIGGER:-PT5M", "TRIGGER:-PT10M"])?.reason == "TRIGGER appears twice in one VALARM (first on line 9)")
    }

    // MARK: Random damage

    /// A valid file with random damage (bytes flipped, deleted, inserted, lines duplicated,
    /// swapped or cut off) either parses or is refused with an error that has a reason and,
    /// when it names a line, a line of the file; it never crashes. What does parse also
    /// survives a write and a second read.
    @Test func randomMutationsNeverCrash() async throws {
        let bases = try ["google-calendar-export.ics", "outlook-export.ics", "python-weekly-moscow.ics", "rfc5545-3.6.6-alarms.ics"]
            .map(Fixture.bytes)
        var parsedCount = 0
        await propertyCheck(count: 1_500, input: Gen.uint64()) { seed throws in
            var generator = SplitMix64(seed: seed)
            let base = bases[Int(seed % UInt64(bases.count))]
            let damaged = Self.mutate(base, using: &generator)
            let lineCount = damaged.count { $0 == UInt8(ascii: "\n") } + 1
            let calendar: ICalCalendar
            do throws(ICalError) {
                calendar = try ICalendar.parse(damaged)
            } catch {
                #expect(!error.reason.isEmpty, "seed \(seed)")
                if let line = error.line { #expect((1...lineCount).contains(line), "seed \(seed): \(error)") }
                return
            }
            parsedCount += 1
            var expected = calendar
            expected.productID = "p"
            let written = ICalendar.write(calendar, productID: "p", now: Date(timeIntervalSince1970: 0))
            #expect(try ICalendar.parse(written) == expected, "seed \(seed)")
        }
        // Some damage is harmless (in an ignored property), most is not: both paths ran.
        #expect(parsedCount > 0)
    }

    /// A few random edits of `bytes`.
    static func mutate(_ bytes: [UInt8], using generator: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        let interesting = Array(":;,\"\\ \t\r\nTZ0123456789-=BEGIN:END:VEVENT".utf8) + [0x00, 0x80, 0xC3, 0xD0, 0xFF, 0xE2, 0xF0]
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<7, using: &generator) {
            case 0:
                bytes[at] = UInt8.random(in: 0...255, using: &generator)
            case 1:
                bytes[at] = interesting.randomElement(using: &generator) ?? 0
            case 2:
                bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...40, using: &generator)))
            case 3:
                let insert = (0..<Int.random(in: 1...8, using: &generator)).map { _ in interesting.randomElement(using: &generator) ?? 0 }
                bytes.insert(contentsOf: insert, at: at)
            case 4:
                bytes = Array(bytes.prefix(at))
            default:
                // Duplicate or move a whole line.
                var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
                let from = Int.random(in: 0..<lines.count, using: &generator)
                let to = Int.random(in: 0..<lines.count, using: &generator)
                if Bool.random(using: &generator) { lines.insert(lines[from], at: to) } else { lines.swapAt(from, to) }
                bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
            }
        }
        return bytes
    }
}

import Foundation
import Platform
import SharedTesting
import Testing

@Suite("Local dates, times and zone clocks")
struct LocalDateTests {
    func date(_ text: String) throws -> LocalDate { try #require(LocalDate(text)) }
    func time(_ text: String) throws -> LocalTime { try #require(LocalTime(text)) }
    func instant(_ text: String) throws -> Date { try #require(Instant.parse(text)) }

    @Test("dates parse only when they exist, and print back")
    func parsing() throws {
        #expect(try date("2028-02-29").description == "2028-02-29")
        for bad in ["2027-02-29", "2026-04-31", "2026-13-01", "2026-00-10", "2026-1-01", "26-01-01", "2026-01-01T00:00", ""] {
            #expect(LocalDate(bad) == nil, "\(bad)")
        }
        #expect(LocalDate(validYear: 2026, month: 2, day: 29) == nil)
        #expect(LocalDate(validYear: 2024, month: 2, day: 29) != nil)
        #expect(try JSONDecoder().decode([LocalDate].self, from: Data(#"["2026-07-01"]"#.utf8)) == [try date("2026-07-01")])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([LocalDate].self, from: Data(#"["2026-02-30"]"#.utf8)) }
    }

    @Test("times: HH:MM and HH:MM:SS inside a day")
    func times() throws {
        #expect(try time("09:30").minuteOfDay == 570)
        #expect(try time("23:59:59").secondOfDay == 86_399)
        #expect(try time("07:05:09").description == "07:05:09")
        #expect(try time("07:05:00").description == "07:05")
        for bad in ["24:00", "12:60", "12:00:60", "9:30", "12-30", "12:30:5", "", "ab:cd"] { #expect(LocalTime(bad) == nil, "\(bad)") }
    }

    @Test("days and weekdays agree with the calendar")
    func days() throws {
        #expect(try date("1970-01-01").daysSinceEpoch == 0)
        #expect(try date("1969-12-31").daysSinceEpoch == -1)
        #expect(try date("2026-11-22").isoWeekday == 7)
        #expect(try date("2026-11-23").isoWeekday == 1)
        #expect(try date("1969-12-29").isoWeekday == 1)
        #expect(try date("2026-12-31").adding(days: 1) == date("2027-01-01"))
        #expect(try date("2028-03-01").adding(days: -1) == date("2028-02-29"))
        #expect(try date("2026-01-01").days(until: date("2027-01-01")) == 365)
        #expect(try date("2028-12-31").dayOfYear == 366)
        #expect(try date("2026-02-10").daysInMonth == 28)
        #expect(LocalDate.isLeap(year: 2000) && !LocalDate.isLeap(year: 1900) && LocalDate.isLeap(year: 2028))
        var generator = SplitMix64(seed: 11)
        for _ in 0..<2_000 {
            let days = Int64.random(in: -200_000...200_000, using: &generator)
            let local = LocalDate(daysSinceEpoch: days)
            #expect(local.daysSinceEpoch == days)
            #expect(local.adding(days: 1) > local)
            #expect(local.adding(days: 7).isoWeekday == local.isoWeekday)
        }
    }

    @Test("short steps forward (a weekly series) agree with day numbers, across months, years and leap days; dates write as they print")
    func shortSteps() {
        var date = LocalDate(year: 1999, month: 12, day: 1)
        for _ in 0..<2_000 {
            for days in [0, 1, 7, 13, 14, 27, 28, 29, 31, -1, -7, 400] {
                #expect(date.adding(days: days) == LocalDate(daysSinceEpoch: date.daysSinceEpoch + Int64(days)), "\(date) + \(days)")
            }
            var text: [UInt8] = []
            date.writeText(to: &text)
            #expect(String(decoding: text, as: UTF8.self) == date.description)
            date = date.adding(days: 3)
        }
        var early: [UInt8] = []
        LocalDate(year: 7, month: 3, day: 9).writeText(to: &early)
        #expect(String(decoding: early, as: UTF8.self) == "0007-03-09")
    }

    @Test("calendar months clamp to short months: the 31st, February 29th")
    func months() throws {
        #expect(try date("2026-01-31").adding(months: 1) == date("2026-02-28"))
        #expect(try date("2028-01-31").adding(months: 1) == date("2028-02-29"))
        #expect(try date("2026-01-31").adding(months: 3) == date("2026-04-30"))
        #expect(try date("2026-03-31").adding(months: -1) == date("2026-02-28"))
        #expect(try date("2026-12-15").adding(months: 1) == date("2027-01-15"))
        #expect(try date("2026-01-15").adding(months: -13) == date("2024-12-15"))
        #expect(try date("2028-02-29").adding(years: 1) == date("2029-02-28"))
        #expect(try date("2028-02-29").adding(years: 4) == date("2032-02-29"))
        // A series "on the 31st" computed from its anchor keeps the 31st where it exists.
        let anchor = try date("2026-01-31")
        #expect((0..<4).map { anchor.adding(months: $0).description } == ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"])
        #expect(LocalDate(clampingYear: 2026, month: 6, day: 31) == (try date("2026-06-30")))
        #expect(try date("2026-01-31").months(until: date("2026-02-28")) == 1)
        #expect(try date("2026-01-15").months(until: date("2026-02-14")) == 0)
        #expect(try date("2026-01-15").months(until: date("2027-01-15")) == 12)
        #expect(try date("2026-03-15").months(until: date("2026-02-20")) == 0)
        #expect(try date("2026-03-15").months(until: date("2026-02-15")) == -1)
        var generator = SplitMix64(seed: 12)
        for _ in 0..<2_000 {
            let start = LocalDate(daysSinceEpoch: Int64.random(in: 0...40_000, using: &generator))
            let months = Int.random(in: -50...50, using: &generator)
            let moved = start.adding(months: months)
            #expect(moved.day == min(start.day, moved.daysInMonth))
            #expect((moved.year * 12 + moved.month) - (start.year * 12 + start.month) == months)
        }
    }

    @Test("the n-th and last weekday of a month")
    func weekdays() throws {
        #expect(LocalDate.weekday(7, ordinal: 2, year: 2026, month: 5) == (try date("2026-05-10")))  // second Sunday of May
        #expect(LocalDate.weekday(4, ordinal: 4, year: 2026, month: 11) == (try date("2026-11-26")))  // fourth Thursday
        #expect(LocalDate.weekday(5, ordinal: -1, year: 2026, month: 11) == (try date("2026-11-27")))  // last Friday
        #expect(LocalDate.weekday(1, ordinal: -1, year: 2026, month: 8) == (try date("2026-08-31")))
        #expect(LocalDate.weekday(1, ordinal: 5, year: 2026, month: 2) == nil)
        #expect(LocalDate.weekday(8, ordinal: 1, year: 2026, month: 2) == nil)
    }

    @Test("spring forward: a time in the gap is skipped, shifted by the gap, or refused")
    func gap() throws {
        let berlin = try #require(ZoneClock(identifier: "Europe/Berlin"))
        let night = try date("2026-03-29")
        #expect(berlin.resolve(LocalDateTime(date: night, time: try time("02:30"))) == .skipped(after: try instant("2026-03-29T01:30:00Z")))
        #expect(berlin.instant(night, try time("02:30"), gap: .reject) == nil)
        #expect(berlin.instant(night, try time("02:30")) == (try instant("2026-03-29T01:30:00Z")))
        #expect(berlin.local(try instant("2026-03-29T01:30:00Z")).description == "2026-03-29T03:30")
        #expect(berlin.instant(night, try time("01:59:59")) == (try instant("2026-03-29T00:59:59Z")))
        #expect(berlin.instant(night, try time("03:00")) == (try instant("2026-03-29T01:00:00Z")))
        // Half-hour daylight saving (Lord Howe) and a whole skipped day (Samoa, 2011).
        let lordHowe = try #require(ZoneClock(identifier: "Australia/Lord_Howe"))
        #expect(lordHowe.instant(try date("2026-10-04"), try time("02:15"), gap: .reject) == nil)
        #expect(lordHowe.local(try #require(lordHowe.instant(try date("2026-10-04"), try time("02:15")))).time == (try time("02:45")))
        let apia = try #require(ZoneClock(identifier: "Pacific/Apia"))
        #expect(apia.instant(try date("2011-12-30"), try time("12:00"), gap: .reject) == nil)
        #expect(apia.local(try #require(apia.instant(try date("2011-12-30"), try time("12:00")))).description == "2011-12-31T12:00")
        // Midnight skipped (Santiago moves its clocks at 24:00): the day starts at 01:00.
        let santiago = try #require(ZoneClock(identifier: "America/Santiago"))
        let day = try date("2026-09-06")
        #expect(santiago.local(santiago.startOfDay(day)).description == "2026-09-06T01:00")
    }

    @Test("fall back: a time in the overlap happens twice, the first by default")
    func overlap() throws {
        let berlin = try #require(ZoneClock(identifier: "Europe/Berlin"))
        let night = try date("2026-10-25")
        let earlier = try instant("2026-10-25T00:30:00Z"), later = try instant("2026-10-25T01:30:00Z")
        #expect(berlin.resolve(LocalDateTime(date: night, time: try time("02:30"))) == .repeated(earlier: earlier, later: later))
        #expect(berlin.instant(night, try time("02:30")) == earlier)
        #expect(berlin.instant(night, try time("02:30"), overlap: .later) == later)
        #expect(berlin.local(earlier) == berlin.local(later))
        #expect(berlin.offset(at: earlier) == 7_200 && berlin.offset(at: later) == 3_600)
        let minsk = try #require(ZoneClock(identifier: "Europe/Minsk"))
        #expect(minsk.resolve(LocalDateTime(date: night, time: try time("02:30"))) == .unique(try instant("2026-10-24T23:30:00Z")))
    }

    @Test("random instants in many zones: local time agrees with Foundation's calendar and resolves back")
    func againstFoundation() throws {
        var generator = SplitMix64(seed: 13)
        let zones = ["Europe/Berlin", "America/New_York", "America/Santiago", "Australia/Lord_Howe", "Pacific/Apia", "Asia/Kolkata",
                     "Europe/Minsk", "Pacific/Chatham", "America/St_Johns", "UTC", "Europe/Moscow", "Africa/Casablanca"]
        for name in zones {
            let clock = try #require(ZoneClock(identifier: name))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = clock.timeZone
            for _ in 0..<400 {
                let moment = Date(timeIntervalSince1970: TimeInterval(Int64.random(in: 0...2_500_000_000, using: &generator)))
                let local = clock.local(moment)
                let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: moment)
                #expect([local.date.year, local.date.month, local.date.day, local.time.hour, local.time.minute, local.time.second]
                    == [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second], "\(name) \(moment)")
                switch clock.resolve(local) {
                case .unique(let back): #expect(back == moment, "\(name) \(moment)")
                case .repeated(let earlier, let later): #expect(earlier == moment || later == moment, "\(name) \(moment)")
                case .skipped: Issue.record("\(name): a shown time \(local) cannot be skipped")
                }
            }
        }
    }
}

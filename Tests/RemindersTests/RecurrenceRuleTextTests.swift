import Foundation
import Platform
import Testing

@testable import RemindersService

@Suite("RRULE text")
struct RecurrenceRuleTextTests {
    @Test func parsesEveryPartOfTheSubset() throws {
        let rule = try RecurrenceRule.parse("RRULE:FREQ=MONTHLY;INTERVAL=2;BYMONTH=1,7;BYMONTHDAY=-1,15;BYDAY=MO,-1FR,+2TU;BYSETPOS=1,-1;WKST=SU;SKIP=BACKWARD;COUNT=5")
        #expect(rule.frequency == .monthly)
        #expect(rule.interval == 2)
        #expect(rule.byMonth == [1, 7])
        #expect(rule.byMonthDay == [-1, 15])
        #expect(rule.byDay == [.init(ordinal: nil, weekday: 1), .init(ordinal: -1, weekday: 5), .init(ordinal: 2, weekday: 2)])
        #expect(rule.bySetPos == [1, -1])
        #expect(rule.weekStart == 7)
        #expect(rule.skip == .backward)
        #expect(rule.count == 5)
        #expect(rule.until == nil)
    }

    @Test func writesTheCanonicalText() throws {
        let rule = try RecurrenceRule.parse("count=5;byday=-1fr;interval=2;freq=monthly")
        #expect(rule.text == "FREQ=MONTHLY;INTERVAL=2;BYDAY=-1FR;COUNT=5")
        #expect(try RecurrenceRule.parse("FREQ=WEEKLY;INTERVAL=1;WKST=MO;SKIP=OMIT").text == "FREQ=WEEKLY")
    }

    @Test(arguments: [
        "FREQ=DAILY",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;WKST=SU;UNTIL=19971007T000000Z",
        "FREQ=MONTHLY;BYMONTHDAY=-3;UNTIL=20270310",
        "FREQ=YEARLY;BYMONTH=11;BYMONTHDAY=2,3,4,5,6,7,8;BYDAY=TU;INTERVAL=4;UNTIL=20270310T090000",
        "FREQ=YEARLY;BYDAY=20MO,-53SU;COUNT=10000",
        "FREQ=MONTHLY;BYMONTHDAY=31;SKIP=FORWARD;BYSETPOS=-1",
    ])
    func textRoundTrips(_ text: String) throws {
        let rule = try RecurrenceRule.parse(text)
        #expect(try RecurrenceRule.parse(rule.text) == rule)
    }

    @Test func readsTheThreeKindsOfUntil() throws {
        #expect(try RecurrenceRule.parse("FREQ=DAILY;UNTIL=20270310").until == .date(LocalDate(year: 2027, month: 3, day: 10)))
        #expect(try RecurrenceRule.parse("FREQ=DAILY;UNTIL=20270310T090000").until == .local(RecurrenceFixtures.local("2027-03-10T09:00")))
        #expect(try RecurrenceRule.parse("FREQ=DAILY;UNTIL=20270310T080000z").until == .utc(RecurrenceFixtures.instant("2027-03-10T08:00:00Z")))
    }

    @Test func isLenientAboutCaseSpacingEmptyPartsAndRepeatedValues() throws {
        let rule = try RecurrenceRule.parse("  rrule:Freq=Weekly; byday = mo , MO ,we;;  ")
        #expect(rule.frequency == .weekly)
        #expect(rule.byDay.map(\.weekday) == [1, 3])
    }

    @Test(arguments: [
        ("", "The rule is empty: give at least FREQ (DAILY, WEEKLY, MONTHLY or YEARLY)"),
        ("RRULE:", "The rule is empty: give at least FREQ (DAILY, WEEKLY, MONTHLY or YEARLY)"),
        ("COUNT=3", "FREQ is missing: say how often the rule repeats (FREQ=DAILY, WEEKLY, MONTHLY or YEARLY)"),
        ("FREQ=FORTNIGHTLY", "FREQ: FORTNIGHTLY is not a frequency (DAILY, WEEKLY, MONTHLY or YEARLY)"),
        ("FREQ=HOURLY", "FREQ: HOURLY is not supported; use DAILY, WEEKLY, MONTHLY or YEARLY"),
        ("FREQ=MINUTELY", "FREQ: MINUTELY is not supported; use DAILY, WEEKLY, MONTHLY or YEARLY"),
        ("FREQ=SECONDLY", "FREQ: SECONDLY is not supported; use DAILY, WEEKLY, MONTHLY or YEARLY"),
        ("FREQ=DAILY;BYHOUR=9", "BYHOUR is not supported: every occurrence is at the start's time of day"),
        ("FREQ=DAILY;BYMINUTE=30", "BYMINUTE is not supported: every occurrence is at the start's time of day"),
        ("FREQ=DAILY;BYSECOND=0", "BYSECOND is not supported: every occurrence is at the start's time of day"),
        ("FREQ=YEARLY;BYWEEKNO=20", "BYWEEKNO is not supported; use BYMONTH, BYMONTHDAY or BYDAY"),
        ("FREQ=YEARLY;BYYEARDAY=100", "BYYEARDAY is not supported; use BYMONTH with BYMONTHDAY"),
        ("RSCALE=CHINESE;FREQ=YEARLY", "RSCALE=CHINESE is not supported: rules are counted in the Gregorian calendar (RSCALE=GREGORIAN)"),
        ("FREQ=DAILY;X-COLOUR=RED", "X-COLOUR is not a supported rule part (FREQ, INTERVAL, COUNT, UNTIL, BYDAY, BYMONTHDAY, BYMONTH, BYSETPOS, WKST or SKIP)"),
        ("FREQ=DAILY;COUNT", "\"COUNT\" is not a part of a rule (NAME=VALUE, such as FREQ=WEEKLY)"),
        ("FREQ=DAILY;COUNT=", "COUNT has no value"),
        ("FREQ=DAILY;FREQ=WEEKLY", "FREQ is given more than once: give each part once"),
        ("FREQ=DAILY;INTERVAL=0", "INTERVAL: 0 is not a whole number from 1 to 1000"),
        ("FREQ=DAILY;INTERVAL=1001", "INTERVAL: 1001 is not a whole number from 1 to 1000"),
        ("FREQ=DAILY;INTERVAL=two", "INTERVAL: TWO is not a whole number from 1 to 1000"),
        ("FREQ=DAILY;COUNT=0", "COUNT: 0 is not a whole number from 1 to 10000"),
        ("FREQ=DAILY;COUNT=10001", "COUNT: 10001 is not a whole number from 1 to 10000"),
        ("FREQ=DAILY;COUNT=999999999999999999999999999999", "COUNT: 999999999999999999999... is not a whole number from 1 to 10000"),
        ("FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY: 32 is not a day of a month (1 to 31 or -31 to -1)"),
        ("FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY: 0 is not a day of a month (1 to 31 or -31 to -1)"),
        ("FREQ=MONTHLY;BYMONTHDAY=1,,2", "BYMONTHDAY has an empty value (two commas in a row?)"),
        ("FREQ=YEARLY;BYMONTH=13", "BYMONTH: 13 is not a month (1 to 12)"),
        ("FREQ=MONTHLY;BYDAY=1MO;BYSETPOS=0", "BYSETPOS: 0 is not a position (1 to 366 or -366 to -1)"),
        ("FREQ=DAILY;BYDAY=MO;BYSETPOS=2", "BYSETPOS: 2 can never pick a day, FREQ=DAILY picks from a day at a time (use 1 or -1)"),
        ("FREQ=WEEKLY;BYDAY=MO;BYSETPOS=-8", "BYSETPOS: -8 can never pick a day, FREQ=WEEKLY picks from a week at a time (use 1 to 7 or -7 to -1)"),
        ("FREQ=MONTHLY;BYDAY=MO;BYSETPOS=32", "BYSETPOS: 32 can never pick a day, FREQ=MONTHLY picks from a month at a time (use 1 to 31 or -31 to -1)"),
        ("FREQ=MONTHLY;BYSETPOS=1", "BYSETPOS needs another BY part to pick from (BYDAY, BYMONTHDAY or BYMONTH)"),
        ("FREQ=WEEKLY;BYDAY=XX", "BYDAY: XX is not a weekday (MO, TU, WE, TH, FR, SA or SU, optionally with an ordinal such as 1MO or -1FR)"),
        ("FREQ=WEEKLY;BYDAY=1MO", "BYDAY: 1MO has an ordinal, which only FREQ=MONTHLY or FREQ=YEARLY allows; write MO for every one"),
        ("FREQ=DAILY;BYDAY=-1FR", "BYDAY: -1FR has an ordinal, which only FREQ=MONTHLY or FREQ=YEARLY allows; write FR for every one"),
        ("FREQ=MONTHLY;BYDAY=6MO", "BYDAY: 6MO cannot happen, a month has at most 5 of a weekday (use 1 to 5 or -5 to -1)"),
        ("FREQ=YEARLY;BYMONTH=3;BYDAY=-6SU", "BYDAY: -6SU cannot happen, a month has at most 5 of a weekday (use 1 to 5 or -5 to -1)"),
        ("FREQ=YEARLY;BYDAY=54MO", "BYDAY: 54MO cannot happen, a year has at most 53 of a weekday (use 1 to 53 or -53 to -1)"),
        ("FREQ=YEARLY;BYDAY=0MO", "BYDAY: 0MO cannot happen, a year has at most 53 of a weekday (use 1 to 53 or -53 to -1)"),
        ("FREQ=WEEKLY;BYMONTHDAY=1", "BYMONTHDAY cannot be used with FREQ=WEEKLY; use BYDAY, or FREQ=MONTHLY"),
        ("FREQ=WEEKLY;WKST=XY", "WKST: XY is not a weekday (MO, TU, WE, TH, FR, SA or SU)"),
        ("FREQ=MONTHLY;SKIP=AROUND", "SKIP: AROUND is not OMIT, BACKWARD or FORWARD"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20270101", "COUNT and UNTIL cannot both be given: keep one of them"),
        ("FREQ=DAILY;UNTIL=20270230", "UNTIL: 20270230 is not a date (20270310), local date and time (20270310T090000) or UTC date and time (20270310T080000Z)"),
        ("FREQ=DAILY;UNTIL=20270310T250000Z", "UNTIL: 20270310T250000Z is not a date (20270310), local date and time (20270310T090000) or UTC date and time (20270310T080000Z)"),
        ("FREQ=DAILY;UNTIL=2027-03-10", "UNTIL: 2027-03-10 is not a date (20270310), local date and time (20270310T090000) or UTC date and time (20270310T080000Z)"),
    ])
    func refusesWithAReasonNamingThePart(_ text: String, _ reason: String) {
        #expect(throws: RecurrenceError(reason: reason)) { try RecurrenceRule.parse(text) }
    }

    @Test func refusesMoreThan31Values() {
        let days = (1...31).map(String.init).joined(separator: ",")
        #expect(throws: RecurrenceError(reason: "BYSETPOS: too many values (at most 31)")) {
            try RecurrenceRule.parse("FREQ=MONTHLY;BYMONTHDAY=1;BYSETPOS=\(days),32")
        }
        #expect((try? RecurrenceRule.parse("FREQ=MONTHLY;BYMONTHDAY=\(days)")) != nil)
    }

    @Test func quotesOnlyAShortPieceOfLongInput() throws {
        let long = String(repeating: "A", count: 500)
        let error = try #require(throws: RecurrenceError.self) { try RecurrenceRule.parse("FREQ=\(long)") }
        #expect(error.reason.count < 120)
    }

    @Test func validatesRulesBuiltInCode() {
        var rule = RecurrenceRule(frequency: .weekly)
        rule.byDay = [.init(ordinal: nil, weekday: 8)]
        #expect(throws: RecurrenceError(reason: "BYDAY: 8 is not a weekday (1 = Monday to 7 = Sunday)")) { try rule.validate() }
        rule = RecurrenceRule(frequency: .daily, weekStart: 0)
        #expect(throws: RecurrenceError(reason: "WKST: 0 is not a weekday (1 = Monday to 7 = Sunday)")) { try rule.validate() }
        rule = RecurrenceRule(frequency: .daily, until: .utc(Date(timeIntervalSince1970: .nan)))
        #expect(throws: RecurrenceError(reason: "UNTIL: not a date and time in the years 1 to 9999")) { try rule.validate() }
        rule = RecurrenceRule(frequency: .daily, until: .date(LocalDate(year: 2027, month: 2, day: 30)))
        #expect(throws: RecurrenceError(reason: "UNTIL: not a date and time in the years 1 to 9999")) { try rule.validate() }
        rule = RecurrenceRule(frequency: .monthly, byMonthDay: Array(1...31) + [-1])
        #expect(throws: RecurrenceError(reason: "BYMONTHDAY: 32 values is too many (at most 31)")) { try rule.validate() }
    }
}

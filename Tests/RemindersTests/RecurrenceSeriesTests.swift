import Foundation
import Platform
import Testing

@testable import RemindersService

@Suite("Recurrence series")
struct RecurrenceSeriesTests {
    typealias F = RecurrenceFixtures

    @Test func aSeriesWithoutARuleIsItsStart() throws {
        let series = try F.series("2027-03-01T09:00", nil)
        #expect(F.locals(series.occurrences(limit: 5)) == ["2027-03-01T09:00"])
        #expect(series.isFinite)
        #expect(series.last?.local == F.local("2027-03-01T09:00"))
        #expect(series.next(after: F.instant("2027-03-01T08:59:59Z"))?.local == F.local("2027-03-01T09:00"))
        #expect(series.next(after: F.instant("2027-03-01T09:00:00Z")) == nil)
    }

    @Test func theStartCountsFirstEvenWhenTheRuleDoesNotMatchIt() throws {
        // 2027-03-03 is a Wednesday.
        let series = try F.series("2027-03-03T09:00", "FREQ=WEEKLY;BYDAY=MO;COUNT=3")
        #expect(F.locals(series.occurrences(limit: 10)) == ["2027-03-03T09:00", "2027-03-08T09:00", "2027-03-15T09:00"])
        #expect(series.last?.local == F.local("2027-03-15T09:00"))
    }

    @Test func exceptionsAreRemovedAfterCount() throws {
        let series = try F.series("2027-03-01T09:00", "FREQ=DAILY;COUNT=4", exceptions: ["2027-03-01T09:00", "2027-03-04T09:00", "2027-03-06T09:00"])
        #expect(F.locals(series.occurrences(limit: 10)) == ["2027-03-02T09:00", "2027-03-03T09:00"])
        #expect(series.last?.local == F.local("2027-03-03T09:00"))
    }

    @Test func anExceptionAtAnotherTimeOfDayExceptsNothing() throws {
        let series = try F.series("2027-03-01T09:00", "FREQ=DAILY;COUNT=2", exceptions: ["2027-03-02T10:00"])
        #expect(series.occurrences(limit: 10).count == 2)
    }

    @Test func missingPartsComeFromTheStart() throws {
        // Weekly on the start's weekday, monthly on its day, yearly on its month and day.
        #expect(F.locals(try F.series("2027-03-03T09:00", "FREQ=WEEKLY").occurrences(limit: 2)) == ["2027-03-03T09:00", "2027-03-10T09:00"])
        #expect(F.locals(try F.series("2027-03-15T09:00", "FREQ=MONTHLY").occurrences(limit: 2)) == ["2027-03-15T09:00", "2027-04-15T09:00"])
        #expect(F.locals(try F.series("2027-03-15T09:00", "FREQ=YEARLY").occurrences(limit: 2)) == ["2027-03-15T09:00", "2028-03-15T09:00"])
        #expect(F.locals(try F.series("2027-03-15T09:00", "FREQ=YEARLY;BYMONTH=5").occurrences(limit: 2)) == ["2027-03-15T09:00", "2027-05-15T09:00"])
    }

    // MARK: SKIP

    @Test func skipDecidesWhatHappensToTheThirtyFirstOfAShortMonth() throws {
        let omit = try F.series("2027-01-31T09:00", "FREQ=MONTHLY")
        let backward = try F.series("2027-01-31T09:00", "FREQ=MONTHLY;SKIP=BACKWARD")
        let forward = try F.series("2027-01-31T09:00", "FREQ=MONTHLY;SKIP=FORWARD")
        #expect(F.locals(omit.occurrences(limit: 3)) == ["2027-01-31T09:00", "2027-03-31T09:00", "2027-05-31T09:00"])
        #expect(F.locals(backward.occurrences(limit: 4)) == ["2027-01-31T09:00", "2027-02-28T09:00", "2027-03-31T09:00", "2027-04-30T09:00"])
        #expect(F.locals(forward.occurrences(limit: 4)) == ["2027-01-31T09:00", "2027-03-01T09:00", "2027-03-31T09:00", "2027-05-01T09:00"])
    }

    @Test func aDayMovedBySkipCountsOnce() throws {
        // April 31 moves forward to May 1, which BYMONTHDAY=1 also gives.
        let forward = try F.series("2027-04-01T09:00", "FREQ=MONTHLY;BYMONTHDAY=1,31;SKIP=FORWARD")
        #expect(F.locals(forward.occurrences(limit: 4)) == ["2027-04-01T09:00", "2027-05-01T09:00", "2027-05-31T09:00", "2027-06-01T09:00"])
        // February 30 and 31 both move back to February 28.
        let backward = try F.series("2027-01-30T09:00", "FREQ=MONTHLY;BYMONTHDAY=30,31;SKIP=BACKWARD")
        #expect(F.locals(backward.occurrences(limit: 4)) == ["2027-01-30T09:00", "2027-01-31T09:00", "2027-02-28T09:00", "2027-03-30T09:00"])
        // Jumping into the period after a forward move still sees the moved day once.
        #expect(forward.next(after: F.instant("2027-04-15T00:00:00Z"))?.local == F.local("2027-05-01T09:00"))
    }

    @Test func skipMovesFebruary29OfAYearlyRule() throws {
        let forward = try F.series("2028-02-29T09:00", "FREQ=YEARLY;SKIP=FORWARD")
        #expect(F.locals(forward.occurrences(limit: 3)) == ["2028-02-29T09:00", "2029-03-01T09:00", "2030-03-01T09:00"])
        let backward = try F.series("2028-02-29T09:00", "FREQ=YEARLY;SKIP=BACKWARD")
        #expect(F.locals(backward.occurrences(limit: 3)) == ["2028-02-29T09:00", "2029-02-28T09:00", "2030-02-28T09:00"])
    }

    @Test func skipChangesNothingInADailyRule() throws {
        let series = try F.series("2027-03-31T09:00", "FREQ=DAILY;BYMONTHDAY=31;SKIP=BACKWARD")
        #expect(F.locals(series.occurrences(limit: 2)) == ["2027-03-31T09:00", "2027-05-31T09:00"])
    }

    // MARK: RFC 5545 points dateutil gets wrong

    /// RFC 5545: BYDAY=MO,1FR is every Monday and the first Friday (dateutil 2.9 returns
    /// their intersection, nothing, so the corpus leaves mixed lists out).
    @Test func plainAndOrdinalWeekdaysInOneListAreJoined() throws {
        let series = try F.series("2027-03-01T09:00", "FREQ=MONTHLY;BYDAY=MO,1FR;COUNT=7")
        #expect(F.locals(series.occurrences(limit: 10)) == [
            "2027-03-01T09:00", "2027-03-05T09:00", "2027-03-08T09:00", "2027-03-15T09:00", "2027-03-22T09:00", "2027-03-29T09:00", "2027-04-02T09:00",
        ])
    }

    /// BYSETPOS counts positions in the whole period, the first week included (dateutil
    /// counts the first week only from DTSTART on).
    @Test func setPositionsCountInTheWholeFirstWeek() throws {
        // 2019-05-23 is a Thursday; that week's Monday, Friday, Saturday and Sunday are
        // the 20th, 24th, 25th and 26th, the third of which is the 25th.
        let series = try F.series("2019-05-23T09:00", "FREQ=WEEKLY;BYDAY=MO,FR,SA,SU;BYSETPOS=3;COUNT=3")
        #expect(F.locals(series.occurrences(limit: 5)) == ["2019-05-23T09:00", "2019-05-25T09:00", "2019-06-01T09:00"])
    }

    // MARK: Asking about instants

    @Test func occurrencesAfterAreStrictlyAfter() throws {
        let series = try F.series("2027-03-01T09:00", "FREQ=DAILY")
        #expect(F.locals(series.occurrences(after: F.instant("2027-03-02T09:00:00Z"), limit: 2)) == ["2027-03-03T09:00", "2027-03-04T09:00"])
        #expect(F.locals(series.occurrences(after: F.instant("2020-01-01T00:00:00Z"), limit: 1)) == ["2027-03-01T09:00"])
        #expect(series.occurrences(after: F.instant("2027-03-02T09:00:00Z"), limit: 0).isEmpty)
    }

    @Test func fromThroughIncludesBothEnds() throws {
        let series = try F.series("2027-03-01T09:00", "FREQ=DAILY")
        let window = series.occurrences(from: F.instant("2027-03-02T09:00:00Z"), through: F.instant("2027-03-04T09:00:00Z"), limit: 10)
        #expect(F.locals(window) == ["2027-03-02T09:00", "2027-03-03T09:00", "2027-03-04T09:00"])
        #expect(series.occurrences(from: F.instant("2027-03-04T09:00:00Z"), through: F.instant("2027-03-02T09:00:00Z"), limit: 10).isEmpty)
        #expect(series.occurrences(from: F.instant("2027-03-02T09:00:00Z"), through: F.instant("2027-03-09T09:00:00Z"), limit: 2).count == 2)
    }

    @Test func aCountedSeriesIsCountedFromItsStartWhenAskedLater() throws {
        let series = try F.series("2027-03-01T09:00", "FREQ=DAILY;COUNT=10")
        #expect(series.next(after: F.instant("2027-03-09T12:00:00Z"))?.local == F.local("2027-03-10T09:00"))
        #expect(series.next(after: F.instant("2027-03-10T09:00:00Z")) == nil)
    }

    @Test func oddInstantsDoNotTrap() throws {
        let series = try F.series("2027-03-01T09:00", "FREQ=DAILY", zone: try F.zone("Europe/Berlin"))
        #expect(series.next(after: Date(timeIntervalSince1970: .nan)) == nil)
        #expect(series.next(after: Date(timeIntervalSince1970: 1e300)) == nil)
        #expect(series.next(after: Date(timeIntervalSince1970: -1e300))?.local == F.local("2027-03-01T09:00"))
        #expect(series.occurrences(from: Date(timeIntervalSince1970: -1e300), through: Date(timeIntervalSince1970: 1e300), limit: 2).count == 2)
        #expect(series.next(after: .distantFuture)?.local == F.local("4001-01-01T09:00"))
        #expect(series.next(after: F.instant("9999-12-31T08:00:00Z")) == nil)
    }

    // MARK: UNTIL, end and termination

    @Test func untilBeforeTheStartIsRefused() throws {
        #expect(throws: RecurrenceError(reason: "UNTIL: 20270228 is before the start (2027-03-01T09:00): give an UNTIL on or after it")) {
            try F.series("2027-03-01T09:00", "FREQ=DAILY;UNTIL=20270228")
        }
        #expect(throws: RecurrenceError(reason: "UNTIL: 20270301T085959 is before the start (2027-03-01T09:00): give an UNTIL on or after it")) {
            try F.series("2027-03-01T09:00", "FREQ=DAILY;UNTIL=20270301T085959")
        }
        // 09:00 in Berlin is 08:00Z.
        #expect(throws: RecurrenceError(reason: "UNTIL: 20270301T075959Z is before the start (2027-03-01T09:00): give an UNTIL on or after it")) {
            try F.series("2027-03-01T09:00", "FREQ=DAILY;UNTIL=20270301T075959Z", zone: try F.zone("Europe/Berlin"))
        }
        #expect(F.locals(try F.series("2027-03-01T09:00", "FREQ=DAILY;UNTIL=20270301").occurrences(limit: 5)) == ["2027-03-01T09:00"])
    }

    @Test func aStartOutsideTheYears1To9999IsRefused() {
        let start = LocalDateTime(date: LocalDate(year: 10_000, month: 1, day: 1), time: .midnight)
        #expect(throws: RecurrenceError(reason: "The start's year 10000 is outside the years 1 to 9999", field: "start")) {
            try RecurrenceSeries(start: start, zone: .utc, rule: nil)
        }
    }

    @Test func theLastOccurrenceOfALongUntilIsFoundFromTheEnd() throws {
        let clock = ContinuousClock()
        let began = clock.now
        let series = try F.series("2027-01-01T09:00", "FREQ=DAILY;UNTIL=99991231", zone: try F.zone("Europe/Berlin"))
        #expect(series.last?.local == F.local("9999-12-31T09:00"))
        let monthly = try F.series("2027-01-01T09:00", "FREQ=MONTHLY;BYDAY=-1FR;UNTIL=21001231T235959Z", exceptions: ["2100-12-31T09:00"])
        #expect(monthly.last?.local == F.local("2100-11-26T09:00"))
        #expect(clock.now - began < .seconds(1))
    }

    @Test func anEndlessSeriesHasNoLast() throws {
        let series = try F.series("2027-01-01T09:00", "FREQ=DAILY")
        #expect(!series.isFinite)
        #expect(series.last == nil)
    }

    @Test func aRuleThatCanNeverMatchAgainEnds() throws {
        let clock = ContinuousClock()
        let began = clock.now
        for rule in ["FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31", "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
                     "FREQ=WEEKLY;BYMONTH=2;BYDAY=MO;BYSETPOS=5", "FREQ=DAILY;INTERVAL=2;BYMONTHDAY=31;BYMONTH=4", "FREQ=MONTHLY;INTERVAL=12;BYMONTH=3"] {
            let series = try F.series("2027-01-05T09:00", rule)
            #expect(F.locals(series.occurrences(limit: 5)) == ["2027-01-05T09:00"], "\(rule)")
            #expect(series.next(after: F.instant("2027-01-06T00:00:00Z")) == nil, "\(rule)")
        }
        #expect(clock.now - began < .seconds(5))
    }

    /// A DAILY rule with BYMONTH or BYMONTHDAY steps straight to the next day they allow,
    /// so even COUNT=10000 of a rare rule (walked to the year 9999) is quick.
    @Test func aRareDailyRuleIsNotWalkedDayByDay() throws {
        let clock = ContinuousClock()
        let began = clock.now
        let series = try F.series("2027-01-01T09:00", "FREQ=DAILY;INTERVAL=3;BYMONTH=2;BYMONTHDAY=29;COUNT=10000")
        let occurrences = series.occurrences(limit: 10_000)
        // Every 29 February a multiple of 3 days after the start, through 9999: 480 of
        // them (counted separately), the last in 9796; and the start.
        #expect(occurrences.count == 481)
        #expect(occurrences.dropFirst().allSatisfy { $0.local.date.month == 2 && $0.local.date.day == 29 })
        #expect(occurrences.last?.local == F.local("9796-02-29T09:00"))
        #expect(clock.now - began < .seconds(2))
    }

    @Test func expansionEndsAtTheYear9999() throws {
        let series = try F.series("9999-12-30T09:00", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU")
        #expect(F.locals(series.occurrences(limit: 5)) == ["9999-12-30T09:00", "9999-12-31T09:00"])
    }
}

import Foundation
import Platform
import Testing

@testable import RemindersService

/// Wall-clock times across daylight-saving changes, in real zones.
///
/// Europe/Berlin in 2027: summer time from 2027-03-28 02:00 (clocks to 03:00) to
/// 2027-10-31 03:00 (clocks back to 02:00). America/New_York: from 2027-03-14 02:00 to
/// 2027-11-07 02:00 EDT (clocks back to 01:00, so 01:00-01:59 happens twice).
@Suite("Recurrence across daylight saving")
struct RecurrenceDaylightSavingTests {
    typealias F = RecurrenceFixtures

    @Test func aDailyReminderStaysAtNineAcrossTheMarchChange() throws {
        let series = try F.series("2027-03-26T09:00", "FREQ=DAILY;COUNT=4", zone: try F.zone("Europe/Berlin"))
        let occurrences = series.occurrences(limit: 10)
        #expect(F.locals(occurrences) == ["2027-03-26T09:00", "2027-03-27T09:00", "2027-03-28T09:00", "2027-03-29T09:00"])
        #expect(F.instants(occurrences) == ["2027-03-26T08:00:00Z", "2027-03-27T08:00:00Z", "2027-03-28T07:00:00Z", "2027-03-29T07:00:00Z"])
    }

    @Test func aDailyReminderStaysAtNineAcrossTheOctoberChange() throws {
        let series = try F.series("2027-03-26T09:00", "FREQ=DAILY", zone: try F.zone("Europe/Berlin"))
        let october = series.occurrences(from: F.instant("2027-10-30T00:00:00Z"), through: F.instant("2027-11-01T23:59:59Z"), limit: 10)
        #expect(F.locals(october) == ["2027-10-30T09:00", "2027-10-31T09:00", "2027-11-01T09:00"])
        #expect(F.instants(october) == ["2027-10-30T07:00:00Z", "2027-10-31T08:00:00Z", "2027-11-01T08:00:00Z"])
    }

    @Test func aTimeTheClocksSkipMovesForwardByTheGap() throws {
        let berlin = try F.zone("Europe/Berlin")
        let series = try F.series("2027-03-27T02:30", "FREQ=DAILY;COUNT=3", zone: berlin)
        let occurrences = series.occurrences(limit: 3)
        // 02:30 on 2027-03-28 does not exist: it fires at 03:30 CEST, 01:30Z.
        #expect(F.instants(occurrences) == ["2027-03-27T01:30:00Z", "2027-03-28T01:30:00Z", "2027-03-29T00:30:00Z"])
        #expect(occurrences[1].local == F.local("2027-03-28T02:30"))
        #expect(berlin.local(occurrences[1].instant) == F.local("2027-03-28T03:30"))
    }

    @Test("an occurrence in a DST gap is named by the time the rule gives or the time it shows: as an exception and when marked done")
    func aGapOccurrenceAnswersToTheTimeItShows() throws {
        let berlin = try F.zone("Europe/Berlin")
        for named in ["2027-03-28T02:30", "2027-03-28T03:30"] {
            let series = try F.series("2027-03-27T02:30", "FREQ=DAILY;COUNT=3", zone: berlin, exceptions: [named])
            #expect(F.locals(series.occurrences(limit: 3)) == ["2027-03-27T02:30", "2027-03-29T02:30"], "\(named)")
        }
        let timing = ReminderTiming(start: F.local("2027-03-27T02:30"), allDay: false, zone: "Europe/Berlin", rule: try RecurrenceRule.parse("FREQ=DAILY;COUNT=3"), exceptions: [])
        let series = try F.series("2027-03-27T02:30", "FREQ=DAILY;COUNT=3", zone: berlin)
        for named in ["2027-03-28T02:30", "2027-03-28T03:30"] {
            let found = try ReminderOperations.occurrence(named, of: timing, series, doneThrough: nil, now: F.instant("2027-03-27T12:00:00Z"))
            #expect(found.instant == F.instant("2027-03-28T01:30:00Z"), "\(named)")
        }
    }

    @Test func aDayTheZoneSkippedIsOneInstanceNotTwo() throws {
        // Samoa went from UTC-10 to UTC+14 after 29 December 2011: the 30th never was. Its
        // 09:00 moves forward by the gap (24 h) onto the 31st's 09:00, the same instant,
        // which RFC 5545 counts once: COUNT=3 is three distinct instants.
        let series = try F.series("2011-12-29T09:00", "FREQ=DAILY;COUNT=3", zone: try F.zone("Pacific/Apia"))
        #expect(F.instants(series.occurrences(limit: 10)) == ["2011-12-29T19:00:00Z", "2011-12-30T19:00:00Z", "2011-12-31T19:00:00Z"])
    }

    @Test func aTimeThatHappensTwiceTakesTheFirst() throws {
        let newYork = try F.zone("America/New_York")
        let series = try F.series("2027-11-06T01:30", "FREQ=DAILY;COUNT=3", zone: newYork)
        // 01:30 on 2027-11-07 happens at 05:30Z (EDT) and 06:30Z (EST): the first.
        #expect(F.instants(series.occurrences(limit: 3)) == ["2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"])
        // 02:30 is not repeated in New York (the clocks go back from 02:00 to 01:00): it is
        // 02:30 EST, once.
        let half2 = try F.series("2027-11-06T02:30", "FREQ=DAILY;COUNT=2", zone: newYork)
        #expect(F.instants(half2.occurrences(limit: 2)) == ["2027-11-06T06:30:00Z", "2027-11-07T07:30:00Z"])
    }

    @Test func aWeeklyRuleKeepsItsWallClockTimeAcrossAChange() throws {
        let newYork = try F.zone("America/New_York")
        // Mondays and Thursdays at 18:00 around 2027-03-14.
        let series = try F.series("2027-03-08T18:00", "FREQ=WEEKLY;BYDAY=MO,TH;COUNT=4", zone: newYork)
        let occurrences = series.occurrences(limit: 4)
        #expect(F.locals(occurrences) == ["2027-03-08T18:00", "2027-03-11T18:00", "2027-03-15T18:00", "2027-03-18T18:00"])
        #expect(F.instants(occurrences) == ["2027-03-08T23:00:00Z", "2027-03-11T23:00:00Z", "2027-03-15T22:00:00Z", "2027-03-18T22:00:00Z"])
    }

    @Test func aUTCUntilIsComparedWithTheInstant() throws {
        let berlin = try F.zone("Europe/Berlin")
        // 09:00 on 2027-03-30 is 07:00Z (summer time): included at 07:00Z, not at 06:59:59Z.
        let through = try F.series("2027-03-26T09:00", "FREQ=DAILY;UNTIL=20270330T070000Z", zone: berlin)
        #expect(F.locals(through.occurrences(limit: 10)).last == "2027-03-30T09:00")
        #expect(through.last?.local == F.local("2027-03-30T09:00"))
        let before = try F.series("2027-03-26T09:00", "FREQ=DAILY;UNTIL=20270330T065959Z", zone: berlin)
        #expect(F.locals(before.occurrences(limit: 10)).last == "2027-03-29T09:00")
        #expect(before.last?.local == F.local("2027-03-29T09:00"))
        // Read as Berlin time, 07:00 would exclude 2027-03-30 09:00: the Z matters.
        let local = try F.series("2027-03-26T09:00", "FREQ=DAILY;UNTIL=20270330T070000", zone: berlin)
        #expect(local.last?.local == F.local("2027-03-29T09:00"))
    }

    @Test func aDateUntilIncludesItsWholeLocalDay() throws {
        let series = try F.series("2027-03-26T23:30", "FREQ=DAILY;UNTIL=20270328", zone: try F.zone("Europe/Berlin"))
        #expect(F.locals(series.occurrences(limit: 10)) == ["2027-03-26T23:30", "2027-03-27T23:30", "2027-03-28T23:30"])
    }
}

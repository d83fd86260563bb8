import Platform
import PropertyBased
import Testing

@testable import StatsService

// MARK: - Helpers

private func date(_ year: Int, _ month: Int, _ day: Int) -> LocalDate {
    LocalDate(year: year, month: month, day: day)
}

private func record(
    _ day: LocalDate, workout: String = "w", bodyPart: BodyPart = .chest, motorAbility: MotorAbility = .strength,
    repetitions: Int = 10, score: Int = 5, skipped: Bool = false
) -> ExerciseRecord {
    ExerciseRecord(
        workoutID: workout, day: day, bodyPart: bodyPart, motorAbility: motorAbility, repetitions: repetitions,
        score: score, skipped: skipped)
}

private func skippedRecord(_ day: LocalDate, workout: String = "w", bodyPart: BodyPart = .chest, repetitions: Int = 0, score: Int = 0) -> ExerciseRecord {
    record(day, workout: workout, bodyPart: bodyPart, repetitions: repetitions, score: score, skipped: true)
}

/// A done exercise on each day from `first` through `last`.
private func dailyRecords(from first: LocalDate, through last: LocalDate, score: Int = 2, repetitions: Int = 3) -> [ExerciseRecord] {
    (0...first.days(until: last)).map { offset in
        record(first.adding(days: offset), workout: "d\(offset)", repetitions: repetitions, score: score)
    }
}

private func percents<T>(_ shares: [CategoryShare<T>]) -> [Int] { shares.map(\.percent) }

// MARK: - Ranges

@Suite struct StatsPeriodRangeTests {
    @Test func weekIsTheSevenDaysEndingToday() {
        #expect(StatsPeriod.week.range(endingOn: date(2027, 3, 15)) == date(2027, 3, 9)...date(2027, 3, 15))
        #expect(StatsPeriod.week.previousRange(endingOn: date(2027, 3, 15)) == date(2027, 3, 2)...date(2027, 3, 8))
    }

    @Test func weekAcrossTheYearBoundary() {
        #expect(StatsPeriod.week.range(endingOn: date(2027, 1, 3)) == date(2026, 12, 28)...date(2027, 1, 3))
        #expect(StatsPeriod.week.previousRange(endingOn: date(2027, 1, 3)) == date(2026, 12, 21)...date(2026, 12, 27))
    }

    @Test func twoWeeksIsFourteenDays() {
        #expect(StatsPeriod.twoWeeks.range(endingOn: date(2027, 3, 15)) == date(2027, 3, 2)...date(2027, 3, 15))
        #expect(StatsPeriod.twoWeeks.previousRange(endingOn: date(2027, 3, 15)) == date(2027, 2, 16)...date(2027, 3, 1))
    }

    @Test func twoWeeksOverALeapDay() {
        let range = StatsPeriod.twoWeeks.range(endingOn: date(2028, 3, 5))
        #expect(range == date(2028, 2, 21)...date(2028, 3, 5))
        #expect(range.dayCount == 14)
    }

    @Test func twoWeeksAcrossTheYearBoundary() {
        #expect(StatsPeriod.twoWeeks.range(endingOn: date(2027, 1, 5)) == date(2026, 12, 23)...date(2027, 1, 5))
    }

    @Test func monthStartsAfterTheSameDayOfThePreviousMonth() {
        #expect(StatsPeriod.month.range(endingOn: date(2027, 3, 15)) == date(2027, 2, 16)...date(2027, 3, 15))
        #expect(StatsPeriod.month.previousRange(endingOn: date(2027, 3, 15)) == date(2027, 1, 16)...date(2027, 2, 15))
    }

    @Test func monthOnThe31stAfterAShorterMonthStartsOnThe1st() {
        #expect(StatsPeriod.month.range(endingOn: date(2027, 3, 31)) == date(2027, 3, 1)...date(2027, 3, 31))
        // Clamped to February 28th as well.
        #expect(StatsPeriod.month.range(endingOn: date(2027, 3, 29)) == date(2027, 3, 1)...date(2027, 3, 29))
        #expect(StatsPeriod.month.range(endingOn: date(2027, 3, 28)) == date(2027, 3, 1)...date(2027, 3, 28))
        #expect(StatsPeriod.month.range(endingOn: date(2027, 3, 27)) == date(2027, 2, 28)...date(2027, 3, 27))
        #expect(StatsPeriod.month.range(endingOn: date(2027, 5, 31)) == date(2027, 5, 1)...date(2027, 5, 31))
    }

    @Test func previousMonthOfThe31stEndsOnTheLastDayOfTheShorterMonth() {
        // Ends on Feb 28th; Feb 28th's previous month day is Jan 28th, so it starts Jan 29th.
        let previous = StatsPeriod.month.previousRange(endingOn: date(2027, 3, 31))
        #expect(previous == date(2027, 1, 29)...date(2027, 2, 28))
        #expect(previous.dayCount == 31)
        #expect(StatsPeriod.month.previousRange(endingOn: date(2027, 5, 31)) == date(2027, 3, 31)...date(2027, 4, 30))
    }

    @Test func monthInALeapYear() {
        #expect(StatsPeriod.month.range(endingOn: date(2028, 3, 31)) == date(2028, 3, 1)...date(2028, 3, 31))
        #expect(StatsPeriod.month.range(endingOn: date(2028, 3, 29)) == date(2028, 3, 1)...date(2028, 3, 29))
        #expect(StatsPeriod.month.range(endingOn: date(2028, 3, 28)) == date(2028, 2, 29)...date(2028, 3, 28))
        #expect(StatsPeriod.month.range(endingOn: date(2028, 2, 29)) == date(2028, 1, 30)...date(2028, 2, 29))
        #expect(StatsPeriod.month.previousRange(endingOn: date(2028, 2, 29)) == date(2027, 12, 30)...date(2028, 1, 29))
    }

    @Test func monthAcrossTheYearBoundary() {
        #expect(StatsPeriod.month.range(endingOn: date(2027, 1, 15)) == date(2026, 12, 16)...date(2027, 1, 15))
        #expect(StatsPeriod.month.previousRange(endingOn: date(2027, 1, 15)) == date(2026, 11, 16)...date(2026, 12, 15))
        #expect(StatsPeriod.month.range(endingOn: date(2027, 1, 1)) == date(2026, 12, 2)...date(2027, 1, 1))
    }

    @Test(arguments: StatsPeriod.allCases)
    func everyRangeEndsTodayAndFollowsItsPrevious(period: StatsPeriod) {
        var today = date(2027, 1, 1)
        for _ in 0..<(365 + 366) {
            let range = period.range(endingOn: today)
            let previous = period.previousRange(endingOn: today)
            #expect(range.upperBound == today)
            #expect(previous.upperBound.adding(days: 1) == range.lowerBound)
            switch period {
            case .week: #expect(range.dayCount == 7)
            case .twoWeeks: #expect(range.dayCount == 14)
            case .month: #expect((28...31).contains(range.dayCount))
            }
            today = today.adding(days: 1)
        }
    }

    @Test func rawValues() {
        #expect(StatsPeriod.allCases.map(\.rawValue) == ["week", "two_weeks", "month"])
        #expect(StatsPeriod(rawValue: "two_weeks") == .twoWeeks)
    }
}

// MARK: - Performance series

@Suite struct PerformanceSeriesTests {
    /// Week ending 2027-03-15: 03-09...03-15.
    static let week = date(2027, 3, 9)...date(2027, 3, 15)
    static let records: [ExerciseRecord] = [
        record(date(2027, 3, 9), workout: "w1", bodyPart: .chest, motorAbility: .strength, repetitions: 10, score: 20),
        record(date(2027, 3, 9), workout: "w1", bodyPart: .back, motorAbility: .endurance, repetitions: 12, score: 15),
        record(date(2027, 3, 11), workout: "w2", bodyPart: .legs, motorAbility: .strength, repetitions: 20, score: 30),
        record(date(2027, 3, 11), workout: "w2", bodyPart: .arms, motorAbility: .speed, repetitions: 0, score: 0, skipped: true),
        // A skipped record with stray values: still counts only as skipped.
        record(date(2027, 3, 11), workout: "w2", bodyPart: .arms, motorAbility: .speed, repetitions: 5, score: 7, skipped: true),
        record(date(2027, 3, 15), workout: "w3", bodyPart: .core, motorAbility: .endurance, repetitions: 8, score: 9),
        // Outside the range.
        record(date(2027, 3, 8), workout: "w0", repetitions: 100, score: 100),
        record(date(2027, 3, 16), workout: "w9", repetitions: 100, score: 100),
    ]

    @Test func onePointPerDayWithZeroDaysAndExactSums() {
        let series = PerformanceSeries.daily(Self.records, in: Self.week)
        #expect(series == [
            PerformancePoint(day: date(2027, 3, 9), score: 35, repetitions: 22, exercises: 2),
            PerformancePoint(day: date(2027, 3, 10), score: 0, repetitions: 0, exercises: 0),
            PerformancePoint(day: date(2027, 3, 11), score: 30, repetitions: 20, exercises: 1),
            PerformancePoint(day: date(2027, 3, 12), score: 0, repetitions: 0, exercises: 0),
            PerformancePoint(day: date(2027, 3, 13), score: 0, repetitions: 0, exercises: 0),
            PerformancePoint(day: date(2027, 3, 14), score: 0, repetitions: 0, exercises: 0),
            PerformancePoint(day: date(2027, 3, 15), score: 9, repetitions: 8, exercises: 1),
        ])
    }

    @Test func recordOrderDoesNotMatter() {
        #expect(PerformanceSeries.daily(Self.records.reversed(), in: Self.week) == PerformanceSeries.daily(Self.records, in: Self.week))
    }

    @Test func noRecordsGiveAllZeroDays() {
        let series = PerformanceSeries.daily([], in: date(2026, 12, 30)...date(2027, 1, 2))
        #expect(series.map(\.day.description) == ["2026-12-30", "2026-12-31", "2027-01-01", "2027-01-02"])
        #expect(series.allSatisfy { $0.score == 0 && $0.repetitions == 0 && $0.exercises == 0 })
    }

    @Test func seriesDaysRunOverALeapDay() {
        let series = PerformanceSeries.daily([record(date(2028, 2, 29), score: 4)], in: date(2028, 2, 28)...date(2028, 3, 1))
        #expect(series.map(\.day.description) == ["2028-02-28", "2028-02-29", "2028-03-01"])
        #expect(series.map(\.score) == [0, 4, 0])
    }

    @Test func pageSeriesMatchesTheRange() {
        let statistics = PeriodStatistics(records: Self.records, period: .week, today: date(2027, 3, 15))
        #expect(statistics.range == Self.week)
        #expect(statistics.performance == PerformanceSeries.daily(Self.records, in: Self.week))
        #expect(statistics.performance.map(\.score) == [35, 0, 30, 0, 0, 0, 9])
    }
}

// MARK: - Shares

@Suite struct SharesTests {
    @Test func thirdsSumToExactly100AndTheTieGoesToTheFirstDeclared() {
        let shares = Shares.percentages(counts: [MotorAbility.speed: 1, .endurance: 1, .strength: 1], order: MotorAbility.allCases)
        #expect(shares == [
            CategoryShare(category: .strength, count: 1, percent: 34),
            CategoryShare(category: .endurance, count: 1, percent: 33),
            CategoryShare(category: .speed, count: 1, percent: 33),
        ])
    }

    @Test func theOrderDecidesTies() {
        let shares = Shares.percentages(counts: [MotorAbility.speed: 1, .endurance: 1, .strength: 1], order: [.speed, .endurance, .strength])
        #expect(shares.map(\.category) == [.speed, .endurance, .strength])
        #expect(percents(shares) == [34, 33, 33])
    }

    @Test func sevenEqualBodyParts() {
        // 100 / 7 = 14 remainder 2: the first two declared get 15.
        let counts = Dictionary(uniqueKeysWithValues: BodyPart.allCases.map { ($0, 1) })
        #expect(percents(Shares.percentages(counts: counts, order: BodyPart.allCases)) == [15, 15, 14, 14, 14, 14, 14])
    }

    @Test func sixEqualBodyPartsAndOneEmpty() {
        // 100 / 6 = 16 remainder 4 (4 points to give): chest...arms get 17, full body none.
        let counts: [BodyPart: Int] = [.chest: 1, .back: 1, .shoulders: 1, .arms: 1, .core: 1, .legs: 1]
        #expect(percents(Shares.percentages(counts: counts, order: BodyPart.allCases)) == [17, 17, 17, 17, 16, 16, 0])
    }

    @Test func twoThirdsAndOneThird() {
        // 66.67 / 33.33: the larger remainder (2/3) rounds up.
        let shares = Shares.percentages(counts: [BodyPart.chest: 2, .back: 1], order: BodyPart.allCases)
        #expect(percents(shares) == [67, 33, 0, 0, 0, 0, 0])
    }

    @Test func theLargestRemainderWinsOverTheOrder() {
        // 1/7 = 14.29, 2/7 = 28.57, 4/7 = 57.14: the missing point goes to back.
        let shares = Shares.percentages(counts: [BodyPart.chest: 1, .back: 2, .shoulders: 4], order: BodyPart.allCases)
        #expect(percents(shares) == [14, 29, 57, 0, 0, 0, 0])
        // 1/11 = 9.09, 5/11 = 45.45 twice: the tie between back and shoulders goes to back.
        let tied = Shares.percentages(counts: [BodyPart.chest: 1, .back: 5, .shoulders: 5], order: BodyPart.allCases)
        #expect(percents(tied) == [9, 46, 45, 0, 0, 0, 0])
    }

    @Test func exactSharesNeedNoRounding() {
        let shares = Shares.percentages(counts: [MotorAbility.strength: 3, .speed: 1], order: MotorAbility.allCases)
        #expect(percents(shares) == [75, 0, 25])
        #expect(percents(Shares.percentages(counts: [BodyPart.legs: 5], order: BodyPart.allCases)) == [0, 0, 0, 0, 0, 100, 0])
    }

    @Test func nothingDoneGivesAllZero() {
        let shares = Shares.percentages(counts: [BodyPart: Int](), order: BodyPart.allCases)
        #expect(shares.map(\.category) == BodyPart.allCases)
        #expect(shares.allSatisfy { $0.count == 0 && $0.percent == 0 })
        #expect(percents(shares).reduce(0, +) == 0)
    }

    @Test func oddInputIsHandled() {
        // Negative counts count as 0, keys not in the order are ignored, duplicates are dropped.
        let shares = Shares.percentages(counts: [MotorAbility.strength: -4, .endurance: 1, .speed: 3], order: [.endurance, .strength, .endurance])
        #expect(shares == [
            CategoryShare(category: .endurance, count: 1, percent: 100),
            CategoryShare(category: .strength, count: 0, percent: 0),
        ])
    }

    @Test func resultsAreDeterministic() {
        var counts: [BodyPart: Int] = [:]
        for part in BodyPart.allCases.reversed() { counts[part] = 3 }
        let first = Shares.percentages(counts: counts, order: BodyPart.allCases)
        for _ in 0..<20 {
            let rebuilt = Dictionary(uniqueKeysWithValues: BodyPart.allCases.shuffled().map { ($0, 3) })
            #expect(Shares.percentages(counts: rebuilt, order: BodyPart.allCases) == first)
        }
        #expect(percents(first) == [15, 15, 14, 14, 14, 14, 14])
    }

    @Test func sharesFromRecordsCountOnlyDoneExercisesInTheRange() {
        let records = PerformanceSeriesTests.records
        let range = PerformanceSeriesTests.week
        // Done in range: chest, back, legs, core (arms was only skipped).
        #expect(Shares.bodyParts(records, in: range) == [
            CategoryShare(category: .chest, count: 1, percent: 25),
            CategoryShare(category: .back, count: 1, percent: 25),
            CategoryShare(category: .shoulders, count: 0, percent: 0),
            CategoryShare(category: .arms, count: 0, percent: 0),
            CategoryShare(category: .core, count: 1, percent: 25),
            CategoryShare(category: .legs, count: 1, percent: 25),
            CategoryShare(category: .fullBody, count: 0, percent: 0),
        ])
        // strength: chest, legs; endurance: back, core; speed: only skipped.
        #expect(Shares.motorAbilities(records, in: range).map { [$0.count, $0.percent] } == [[2, 50], [2, 50], [0, 0]])
        let page = PeriodStatistics(records: records, period: .week, today: date(2027, 3, 15))
        #expect(page.bodyPartShares == Shares.bodyParts(records, in: range))
        #expect(page.motorAbilityShares == Shares.motorAbilities(records, in: range))
    }

    @Test func onlySkippedRecordsGiveAllZeroShares() {
        let records = [skippedRecord(date(2027, 3, 10), bodyPart: .legs), skippedRecord(date(2027, 3, 11), bodyPart: .arms)]
        let page = PeriodStatistics(records: records, period: .week, today: date(2027, 3, 15))
        #expect(percents(page.bodyPartShares) == [0, 0, 0, 0, 0, 0, 0])
        #expect(percents(page.motorAbilityShares) == [0, 0, 0])
    }
}

// MARK: - Key facts

@Suite struct KeyFactsTests {
    static let today = date(2027, 3, 15)

    /// Week 03-09...03-15 against 03-02...03-08.
    static let records: [ExerciseRecord] = [
        // Before both periods.
        record(date(2027, 3, 1), workout: "old", repetitions: 999, score: 999),
        // Previous period: score 50, repetitions 25, workouts p1 and p2 (p3 only skipped).
        record(date(2027, 3, 2), workout: "p1", repetitions: 20, score: 40),
        record(date(2027, 3, 8), workout: "p2", repetitions: 5, score: 10),
        skippedRecord(date(2027, 3, 8), workout: "p3"),
        // This period.
        record(date(2027, 3, 9), workout: "c1", repetitions: 10, score: 20),
        record(date(2027, 3, 9), workout: "c1", repetitions: 12, score: 15),
        record(date(2027, 3, 10), workout: "c2", repetitions: 30, score: 35),
        skippedRecord(date(2027, 3, 12), workout: "c3"),
        skippedRecord(date(2027, 3, 12), workout: "c3", repetitions: 9, score: 9),
        record(date(2027, 3, 14), workout: "c4", repetitions: 4, score: 5),
        record(date(2027, 3, 15), workout: "c1", repetitions: 1, score: 1),
        // The future.
        record(date(2027, 3, 16), workout: "future", repetitions: 500, score: 500),
    ]

    @Test func keyFactsOfAWeek() {
        let facts = PeriodStatistics(records: Self.records, period: .week, today: Self.today).keyFacts
        #expect(facts.workouts == 3)  // c1, c2, c4
        #expect(facts.exercisesDone == 5)
        #expect(facts.exercisesSkipped == 2)
        #expect(facts.totalRepetitions == 57)  // 10 + 12 + 30 + 4 + 1
        #expect(facts.totalScore == 76)  // 20 + 15 + 35 + 5 + 1
        // 03-09 (20 + 15) and 03-10 (35) tie: the earliest wins.
        #expect(facts.bestDay == DayScore(day: date(2027, 3, 9), score: 35))
        #expect(facts.currentStreak == 2)  // 03-14, 03-15
        // 03-08...03-10 is a run of 3, but only 03-09 and 03-10 are in the week.
        #expect(facts.longestStreak == 2)
        #expect(facts.scoreChange == PeriodChange(current: 76, previous: 50))
        #expect(facts.scoreChange.percentChange == 52)
        #expect(facts.repetitionsChange == PeriodChange(current: 57, previous: 25))
        #expect(facts.repetitionsChange.percentChange == 128)
        #expect(facts.workoutsChange == PeriodChange(current: 3, previous: 2))
        #expect(facts.workoutsChange.percentChange == 50)
    }

    @Test func standaloneKeyFactsMatchThePage() {
        let page = PeriodStatistics(records: Self.records, period: .week, today: Self.today)
        let facts = KeyFacts(records: Self.records.reversed(), range: page.range, previousRange: page.previousRange)
        #expect(facts == page.keyFacts)
    }

    @Test func bestDayTiesGoToTheEarliestWhateverTheRecordOrder() {
        let records = [
            record(date(2027, 3, 12), score: 10), record(date(2027, 3, 12), score: 20),
            record(date(2027, 3, 11), score: 5),
            record(date(2027, 3, 10), score: 30),
            record(date(2027, 3, 14), score: 29),
        ]
        for ordering in [records, records.reversed(), records.shuffled()] {
            let facts = PeriodStatistics(records: ordering, period: .week, today: Self.today).keyFacts
            #expect(facts.bestDay == DayScore(day: date(2027, 3, 10), score: 30))
        }
    }

    @Test func bestDayIsNilWhenNothingWasDone() {
        let facts = PeriodStatistics(records: [skippedRecord(date(2027, 3, 12))], period: .week, today: Self.today).keyFacts
        #expect(facts.bestDay == nil)
        #expect(facts.exercisesDone == 0)
        #expect(facts.exercisesSkipped == 1)
        #expect(facts.workouts == 0)
        #expect(facts.currentStreak == 0)
        #expect(facts.longestStreak == 0)
    }

    @Test func bestDayWithOnlyZeroScoresIsTheEarliestDoneDay() {
        let records = [skippedRecord(date(2027, 3, 10)), record(date(2027, 3, 11), score: 0), record(date(2027, 3, 13), score: 0)]
        let facts = PeriodStatistics(records: records, period: .week, today: Self.today).keyFacts
        #expect(facts.bestDay == DayScore(day: date(2027, 3, 11), score: 0))
    }

    @Test func currentStreakRunsInFromBeforeThePeriod() {
        // Done every day 03-05...03-15: 11 days, 7 of them in the week.
        let facts = PeriodStatistics(records: dailyRecords(from: date(2027, 3, 5), through: Self.today), period: .week, today: Self.today).keyFacts
        #expect(facts.currentStreak == 11)
        #expect(facts.longestStreak == 7)
    }

    @Test func currentStreakEndsYesterdayWhileTodayHasNothingYet() {
        // 03-10...03-14 done; today only skipped; a future day is ignored.
        let records = dailyRecords(from: date(2027, 3, 10), through: date(2027, 3, 14))
            + [skippedRecord(Self.today), record(date(2027, 3, 16))]
        let facts = PeriodStatistics(records: records, period: .week, today: Self.today).keyFacts
        #expect(facts.currentStreak == 5)
        #expect(facts.longestStreak == 5)
    }

    @Test func currentStreakIsBrokenWithoutYesterdayAndToday() {
        let records = dailyRecords(from: date(2027, 3, 10), through: date(2027, 3, 13))
        let facts = PeriodStatistics(records: records, period: .week, today: Self.today).keyFacts
        #expect(facts.currentStreak == 0)
        #expect(facts.longestStreak == 4)
    }

    @Test func skippedOnlyDaysBreakStreaks() {
        // 03-09, 03-10 done; 03-11 only skipped; 03-12...03-15 done.
        let records = dailyRecords(from: date(2027, 3, 9), through: date(2027, 3, 10))
            + [skippedRecord(date(2027, 3, 11))]
            + dailyRecords(from: date(2027, 3, 12), through: Self.today)
        let facts = PeriodStatistics(records: records, period: .week, today: Self.today).keyFacts
        #expect(facts.currentStreak == 4)
        #expect(facts.longestStreak == 4)
    }

    @Test func longestStreakOfTheSeries() {
        func points(_ exercises: [Int]) -> [PerformancePoint] {
            exercises.enumerated().map { PerformancePoint(day: date(2027, 1, 1).adding(days: $0), score: 0, repetitions: 0, exercises: $1) }
        }
        #expect(Streaks.longest(in: points([1, 1, 0, 2, 1, 3, 0, 1])) == 3)
        #expect(Streaks.longest(in: points([0, 0, 0])) == 0)
        #expect(Streaks.longest(in: []) == 0)
    }

    @Test func currentStreakFromDoneDays() {
        let days: Set<Int64> = [date(2026, 12, 30).daysSinceEpoch, date(2026, 12, 31).daysSinceEpoch, date(2027, 1, 1).daysSinceEpoch]
        #expect(Streaks.current(doneDays: days, today: date(2027, 1, 1)) == 3)
        #expect(Streaks.current(doneDays: days, today: date(2027, 1, 2)) == 3)
        #expect(Streaks.current(doneDays: days, today: date(2027, 1, 3)) == 0)
        #expect(Streaks.current(doneDays: [], today: date(2027, 1, 3)) == 0)
    }

    @Test func percentChangeRounding() {
        #expect(PeriodChange(current: 150, previous: 100).percentChange == 50)
        #expect(PeriodChange(current: 50, previous: 100).percentChange == -50)
        #expect(PeriodChange(current: 100, previous: 100).percentChange == 0)
        #expect(PeriodChange(current: 0, previous: 7).percentChange == -100)
        #expect(PeriodChange(current: 1, previous: 3).percentChange == -67)  // -66.67
        #expect(PeriodChange(current: 2, previous: 3).percentChange == -33)  // -33.33
        #expect(PeriodChange(current: 4, previous: 3).percentChange == 33)  // 33.33
        #expect(PeriodChange(current: 5, previous: 3).percentChange == 67)  // 66.67
        // Halves round away from zero.
        #expect(PeriodChange(current: 9, previous: 8).percentChange == 13)  // 12.5
        #expect(PeriodChange(current: 1, previous: 8).percentChange == -88)  // -87.5
        #expect(PeriodChange(current: 201, previous: 200).percentChange == 1)  // 0.5
        #expect(PeriodChange(current: 1, previous: 200).percentChange == -100)  // -99.5
        #expect(PeriodChange(current: 31, previous: 3).percentChange == 933)  // 933.33
    }

    @Test func percentChangeIsNilWithoutAPreviousValue() {
        #expect(PeriodChange(current: 5, previous: 0).percentChange == nil)
        #expect(PeriodChange(current: 0, previous: 0).percentChange == nil)
        let facts = PeriodStatistics(records: [record(Self.today, score: 12)], period: .week, today: Self.today).keyFacts
        #expect(facts.scoreChange == PeriodChange(current: 12, previous: 0))
        #expect(facts.scoreChange.percentChange == nil)
        #expect(facts.repetitionsChange.previous == 0)
        #expect(facts.repetitionsChange.percentChange == nil)
        #expect(facts.workoutsChange.percentChange == nil)
    }

    @Test func monthOnThe31stComparesWithTheShiftedPreviousMonth() {
        // Done daily 2027-02-26...03-31; the month is 03-01...03-31, the previous 01-29...02-28.
        let records = dailyRecords(from: date(2027, 2, 26), through: date(2027, 3, 31), score: 2, repetitions: 3)
        let page = PeriodStatistics(records: records, period: .month, today: date(2027, 3, 31))
        #expect(page.performance.count == 31)
        #expect(page.previousRange == date(2027, 1, 29)...date(2027, 2, 28))
        let facts = page.keyFacts
        #expect(facts.currentStreak == 34)
        #expect(facts.longestStreak == 31)
        #expect(facts.totalScore == 62)
        #expect(facts.scoreChange == PeriodChange(current: 62, previous: 6))
        #expect(facts.scoreChange.percentChange == 933)
        #expect(facts.repetitionsChange == PeriodChange(current: 93, previous: 9))
        #expect(facts.workoutsChange == PeriodChange(current: 31, previous: 3))
    }

    @Test func aYearOfDailyWorkouts() {
        // 8 exercises (score 3, 10 repetitions) a day through 2027, one workout per day.
        var records: [ExerciseRecord] = []
        for offset in 0..<365 {
            let day = date(2027, 1, 1).adding(days: offset)
            for index in 0..<8 {
                records.append(record(day, workout: "\(day)", bodyPart: BodyPart.allCases[index % 7], repetitions: 10, score: 3))
            }
        }
        let page = PeriodStatistics(records: records, period: .month, today: date(2027, 12, 31))
        #expect(page.range == date(2027, 12, 1)...date(2027, 12, 31))
        #expect(page.previousRange == date(2027, 10, 31)...date(2027, 11, 30))
        let facts = page.keyFacts
        #expect(facts.exercisesDone == 248)
        #expect(facts.totalScore == 744)
        #expect(facts.totalRepetitions == 2480)
        #expect(facts.workouts == 31)
        #expect(facts.currentStreak == 365)
        #expect(facts.longestStreak == 31)
        #expect(facts.scoreChange.percentChange == 0)
        // Per day: chest twice, every other part once → 62 of 248 = 25 %, 31 = 12.5 % each.
        // 12.5 six times: the 3 missing points go to back, shoulders, arms.
        #expect(percents(page.bodyPartShares) == [25, 13, 13, 13, 12, 12, 12])
    }
}

// MARK: - Properties

@Suite struct StatisticsPropertyTests {
    @Test func sharesSumTo100Or0AndTheSeriesCoversTheRange() async {
        let recordGen = zip(
            Gen.int(in: -75...5), Gen<BodyPart>.case, Gen<MotorAbility>.case, Gen.int(in: 0...40), Gen.int(in: 0...50),
            Gen.bool(0.3), Gen.int(in: 0...9))
        await propertyCheck(input: recordGen.array(of: 0...60), Gen<StatsPeriod>.case, Gen.int(in: 0...1_500)) { raw, period, todayOffset in
            let today = date(2026, 1, 1).adding(days: todayOffset)
            let records = raw.map { offset, bodyPart, motorAbility, repetitions, score, skipped, workout in
                ExerciseRecord(
                    workoutID: "w\(workout)", day: today.adding(days: offset), bodyPart: bodyPart, motorAbility: motorAbility,
                    repetitions: skipped ? 0 : repetitions, score: skipped ? 0 : score, skipped: skipped)
            }
            let page = PeriodStatistics(records: records, period: period, today: today)
            let range = period.range(endingOn: today)
            let done = records.filter { !$0.skipped && range.contains($0.day) }

            #expect(page.performance.count == range.dayCount)
            #expect(page.performance.first?.day == range.lowerBound)
            #expect(page.performance.last?.day == today)
            #expect(zip(page.performance, page.performance.dropFirst()).allSatisfy { $0.day.adding(days: 1) == $1.day })

            let expectedSum = done.isEmpty ? 0 : 100
            #expect(page.bodyPartShares.map(\.percent).reduce(0, +) == expectedSum)
            #expect(page.motorAbilityShares.map(\.percent).reduce(0, +) == expectedSum)
            #expect(page.bodyPartShares.map(\.category) == BodyPart.allCases)
            #expect(page.bodyPartShares.map(\.count).reduce(0, +) == done.count)

            #expect(page.keyFacts.exercisesDone == done.count)
            #expect(page.keyFacts.totalScore == done.reduce(0) { $0 + $1.score })
            #expect(page.performance.reduce(0) { $0 + $1.repetitions } == done.reduce(0) { $0 + $1.repetitions })
            #expect(page.keyFacts.longestStreak <= range.dayCount)
        }
    }

    @Test func eachPercentIsTheFloorOrCeilingOfTheExactShare() async {
        await propertyCheck(input: Gen.int(in: 0...50).array(of: 7)) { values in
            let counts = Dictionary(uniqueKeysWithValues: zip(BodyPart.allCases, values))
            let shares = Shares.percentages(counts: counts, order: BodyPart.allCases)
            let total = values.reduce(0, +)
            #expect(shares.map(\.percent).reduce(0, +) == (total == 0 ? 0 : 100))
            for (share, value) in zip(shares, values) where total > 0 {
                let floor = value * 100 / total
                #expect(share.percent == floor || share.percent == floor + 1)
                if value == 0 { #expect(share.percent == 0) }
            }
        }
    }
}

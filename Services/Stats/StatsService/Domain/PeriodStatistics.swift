import Platform

// MARK: - Input

/// One exercise of a workout as the statistics see it: done or skipped, on the day (in the
/// user's time zone) it was done.
///
/// A skipped record counts only as skipped: its `repetitions` and `score` are ignored even
/// when they are not 0, and it adds nothing to the chart, the shares or the streaks.
struct ExerciseRecord: Sendable, Hashable {
    var workoutID: String
    /// The day it was done, in the user's time zone.
    var day: LocalDate
    var bodyPart: BodyPart
    var motorAbility: MotorAbility
    /// 0 when skipped.
    var repetitions: Int
    /// The exercise's score (0 when skipped).
    var score: Int
    var skipped: Bool
}

/// One day's totals of a user's exercises: what every statistic is computed from. The
/// database keeps them per user and day as exercises are done, skipped or removed
/// (`exercise_day` and `workout_day`, kept by triggers: ``StatsMigrations``), so a month
/// reads one row per day rather than every exercise; ``of(_:)`` makes them from records.
struct DayTotals: Sendable, Hashable {
    var day: LocalDate
    /// The scores and repetitions of the exercises done that day.
    var score = 0
    var repetitions = 0
    /// Exercises done, and skipped.
    var done = 0
    var skipped = 0
    /// Done exercises per body part, in the order of `BodyPart.allCases`.
    var bodyParts = [Int](repeating: 0, count: BodyPart.allCases.count)
    /// Done exercises per motor ability, in the order of `MotorAbility.allCases`.
    var motorAbilities = [Int](repeating: 0, count: MotorAbility.allCases.count)
    /// The workouts with an exercise done that day (read only where the key facts need them).
    var workoutIDs: Set<String> = []

    init(day: LocalDate) {
        self.day = day
    }

    /// The totals of `records`, one per day with a record, in day order.
    static func of(_ records: [ExerciseRecord]) -> [DayTotals] {
        var days: [LocalDate: DayTotals] = [:]
        for record in records {
            days[record.day, default: DayTotals(day: record.day)].add(record)
        }
        return days.values.sorted { $0.day < $1.day }
    }

    /// Counts one exercise in (a skipped one only as skipped).
    mutating func add(_ record: ExerciseRecord) {
        guard !record.skipped else {
            skipped += 1
            return
        }
        score += record.score
        repetitions += record.repetitions
        done += 1
        if let index = BodyPart.allCases.firstIndex(of: record.bodyPart) { bodyParts[index] += 1 }
        if let index = MotorAbility.allCases.firstIndex(of: record.motorAbility) { motorAbilities[index] += 1 }
        workoutIDs.insert(record.workoutID)
    }
}

// MARK: - Periods

/// The period a statistics page shows; it always ends on (and includes) `today`.
enum StatsPeriod: String, CaseIterable, Sendable {
    case week
    case twoWeeks = "two_weeks"
    case month

    /// The days of the period ending on `today` (inclusive).
    ///
    /// - `week`: the 7 days ending today.
    /// - `twoWeeks`: the 14 days ending today.
    /// - `month`: from the day after the same day-number of the previous month through
    ///   today. When the previous month is shorter the day-number is clamped to its last
    ///   day first: 2027-03-15 → 2027-02-16...2027-03-15, but 2027-03-31 (and 03-29,
    ///   03-30) → 2027-03-01...today, since February 2027 ends on the 28th. So a month is
    ///   28 to 31 days long.
    func range(endingOn today: LocalDate) -> ClosedRange<LocalDate> {
        let start: LocalDate
        switch self {
        case .week: start = today.adding(days: -6)
        case .twoWeeks: start = today.adding(days: -13)
        case .month: start = today.adding(months: -1).adding(days: 1)
        }
        return start...today
    }

    /// The period of the same kind just before `range(endingOn: today)`: the one ending on
    /// the day before its first day (with the same rules, so for `month` it may have a
    /// different length: today 2027-03-31 → 2027-01-29...2027-02-28).
    func previousRange(endingOn today: LocalDate) -> ClosedRange<LocalDate> {
        range(endingOn: range(endingOn: today).lowerBound.adding(days: -1))
    }
}

extension ClosedRange where Bound == LocalDate {
    /// The number of days in the range (both ends included).
    var dayCount: Int { lowerBound.days(until: upperBound) + 1 }
}

// MARK: - Performance series

/// One day of the performance line chart. Days without training are points with zeros.
struct PerformancePoint: Sendable, Hashable {
    var day: LocalDate
    /// The sum of the scores of the exercises done that day.
    var score: Int
    /// The sum of the repetitions of the exercises done that day.
    var repetitions: Int
    /// How many exercises were done (not skipped) that day.
    var exercises: Int
}

/// The daily series for the performance chart.
enum PerformanceSeries {
    /// One point per day of `range`, in order (no gaps); records outside the range and
    /// skipped records add nothing.
    static func daily(_ records: [ExerciseRecord], in range: ClosedRange<LocalDate>) -> [PerformancePoint] {
        PeriodAggregate(DayTotals.of(records), in: range).points
    }
}

// MARK: - Shares

/// The share of one category (a body part, a motor ability) among the done exercises.
struct CategoryShare<Category: Hashable & Sendable>: Sendable, Hashable {
    var category: Category
    /// How many done exercises fall into the category.
    var count: Int
    /// The integer percentage; see ``Shares/percentages(counts:order:)``.
    var percent: Int
}

/// Integer percentages for pie charts.
enum Shares {
    /// Integer percents of `counts` that sum to exactly 100 whenever any count is positive
    /// (largest remainder method): each category gets the floor of its exact share, and
    /// the points still missing to 100 go one each to the categories with the largest
    /// remainders; equal remainders go to the category that comes first in `order`, so the
    /// result is deterministic.
    ///
    /// Every category of `order` is listed once, in that order (later duplicates are
    /// dropped); a category missing from `counts` has count 0, a negative count counts
    /// as 0, keys not in `order` are ignored. When all counts are 0 every percent is 0
    /// (the sum is 0, not 100: there is nothing to share). A category with count 0
    /// always gets 0 %. Counts must stay below `Int.max / 100`.
    static func percentages<Category: Hashable & Sendable>(counts: [Category: Int], order: [Category]) -> [CategoryShare<Category>] {
        var seen = Set<Category>()
        let categories = order.filter { seen.insert($0).inserted }
        let values = categories.map { Swift.max(counts[$0] ?? 0, 0) }
        let total = values.reduce(0, +)
        guard total > 0 else {
            return zip(categories, values).map { CategoryShare(category: $0, count: $1, percent: 0) }
        }
        var percents = values.map { $0 * 100 / total }
        let remainders = values.map { $0 * 100 % total }
        let missing = 100 - percents.reduce(0, +)
        // Largest remainder first; equal remainders keep the declared order.
        let byRemainder = remainders.indices.sorted { remainders[$0] != remainders[$1] ? remainders[$0] > remainders[$1] : $0 < $1 }
        for index in byRemainder.prefix(missing) { percents[index] += 1 }
        return categories.indices.map { CategoryShare(category: categories[$0], count: values[$0], percent: percents[$0]) }
    }

    /// The share of done exercises in `range` per body part, all body parts in declared order.
    static func bodyParts(_ records: [ExerciseRecord], in range: ClosedRange<LocalDate>) -> [CategoryShare<BodyPart>] {
        percentages(counts: PeriodAggregate(DayTotals.of(records), in: range).bodyPartCounts, order: BodyPart.allCases)
    }

    /// The share of done exercises in `range` per motor ability, all abilities in declared order.
    static func motorAbilities(_ records: [ExerciseRecord], in range: ClosedRange<LocalDate>) -> [CategoryShare<MotorAbility>] {
        percentages(counts: PeriodAggregate(DayTotals.of(records), in: range).motorAbilityCounts, order: MotorAbility.allCases)
    }
}

// MARK: - Key facts

/// A day and its total score (the best day of a period).
struct DayScore: Sendable, Hashable {
    var day: LocalDate
    var score: Int
}

/// A value of this period against the same value of the previous period.
struct PeriodChange: Sendable, Hashable {
    var current: Int
    var previous: Int

    /// `round((current - previous) / previous × 100)`, halves rounded away from zero
    /// (exact integer arithmetic); `nil` when `previous` is 0, as there is no base to
    /// compare with (a chart shows "new" rather than "+∞ %").
    var percentChange: Int? {
        guard previous != 0 else { return nil }
        let numerator = (current - previous) * 100
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: previous)
        guard remainder.magnitude * 2 >= previous.magnitude else { return quotient }
        return (numerator < 0) == (previous < 0) ? quotient + 1 : quotient - 1
    }
}

/// The run of consecutive done days that ends the day before `first`, the first day whose
/// records or totals are given: where a streak running up to today reaches back to `first`,
/// it goes on for `length` more days (so the days before a period need not be read one by
/// one).
struct EarlierStreak: Sendable, Hashable {
    var first: LocalDate
    var length: Int
}

/// Streaks: runs of consecutive days with at least one done (not skipped) exercise.
enum Streaks {
    /// The days (as days since the epoch) with at least one done exercise, up to and
    /// including `today`; later (future) records are ignored.
    static func doneDays(_ records: [ExerciseRecord], through today: LocalDate) -> Set<Int64> {
        doneDays(DayTotals.of(records), through: today)
    }

    /// The days with at least one done exercise, up to and including `today`.
    static func doneDays(_ days: [DayTotals], through today: LocalDate) -> Set<Int64> {
        Set(days.lazy.filter { $0.done > 0 && $0.day <= today }.map(\.day.daysSinceEpoch))
    }

    /// The streak running up to now: consecutive done days ending `today`, or ending
    /// yesterday when nothing is done today yet (the day is not over, so the streak is
    /// not broken); 0 when neither today nor yesterday has a done exercise. It is not
    /// limited to any period: days before a period's start count.
    static func current(doneDays: Set<Int64>, today: LocalDate, earlier: EarlierStreak? = nil) -> Int {
        var day = today.daysSinceEpoch
        if !doneDays.contains(day) { day -= 1 }
        var length = 0
        while doneDays.contains(day) {
            length += 1
            day -= 1
        }
        // The run reaches back to the first day given: the run before it continues it.
        if let earlier, day == earlier.first.daysSinceEpoch - 1 { length += earlier.length }
        return length
    }

    /// The longest run of consecutive days with a done exercise in a daily series (see
    /// ``PerformanceSeries/daily(_:in:)``): for a period's series, a run crossing the
    /// period's start counts only with its days inside the period.
    static func longest(in series: [PerformancePoint]) -> Int {
        var longest = 0
        var run = 0
        for point in series {
            run = point.exercises > 0 ? run + 1 : 0
            longest = Swift.max(longest, run)
        }
        return longest
    }
}

/// The key facts of a period, against the previous period.
///
/// Only records inside the range count for the sums; skipped records count only in
/// `exercisesSkipped`. The exception is `currentStreak`, which looks at all records up
/// to the range's last day ("today"), so a streak running into the period from before
/// counts in full; `longestStreak` counts only days inside the range, so
/// `currentStreak` can be larger than `longestStreak`.
struct KeyFacts: Sendable, Hashable {
    /// Distinct workouts with at least one done exercise in the range.
    var workouts: Int
    var exercisesDone: Int
    var exercisesSkipped: Int
    var totalRepetitions: Int
    var totalScore: Int
    /// The day with the highest score among the days with a done exercise; the earliest
    /// on a tie; `nil` when nothing was done.
    var bestDay: DayScore?
    /// See ``Streaks/current(doneDays:today:)`` (today = the range's last day).
    var currentStreak: Int
    /// The longest streak inside the range; see ``Streaks/longest(in:)``.
    var longestStreak: Int
    var scoreChange: PeriodChange
    var repetitionsChange: PeriodChange
    var workoutsChange: PeriodChange

    /// The key facts of `range` from all the user's `records` (any days), compared with
    /// `previousRange`.
    init(records: [ExerciseRecord], range: ClosedRange<LocalDate>, previousRange: ClosedRange<LocalDate>) {
        let days = DayTotals.of(records)
        self.init(
            current: PeriodAggregate(days, in: range), previous: PeriodAggregate(days, in: previousRange),
            doneDays: Streaks.doneDays(days, through: range.upperBound), today: range.upperBound)
    }

    fileprivate init(current: PeriodAggregate, previous: PeriodAggregate, doneDays: Set<Int64>, today: LocalDate, earlier: EarlierStreak? = nil) {
        workouts = current.workoutIDs.count
        exercisesDone = current.exercisesDone
        exercisesSkipped = current.exercisesSkipped
        totalRepetitions = current.totalRepetitions
        totalScore = current.totalScore
        bestDay = current.bestDay
        currentStreak = Streaks.current(doneDays: doneDays, today: today, earlier: earlier)
        longestStreak = Streaks.longest(in: current.points)
        scoreChange = PeriodChange(current: current.totalScore, previous: previous.totalScore)
        repetitionsChange = PeriodChange(current: current.totalRepetitions, previous: previous.totalRepetitions)
        workoutsChange = PeriodChange(current: current.workoutIDs.count, previous: previous.workoutIDs.count)
    }
}

// MARK: - The page

/// Everything a statistics page shows for one period ending today.
struct PeriodStatistics: Sendable, Hashable {
    var period: StatsPeriod
    var range: ClosedRange<LocalDate>
    var previousRange: ClosedRange<LocalDate>
    /// The line chart: one point per day of `range`.
    var performance: [PerformancePoint]
    var bodyPartShares: [CategoryShare<BodyPart>]
    var motorAbilityShares: [CategoryShare<MotorAbility>]
    var keyFacts: KeyFacts

    /// The statistics of `period` ending on `today` from all the user's `records`
    /// (in any order, any days). Linear in the number of records plus days.
    init(records: [ExerciseRecord], period: StatsPeriod, today: LocalDate) {
        self.init(days: DayTotals.of(records), period: period, today: today)
    }

    /// The statistics of `period` ending on `today` from the user's totals per day (in any
    /// order, at most one per day; days outside both periods count only for the streak),
    /// and the streak that ran up to the first of them, if it is not among them.
    init(days: [DayTotals], period: StatsPeriod, today: LocalDate, earlier: EarlierStreak? = nil) {
        self.period = period
        range = period.range(endingOn: today)
        previousRange = period.previousRange(endingOn: today)
        let current = PeriodAggregate(days, in: range)
        let previous = PeriodAggregate(days, in: previousRange)
        performance = current.points
        bodyPartShares = Shares.percentages(counts: current.bodyPartCounts, order: BodyPart.allCases)
        motorAbilityShares = Shares.percentages(counts: current.motorAbilityCounts, order: MotorAbility.allCases)
        keyFacts = KeyFacts(
            current: current, previous: previous, doneDays: Streaks.doneDays(days, through: today), today: today, earlier: earlier)
    }
}

/// One pass over the day totals for one range: the daily points and the category counts.
/// Days outside the range are ignored; skipped exercises are only counted.
private struct PeriodAggregate {
    var points: [PerformancePoint]
    var bodyPartCounts: [BodyPart: Int] = [:]
    var motorAbilityCounts: [MotorAbility: Int] = [:]
    var exercisesSkipped = 0
    var workoutIDs = Set<String>()

    init(_ days: [DayTotals], in range: ClosedRange<LocalDate>) {
        var points: [PerformancePoint] = []
        points.reserveCapacity(range.dayCount)
        var day = range.lowerBound
        for _ in 0..<range.dayCount {
            points.append(PerformancePoint(day: day, score: 0, repetitions: 0, exercises: 0))
            day = day.adding(days: 1)
        }
        let first = range.lowerBound.daysSinceEpoch
        var bodyParts = [Int](repeating: 0, count: BodyPart.allCases.count)
        var motorAbilities = [Int](repeating: 0, count: MotorAbility.allCases.count)
        for totals in days where range.contains(totals.day) {
            exercisesSkipped += totals.skipped
            let index = Int(totals.day.daysSinceEpoch - first)
            points[index].score += totals.score
            points[index].repetitions += totals.repetitions
            points[index].exercises += totals.done
            for (index, count) in totals.bodyParts.enumerated() { bodyParts[index] += count }
            for (index, count) in totals.motorAbilities.enumerated() { motorAbilities[index] += count }
            workoutIDs.formUnion(totals.workoutIDs)
        }
        self.points = points
        for (part, count) in zip(BodyPart.allCases, bodyParts) where count > 0 { bodyPartCounts[part] = count }
        for (ability, count) in zip(MotorAbility.allCases, motorAbilities) where count > 0 { motorAbilityCounts[ability] = count }
    }

    var exercisesDone: Int { points.reduce(0) { $0 + $1.exercises } }
    var totalScore: Int { points.reduce(0) { $0 + $1.score } }
    var totalRepetitions: Int { points.reduce(0) { $0 + $1.repetitions } }

    /// The highest-scoring day with a done exercise; the earliest on a tie.
    var bestDay: DayScore? {
        var best: DayScore?
        for point in points where point.exercises > 0 {
            if let best, best.score >= point.score { continue }
            best = DayScore(day: point.day, score: point.score)
        }
        return best
    }
}

import Platform

/// The recommended repetitions of an exercise for a user (spec 004, Gym e).
///
/// The recommendation is the exercise's base repetitions at the user's fitness level,
/// times the goal factor (maintain 0.8, improve 1.0, challenge 1.25), times the
/// progression factor (1 + progression percent per week / 100 × the full weeks since the
/// user's first workout, the gain capped at +100 %, so at most 2.0; no first workout or
/// one in the future: 1.0), times the adaptation factor (the average of
/// min(done / recommended, 1.5) over the last up to 3 completions of the same exercise,
/// clamped to 0.8...1.2; 1.0 with no history), rounded half up and kept within 1...500.
/// Example: 16 base × 1.25 (challenge) × 1.40 (4 weeks at 10 %) × 1.10 (recent results)
/// = 30.8 → 31.
struct RepetitionRecommendation: Sendable, Hashable {
    /// The planned progression adds at most this many percent (the factor is at most 2.0).
    static let maximumProgressionPercent = 100
    /// One result's done / recommended counts at most this much (over-performance cap).
    static let resultRatioCap = 1.5
    /// How many recent completions of the exercise adapt the recommendation.
    static let adaptationHistory = 3
    /// The adaptation factor stays within this range.
    static let adaptationRange: ClosedRange<Double> = 0.8...1.2
    /// The recommendation stays within this range.
    static let repetitionRange = 1...500

    /// The factor a fitness goal applies: maintain 0.8, improve 1.0, challenge 1.25.
    static func goalFactor(_ goal: FitnessGoal) -> Double {
        switch goal {
        case .maintain: 0.8
        case .improve: 1.0
        case .challenge: 1.25
        }
    }

    /// The user's level the base repetitions are taken at.
    let level: FitnessLevel
    /// The user's goal.
    let goal: FitnessGoal
    /// The exercise's base repetitions at ``level``.
    let baseRepetitions: Int
    /// See ``goalFactor(_:)``.
    let goalFactor: Double
    /// Full weeks (7 days) from the first workout to today; 0 without one.
    let fullWeeks: Int
    /// The planned progression per week, in percent (negative counts as 0).
    let progressionPercentPerWeek: Int
    /// The progression applied, in percent: weeks × percent per week, at most 100.
    let progressionPercent: Int
    /// 1 + ``progressionPercent`` / 100.
    let progressionFactor: Double
    /// How many recent completions the adaptation averages (0...3).
    let adaptationResultCount: Int
    /// The adaptation factor from recent completions (1.0 without any).
    let adaptationFactor: Double
    /// The product of the factors before rounding.
    let exactRepetitions: Double
    /// The recommendation: ``exactRepetitions`` rounded half up, within 1...500.
    let repetitions: Int

    /// Computes the recommendation.
    ///
    /// - Parameters:
    ///   - exercise: The exercise (its base repetitions and id).
    ///   - preferences: The user's level, goal and progression per week.
    ///   - firstWorkout: The local date of the user's first workout, if any.
    ///   - today: Today's local date in the user's zone.
    ///   - history: The user's past exercise results, oldest first (any exercises;
    ///     skipped ones and other exercises are ignored).
    init(exercise: Exercise, preferences: Preferences, firstWorkout: LocalDate?, today: LocalDate, history: [ExerciseResult]) {
        level = preferences.level
        goal = preferences.goal
        baseRepetitions = exercise.baseRepetitions.at(preferences.level)
        goalFactor = Self.goalFactor(preferences.goal)
        fullWeeks = firstWorkout.map { Self.fullWeeks(from: $0, to: today) } ?? 0
        progressionPercentPerWeek = max(0, preferences.progressionPercentPerWeek)
        progressionPercent = Self.progressionPercent(weeks: fullWeeks, percentPerWeek: progressionPercentPerWeek)
        progressionFactor = 1 + Double(progressionPercent) / 100
        let recent = Self.recentCompletions(of: exercise.id, in: history)
        adaptationResultCount = recent.count
        adaptationFactor = Self.adaptationFactor(recent)
        exactRepetitions = Double(baseRepetitions) * goalFactor * progressionFactor * adaptationFactor
        repetitions = Self.roundedHalfUp(exactRepetitions, within: Self.repetitionRange)
    }

    /// The factors in one line, for `describe`:
    /// `16 (intermediate) × 1.25 (challenge) × 1.40 (4 weeks at 10 %/week) × 1.10 (3 recent results) = 30.80 → 31`.
    var explanation: String {
        let weeks = fullWeeks == 1 ? "1 week" : "\(fullWeeks) weeks"
        let capped = progressionPercent < fullWeeks * progressionPercentPerWeek ? ", capped" : ""
        let results = adaptationResultCount == 1 ? "1 recent result" : "\(adaptationResultCount) recent results"
        return "\(baseRepetitions) (\(level.rawValue)) × \(Self.decimal(goalFactor)) (\(goal.rawValue))"
            + " × \(Self.decimal(progressionFactor)) (\(weeks) at \(progressionPercentPerWeek) %/week\(capped))"
            + " × \(Self.decimal(adaptationFactor)) (\(results))"
            + " = \(Self.decimal(exactRepetitions)) → \(repetitions)"
    }

    /// Whether `recommended` is one the formula can give for an exercise of `base`
    /// repetitions at the level: from base × the smallest goal factor × no progression ×
    /// the lowest adaptation (0.8 × 1.0 × 0.8), rounded down, to base × the largest goal
    /// factor × the most progression × the highest adaptation (1.25 × 2.0 × 1.2), rounded
    /// up, within ``repetitionRange``. An offline upload's recommendation is checked with it.
    static func plausible(_ recommended: Int, base: Int) -> Bool {
        let factors = FitnessGoal.allCases.map(goalFactor)
        let lowest = Double(base) * factors.min()! * adaptationRange.lowerBound
        let highest = Double(base) * factors.max()! * (1 + Double(maximumProgressionPercent) / 100) * adaptationRange.upperBound
        let range = max(repetitionRange.lowerBound, Int(lowest.rounded(.down)))...min(repetitionRange.upperBound, Int(highest.rounded(.up)))
        return range.contains(recommended)
    }

    /// Full weeks from `first` to `today` (13 days: 1 week); 0 when `today` is earlier.
    static func fullWeeks(from first: LocalDate, to today: LocalDate) -> Int {
        max(0, first.days(until: today)) / 7
    }

    /// Weeks × percent per week, capped at ``maximumProgressionPercent`` (no overflow).
    static func progressionPercent(weeks: Int, percentPerWeek: Int) -> Int {
        let cap = maximumProgressionPercent
        return min(min(max(0, weeks), cap) * min(max(0, percentPerWeek), cap), cap)
    }

    /// The last ``adaptationHistory`` completions (not skipped) of `exerciseID`, oldest first.
    static func recentCompletions(of exerciseID: String, in history: [ExerciseResult]) -> [ExerciseResult] {
        Array(history.filter { $0.exerciseID == exerciseID && !$0.skipped }.suffix(adaptationHistory))
    }

    /// The average of min(done / recommended, 1.5) over `results`, clamped to 0.8...1.2;
    /// 1.0 for none. Negative done counts as 0, a recommendation below 1 as 1.
    static func adaptationFactor(_ results: [ExerciseResult]) -> Double {
        guard !results.isEmpty else { return 1 }
        let ratios = results.map { min(Double(max(0, $0.done)) / Double(max(1, $0.recommended)), resultRatioCap) }
        let average = ratios.reduce(0, +) / Double(ratios.count)
        return min(max(average, adaptationRange.lowerBound), adaptationRange.upperBound)
    }

    /// `value` rounded half up, then clamped to `range`. A product that is exactly .5 on
    /// paper but a hair below in binary (10 × 1.25 × 1.16 = 14.499999999999998) still rounds up.
    static func roundedHalfUp(_ value: Double, within range: ClosedRange<Int>) -> Int {
        let rounded = (value + 0.5 + 1e-9).rounded(.down)
        return Int(min(max(rounded, Double(range.lowerBound)), Double(range.upperBound)))
    }

    /// Two decimals, half up: `1.1` is `1.10`.
    static func decimal(_ value: Double) -> String {
        let hundredths = roundedHalfUp(value * 100, within: 0...Int(Int32.max))
        return "\(hundredths / 100)." + Instant.digits(hundredths % 100, width: 2)
    }
}

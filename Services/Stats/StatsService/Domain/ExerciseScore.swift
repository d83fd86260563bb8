/// One exercise of a past workout: what was recommended and what the user did.
struct ExerciseResult: Sendable, Hashable {
    var exerciseID: String
    /// The recommended repetitions when it was shown.
    var recommended: Int
    /// The repetitions the user reported.
    var done: Int
    /// The user skipped it (no repetitions count).
    var skipped: Bool = false
}

/// The score of an exercise and of a workout (the spec gives none; this is ours).
///
/// An exercise scores round(100 × min(done / recommended, 2.0) × level weight), rounded
/// half up, with the level weight beginner 1.0, intermediate 1.25, advanced 1.5; a skipped
/// exercise or none done scores 0. Dividing by the recommendation makes exercises with
/// different repetition counts comparable within a workout (doing what was recommended
/// is 100 points for a beginner), the cap at twice the recommendation keeps one
/// over-performed exercise from dominating (at most 200, 250 or 300 points), and the
/// level weight makes the same effort at a harder level weigh more across workouts. A
/// workout scores the sum of its exercises. Computed in integers, so exact. A
/// recommendation below 1 counts as 1, negative repetitions as 0.
enum ExerciseScore {
    /// done / recommended counts at most this much.
    static let ratioCap = 2

    /// The weight of a level in quarters: beginner 4 (1.0), intermediate 5 (1.25), advanced 6 (1.5).
    static func levelWeightQuarters(_ level: FitnessLevel) -> Int {
        switch level {
        case .beginner: 4
        case .intermediate: 5
        case .advanced: 6
        }
    }

    /// The weight of a level: beginner 1.0, intermediate 1.25, advanced 1.5.
    static func levelWeight(_ level: FitnessLevel) -> Double { Double(levelWeightQuarters(level)) / 4 }

    /// The score of one exercise at the user's level (0 when skipped or none done).
    static func score(done: Int, recommended: Int, skipped: Bool = false, level: FitnessLevel) -> Int {
        guard !skipped else { return 0 }
        let (done, recommended) = sanitized(done: done, recommended: recommended)
        let counted = min(done, ratioCap * recommended)
        return roundedHalfUp(100 * counted * levelWeightQuarters(level), over: 4 * recommended)
    }

    /// The score of one result at the user's level.
    static func score(of result: ExerciseResult, level: FitnessLevel) -> Int {
        score(done: result.done, recommended: result.recommended, skipped: result.skipped, level: level)
    }

    /// The score of a workout: the sum of its exercises' scores.
    static func workoutScore(_ results: [ExerciseResult], level: FitnessLevel) -> Int {
        results.reduce(0) { $0 + score(of: $1, level: level) }
    }

    /// done / recommended in whole percent, rounded half up, not capped (150 for half
    /// again as many); 0 for a skipped exercise.
    static func percentOfRecommendation(done: Int, recommended: Int, skipped: Bool = false) -> Int {
        guard !skipped else { return 0 }
        let (done, recommended) = sanitized(done: done, recommended: recommended)
        return roundedHalfUp(100 * done, over: recommended)
    }

    /// Done in 0...2³¹−1, recommended in 1...2³¹−1: the products above stay far from overflow.
    private static func sanitized(done: Int, recommended: Int) -> (done: Int, recommended: Int) {
        let limit = Int(Int32.max)
        return (min(max(done, 0), limit), min(max(recommended, 1), limit))
    }

    /// numerator / denominator rounded half up (both non-negative, denominator positive).
    private static func roundedHalfUp(_ numerator: Int, over denominator: Int) -> Int {
        (2 * numerator + denominator) / (2 * denominator)
    }
}

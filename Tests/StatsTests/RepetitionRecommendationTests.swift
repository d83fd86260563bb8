import Platform
import Testing

@testable import StatsService

@Suite("RepetitionRecommendation")
struct RepetitionRecommendationTests {
    static let start = LocalDate(year: 2026, month: 1, day: 1)

    /// The recommendation for an exercise with `base` repetitions at every level.
    func recommend(
        base: Int, level: FitnessLevel = .beginner, goal: FitnessGoal = .improve, percentPerWeek: Int = 5,
        daysSinceFirst: Int? = nil, history: [ExerciseResult] = []
    ) -> RepetitionRecommendation {
        let preferences = Preferences(level: level, goal: goal, progressionPercentPerWeek: percentPerWeek)
        return RepetitionRecommendation(
            exercise: exercise("push", .chest, base: BaseRepetitions(beginner: base, intermediate: base, advanced: base)),
            preferences: preferences, firstWorkout: daysSinceFirst.map { _ in Self.start },
            today: Self.start.adding(days: daysSinceFirst ?? 0), history: history)
    }

    func result(_ done: Int, of recommended: Int, id: String = "push", skipped: Bool = false) -> ExerciseResult {
        ExerciseResult(exerciseID: id, recommended: recommended, done: done, skipped: skipped)
    }

    @Test("base repetitions at the user's level")
    func baseAtLevel() {
        let push = exercise("push", .chest, base: BaseRepetitions(beginner: 8, intermediate: 12, advanced: 20))
        for (level, expected) in [(FitnessLevel.beginner, 8), (.intermediate, 12), (.advanced, 20)] {
            let recommendation = RepetitionRecommendation(
                exercise: push, preferences: Preferences(level: level), firstWorkout: nil, today: Self.start, history: [])
            #expect(recommendation.baseRepetitions == expected)
            #expect(recommendation.repetitions == expected)
        }
    }

    @Test(
        "goal factors, rounded half up",
        arguments: [
            (10, FitnessGoal.maintain, 8), (12, .maintain, 10),  // 9.6
            (10, .improve, 10), (10, .challenge, 13),  // 12.5
            (2, .challenge, 3),  // 2.5
            (7, .challenge, 9),  // 8.75
            (11, .maintain, 9),  // 8.8
        ])
    func goalFactors(base: Int, goal: FitnessGoal, expected: Int) {
        #expect(recommend(base: base, goal: goal).repetitions == expected)
    }

    @Test("progression counts full weeks since the first workout")
    func progressionFullWeeks() {
        #expect(recommend(base: 20, daysSinceFirst: 0).repetitions == 20)
        #expect(recommend(base: 20, daysSinceFirst: 6).repetitions == 20)
        #expect(recommend(base: 20, daysSinceFirst: 7).repetitions == 21)  // 1.05
        #expect(recommend(base: 20, daysSinceFirst: 13).repetitions == 21)
        #expect(recommend(base: 20, daysSinceFirst: 14).repetitions == 22)  // 1.10
        #expect(recommend(base: 20, daysSinceFirst: 14).fullWeeks == 2)
        #expect(recommend(base: 20, daysSinceFirst: 14).progressionFactor == 1.1)
        // No first workout: no progression.
        #expect(recommend(base: 20, daysSinceFirst: nil).progressionFactor == 1)
        // Zero progression per week.
        #expect(recommend(base: 20, percentPerWeek: 0, daysSinceFirst: 70).repetitions == 20)
    }

    @Test("progression is capped at +100 %")
    func progressionCap() {
        // 50 % × 3 weeks = 150 % → 100 %.
        let capped = recommend(base: 20, percentPerWeek: 50, daysSinceFirst: 21)
        #expect(capped.progressionPercent == 100)
        #expect(capped.progressionFactor == 2)
        #expect(capped.repetitions == 40)
        // 5 % × 20 weeks = exactly 100 %; 5 % × 1000 weeks is capped the same.
        #expect(recommend(base: 20, daysSinceFirst: 140).repetitions == 40)
        #expect(recommend(base: 20, daysSinceFirst: 7_000).repetitions == 40)
        #expect(RepetitionRecommendation.progressionPercent(weeks: .max, percentPerWeek: .max) == 100)
    }

    @Test("a first workout after today or negative progression give no progression")
    func progressionNeverNegative() {
        let preferences = Preferences(progressionPercentPerWeek: 5)
        let future = RepetitionRecommendation(
            exercise: exercise("push", .chest), preferences: preferences, firstWorkout: Self.start.adding(days: 30), today: Self.start,
            history: [])
        #expect(future.fullWeeks == 0)
        #expect(future.repetitions == 10)
        #expect(recommend(base: 20, percentPerWeek: -10, daysSinceFirst: 70).repetitions == 20)
    }

    @Test("adaptation averages the last three completions of the exercise")
    func adaptation() {
        // 1.2, 0.9, 1.5 → 1.2.
        let recent = recommend(base: 10, history: [result(12, of: 10), result(9, of: 10), result(15, of: 10)])
        #expect(abs(recent.adaptationFactor - 1.2) < 1e-12)
        #expect(recent.repetitions == 12)
        // 1.1 and 1.0 → 1.05: 20 × 1.05 = 21.
        #expect(recommend(base: 20, history: [result(11, of: 10), result(10, of: 10)]).repetitions == 21)
        // Only the last three count: 0/10 is dropped, 11/10 × 3 → 1.1.
        let lastThree = recommend(base: 10, history: [result(0, of: 10)] + Array(repeating: result(11, of: 10), count: 3))
        #expect(lastThree.adaptationResultCount == 3)
        #expect(lastThree.repetitions == 11)
    }

    @Test("other exercises and skipped results do not adapt")
    func adaptationIgnoresOthers() {
        let history = [result(0, of: 10, id: "squat"), result(0, of: 10, skipped: true), result(20, of: 10, id: "squat")]
        let recommendation = recommend(base: 10, history: history)
        #expect(recommendation.adaptationResultCount == 0)
        #expect(recommendation.adaptationFactor == 1)
        #expect(recommendation.repetitions == 10)
    }

    @Test("one result counts at most 1.5 and the factor stays within 0.8...1.2")
    func adaptationClamps() {
        // 3.0 → 1.5, 0.5 → average 1.0 (uncapped it would be 1.75 → 1.2).
        #expect(recommend(base: 10, history: [result(30, of: 10), result(5, of: 10)]).adaptationFactor == 1)
        #expect(recommend(base: 10, history: [result(20, of: 10), result(20, of: 10)]).adaptationFactor == 1.2)
        #expect(recommend(base: 10, history: [result(20, of: 10)]).repetitions == 12)
        #expect(recommend(base: 10, history: [result(0, of: 10)]).adaptationFactor == 0.8)
        #expect(recommend(base: 10, history: [result(0, of: 10)]).repetitions == 8)
        // Broken records: negative done counts as 0, a recommendation of 0 as 1.
        #expect(recommend(base: 10, history: [result(-5, of: 10)]).adaptationFactor == 0.8)
        #expect(recommend(base: 10, history: [result(1, of: 0)]).adaptationFactor == 1)
    }

    @Test("all factors together")
    func combined() {
        // 16 × 1.25 × 1.40 (4 weeks at 10 %) × 1.10 = 30.8 → 31.
        let recommendation = recommend(
            base: 16, level: .intermediate, goal: .challenge, percentPerWeek: 10, daysSinceFirst: 28,
            history: [result(11, of: 10), result(22, of: 20), result(33, of: 30)])
        #expect(recommendation.repetitions == 31)
        #expect(
            recommendation.explanation
                == "16 (intermediate) × 1.25 (challenge) × 1.40 (4 weeks at 10 %/week) × 1.10 (3 recent results) = 30.80 → 31")
        // 10 × 0.8 × 1.5 (10 weeks at 5 %) × 0.8 = 9.6 → 10.
        #expect(recommend(base: 10, goal: .maintain, daysSinceFirst: 70, history: [result(0, of: 10)]).repetitions == 10)
    }

    @Test("the explanation names a cap and singular counts")
    func explanationWording() {
        let recommendation = recommend(base: 20, percentPerWeek: 50, daysSinceFirst: 7, history: [result(10, of: 10)])
        #expect(recommendation.explanation == "20 (beginner) × 1.00 (improve) × 1.50 (1 week at 50 %/week) × 1.00 (1 recent result) = 30.00 → 30")
        #expect(recommend(base: 20, percentPerWeek: 50, daysSinceFirst: 21).explanation.contains("(3 weeks at 50 %/week, capped)"))
    }

    @Test("half up even when binary floating point lands a hair below .5")
    func roundingHalfUp() {
        // 10 × 1.25 × 1.16 (4 weeks at 4 %) is 14.5 on paper, 14.499999999999998 in binary.
        let recommendation = recommend(base: 10, goal: .challenge, percentPerWeek: 4, daysSinceFirst: 28)
        #expect(recommendation.exactRepetitions < 14.5)
        #expect(recommendation.repetitions == 15)
        #expect(RepetitionRecommendation.roundedHalfUp(14.49, within: 1...500) == 14)
        #expect(RepetitionRecommendation.roundedHalfUp(0.5, within: 0...500) == 1)
    }

    @Test("at least 1 and at most 500")
    func bounds() {
        #expect(recommend(base: 1, goal: .maintain).repetitions == 1)  // 0.8
        #expect(recommend(base: 1, goal: .maintain, history: [result(0, of: 10)]).repetitions == 1)  // 0.64
        #expect(recommend(base: 0).repetitions == 1)
        #expect(recommend(base: -3).repetitions == 1)
        #expect(recommend(base: 400, goal: .challenge).repetitions == 500)  // exactly 500
        #expect(recommend(base: 450, goal: .challenge).repetitions == 500)  // 562.5
        #expect(recommend(base: .max, goal: .challenge, percentPerWeek: 50, daysSinceFirst: 700).repetitions == 500)
    }

    @Test("full weeks between dates")
    func fullWeeks() {
        let first = LocalDate(year: 2026, month: 2, day: 20)
        #expect(RepetitionRecommendation.fullWeeks(from: first, to: LocalDate(year: 2026, month: 3, day: 5)) == 1)  // 13 days
        #expect(RepetitionRecommendation.fullWeeks(from: first, to: LocalDate(year: 2026, month: 3, day: 6)) == 2)  // 14 days
        #expect(RepetitionRecommendation.fullWeeks(from: first, to: LocalDate(year: 2026, month: 2, day: 1)) == 0)
    }
}

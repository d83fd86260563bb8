import Testing

@testable import StatsService

@Suite("ExerciseScore")
struct ExerciseScoreTests {
    @Test(
        "score = round(100 × min(done / recommended, 2) × level weight)",
        arguments: [
            (10, 10, FitnessLevel.beginner, 100), (10, 10, .intermediate, 125), (10, 10, .advanced, 150),
            (15, 10, .beginner, 150), (5, 10, .beginner, 50), (5, 10, .advanced, 75),
            (1, 3, .intermediate, 42),  // 41.67
            (1, 8, .beginner, 13),  // 12.5 half up
            (1, 6, .advanced, 25),  // 25.0
            (1, 7, .intermediate, 18),  // 17.86
        ])
    func score(done: Int, recommended: Int, level: FitnessLevel, expected: Int) {
        #expect(ExerciseScore.score(done: done, recommended: recommended, level: level) == expected)
    }

    @Test("over-performance counts up to twice the recommendation")
    func overPerformanceCap() {
        #expect(ExerciseScore.score(done: 20, recommended: 10, level: .beginner) == 200)
        #expect(ExerciseScore.score(done: 30, recommended: 10, level: .beginner) == 200)
        #expect(ExerciseScore.score(done: 1_000, recommended: 10, level: .intermediate) == 250)
        #expect(ExerciseScore.score(done: .max, recommended: 10, level: .advanced) == 300)
    }

    @Test("skipped or none done scores 0")
    func zeroScores() {
        #expect(ExerciseScore.score(done: 10, recommended: 10, skipped: true, level: .advanced) == 0)
        #expect(ExerciseScore.score(done: 0, recommended: 10, level: .advanced) == 0)
        #expect(ExerciseScore.score(done: -4, recommended: 10, level: .advanced) == 0)
    }

    @Test("a recommendation below 1 counts as 1")
    func brokenRecommendation() {
        #expect(ExerciseScore.score(done: 1, recommended: 0, level: .beginner) == 100)
        #expect(ExerciseScore.score(done: 5, recommended: -2, level: .beginner) == 200)
        #expect(ExerciseScore.percentOfRecommendation(done: 3, recommended: 0) == 300)
    }

    @Test("level weights")
    func levelWeights() {
        #expect(ExerciseScore.levelWeight(.beginner) == 1)
        #expect(ExerciseScore.levelWeight(.intermediate) == 1.25)
        #expect(ExerciseScore.levelWeight(.advanced) == 1.5)
    }

    @Test("exercises with different repetition counts compare by their share")
    func comparableWithinWorkout() {
        #expect(
            ExerciseScore.score(done: 40, recommended: 40, level: .beginner)
                == ExerciseScore.score(done: 8, recommended: 8, level: .beginner))
        #expect(
            ExerciseScore.score(done: 10, recommended: 10, level: .advanced)
                > ExerciseScore.score(done: 10, recommended: 10, level: .intermediate))
    }

    @Test("a workout scores the sum of its exercises")
    func workoutScore() {
        let results = [
            ExerciseResult(exerciseID: "a", recommended: 10, done: 10),  // 125
            ExerciseResult(exerciseID: "b", recommended: 12, done: 6),  // 62.5 → 63
            ExerciseResult(exerciseID: "c", recommended: 10, done: 50),  // capped 250
            ExerciseResult(exerciseID: "d", recommended: 10, done: 10, skipped: true),  // 0
        ]
        #expect(ExerciseScore.score(of: results[1], level: .intermediate) == 63)
        #expect(ExerciseScore.workoutScore(results, level: .intermediate) == 438)
        #expect(ExerciseScore.workoutScore([], level: .advanced) == 0)
    }

    @Test(
        "percent of the recommendation, not capped",
        arguments: [(10, 10, 100), (15, 10, 150), (30, 10, 300), (1, 3, 33), (2, 3, 67), (1, 8, 13), (0, 10, 0), (-1, 10, 0)])
    func percentOfRecommendation(done: Int, recommended: Int, expected: Int) {
        #expect(ExerciseScore.percentOfRecommendation(done: done, recommended: recommended) == expected)
    }

    @Test("a skipped exercise is 0 % of its recommendation")
    func percentSkipped() {
        #expect(ExerciseScore.percentOfRecommendation(done: 10, recommended: 10, skipped: true) == 0)
    }
}

import Platform
import PropertyBased
import SharedTesting
import Testing

@testable import StatsService

@Suite("Properties")
struct PropertyTests {
    @Test("the picker never repeats while unused exercises remain, never skips back, never picks inactive ones")
    func pickerNeverRepeats() async {
        await propertyCheck(
            count: 300,
            input: Gen<BodyPart>.case.array(of: 0...16), Gen.bool(0.8).array(of: 16), Gen.bool(0.3).array(of: 40), Gen.uint64()
        ) { parts, activeFlags, skips, seed in
            let catalog = parts.enumerated().map { index, part in exercise("e\(index)", part, active: activeFlags[index]) }
            let activeIDs = Set(catalog.filter(\.active).map(\.id))
            var generator = SplitMix64(seed: seed)
            var shownSoFar: [ShownExercise] = []
            for skip in skips {
                var avoiding: String?
                if skip, let last = shownSoFar.indices.last {
                    shownSoFar[last].skipped = true
                    avoiding = shownSoFar[last].exerciseID
                }
                guard let pick = ExercisePicker.next(from: catalog, shown: shownSoFar, avoiding: avoiding, using: &generator) else {
                    #expect(activeIDs.isEmpty)
                    return
                }
                let used = Set(shownSoFar.map(\.exerciseID))
                #expect(activeIDs.contains(pick.id))
                if !activeIDs.subtracting(used).subtracting([avoiding].compactMap { $0 }).isEmpty {
                    #expect(!used.contains(pick.id))
                }
                if let avoiding, activeIDs.count > 1 {
                    #expect(pick.id != avoiding)
                }
                shownSoFar.append(shown(pick))
            }
        }
    }

    @Test("the recommendation is always within 1...500")
    func recommendationWithinBounds() async {
        let history = zip(Gen.int(in: -10...2_000), Gen.int(in: -5...600), Gen.bool(0.2)).array(of: 0...6)
        await propertyCheck(
            count: 500,
            input: Gen.int(in: -20...1_000), Gen<FitnessLevel>.case, Gen<FitnessGoal>.case, Gen.int(in: -10...100),
            Gen.int(in: -400...5_000), history
        ) { base, level, goal, percent, days, history in
            let start = LocalDate(year: 2025, month: 6, day: 1)
            let recommendation = RepetitionRecommendation(
                exercise: exercise("push", .chest, base: BaseRepetitions(beginner: base, intermediate: base, advanced: base)),
                preferences: Preferences(level: level, goal: goal, progressionPercentPerWeek: percent), firstWorkout: start,
                today: start.adding(days: days),
                history: history.map { ExerciseResult(exerciseID: "push", recommended: $0.1, done: $0.0, skipped: $0.2) })
            #expect(RepetitionRecommendation.repetitionRange.contains(recommendation.repetitions))
            #expect(RepetitionRecommendation.adaptationRange.contains(recommendation.adaptationFactor))
            #expect((1.0...2.0).contains(recommendation.progressionFactor))
        }
    }
}

import Testing
@testable import StatsService

@Suite struct CatalogSeedTests {
    let exercises = ExerciseCatalogSeed.exercises

    @Test func hasAtLeast44Exercises() {
        #expect(exercises.count >= 44)
    }

    @Test func idsAreUniqueSlugs() {
        let ids = exercises.map(\.id)
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.wholeMatch(of: /[a-z0-9_]+/) != nil, "not a slug: \(id)")
        }
    }

    @Test func namesAreNonEmptyAndUniquePerLanguage() {
        for exercise in exercises {
            #expect(!exercise.name.de.trimmingWhitespace.isEmpty, "\(exercise.id)")
            #expect(!exercise.name.en.trimmingWhitespace.isEmpty, "\(exercise.id)")
        }
        let de = exercises.map(\.name.de)
        let en = exercises.map(\.name.en)
        #expect(Set(de).count == de.count)
        #expect(Set(en).count == en.count)
    }

    @Test(arguments: BodyPart.allCases)
    func atLeastFivePerBodyPart(_ bodyPart: BodyPart) {
        #expect(exercises.filter { $0.bodyPart == bodyPart }.count >= 5)
    }

    @Test(arguments: MotorAbility.allCases)
    func atLeastEightPerMotorAbility(_ ability: MotorAbility) {
        #expect(exercises.filter { $0.motorAbility == ability }.count >= 8)
    }

    @Test func baseRepetitionsAreInRangeAndNonDecreasing() {
        for exercise in exercises {
            let reps = FitnessLevel.allCases.map { exercise.baseRepetitions.at($0) }
            #expect(reps.allSatisfy { (1...300).contains($0) }, "\(exercise.id): \(reps)")
            #expect(reps == reps.sorted(), "\(exercise.id): \(reps)")
        }
    }

    @Test(arguments: ["de", "en", "ru"])
    func fifteenUniqueSlogansPerLanguage(_ language: String) {
        let texts = SloganSeed.slogans.filter { $0.language == language }.map(\.text)
        #expect(texts.count == 15)
        #expect(Set(texts).count == texts.count)
        for text in texts {
            #expect(!text.isEmpty)
            #expect(text.count <= 80, "too long: \(text)")
            #expect(text == text.trimmingWhitespace, "untrimmed: \(text)")
        }
    }

    @Test func slogansUseOnlyKnownLanguages() {
        #expect(SloganSeed.slogans.allSatisfy { ["de", "en", "ru"].contains($0.language) })
    }
}

private extension String {
    var trimmingWhitespace: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}

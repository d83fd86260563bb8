import Platform
import SharedTesting
@testable import StatsService

/// An exercise for tests: the id doubles as both names.
func exercise(
    _ id: String, _ bodyPart: BodyPart, base: BaseRepetitions = BaseRepetitions(beginner: 10, intermediate: 15, advanced: 20),
    active: Bool = true
) -> Exercise {
    Exercise(
        id: id, name: LocalizedName(de: id, en: id), bodyPart: bodyPart, motorAbility: .strength, baseRepetitions: base,
        imageID: nil, videoURL: nil, active: active)
}

/// Two exercises for each of the seven body parts: `chest1`, `chest2`, …, `full_body2`.
let twoPerBodyPart: [Exercise] = BodyPart.allCases.flatMap { part in
    [exercise("\(part.rawValue)1", part), exercise("\(part.rawValue)2", part)]
}

/// A shown exercise from a catalog exercise.
func shown(_ exercise: Exercise, skipped: Bool = false) -> ShownExercise {
    ShownExercise(exerciseID: exercise.id, bodyPart: exercise.bodyPart, skipped: skipped)
}

/// Runs a workout of `length` picks, all done (none skipped).
func workout(from catalog: [Exercise], length: Int, seed: UInt64) -> [ShownExercise] {
    var generator = SplitMix64(seed: seed)
    var shownSoFar: [ShownExercise] = []
    for _ in 0..<length {
        guard let next = ExercisePicker.next(from: catalog, shown: shownSoFar, avoiding: nil, using: &generator) else { break }
        shownSoFar.append(shown(next))
    }
    return shownSoFar
}

/// How often each body part occurs (done ones only).
func bodyPartCounts(_ exercises: [ShownExercise]) -> [BodyPart: Int] {
    exercises.filter { !$0.skipped }.reduce(into: [:]) { $0[$1.bodyPart, default: 0] += 1 }
}

/// How often each id occurs.
func idCounts(_ exercises: [ShownExercise]) -> [String: Int] {
    exercises.reduce(into: [:]) { $0[$1.exerciseID, default: 0] += 1 }
}

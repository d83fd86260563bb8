/// An exercise already shown in the running workout, in the order shown: the ones done,
/// the current one and the skipped ones.
struct ShownExercise: Sendable, Hashable {
    var exerciseID: String
    var bodyPart: BodyPart
    /// The user skipped it: it counts as used (not shown again while unused exercises
    /// remain) but not towards its body part (the part was not trained).
    var skipped: Bool = false
}

/// Chooses the next exercise of a workout (spec 004, Gym).
///
/// Rules, in order:
/// 1. Only active exercises of the catalog are chosen (an id listed twice counts once).
/// 2. A skip (`avoiding`) never returns the skipped exercise when the catalog has another
///    active one; a one-exercise catalog shows it again.
/// 3. No repeats: an exercise shown in this workout (done, current or skipped) is not
///    chosen again while unused ones remain; once all are used, the least-used ones
///    (fewest times shown) are the candidates.
/// 4. Balanced body parts: of those, the exercises of the body part(s) least used so far
///    in this workout win. A body part is used by the exercises done and the current one,
///    not by skipped ones (skipping a leg exercise should still bring legs next).
///    `full_body` counts as a part of its own.
/// 5. One of the remaining candidates, uniformly at random (catalog order, so a seeded
///    generator gives the same choice every time).
enum ExercisePicker {
    /// The next exercise, or `nil` when the catalog has no active exercise.
    ///
    /// - Parameters:
    ///   - catalog: The exercise catalog (inactive ones are ignored).
    ///   - shown: The exercises shown so far in this workout, including the current one
    ///     and skipped ones.
    ///   - avoiding: The id of the exercise being skipped, if any.
    ///   - generator: The source of randomness (a seeded one in tests).
    static func next(
        from catalog: [Exercise], shown: [ShownExercise], avoiding: String?, using generator: inout some RandomNumberGenerator
    ) -> Exercise? {
        candidates(from: catalog, shown: shown, avoiding: avoiding).randomElement(using: &generator)
    }

    /// The exercises ``next(from:shown:avoiding:using:)`` chooses among (rules 1-4), in
    /// catalog order; empty only when the catalog has no active exercise.
    static func candidates(from catalog: [Exercise], shown: [ShownExercise], avoiding: String?) -> [Exercise] {
        var seen = Set<String>()
        let active = catalog.filter { $0.active && seen.insert($0.id).inserted }
        let others = active.filter { $0.id != avoiding }
        let pool = others.isEmpty ? active : others
        guard !pool.isEmpty else { return [] }

        var timesShown: [String: Int] = [:]
        var partUse: [BodyPart: Int] = [:]
        for exercise in shown {
            timesShown[exercise.exerciseID, default: 0] += 1
            if !exercise.skipped { partUse[exercise.bodyPart, default: 0] += 1 }
        }

        let fewestShown = pool.map { timesShown[$0.id, default: 0] }.min() ?? 0
        let leastUsed = pool.filter { timesShown[$0.id, default: 0] == fewestShown }
        let fewestPartUse = leastUsed.map { partUse[$0.bodyPart, default: 0] }.min() ?? 0
        return leastUsed.filter { partUse[$0.bodyPart, default: 0] == fewestPartUse }
    }
}

import Platform
import SharedTesting
import Testing

@testable import StatsService

@Suite("ExercisePicker")
struct ExercisePickerTests {
    static let seeds: [UInt64] = [0, 1, 2, 42, 2026, 0xDEAD_BEEF, .max]

    // MARK: A full workout

    @Test("an 8-exercise workout has no repeats and balanced body parts", arguments: seeds)
    func fullWorkout(seed: UInt64) {
        let picks = workout(from: twoPerBodyPart, length: 8, seed: seed)
        #expect(picks.count == 8)
        #expect(Set(picks.map(\.exerciseID)).count == 8)
        // The first seven picks cover the seven body parts once each.
        #expect(Set(picks.prefix(7).map(\.bodyPart)) == Set(BodyPart.allCases))
        // 8 over 7 parts: six parts once, one part twice.
        let counts = bodyPartCounts(picks)
        #expect(counts.count == 7)
        #expect(counts.values.sorted() == [1, 1, 1, 1, 1, 1, 2])
    }

    @Test("a lopsided catalog balances as far as it can", arguments: seeds)
    func lopsidedCatalog(seed: UInt64) {
        let catalog = [
            exercise("legs1", .legs), exercise("legs2", .legs), exercise("legs3", .legs), exercise("legs4", .legs),
            exercise("chest1", .chest), exercise("core1", .core),
        ]
        let picks = workout(from: catalog, length: 6, seed: seed)
        #expect(Set(picks.map(\.exerciseID)).count == 6)
        // Legs, chest and core once each first; then only legs are left unused.
        #expect(Set(picks.prefix(3).map(\.bodyPart)) == [.legs, .chest, .core])
        #expect(picks.suffix(3).allSatisfy { $0.bodyPart == .legs })
        #expect(bodyPartCounts(picks) == [.legs: 4, .chest: 1, .core: 1])
    }

    @Test("the same seed gives the same workout")
    func deterministic() {
        let first = workout(from: twoPerBodyPart, length: 8, seed: 7)
        let second = workout(from: twoPerBodyPart, length: 8, seed: 7)
        #expect(first == second)
    }

    // MARK: Body-part balance

    @Test("the least-used body part wins")
    func leastUsedBodyPart() {
        let chest1 = exercise("chest1", .chest), chest2 = exercise("chest2", .chest)
        let legs1 = exercise("legs1", .legs), legs2 = exercise("legs2", .legs), core1 = exercise("core1", .core)
        let catalog = [chest1, chest2, legs1, legs2, core1]
        #expect(ExercisePicker.candidates(from: catalog, shown: [], avoiding: nil) == catalog)
        #expect(ExercisePicker.candidates(from: catalog, shown: [shown(chest1)], avoiding: nil) == [legs1, legs2, core1])
        #expect(ExercisePicker.candidates(from: catalog, shown: [shown(chest1), shown(legs1)], avoiding: nil) == [core1])
        // Every part used once; core has no unused exercise left.
        #expect(
            ExercisePicker.candidates(from: catalog, shown: [shown(chest1), shown(legs1), shown(core1)], avoiding: nil) == [chest2, legs2])
    }

    @Test("full_body is a body part of its own")
    func fullBodyIsItsOwnPart() {
        let fullBody1 = exercise("full1", .fullBody), fullBody2 = exercise("full2", .fullBody), legs1 = exercise("legs1", .legs)
        let catalog = [fullBody1, fullBody2, legs1]
        #expect(ExercisePicker.candidates(from: catalog, shown: [shown(fullBody1)], avoiding: nil) == [legs1])
        #expect(ExercisePicker.candidates(from: catalog, shown: [shown(legs1)], avoiding: nil) == [fullBody1, fullBody2])
    }

    @Test("skipped exercises are used but do not count towards their body part")
    func skippedDoNotCountForBalance() {
        let chest1 = exercise("chest1", .chest), chest2 = exercise("chest2", .chest), legs1 = exercise("legs1", .legs)
        let catalog = [chest1, chest2, legs1]
        #expect(ExercisePicker.candidates(from: catalog, shown: [shown(chest1, skipped: true)], avoiding: nil) == [chest2, legs1])
        #expect(ExercisePicker.candidates(from: catalog, shown: [shown(chest1)], avoiding: nil) == [legs1])
    }

    @Test("candidates are chosen uniformly")
    func uniform() {
        let catalog = [exercise("a", .chest), exercise("b", .legs), exercise("c", .core)]
        var generator = SplitMix64(seed: 99)
        var counts: [String: Int] = [:]
        for _ in 0..<3_000 {
            if let pick = ExercisePicker.next(from: catalog, shown: [], avoiding: nil, using: &generator) { counts[pick.id, default: 0] += 1 }
        }
        #expect(counts.count == 3)
        #expect(counts.values.allSatisfy { (900...1_100).contains($0) })
    }

    // MARK: Skips

    @Test("a skip gives an exercise of the least-used body part, not the skipped one")
    func skipFollowsTheSameRules() {
        let chest1 = exercise("chest1", .chest), chest2 = exercise("chest2", .chest)
        let legs1 = exercise("legs1", .legs), legs2 = exercise("legs2", .legs)
        let catalog = [chest1, chest2, legs1, legs2]
        // Chest done, legs1 skipped: legs is still the least-used part, legs2 the only unused one there.
        let shownSoFar = [shown(chest1), shown(legs1, skipped: true)]
        #expect(ExercisePicker.candidates(from: catalog, shown: shownSoFar, avoiding: "legs1") == [legs2])
        var generator = SplitMix64(seed: 3)
        #expect(ExercisePicker.next(from: catalog, shown: shownSoFar, avoiding: "legs1", using: &generator) == legs2)
    }

    @Test("a skip never returns the skipped exercise when there is another", arguments: seeds)
    func skipGivesAnotherExercise(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var shownSoFar: [ShownExercise] = []
        for _ in 0..<40 {
            guard let current = ExercisePicker.next(from: twoPerBodyPart, shown: shownSoFar, avoiding: nil, using: &generator) else {
                Issue.record("no exercise")
                return
            }
            shownSoFar.append(shown(current, skipped: true))
            let replacement = ExercisePicker.next(from: twoPerBodyPart, shown: shownSoFar, avoiding: current.id, using: &generator)
            #expect(replacement != nil && replacement != current)
            if let replacement { shownSoFar.append(shown(replacement)) }
        }
    }

    @Test("a skip repeats an exercise rather than the skipped one once all are used")
    func skipAfterExhaustion() {
        let a = exercise("a", .chest), b = exercise("b", .legs)
        #expect(ExercisePicker.candidates(from: [a, b], shown: [shown(a), shown(b, skipped: true)], avoiding: "b") == [a])
        // Avoiding an exercise not shown yet (the current one not passed in `shown`).
        #expect(ExercisePicker.candidates(from: [a, b], shown: [], avoiding: "a") == [b])
    }

    @Test("a one-exercise catalog shows the skipped exercise again")
    func skipWithOnlyOneExercise() {
        let a = exercise("a", .chest)
        var generator = SplitMix64(seed: 1)
        #expect(ExercisePicker.next(from: [a], shown: [shown(a, skipped: true)], avoiding: "a", using: &generator) == a)
        // Another exercise that is inactive does not count.
        #expect(
            ExercisePicker.next(from: [a, exercise("b", .legs, active: false)], shown: [shown(a, skipped: true)], avoiding: "a", using: &generator) == a)
    }

    // MARK: Exhaustion

    @Test("once all are used, the least-used come first, then the least-used body part")
    func exhaustionAllowsRepeatsLeastUsedFirst() {
        let a = exercise("a", .chest), b = exercise("b", .legs), c = exercise("c", .core)
        #expect(ExercisePicker.candidates(from: [a, b, c], shown: [a, b, c, a].map { shown($0) }, avoiding: nil) == [b, c])
        #expect(ExercisePicker.candidates(from: [a, b, c], shown: [a, b, c, a, b].map { shown($0) }, avoiding: nil) == [c])
        // b and c were shown once each, but chest (a twice, b once) is the most used part.
        let chestB = exercise("b", .chest)
        #expect(ExercisePicker.candidates(from: [a, chestB, c], shown: [a, chestB, c, a].map { shown($0) }, avoiding: nil) == [c])
    }

    @Test("repeats go round: after k rounds every exercise was shown k times", arguments: seeds)
    func exhaustionRoundRobin(seed: UInt64) {
        let catalog = [exercise("a", .chest), exercise("b", .legs), exercise("c", .core)]
        let picks = workout(from: catalog, length: 9, seed: seed)
        for round in 1...3 {
            #expect(idCounts(Array(picks.prefix(3 * round))) == ["a": round, "b": round, "c": round])
        }
    }

    // MARK: Inactive and empty catalogs

    @Test("inactive exercises are never chosen", arguments: seeds)
    func inactiveNeverChosen(seed: UInt64) {
        // The inactive ones are of the least-used parts and unused: they would win if active.
        let catalog = [
            exercise("chest1", .chest), exercise("chest2", .chest),
            exercise("legs1", .legs, active: false), exercise("core1", .core, active: false),
        ]
        let picks = workout(from: catalog, length: 6, seed: seed)
        #expect(picks.count == 6)
        #expect(picks.allSatisfy { $0.exerciseID == "chest1" || $0.exerciseID == "chest2" })
        #expect(idCounts(picks) == ["chest1": 3, "chest2": 3])
    }

    @Test("an empty or all-inactive catalog gives nil")
    func emptyCatalog() {
        var generator = SplitMix64(seed: 5)
        #expect(ExercisePicker.next(from: [], shown: [], avoiding: nil, using: &generator) == nil)
        #expect(ExercisePicker.next(from: [], shown: [], avoiding: "a", using: &generator) == nil)
        let inactive = [exercise("a", .chest, active: false), exercise("b", .legs, active: false)]
        #expect(ExercisePicker.next(from: inactive, shown: [], avoiding: nil, using: &generator) == nil)
    }

    @Test("an id listed twice counts once")
    func duplicateIDs() {
        let a = exercise("a", .chest), b = exercise("b", .legs)
        #expect(ExercisePicker.candidates(from: [a, a, b], shown: [], avoiding: nil) == [a, b])
    }
}

import Testing

@testable import StatsService

@Suite("CompletionTiming")
struct CompletionTimingTests {
    typealias Exercise = CompletionTiming.OfflineExercise

    static let shownAt: Int64 = 1_790_000_000_000

    // MARK: Online

    @Test("documented constants")
    func constants() {
        #expect(CompletionTiming.extraDelaySeconds == 3)
        #expect(CompletionTiming.deviceClockToleranceSeconds == 2)
        #expect(CompletionTiming.maximumClockSkewSeconds == 300)
        #expect(CompletionTiming.maximumExercises == 30)
    }

    @Test("completion is allowed at or after shown + countdown + 3 s")
    func boundary() {
        let earliest = Self.shownAt + 33_000
        #expect(CompletionTiming.earliestCompletion(shownAt: Self.shownAt, countdownSeconds: 30) == earliest)
        #expect(CompletionTiming.decision(shownAt: Self.shownAt, countdownSeconds: 30, now: earliest) == .allowed)
        #expect(CompletionTiming.decision(shownAt: Self.shownAt, countdownSeconds: 30, now: earliest + 60_000) == .allowed)
        #expect(CompletionTiming.decision(shownAt: Self.shownAt, countdownSeconds: 30, now: earliest - 1) == .tooEarly(remainingSeconds: 1))
    }

    @Test(
        "the remaining whole seconds are rounded up",
        arguments: [(Int64(0), 33), (1, 33), (999, 33), (1_000, 32), (31_999, 2), (32_000, 1), (32_999, 1)])
    func remaining(elapsedMilliseconds: Int64, expected: Int) {
        let decision = CompletionTiming.decision(shownAt: Self.shownAt, countdownSeconds: 30, now: Self.shownAt + elapsedMilliseconds)
        #expect(decision == .tooEarly(remainingSeconds: expected))
    }

    @Test("a negative countdown counts as 0; extreme instants do not trap")
    func robustness() {
        #expect(CompletionTiming.earliestCompletion(shownAt: 0, countdownSeconds: -10) == 3_000)
        #expect(CompletionTiming.earliestCompletion(shownAt: .max - 10, countdownSeconds: 30) == .max)
        #expect(CompletionTiming.earliestCompletion(shownAt: 0, countdownSeconds: .max) == .max)
        #expect(CompletionTiming.decision(shownAt: .max, countdownSeconds: 30, now: .min) == .tooEarly(remainingSeconds: Int(Int64.max / 1000)))
    }

    // MARK: Offline

    /// Three exercises 60 s apart, each completed exactly at shown + 30 + 3 − 2 s.
    static let valid: [Exercise] = (0..<3).map { index in
        let shown = shownAt + Int64(index) * 60_000
        return Exercise(shownAt: shown, completedAt: shown + 31_000, repetitions: 10)
    }
    static let now = shownAt + 3_600_000

    @Test("a valid workout is ok, even at the tolerance's edge")
    func validWorkout() {
        #expect(CompletionTiming.validate(Self.valid, countdownSeconds: 30, now: Self.now) == .ok)
    }

    @Test("completed too early, beyond the 2 s tolerance")
    func completedTooEarly() {
        var exercises = Self.valid
        exercises[1].completedAt -= 1
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.completedTooEarly(index: 1, missingSeconds: 1)]))
        exercises[1].completedAt = exercises[1].shownAt + 10_500  // 20.5 s short of 31 s
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.completedTooEarly(index: 1, missingSeconds: 21)]))
        exercises[1].completedAt = exercises[1].shownAt - 5_000
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.completedTooEarly(index: 1, missingSeconds: 36)]))
    }

    @Test("the workout's countdown sets the bound")
    func countdownMatters() {
        #expect(CompletionTiming.validate(Self.valid, countdownSeconds: 31, now: Self.now) == .problems((0..<3).map { .completedTooEarly(index: $0, missingSeconds: 1) }))
        #expect(CompletionTiming.validate(Self.valid, countdownSeconds: 5, now: Self.now) == .ok)
    }

    @Test("skipped exercises may end at any time")
    func skippedAnyTime() {
        var exercises = Self.valid
        exercises[2] = Exercise(shownAt: exercises[2].shownAt, completedAt: exercises[2].shownAt + 500, repetitions: 0, skipped: true)
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .ok)
    }

    @Test("shown instants must strictly increase")
    func notInOrder() {
        var exercises = Self.valid
        exercises[2].shownAt = exercises[1].shownAt
        exercises[2].completedAt = exercises[2].shownAt + 40_000
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.notInOrder(index: 2)]))
        exercises[2].shownAt -= 1
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.notInOrder(index: 2)]))
    }

    @Test("no instant beyond now + 5 min")
    func inFuture() {
        let last = Self.valid[2]
        // The last completion exactly 5 min after now is fine; 1 ms later is not.
        let edge = last.completedAt - 300_000
        #expect(CompletionTiming.validate(Self.valid, countdownSeconds: 30, now: edge) == .ok)
        #expect(CompletionTiming.validate(Self.valid, countdownSeconds: 30, now: edge - 1) == .problems([.inFuture(index: 2)]))
        // Shown too late as well.
        #expect(CompletionTiming.validate(Self.valid, countdownSeconds: 30, now: last.shownAt - 300_001) == .problems([.inFuture(index: 2)]))
        // Exercise 1 completed too late, exercise 2 shown and completed too late.
        #expect(
            CompletionTiming.validate(Self.valid, countdownSeconds: 30, now: Self.valid[1].completedAt - 300_001)
                == .problems([.inFuture(index: 1), .inFuture(index: 2)]))
    }

    @Test("repetitions: negative, none for a completed exercise, more than 1,000; a skipped one may have none")
    func repetitions() {
        var exercises = Self.valid
        exercises[0].repetitions = -1
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.negativeRepetitions(index: 0)]))
        exercises[0].repetitions = 0
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.noRepetitions(index: 0)]))
        exercises[0].repetitions = 1_001
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.tooManyRepetitions(index: 0)]))
        exercises[0].repetitions = 1_000
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .ok)
        exercises[0].repetitions = 0
        exercises[0].skipped = true
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .ok)
    }

    @Test("one exercise at a time: the next is shown once the one before was completed or skipped, within the tolerance")
    func oneAtATime() {
        var exercises = Self.valid
        // Shown 2 s before the previous one was completed: the device clock's tolerance.
        exercises[1].shownAt = exercises[0].completedAt - 2_000
        exercises[1].completedAt = max(exercises[1].completedAt, exercises[1].shownAt + 33_000)
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .ok)
        exercises[1].shownAt = exercises[0].completedAt - 2_001
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems([.shownBeforePreviousEnded(index: 1)]))
    }

    @Test("empty")
    func empty() {
        #expect(CompletionTiming.validate([], countdownSeconds: 30, now: Self.now) == .problems([.empty]))
    }

    @Test("at most 30 exercises")
    func tooMany() {
        func exercises(_ count: Int) -> [Exercise] {
            (0..<count).map { index in
                let shown = Self.shownAt + Int64(index) * 60_000
                return Exercise(shownAt: shown, completedAt: shown + 40_000, repetitions: 10)
            }
        }
        let now = Self.shownAt + 86_400_000
        #expect(CompletionTiming.validate(exercises(30), countdownSeconds: 30, now: now) == .ok)
        #expect(CompletionTiming.validate(exercises(31), countdownSeconds: 30, now: now) == .problems([.tooMany(count: 31, maximum: 30)]))
    }

    @Test("every problem is listed, tooMany first, then by index")
    func severalProblems() {
        var exercises = Self.valid
        exercises[0].repetitions = -3
        exercises[1].shownAt = exercises[0].shownAt
        exercises[1].completedAt = exercises[1].shownAt + 1_000
        let expected: [CompletionTiming.OfflineProblem] = [
            .negativeRepetitions(index: 0), .completedTooEarly(index: 1, missingSeconds: 30), .notInOrder(index: 1),
        ]
        #expect(CompletionTiming.validate(exercises, countdownSeconds: 30, now: Self.now) == .problems(expected))
    }

    @Test("overlapping spans share an instant")
    func overlaps() {
        #expect(CompletionTiming.overlaps(0...10, 5...20))
        #expect(CompletionTiming.overlaps(5...20, 0...10))
        #expect(CompletionTiming.overlaps(0...100, 20...30))
        #expect(CompletionTiming.overlaps(0...10, 10...20))  // touching ends
        #expect(!CompletionTiming.overlaps(0...10, 11...20))
        #expect(!CompletionTiming.overlaps(11...20, 0...10))
    }
}

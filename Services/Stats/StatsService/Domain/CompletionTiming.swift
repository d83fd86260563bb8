/// When an exercise may be completed, checked on the server (spec 004, Gym: the countdown).
///
/// Instants are milliseconds since 1970 (`Int64`). An exercise shown at S with a countdown
/// of C seconds may be completed at or after S + C + D, where D = ``extraDelaySeconds``
/// (3 s: the app's "get ready" pause after the countdown plus network latency, so a user
/// who taps the moment the countdown ends is never refused). Skipping is allowed at any time.
///
/// Offline workouts are uploaded later with the device's instants, so they are checked
/// with a tolerance of ``deviceClockToleranceSeconds`` (2 s) for device clocks that drift
/// or tick unevenly: completed ≥ S + C + D − 2 s. Shown instants must strictly increase
/// within a workout, an exercise is shown only once the one before it was completed or
/// skipped (the app shows one at a time; the same 2 s of tolerance), a completed one
/// reports 1 to ``maximumRepetitions`` repetitions, and no instant may lie more than
/// ``maximumClockSkewSeconds`` (5 min)
/// after the server's `now`. Overlap with other workouts is checked where those are
/// known (see ``overlaps(_:_:)``). Arithmetic saturates: no input traps.
enum CompletionTiming {
    /// The delay after the countdown before a completion is accepted, in seconds.
    static let extraDelaySeconds: Int64 = 3
    /// How much earlier an offline completion may be than the online rule, in seconds.
    static let deviceClockToleranceSeconds: Int64 = 2
    /// How far after the server's now an offline instant may lie, in seconds.
    static let maximumClockSkewSeconds: Int64 = 300
    /// The most exercises an offline workout may have (``Preferences/limits``).
    static let maximumExercises = 30
    /// The most repetitions (or seconds held) one exercise may report.
    static let maximumRepetitions = 1_000

    /// Whether an exercise may be completed now.
    enum Decision: Sendable, Hashable {
        case allowed
        /// Not yet: the whole seconds left, rounded up (at least 1).
        case tooEarly(remainingSeconds: Int)
    }

    /// The first instant an exercise shown at `shownAt` may be completed: S + C + D.
    static func earliestCompletion(shownAt: Int64, countdownSeconds: Int) -> Int64 {
        adding(seconds: saturatingSum(Int64(clamping: max(0, countdownSeconds)), extraDelaySeconds), to: shownAt)
    }

    /// Whether an exercise shown at `shownAt` may be completed at `now`: allowed at or
    /// after ``earliestCompletion(shownAt:countdownSeconds:)``, else the seconds left.
    static func decision(shownAt: Int64, countdownSeconds: Int, now: Int64) -> Decision {
        let earliest = earliestCompletion(shownAt: shownAt, countdownSeconds: countdownSeconds)
        guard now < earliest else { return .allowed }
        return .tooEarly(remainingSeconds: wholeSecondsRoundedUp(from: now, to: earliest))
    }

    // MARK: Offline workouts

    /// One exercise of a workout recorded offline.
    struct OfflineExercise: Sendable, Hashable {
        /// When it was shown (device clock, ms since 1970).
        var shownAt: Int64
        /// When it was completed or skipped (device clock, ms since 1970).
        var completedAt: Int64
        var repetitions: Int
        /// Skipped exercises may end at any time.
        var skipped: Bool = false
    }

    /// Something wrong with an offline workout; `index` is the exercise's position (0-based).
    enum OfflineProblem: Sendable, Hashable {
        /// Completed before shown + countdown + delay − tolerance; `missingSeconds` short
        /// of that bound (whole seconds, rounded up, at least 1).
        case completedTooEarly(index: Int, missingSeconds: Int)
        /// Shown at or before the previous exercise.
        case notInOrder(index: Int)
        /// Shown while the previous exercise was still on screen (before it was completed
        /// or skipped, beyond the tolerance).
        case shownBeforePreviousEnded(index: Int)
        /// Completed with no repetitions (an exercise not done is skipped).
        case noRepetitions(index: Int)
        /// More than ``maximumRepetitions``.
        case tooManyRepetitions(index: Int)
        /// Shown or completed more than 5 minutes after the server's now.
        case inFuture(index: Int)
        case negativeRepetitions(index: Int)
        /// No exercises.
        case empty
        /// More than `maximum` (30) exercises.
        case tooMany(count: Int, maximum: Int)
    }

    /// The outcome of ``validate(_:countdownSeconds:now:)``.
    enum OfflineValidation: Sendable, Hashable {
        case ok
        /// Never empty.
        case problems([OfflineProblem])
    }

    /// Checks an offline workout against the server's `now`, with the countdown the
    /// workout ran with. Lists every problem: `tooMany` first, then each exercise's in
    /// order of index (too early, not in order, shown before the previous ended, in
    /// future, negative, no or too many repetitions).
    static func validate(_ exercises: [OfflineExercise], countdownSeconds: Int, now: Int64) -> OfflineValidation {
        guard !exercises.isEmpty else { return .problems([.empty]) }
        var problems: [OfflineProblem] = []
        if exercises.count > maximumExercises {
            problems.append(.tooMany(count: exercises.count, maximum: maximumExercises))
        }
        let latest = adding(seconds: maximumClockSkewSeconds, to: now)
        for (index, exercise) in exercises.enumerated() {
            if !exercise.skipped {
                let earliest = adding(seconds: -deviceClockToleranceSeconds, to: earliestCompletion(shownAt: exercise.shownAt, countdownSeconds: countdownSeconds))
                if exercise.completedAt < earliest {
                    problems.append(.completedTooEarly(index: index, missingSeconds: wholeSecondsRoundedUp(from: exercise.completedAt, to: earliest)))
                }
            }
            if index > 0, exercise.shownAt <= exercises[index - 1].shownAt {
                problems.append(.notInOrder(index: index))
            } else if index > 0, exercise.shownAt < adding(seconds: -deviceClockToleranceSeconds, to: exercises[index - 1].completedAt) {
                problems.append(.shownBeforePreviousEnded(index: index))
            }
            if exercise.shownAt > latest || exercise.completedAt > latest {
                problems.append(.inFuture(index: index))
            }
            if exercise.repetitions < 0 {
                problems.append(.negativeRepetitions(index: index))
            } else if !exercise.skipped, exercise.repetitions == 0 {
                problems.append(.noRepetitions(index: index))
            } else if exercise.repetitions > maximumRepetitions {
                problems.append(.tooManyRepetitions(index: index))
            }
        }
        return problems.isEmpty ? .ok : .problems(problems)
    }

    /// Whether two spans of time (ms since 1970, both ends included) share an instant:
    /// one ending exactly when the other starts overlaps.
    static func overlaps(_ a: ClosedRange<Int64>, _ b: ClosedRange<Int64>) -> Bool {
        a.lowerBound <= b.upperBound && b.lowerBound <= a.upperBound
    }

    // MARK: Saturating arithmetic

    /// `instant` + `seconds` × 1000, saturating at the ends of `Int64`.
    private static func adding(seconds: Int64, to instant: Int64) -> Int64 {
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return saturatingSum(instant, overflow ? (seconds < 0 ? .min : .max) : milliseconds)
    }

    private static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? .min : .max) : sum
    }

    /// Whole seconds from `start` to a later `end`, rounded up (at least 1).
    private static func wholeSecondsRoundedUp(from start: Int64, to end: Int64) -> Int {
        let (difference, overflow) = end.subtractingReportingOverflow(start)
        guard !overflow else { return Int(clamping: Int64.max / 1000) }
        return Int(clamping: max(1, difference / 1000 + (difference % 1000 == 0 ? 0 : 1)))
    }
}

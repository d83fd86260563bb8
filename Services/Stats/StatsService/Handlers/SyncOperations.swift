import Foundation
import GRDB
import Platform

/// Workouts done without a connection (the fitness assistant works alone on the device),
/// uploaded later: each with the app's own id, the device's instants of every exercise
/// shown and completed or skipped, the repetitions and the recommendation the app showed.
/// Each workout is accepted whole or refused whole with the reasons; a workout sent again
/// is reported as already there. Nothing is dropped without a word.
struct SyncOperations: Sendable {
    var all: [ServiceOperation] { [sync] }

    struct ExerciseInput: Codable, Sendable {
        var exerciseId: String
        var shownAt: String
        var completedAt: String
        var repetitions: Int
        var recommended: Int
        var skipped: Bool?
    }

    struct WorkoutInput: Codable, Sendable {
        var id: String
        var countdownSeconds: Int
        var level: FitnessLevel?
        var exercises: [ExerciseInput]
    }

    struct SyncRequest: Codable, Sendable {
        var workouts: [WorkoutInput]
    }

    static let exerciseSchema = JSONSchema.object(
        [
            "exerciseId": .string(minLength: 1, maxLength: 100), "shownAt": .string(format: .dateTime),
            "completedAt": JSONSchema.string(format: .dateTime).described("when it was completed, or skipped"),
            "repetitions": .integer(minimum: -1_000, maximum: 10_000), "recommended": .integer(minimum: 1, maximum: 500), "skipped": .boolean,
        ], required: ["exerciseId", "shownAt", "completedAt", "repetitions", "recommended"])

    static let problemSchema = JSONSchema.object(
        [
            "problem": JSONSchema.oneOf([
                "completed_too_early", "not_in_order", "in_future", "negative_repetitions", "empty", "too_many", "ends_before_shown",
                "unknown_exercise", "overlaps_another_workout", "bad_id", "duplicate_in_upload", "too_old", "too_long",
                "shown_before_previous_ended", "no_repetitions", "too_many_repetitions", "implausible_recommendation", "before_reset",
            ]),
            "index": JSONSchema.integer(minimum: 0).described("the exercise's position, when it is about one"),
            "missingSeconds": .integer(minimum: 1),
        ], required: ["problem"])

    static func problem(_ name: String, index: Int? = nil, missingSeconds: Int? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["problem": .string(name)]
        if let index { object["index"] = .integer(Int64(index)) }
        if let missingSeconds { object["missingSeconds"] = .integer(Int64(missingSeconds)) }
        return .object(object)
    }

    static func problem(_ problem: CompletionTiming.OfflineProblem) -> JSONValue {
        switch problem {
        case .completedTooEarly(let index, let missing): Self.problem("completed_too_early", index: index, missingSeconds: missing)
        case .notInOrder(let index): Self.problem("not_in_order", index: index)
        case .shownBeforePreviousEnded(let index): Self.problem("shown_before_previous_ended", index: index)
        case .noRepetitions(let index): Self.problem("no_repetitions", index: index)
        case .tooManyRepetitions(let index): Self.problem("too_many_repetitions", index: index)
        case .inFuture(let index): Self.problem("in_future", index: index)
        case .negativeRepetitions(let index): Self.problem("negative_repetitions", index: index)
        case .empty: Self.problem("empty")
        case .tooMany: Self.problem("too_many")
        }
    }

    var sync: ServiceOperation {
        .write(
            "stats.workouts.sync",
            summary: "Uploads workouts done offline (at most 50 a call): the app's `id`, the countdown it ran with, the level (default the preferences'), and each exercise shown in order with the device's `shownAt` and `completedAt` (or when it was skipped), the repetitions and the recommendation shown. Checked for plausibility: no exercise completed before its countdown plus 3 s could end (2 s of tolerance for device clocks), exercises in order and one at a time (each shown once the one before was completed or skipped), 1 to 1,000 repetitions for a completed one, a recommendation the formula can give at the workout's level (0.64 to 3 times the exercise's base repetitions), nothing begun before the user's last history reset, nothing more than 5 minutes in the future nor more than a year ago, at most six hours long, no overlap with another workout of the user (an open one runs until now), known exercises, each id once per upload. `{accepted: [{id, score, exercisesDone}], already: [id], refused: [{id, problems}]}`: every workout sent is in one of the three.",
            auth: .authenticated,
            request: .object(
                [
                    "workouts": .array(
                        of: .object(
                            [
                                "id": .string(minLength: 1, maxLength: 100), "countdownSeconds": PreferenceOperations.countdown,
                                "level": .oneOf(FitnessLevel.allCases.map(\.rawValue)), "exercises": .array(of: Self.exerciseSchema, maxItems: 100),
                            ], required: ["id", "countdownSeconds", "exercises"]), minItems: 1, maxItems: 50)
                ], required: ["workouts"]),
            response: .object(
                [
                    "accepted": .array(
                        of: .object(
                            ["id": .string(), "score": .integer(minimum: 0), "exercisesDone": .integer(minimum: 0)], required: ["id", "score", "exercisesDone"])),
                    "already": .array(of: .string()),
                    "refused": .array(of: .object(["id": .string(), "problems": .array(of: Self.problemSchema, minItems: 1)], required: ["id", "problems"])),
                ], required: ["accepted", "already", "refused"])
        ) { (context, input: SyncRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            let preferences = try UserPreferences.load(db, user: user)
            let resetMs = try Int64.fetchOne(db.cachedStatement(sql: "SELECT reset_ms FROM history_reset WHERE user_id = ?"), arguments: [user])
            // The whole catalog once (withdrawn exercises too: past workouts may name them).
            let catalog = Dictionary(uniqueKeysWithValues: try ExerciseRecords.all(db, activeOnly: false).map { ($0.id, $0) })
            var accepted: [JSONValue] = []
            var already: [JSONValue] = []
            var refused: [JSONValue] = []
            var seen = Set<String>()
            for workout in input.workouts {
                guard (try? ClientGeneratedID.check(workout.id)) != nil else {
                    refused.append(["id": .string(workout.id), "problems": [Self.problem("bad_id")]])
                    continue
                }
                guard seen.insert(workout.id).inserted else {
                    refused.append(["id": .string(workout.id), "problems": [Self.problem("duplicate_in_upload")]])
                    continue
                }
                if try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM workout WHERE user_id = ? AND id = ?"), arguments: [user, workout.id]) == true {
                    already.append(.string(workout.id))
                    continue
                }
                let problems = try Self.problems(
                    db, user: user, workout, catalog: catalog, level: workout.level ?? preferences.preferences.level, resetMs: resetMs, now: now)
                guard problems.isEmpty else {
                    refused.append(["id": .string(workout.id), "problems": .array(problems)])
                    continue
                }
                let (score, done) = try Self.store(db, user: user, workout, catalog: catalog, preferences: preferences, now: now)
                accepted.append(["id": .string(workout.id), "score": .integer(Int64(score)), "exercisesDone": .integer(Int64(done))])
            }
            return ["accepted": .array(accepted), "already": .array(already), "refused": .array(refused)]
        }
    }

    /// Uploads reach back at most a year (an app offline longer starts again).
    static let oldest: Int64 = 366 * 86_400_000
    /// A workout lasts at most six hours from its first exercise shown to its last done.
    static let longest: Int64 = 6 * 3_600_000

    static func milliseconds(_ text: String) -> Int64 { Instant.parse(text).map(Instant.milliseconds) ?? 0 }

    /// Everything wrong with one uploaded workout (none: it can be stored).
    static func problems(
        _ db: Database, user: String, _ workout: WorkoutInput, catalog: [String: Exercise], level: FitnessLevel, resetMs: Int64?, now: Date
    ) throws -> [JSONValue] {
        let exercises = workout.exercises.map {
            CompletionTiming.OfflineExercise(
                shownAt: milliseconds($0.shownAt), completedAt: milliseconds($0.completedAt), repetitions: $0.repetitions, skipped: $0.skipped == true)
        }
        var problems: [JSONValue] = []
        if case .problems(let found) = CompletionTiming.validate(exercises, countdownSeconds: workout.countdownSeconds, now: Instant.milliseconds(now)) {
            problems += found.map(Self.problem)
        }
        for (index, exercise) in exercises.enumerated() where exercise.completedAt < exercise.shownAt {
            problems.append(Self.problem("ends_before_shown", index: index))
        }
        for (index, exercise) in workout.exercises.enumerated() {
            guard let known = catalog[exercise.exerciseId] else {
                problems.append(Self.problem("unknown_exercise", index: index))
                continue
            }
            // The score weighs done against the recommendation: one the app could not have
            // shown (a recommendation of 1 for a perfect score) is refused.
            if exercise.skipped != true, !RepetitionRecommendation.plausible(exercise.recommended, base: known.baseRepetitions.at(level)) {
                problems.append(Self.problem("implausible_recommendation", index: index))
            }
        }
        if let resetMs, let first = exercises.first?.shownAt, first <= resetMs { problems.append(Self.problem("before_reset")) }
        if let first = exercises.first?.shownAt, let last = exercises.map(\.completedAt).max(), first <= last {
            let nowMs = Instant.milliseconds(now)
            if first < nowMs - Self.oldest { problems.append(Self.problem("too_old")) }
            if last - first > Self.longest { problems.append(Self.problem("too_long")) }
            // A workout still open runs until now (and the clock skew allowed after it).
            let overlapping = try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM workout WHERE user_id = ? AND started_ms <= ? AND COALESCE(ended_ms, ?) >= ? LIMIT 1"),
                arguments: [user, last, nowMs + Int64(CompletionTiming.maximumClockSkewSeconds) * 1_000, first]) == true
            if overlapping { problems.append(Self.problem("overlaps_another_workout")) }
        }
        return problems
    }

    /// Stores an accepted workout as finished: each exercise under its number (a skipped
    /// one and the one shown instead share it), on its local day in the user's zone,
    /// scored at the workout's level.
    static func store(
        _ db: Database, user: String, _ workout: WorkoutInput, catalog: [String: Exercise], preferences: UserPreferences, now: Date
    ) throws -> (score: Int, done: Int) {
        let clock = preferences.clock
        let level = workout.level ?? preferences.preferences.level
        let started = milliseconds(workout.exercises[0].shownAt)
        let ended = workout.exercises.map { milliseconds($0.completedAt) }.max() ?? started
        func day(_ ms: Int64) -> String { clock.local(Instant.date(milliseconds: ms)).date.description }
        try db.cachedStatement(sql: """
                INSERT INTO workout (user_id, id, state, source, planned, countdown_seconds, started_ms, ended_ms, day)
                VALUES (?, ?, 'finished', 'offline', ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [user, workout.id, workout.exercises.filter { $0.skipped != true }.count, workout.countdownSeconds, started, ended, day(started)])
        var number = 1, attempt = 1, score = 0, done = 0, repetitions = 0
        for exercise in workout.exercises {
            guard let known = catalog[exercise.exerciseId] else { continue }
            let skipped = exercise.skipped == true
            let completed = milliseconds(exercise.completedAt)
            let points = ExerciseScore.score(done: exercise.repetitions, recommended: exercise.recommended, skipped: skipped, level: level)
            try db.cachedStatement(sql: """
                    INSERT INTO workout_exercise (user_id, workout_id, number, attempt, exercise_id, body_part, motor_ability, recommended, shown_ms, state,
                        completed_ms, repetitions, score, day)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                user, workout.id, number, attempt, exercise.exerciseId, known.bodyPart.rawValue, known.motorAbility.rawValue, exercise.recommended,
                milliseconds(exercise.shownAt), skipped ? "skipped" : "done", completed, skipped ? 0 : exercise.repetitions, points, day(completed),
            ])
            if skipped {
                attempt += 1
            } else {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO training_day (user_id, day) VALUES (?, ?)").execute(arguments: [user, day(completed)])
                score += points
                done += 1
                repetitions += exercise.repetitions
                number += 1
                attempt = 1
            }
        }
        if done > 0 {
            let summary = WorkoutOperations.summary(
                id: workout.id, done: done, skipped: workout.exercises.count - done, score: score, repetitions: repetitions)
            try StatsEvents.workoutCompleted(db, user: user, summary: summary, startedMs: started, endedMs: ended, at: now)
        }
        return (score, done)
    }
}

import Foundation
import GRDB
import Platform

/// The Gym page (spec 004, Gym b-k): a workout of N exercises chosen one at a time. The
/// server keeps the clock: an exercise can be completed only after its countdown plus
/// the extra delay have passed since it was shown (``CompletionTiming``; the app's
/// disabled button is not trusted); the repetitions reported at completion are the ones
/// the user settled on while the countdown ran. A skip shows another exercise under the
/// same number and scores nothing.
struct WorkoutOperations: Sendable {
    var all: [ServiceOperation] { [start, complete, skip, finish, current] }

    /// One row of a workout: an exercise shown under a number (an attempt per skip).
    struct Step: Sendable {
        var number: Int
        var attempt: Int
        var exerciseID: String
        var bodyPart: BodyPart
        var recommended: Int
        var shownMs: Int64
        var state: String
        var repetitions: Int
        var score: Int
    }

    /// A workout as stored, with its steps in order.
    struct Workout: Sendable {
        var id: String
        var state: String
        var planned: Int
        var countdownSeconds: Int
        var startedMs: Int64
        /// The level the workout started at: its recommendations and scores keep it, so a
        /// level changed mid-workout does not score an easy recommendation at a higher
        /// weight. `nil` for workouts from before it was kept (the preferences' level).
        var level: FitnessLevel?
        var steps: [Step]

        /// The exercise on screen: the last one shown and not yet done or skipped.
        var current: Step? { steps.last.flatMap { $0.state == "shown" ? $0 : nil } }

        var shown: [ShownExercise] { steps.map { ShownExercise(exerciseID: $0.exerciseID, bodyPart: $0.bodyPart, skipped: $0.state == "skipped") } }

        var score: Int { steps.reduce(0) { $0 + $1.score } }

        static func load(_ db: Database, user: String, id: String) throws -> Workout? {
            var workout: Workout?
            try db.cachedStatement(sql: "SELECT state, planned, countdown_seconds, started_ms, level FROM workout WHERE user_id = ? AND id = ?")
                .forEachRow(arguments: [user, id]) { row in
                    workout = Workout(
                        id: id, state: row.string(0), planned: Int(row.integer(1) ?? 0), countdownSeconds: Int(row.integer(2) ?? 0),
                        startedMs: row.integer(3) ?? 0, level: row.text(4).flatMap(FitnessLevel.init(rawValue:)), steps: [])
                }
            guard var found = workout else { return nil }
            try db.cachedStatement(sql: """
                    SELECT number, attempt, exercise_id, body_part, recommended, shown_ms, state, repetitions, score FROM workout_exercise
                    WHERE user_id = ? AND workout_id = ? ORDER BY number, attempt
                    """
            ).forEachRow(arguments: [user, id]) { row in
                found.steps.append(
                    Step(
                        number: Int(row.integer(0) ?? 0), attempt: Int(row.integer(1) ?? 0), exerciseID: row.string(2),
                        bodyPart: BodyPart(rawValue: row.string(3)) ?? .fullBody, recommended: Int(row.integer(4) ?? 1), shownMs: row.integer(5) ?? 0,
                        state: row.string(6), repetitions: Int(row.integer(7) ?? 0), score: Int(row.integer(8) ?? 0)))
            }
            return found
        }

        /// The caller's open workout `id`; anyone else's is `not_found`.
        static func open(_ db: Database, user: String, id: String) throws -> Workout {
            guard let workout = try load(db, user: user, id: id) else { throw ServiceError.notFound("no such workout") }
            guard workout.state == "open" else { throw ServiceError.conflict("the workout is finished", reason: "workout_finished") }
            return workout
        }
    }

    static let stepSchema = JSONSchema.object(
        [
            "workoutId": .string(), "number": .integer(minimum: 1), "of": .integer(minimum: 1), "exercise": CatalogOperations.exerciseSchema,
            "recommended": JSONSchema.integer(minimum: 1).described("repetitions (seconds for held exercises)"),
            "countdownSeconds": .integer(minimum: 0), "shownAt": .string(format: .dateTime),
            "completableAt": JSONSchema.string(format: .dateTime).described("the countdown plus the extra delay after shownAt"),
        ], required: ["workoutId", "number", "of", "exercise", "recommended", "countdownSeconds", "shownAt", "completableAt"])


    static func stepView(_ workout: Workout, _ step: Step, exercise: Exercise, language: String?) -> JSONValue {
        [
            "workoutId": .string(workout.id), "number": .integer(Int64(step.number)), "of": .integer(Int64(workout.planned)),
            "exercise": CatalogOperations.view(exercise, language: language), "recommended": .integer(Int64(step.recommended)),
            "countdownSeconds": .integer(Int64(workout.countdownSeconds)), "shownAt": .string(Instant.format(Instant.date(milliseconds: step.shownMs))),
            "completableAt": .string(
                Instant.format(Instant.date(milliseconds: CompletionTiming.earliestCompletion(shownAt: step.shownMs, countdownSeconds: workout.countdownSeconds)))),
        ]
    }

    /// Chooses and shows the exercise for `number` (`avoiding` the one skipped), with its
    /// recommendation; returns the step written.
    static func show(
        _ db: Database, user: String, workout: inout Workout, number: Int, avoiding: String?, preferences: UserPreferences, now: Date
    ) throws -> (Step, Exercise) {
        var generator = SystemRandomNumberGenerator()
        guard let exercise = ExercisePicker.next(from: try ExerciseRecords.all(db, activeOnly: true), shown: workout.shown, avoiding: avoiding, using: &generator)
        else { throw ServiceError.conflict("the exercise catalog is empty", reason: "no_exercises") }
        let today = preferences.clock.local(now).date
        let first = try String.fetchOne(db.cachedStatement(sql: "SELECT MIN(day) FROM workout WHERE user_id = ?"), arguments: [user]).flatMap(LocalDate.init)
        var history: [ExerciseResult] = []
        try db.cachedStatement(sql: """
                SELECT recommended, repetitions FROM workout_exercise WHERE user_id = ? AND exercise_id = ? AND state = 'done'
                ORDER BY completed_ms DESC LIMIT 3
                """
        ).forEachRow(arguments: [user, exercise.id]) { row in
            history.insert(ExerciseResult(exerciseID: exercise.id, recommended: Int(row.integer(0) ?? 1), done: Int(row.integer(1) ?? 0)), at: 0)
        }
        var settings = preferences.preferences
        if let level = workout.level { settings.level = level }
        let recommendation = RepetitionRecommendation(exercise: exercise, preferences: settings, firstWorkout: first, today: today, history: history)
        let attempt = (workout.steps.last { $0.number == number }?.attempt ?? 0) + 1
        let step = Step(
            number: number, attempt: attempt, exerciseID: exercise.id, bodyPart: exercise.bodyPart, recommended: recommendation.repetitions,
            shownMs: Instant.milliseconds(now), state: "shown", repetitions: 0, score: 0)
        try db.cachedStatement(sql: """
                INSERT INTO workout_exercise (user_id, workout_id, number, attempt, exercise_id, body_part, motor_ability, recommended, shown_ms, state, day)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'shown', ?)
                """
        ).execute(arguments: [
            user, workout.id, number, attempt, exercise.id, exercise.bodyPart.rawValue, exercise.motorAbility.rawValue, step.recommended, step.shownMs,
            today.description,
        ])
        workout.steps.append(step)
        return (step, exercise)
    }

    struct StartRequest: Codable, Sendable {
        var id: String?
    }

    var start: ServiceOperation {
        .write(
            "stats.workout.start",
            summary: "Starts a workout of the preferences' number of exercises and shows exercise 1 of N: chosen at random keeping body parts balanced and without repeats, with the recommended repetitions (RepetitionRecommendation: base at the level × goal × planned progression × recent results of that exercise) and the countdown. An open workout the caller left is finished first. `id`: the app's own (a retried start returns the same workout).",
            auth: .authenticated, request: .object(["id": .string(minLength: 8, maxLength: 100)]), response: Self.stepSchema
        ) { (context, input: StartRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            let preferences = try UserPreferences.load(db, user: user)
            let language = preferences.language
            let id = try input.id.map { try ClientGeneratedID.check($0) } ?? RecordID.make(prefix: "wo", at: now)
            if let existing = try Workout.load(db, user: user, id: id) {
                // A retried start: the same workout as it stands (a finished or uploaded one is another).
                guard existing.state == "open", let step = existing.current, let exercise = try ExerciseRecords.find(db, id: step.exerciseID) else {
                    throw ServiceError.conflict("this id names another workout", reason: "id_taken")
                }
                return Self.stepView(existing, step, exercise: exercise, language: language)
            }
            for open in try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM workout WHERE user_id = ? AND state = 'open'"), arguments: [user]) {
                try Self.close(db, user: user, id: open, now: now)
            }
            let p = preferences.preferences
            try db.cachedStatement(sql: """
                    INSERT INTO workout (user_id, id, state, source, planned, countdown_seconds, started_ms, day, level)
                    VALUES (?, ?, 'open', 'live', ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                user, id, p.exercisesPerWorkout, p.countdownSeconds, Instant.milliseconds(now), preferences.clock.local(now).date.description, p.level.rawValue,
            ])
            var workout = Workout(
                id: id, state: "open", planned: p.exercisesPerWorkout, countdownSeconds: p.countdownSeconds, startedMs: Instant.milliseconds(now), level: p.level,
                steps: [])
            let (step, exercise) = try Self.show(db, user: user, workout: &workout, number: 1, avoiding: nil, preferences: preferences, now: now)
            return Self.stepView(workout, step, exercise: exercise, language: language)
        }
    }

    struct CompleteRequest: Codable, Sendable {
        var workoutId: String
        var number: Int
        var exerciseId: String
        var repetitions: Int
    }

    static let resultSchema = JSONSchema.object(
        [
            "exerciseId": .string(), "number": .integer(minimum: 1), "recommended": .integer(minimum: 1), "repetitions": .integer(minimum: 0),
            "score": JSONSchema.integer(minimum: 0).described(
                "round(100 × min(done / recommended, 2) × level weight: beginner 1, intermediate 1.25, advanced 1.5)"),
            "percentOfRecommendation": .integer(minimum: 0),
        ], required: ["exerciseId", "number", "recommended", "repetitions", "score", "percentOfRecommendation"])

    static let summarySchema = JSONSchema.object(
        [
            "workoutId": .string(), "exercisesDone": .integer(minimum: 0), "exercisesSkipped": .integer(minimum: 0), "score": .integer(minimum: 0),
            "repetitions": .integer(minimum: 0),
        ], required: ["workoutId", "exercisesDone", "exercisesSkipped", "score", "repetitions"])

    var complete: ServiceOperation {
        .write(
            "stats.workout.complete",
            summary: "Completes the exercise on screen (`number` and `exerciseId` name it) with the repetitions the user settled on (1 to 1,000: an exercise not done is skipped), once its countdown plus 3 s have passed since it was shown (server time; earlier: conflict `too_early` with `remainingSeconds`). Scores it at the level the workout started at and shows the next one, or finishes the workout after N: `{result, next, finished, summary}`.",
            auth: .authenticated,
            request: .object(
                [
                    "workoutId": .string(minLength: 1, maxLength: 100), "number": .integer(minimum: 1, maximum: 30),
                    "exerciseId": .string(minLength: 1, maxLength: 100), "repetitions": .integer(minimum: 1, maximum: Int64(CompletionTiming.maximumRepetitions)),
                ], required: ["workoutId", "number", "exerciseId", "repetitions"]),
            response: .object(
                ["result": Self.resultSchema, "next": Self.stepSchema.nullable(), "finished": .boolean, "summary": Self.summarySchema.nullable()],
                required: ["result", "next", "finished", "summary"])
        ) { (context, input: CompleteRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            var workout = try Workout.open(db, user: user, id: input.workoutId)
            guard let step = workout.current, step.number == input.number, step.exerciseID == input.exerciseId else {
                throw ServiceError.conflict("that is not the exercise on screen", reason: "not_current")
            }
            if case .tooEarly(let remaining) = CompletionTiming.decision(shownAt: step.shownMs, countdownSeconds: workout.countdownSeconds, now: Instant.milliseconds(now)) {
                throw ServiceError(
                    .conflict, "the countdown has not run out: \(remaining) s to go",
                    details: ["reason": "too_early", "remainingSeconds": .integer(Int64(remaining))])
            }
            let preferences = try UserPreferences.load(db, user: user)
            let level = workout.level ?? preferences.preferences.level
            let score = ExerciseScore.score(done: input.repetitions, recommended: step.recommended, level: level)
            let day = preferences.clock.local(now).date.description
            try db.cachedStatement(sql: """
                    UPDATE workout_exercise SET state = 'done', completed_ms = ?, repetitions = ?, score = ?, day = ?
                    WHERE user_id = ? AND workout_id = ? AND number = ? AND attempt = ?
                    """
            ).execute(arguments: [Instant.milliseconds(now), input.repetitions, score, day, user, workout.id, step.number, step.attempt])
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO training_day (user_id, day) VALUES (?, ?)").execute(arguments: [user, day])
            workout.steps[workout.steps.count - 1].state = "done"
            workout.steps[workout.steps.count - 1].repetitions = input.repetitions
            workout.steps[workout.steps.count - 1].score = score
            let result: JSONValue = [
                "exerciseId": .string(step.exerciseID), "number": .integer(Int64(step.number)), "recommended": .integer(Int64(step.recommended)),
                "repetitions": .integer(Int64(input.repetitions)), "score": .integer(Int64(score)),
                "percentOfRecommendation": .integer(Int64(ExerciseScore.percentOfRecommendation(done: input.repetitions, recommended: step.recommended))),
            ]
            // The last one, or none left to show (an admin withdrew every exercise): finished.
            guard step.number < workout.planned, try !ExerciseRecords.all(db, activeOnly: true).isEmpty else {
                let summary = try Self.close(db, user: user, id: workout.id, now: now)
                return ["result": result, "next": .null, "finished": true, "summary": summary]
            }
            let (next, exercise) = try Self.show(db, user: user, workout: &workout, number: step.number + 1, avoiding: nil, preferences: preferences, now: now)
            return [
                "result": result, "next": Self.stepView(workout, next, exercise: exercise, language: preferences.language), "finished": false, "summary": .null,
            ]
        }
    }

    struct WorkoutRequest: Codable, Sendable {
        var workoutId: String
    }

    struct SkipRequest: Codable, Sendable {
        var workoutId: String
        var number: Int?
        var exerciseId: String?
    }

    var skip: ServiceOperation {
        .write(
            "stats.workout.skip",
            summary: "Skips the exercise on screen: it scores nothing, and another one (never the skipped one while the catalog has others) is shown under the same number with its own recommendation and a fresh countdown. Send `number` and `exerciseId` of the exercise on screen, as for complete, so a retried skip cannot skip the next one too (conflict `not_current`). At most 49 skips under one number (then conflict `too_many_skips`).",
            auth: .authenticated,
            request: .object(
                ["workoutId": .string(minLength: 1, maxLength: 100), "number": .integer(minimum: 1, maximum: 30), "exerciseId": .string(minLength: 1, maxLength: 100)],
                required: ["workoutId"]),
            response: Self.stepSchema
        ) { (context, input: SkipRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            var workout = try Workout.open(db, user: user, id: input.workoutId)
            guard let step = workout.current, input.number.map({ $0 == step.number }) ?? true, input.exerciseId.map({ $0 == step.exerciseID }) ?? true
            else { throw ServiceError.conflict("that is not the exercise on screen", reason: "not_current") }
            guard step.attempt < 50 else { throw ServiceError.conflict("too many skips of one exercise", reason: "too_many_skips") }
            let preferences = try UserPreferences.load(db, user: user)
            // A skip counts on the day it happened, as a completion does (and as a change of zone recounts it).
            try db.cachedStatement(sql: "UPDATE workout_exercise SET state = 'skipped', completed_ms = ?, day = ? WHERE user_id = ? AND workout_id = ? AND number = ? AND attempt = ?")
                .execute(arguments: [Instant.milliseconds(now), preferences.clock.local(now).date.description, user, workout.id, step.number, step.attempt])
            workout.steps[workout.steps.count - 1].state = "skipped"
            let (next, exercise) = try Self.show(
                db, user: user, workout: &workout, number: step.number, avoiding: step.exerciseID, preferences: preferences, now: now)
            return Self.stepView(workout, next, exercise: exercise, language: preferences.language)
        }
    }

    /// A finished workout's summary (the reply and `stats.workout.completed`'s data).
    static func summary(id: String, done: Int, skipped: Int, score: Int, repetitions: Int) -> JSONValue {
        [
            "workoutId": .string(id), "exercisesDone": .integer(Int64(done)), "exercisesSkipped": .integer(Int64(skipped)),
            "score": .integer(Int64(score)), "repetitions": .integer(Int64(repetitions)),
        ]
    }

    /// Finishes a workout: the exercise on screen (if any) is dropped unscored; publishes
    /// `stats.workout.completed` when anything was done. Returns the summary.
    @discardableResult
    static func close(_ db: Database, user: String, id: String, now: Date) throws -> JSONValue {
        try db.cachedStatement(sql: "DELETE FROM workout_exercise WHERE user_id = ? AND workout_id = ? AND state = 'shown'").execute(arguments: [user, id])
        try db.cachedStatement(sql: "UPDATE workout SET state = 'finished', ended_ms = ? WHERE user_id = ? AND id = ?").execute(arguments: [Instant.milliseconds(now), user, id])
        guard let workout = try Workout.load(db, user: user, id: id) else { throw ServiceError.notFound("no such workout") }
        let done = workout.steps.filter { $0.state == "done" }
        let summary = Self.summary(
            id: id, done: done.count, skipped: workout.steps.count - done.count, score: workout.score, repetitions: done.reduce(0) { $0 + $1.repetitions })
        if !done.isEmpty {
            try StatsEvents.workoutCompleted(db, user: user, summary: summary, startedMs: workout.startedMs, endedMs: Instant.milliseconds(now), at: now)
        }
        return summary
    }

    var finish: ServiceOperation {
        .write(
            "stats.workout.finish",
            summary: "Ends the workout before its N exercises (the one on screen is not scored); `{summary}`.",
            auth: .authenticated, request: .object(["workoutId": .string(minLength: 1, maxLength: 100)], required: ["workoutId"]),
            response: .object(["summary": Self.summarySchema], required: ["summary"])
        ) { (context, input: WorkoutRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let workout = try Workout.open(db, user: user, id: input.workoutId)
            return ["summary": try Self.close(db, user: user, id: workout.id, now: context.receivedAt)]
        }
    }

    var current: ServiceOperation {
        .read(
            "stats.workout.current",
            summary: "The caller's open workout with the exercise on screen (for an app that was closed mid-workout), or `{step: null}`.",
            auth: .authenticated, request: .empty, response: .object(["step": Self.stepSchema.nullable()], required: ["step"])
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            guard let id = try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM workout WHERE user_id = ? AND state = 'open' LIMIT 1"), arguments: [user]),
                let workout = try Workout.load(db, user: user, id: id), let step = workout.current,
                let exercise = try ExerciseRecords.find(db, id: step.exerciseID)
            else { return ["step": .null] }
            return ["step": Self.stepView(workout, step, exercise: exercise, language: try UserPreferences.load(db, user: user).language)]
        }
    }
}

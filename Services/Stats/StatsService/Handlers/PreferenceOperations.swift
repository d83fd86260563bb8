import Foundation
import GRDB
import Platform

/// Home → Preferences: fitness level, goal, countdown, exercises per workout, planned
/// progression, the device's zone and language; and resetting the history.
struct PreferenceOperations: Sendable {
    var all: [ServiceOperation] { [get, set, reset] }

    static func bounded(_ range: ClosedRange<Int>) -> JSONSchema { .integer(minimum: Int64(range.lowerBound), maximum: Int64(range.upperBound)) }
    static let countdown = bounded(Preferences.limits.countdownSeconds)
    static let exercises = bounded(Preferences.limits.exercisesPerWorkout)
    static let progression = bounded(Preferences.limits.progressionPercentPerWeek)

    static let preferencesSchema = JSONSchema.object(
        [
            "level": .oneOf(FitnessLevel.allCases.map(\.rawValue)),
            "goal": JSONSchema.oneOf(FitnessGoal.allCases.map(\.rawValue)).described("maintain ×0.8, improve ×1, challenge ×1.25 of the base repetitions"),
            "countdownSeconds": countdown, "exercisesPerWorkout": exercises, "progressionPercentPerWeek": progression,
            "timeZone": JSONSchema.string(format: .timeZone).described("the device's zone: statistics count its days"),
            "language": JSONSchema.string().nullable().described("de or en: exercise names and slogans"),
        ], required: ["level", "goal", "countdownSeconds", "exercisesPerWorkout", "progressionPercentPerWeek", "timeZone", "language"])

    static func view(_ stored: UserPreferences) -> JSONValue {
        let p = stored.preferences
        return [
            "level": .string(p.level.rawValue), "goal": .string(p.goal.rawValue), "countdownSeconds": .integer(Int64(p.countdownSeconds)),
            "exercisesPerWorkout": .integer(Int64(p.exercisesPerWorkout)), "progressionPercentPerWeek": .integer(Int64(p.progressionPercentPerWeek)),
            "timeZone": .string(stored.timeZone), "language": stored.language.map(JSONValue.string) ?? .null,
        ]
    }

    var get: ServiceOperation {
        .read(
            "stats.preferences.get", summary: "The caller's preferences (defaults until set: beginner, improve, 30 s countdown, 8 exercises, 5% a week, UTC).",
            auth: .authenticated, request: .empty, response: Self.preferencesSchema
        ) { (context, _: Empty, db: Database) -> JSONValue in
            Self.view(try UserPreferences.load(db, user: try context.requirePrincipal().userID))
        }
    }

    struct SetRequest: Codable, Sendable {
        var level: FitnessLevel?
        var goal: FitnessGoal?
        var countdownSeconds: Int?
        var exercisesPerWorkout: Int?
        var progressionPercentPerWeek: Int?
        var timeZone: String?
        var language: String?
    }

    var set: ServiceOperation {
        .write(
            "stats.preferences.set", summary: "Changes the preferences sent; the rest stay. A workout under way keeps the countdown it started with. A new `timeZone` moves the whole history to its days in that zone (the statistics count the days of the present zone).",
            auth: .authenticated,
            request: .object(
                [
                    "level": .oneOf(FitnessLevel.allCases.map(\.rawValue)), "goal": .oneOf(FitnessGoal.allCases.map(\.rawValue)),
                    "countdownSeconds": Self.countdown, "exercisesPerWorkout": Self.exercises, "progressionPercentPerWeek": Self.progression,
                    "timeZone": .string(format: .timeZone), "language": .oneOf(["de", "en"]),
                ]),
            response: Self.preferencesSchema
        ) { (context, input: SetRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            var stored = try UserPreferences.load(db, user: user)
            let zoneBefore = stored.timeZone
            if let level = input.level { stored.preferences.level = level }
            if let goal = input.goal { stored.preferences.goal = goal }
            if let seconds = input.countdownSeconds { stored.preferences.countdownSeconds = seconds }
            if let count = input.exercisesPerWorkout { stored.preferences.exercisesPerWorkout = count }
            if let percent = input.progressionPercentPerWeek { stored.preferences.progressionPercentPerWeek = percent }
            if let zone = input.timeZone { stored.timeZone = zone }
            if let language = input.language { stored.language = language }
            try stored.save(db, user: user, now: context.receivedAt)
            // The history's days follow the zone (the statistics count days of the present one).
            if stored.timeZone != zoneBefore { try TrainingDays.follow(db, user: user, clock: stored.clock) }
            return Self.view(stored)
        }
    }

    struct ResetRequest: Codable, Sendable {
        var confirm: String
    }

    var reset: ServiceOperation {
        .write(
            "stats.history.reset",
            summary: "Deletes every workout of the caller (the statistics start again); the preferences stay. `confirm` must be the word `reset`, so no stray call wipes a history. An offline upload of a workout begun before the reset is refused afterwards (`before_reset`), so a device's queued retry does not bring it back.",
            auth: .authenticated, request: .object(["confirm": .string(minLength: 1, maxLength: 20)], required: ["confirm"]),
            response: .object(["workoutsDeleted": .integer(minimum: 0)], required: ["workoutsDeleted"])
        ) { (context, input: ResetRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            guard input.confirm == "reset" else { throw ServiceError.invalid("confirm", "send the word reset to delete the whole history") }
            try db.execute(sql: "DELETE FROM workout_exercise WHERE user_id = ?", arguments: [user])
            try db.execute(sql: "DELETE FROM training_day WHERE user_id = ?", arguments: [user])
            try db.execute(sql: "DELETE FROM workout WHERE user_id = ?", arguments: [user])
            let deleted = db.changesCount
            try db.execute(
                sql: "INSERT INTO history_reset (user_id, reset_ms) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET reset_ms = excluded.reset_ms",
                arguments: [user, Instant.milliseconds(context.receivedAt)])
            return ["workoutsDeleted": .integer(Int64(deleted))]
        }
    }
}

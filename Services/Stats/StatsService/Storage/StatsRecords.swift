import Foundation
import GRDB
import Platform

/// The exercise catalog as stored.
enum ExerciseRecords {
    static let columns = "id, name_de, name_en, body_part, motor_ability, base_beginner, base_intermediate, base_advanced, image_id, video_url, active"

    static func save(_ db: Database, _ exercise: Exercise, position: Int, now: String) throws {
        try db.cachedStatement(sql: """
                INSERT INTO exercise (id, name_de, name_en, body_part, motor_ability, base_beginner, base_intermediate, base_advanced, image_id,
                    video_url, active, position, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET name_de = excluded.name_de, name_en = excluded.name_en, body_part = excluded.body_part,
                    motor_ability = excluded.motor_ability, base_beginner = excluded.base_beginner, base_intermediate = excluded.base_intermediate,
                    base_advanced = excluded.base_advanced, image_id = excluded.image_id, video_url = excluded.video_url, active = excluded.active,
                    updated_at = excluded.updated_at
                """
        ).execute(arguments: [
            exercise.id, exercise.name.de, exercise.name.en, exercise.bodyPart.rawValue, exercise.motorAbility.rawValue,
            exercise.baseRepetitions.beginner, exercise.baseRepetitions.intermediate, exercise.baseRepetitions.advanced, exercise.imageID,
            exercise.videoURL, exercise.active, position, now,
        ])
    }

    static func exercise(_ row: StoredColumns) -> Exercise {
        Exercise(
            id: row.string(0), name: LocalizedName(de: row.string(1), en: row.string(2)),
            bodyPart: BodyPart(rawValue: row.string(3)) ?? .fullBody, motorAbility: MotorAbility(rawValue: row.string(4)) ?? .strength,
            baseRepetitions: BaseRepetitions(
                beginner: Int(row.integer(5) ?? 1), intermediate: Int(row.integer(6) ?? 1), advanced: Int(row.integer(7) ?? 1)),
            imageID: row.text(8), videoURL: row.text(9), active: row.bool(10))
    }

    /// The catalog in its order; `activeOnly` leaves withdrawn exercises out.
    static func all(_ db: Database, activeOnly: Bool) throws -> [Exercise] {
        var exercises: [Exercise] = []
        try db.cachedStatement(sql: "SELECT \(columns) FROM exercise \(activeOnly ? "WHERE active = 1" : "") ORDER BY position, id")
            .forEachRow(arguments: []) { exercises.append(exercise($0)) }
        return exercises
    }

    static func find(_ db: Database, id: String) throws -> Exercise? {
        var found: Exercise?
        try db.cachedStatement(sql: "SELECT \(columns) FROM exercise WHERE id = ?").forEachRow(arguments: [id]) { found = exercise($0) }
        return found
    }
}

/// A user's preferences, with the zone and language their device reports.
struct UserPreferences: Sendable {
    var preferences: Preferences
    var timeZone: String
    var language: String?

    static func load(_ db: Database, user: String) throws -> UserPreferences {
        var found = UserPreferences(preferences: Preferences(), timeZone: "UTC", language: nil)
        try db.cachedStatement(sql: """
                SELECT level, goal, countdown_seconds, exercises_per_workout, progression_percent, time_zone, language FROM preferences WHERE user_id = ?
                """
        ).forEachRow(arguments: [user]) { row in
            found.preferences = Preferences(
                level: FitnessLevel(rawValue: row.string(0)) ?? .beginner, goal: FitnessGoal(rawValue: row.string(1)) ?? .improve,
                countdownSeconds: Int(row.integer(2) ?? 30), exercisesPerWorkout: Int(row.integer(3) ?? 8),
                progressionPercentPerWeek: Int(row.integer(4) ?? 0))
            found.timeZone = row.string(5)
            found.language = row.text(6)
        }
        return found
    }

    /// Whether the user has set preferences (or a profile gave them).
    static func exists(_ db: Database, user: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM preferences WHERE user_id = ?"), arguments: [user]) ?? false
    }

    func save(_ db: Database, user: String, now: Date) throws {
        try db.cachedStatement(sql: """
                INSERT INTO preferences (user_id, level, goal, countdown_seconds, exercises_per_workout, progression_percent, time_zone, language, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_id) DO UPDATE SET level = excluded.level, goal = excluded.goal, countdown_seconds = excluded.countdown_seconds,
                    exercises_per_workout = excluded.exercises_per_workout, progression_percent = excluded.progression_percent,
                    time_zone = excluded.time_zone, language = excluded.language, updated_at = excluded.updated_at
                """
        ).execute(arguments: [
            user, preferences.level.rawValue, preferences.goal.rawValue, preferences.countdownSeconds, preferences.exercisesPerWorkout,
            preferences.progressionPercentPerWeek, timeZone, language, Instant.format(now),
        ])
    }

    /// The user's clock (UTC when the stored zone is not one any more).
    var clock: ZoneClock { ZoneCache.clock(timeZone) ?? .utc }
}

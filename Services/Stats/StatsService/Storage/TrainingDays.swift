import GRDB
import Platform

/// The days a user's training falls on follow the zone of their preferences: when it
/// changes, every exercise and workout moves to its day in the new zone, in the same
/// transaction, so the statistics (which read stored days) count the whole history in
/// the user's present zone. The per-day totals follow through their triggers
/// (``DayTotalsSchema``), and the training days (streaks) are brought in line.
enum TrainingDays {
    /// Moves the user's exercises, workouts and training days to the days of `clock`.
    /// Only rows whose day changes are written.
    static func follow(_ db: Database, user: String, clock: ZoneClock) throws {
        func day(_ ms: Int64) -> String { clock.local(Instant.date(milliseconds: ms)).date.description }
        // An exercise's day is that of its completion (or skip), or of its showing while on screen.
        var moved: [(workout: String, number: Int64, attempt: Int64, day: String)] = []
        let exercises = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT workout_id, number, attempt, COALESCE(completed_ms, shown_ms), day FROM workout_exercise WHERE user_id = ?"),
            arguments: [user])
        while let row = try exercises.next() {
            let new = day(row[3])
            if new != row[4] as String { moved.append((row[0], row[1], row[2], new)) }
        }
        for exercise in moved {
            try db.cachedStatement(sql: "UPDATE workout_exercise SET day = ? WHERE user_id = ? AND workout_id = ? AND number = ? AND attempt = ?")
                .execute(arguments: [exercise.day, user, exercise.workout, exercise.number, exercise.attempt])
        }
        var workouts: [(id: String, day: String)] = []
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT id, started_ms, day FROM workout WHERE user_id = ?"), arguments: [user])
        while let row = try rows.next() {
            let new = day(row[1])
            if new != row[2] as String { workouts.append((row[0], new)) }
        }
        for workout in workouts {
            try db.cachedStatement(sql: "UPDATE workout SET day = ? WHERE user_id = ? AND id = ?").execute(arguments: [workout.day, user, workout.id])
        }
        guard !moved.isEmpty else { return }
        // A training day is a day with an exercise done; only the difference is written,
        // so the runs' triggers (streaks) do as little as the move needs.
        let trained = Set(try String.fetchAll(db, sql: "SELECT DISTINCT day FROM workout_exercise WHERE user_id = ? AND state = 'done'", arguments: [user]))
        let stored = Set(try String.fetchAll(db, sql: "SELECT day FROM training_day WHERE user_id = ?", arguments: [user]))
        for gone in stored.subtracting(trained).sorted() {
            try db.execute(sql: "DELETE FROM training_day WHERE user_id = ? AND day = ?", arguments: [user, gone])
        }
        for new in trained.subtracting(stored).sorted() {
            try db.execute(sql: "INSERT INTO training_day (user_id, day) VALUES (?, ?)", arguments: [user, new])
        }
    }
}

import Foundation
import GRDB
import Platform

/// The stats database, forward-only.
///
/// The exercise catalog and the slogans are admin-managed and seeded with a starting set
/// (``ExerciseCatalogSeed``, ``SloganSeed``). A workout belongs to one user (ids are
/// unique per user: offline ones are made by the app); each exercise shown in it is a row
/// of `workout_exercise`, numbered 1 to N, with an `attempt` per skip (a skip keeps the
/// number and shows another exercise). What the statistics read is kept on the row when
/// the exercise is shown or completed: its body part and motor ability (the catalog may
/// change later), its local day in the user's zone, the recommendation and the score.
enum StatsMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("stats-1") { db in
            try db.execute(sql: """
                CREATE TABLE exercise (
                    id TEXT PRIMARY KEY,
                    name_de TEXT NOT NULL,
                    name_en TEXT NOT NULL,
                    body_part TEXT NOT NULL,
                    motor_ability TEXT NOT NULL,
                    base_beginner INTEGER NOT NULL,
                    base_intermediate INTEGER NOT NULL,
                    base_advanced INTEGER NOT NULL,
                    image_id TEXT,
                    video_url TEXT,
                    active INTEGER NOT NULL DEFAULT 1,
                    position INTEGER NOT NULL,
                    updated_at TEXT NOT NULL
                ) WITHOUT ROWID;

                CREATE TABLE slogan (
                    id INTEGER PRIMARY KEY,
                    language TEXT NOT NULL,
                    text TEXT NOT NULL,
                    active INTEGER NOT NULL DEFAULT 1
                );
                CREATE INDEX slogan_language ON slogan(language, active);

                CREATE TABLE preferences (
                    user_id TEXT PRIMARY KEY,
                    level TEXT NOT NULL,
                    goal TEXT NOT NULL,
                    countdown_seconds INTEGER NOT NULL,
                    exercises_per_workout INTEGER NOT NULL,
                    progression_percent INTEGER NOT NULL,
                    -- The IANA zone the device reports: days of the statistics are its days.
                    time_zone TEXT NOT NULL DEFAULT 'UTC',
                    language TEXT,
                    updated_at TEXT NOT NULL
                ) WITHOUT ROWID;

                CREATE TABLE workout (
                    user_id TEXT NOT NULL,
                    id TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('open', 'finished')),
                    source TEXT NOT NULL CHECK (source IN ('live', 'offline')),
                    planned INTEGER NOT NULL,
                    countdown_seconds INTEGER NOT NULL,
                    started_ms INTEGER NOT NULL,
                    ended_ms INTEGER,
                    day TEXT NOT NULL,
                    PRIMARY KEY (user_id, id)
                ) WITHOUT ROWID;
                CREATE INDEX workout_open ON workout(user_id, state);
                CREATE INDEX workout_time ON workout(user_id, started_ms);

                CREATE TABLE workout_exercise (
                    user_id TEXT NOT NULL,
                    workout_id TEXT NOT NULL,
                    number INTEGER NOT NULL,
                    attempt INTEGER NOT NULL,
                    exercise_id TEXT NOT NULL,
                    body_part TEXT NOT NULL,
                    motor_ability TEXT NOT NULL,
                    recommended INTEGER NOT NULL,
                    shown_ms INTEGER NOT NULL,
                    -- shown, done or skipped
                    state TEXT NOT NULL CHECK (state IN ('shown', 'done', 'skipped')),
                    completed_ms INTEGER,
                    repetitions INTEGER NOT NULL DEFAULT 0,
                    score INTEGER NOT NULL DEFAULT 0,
                    day TEXT NOT NULL,
                    PRIMARY KEY (user_id, workout_id, number, attempt)
                ) WITHOUT ROWID;
                -- The statistics read a user's exercises by day.
                CREATE INDEX workout_exercise_day ON workout_exercise(user_id, day);
                -- The days a user trained (an exercise done): streaks read them backwards.
                CREATE TABLE training_day (
                    user_id TEXT NOT NULL,
                    day TEXT NOT NULL,
                    PRIMARY KEY (user_id, day)
                ) WITHOUT ROWID;
                -- The recommendation reads a user's last results of one exercise.
                CREATE INDEX workout_exercise_history ON workout_exercise(user_id, exercise_id, completed_ms) WHERE state = 'done';
                """)
            let now = Instant.format(Date())
            for (position, exercise) in ExerciseCatalogSeed.exercises.enumerated() {
                try ExerciseRecords.save(db, exercise, position: position, now: now)
            }
            for slogan in SloganSeed.slogans {
                try db.execute(sql: "INSERT INTO slogan (language, text) VALUES (?, ?)", arguments: [slogan.language, slogan.text])
            }
        }
        // Cross-app statistics, kept from the other services' events (exactly once: each is
        // applied in the transaction that moves the subscriber's cursor). Months and days
        // are UTC (the event's instant).
        migrator.registerMigration("stats-2") { db in
            try db.execute(sql: """
                -- Per user and month: savings saved per currency and plans completed; bookings
                -- attended, cancelled, cancelled late, missed; goal items done, goals completed.
                CREATE TABLE app_month (
                    user_id TEXT NOT NULL,
                    app TEXT NOT NULL,
                    metric TEXT NOT NULL,
                    month TEXT NOT NULL,
                    value INTEGER NOT NULL,
                    PRIMARY KEY (user_id, app, metric, month)
                ) WITHOUT ROWID;
                -- A goal's progress over time, for its recipient.
                CREATE TABLE goal_progress (
                    user_id TEXT NOT NULL,
                    goal_id TEXT NOT NULL,
                    at TEXT NOT NULL,
                    percent INTEGER NOT NULL,
                    PRIMARY KEY (user_id, goal_id, at)
                ) WITHOUT ROWID;
                -- Admin figures per day: registrations, events per service.
                CREATE TABLE admin_day (
                    day TEXT NOT NULL,
                    metric TEXT NOT NULL,
                    value INTEGER NOT NULL,
                    PRIMARY KEY (day, metric)
                ) WITHOUT ROWID;
                -- Users seen in any event on a day (active users per day).
                CREATE TABLE active_user (
                    day TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    PRIMARY KEY (day, user_id)
                ) WITHOUT ROWID;
                -- Each goal's state as its last event said (goals by state).
                CREATE TABLE goal_state (
                    goal_id TEXT PRIMARY KEY,
                    state TEXT NOT NULL
                ) WITHOUT ROWID;
                """)
        }
    }
}

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
        // Totals per user and day, for the statistics (a month reads 28-31 rows, not every
        // exercise), kept by triggers on `workout_exercise`, so every way an exercise is
        // done, skipped, synced, reset or deleted keeps them, in the same transaction.
        migrator.registerMigration("stats-3") { db in
            try db.execute(sql: DayTotalsSchema.tables)
            try db.execute(sql: DayTotalsSchema.triggers)
            try db.execute(sql: DayTotalsSchema.backfill)
            try db.execute(sql: TrainingRunSchema.table)
            try db.execute(sql: TrainingRunSchema.triggers)
            try db.execute(sql: TrainingRunSchema.backfill)
        }
        // `booking_mark`: each booking's attendance mark as counted, so a corrected mark
        // (attended ↔ no_show) moves the count instead of adding a second one (marks
        // counted before this migration have no row: a later correction of one of them
        // adds only). `workout.level`: the level a live workout started at, which its
        // recommendations and scores keep (NULL for older ones: the preferences').
        // `history_reset`: when the user last reset their history, so an offline upload of
        // a workout from before it, sent again, does not bring it back.
        migrator.registerMigration("stats-4") { db in
            try db.execute(sql: """
                CREATE TABLE booking_mark (
                    booking_id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    metric TEXT NOT NULL,
                    month TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX booking_mark_user ON booking_mark(user_id);
                ALTER TABLE workout ADD COLUMN level TEXT;
                CREATE TABLE history_reset (
                    user_id TEXT PRIMARY KEY,
                    reset_ms INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        // What each savings plan added to the monthly figures (its deposits less undone
        // ones per month and currency, and the month it completed), so a deleted plan,
        // which leaves the user's history, takes them back out. (Plans with deposits from
        // before this migration have no rows: their deletion takes out what came after.)
        migrator.registerMigration("stats-5") { db in
            try db.execute(sql: """
                CREATE TABLE savings_plan_month (
                    plan_id TEXT NOT NULL,
                    metric TEXT NOT NULL,
                    month TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    value INTEGER NOT NULL,
                    PRIMARY KEY (plan_id, metric, month)
                ) WITHOUT ROWID;
                CREATE INDEX savings_plan_month_user ON savings_plan_month(user_id);
                """)
        }
    }
}

/// The per-day totals' tables and the triggers that keep them (migration `stats-3`).
///
/// `exercise_day` has one row per user and day with an exercise done or skipped: sums of
/// the done exercises' scores and repetitions, counts of done and skipped, and counts of
/// done ones per body part (`bp_*`) and motor ability (`ma_*`). `workout_day` counts a
/// workout's done exercises per day, for the number of distinct workouts in a period. An
/// exercise still only shown counts nowhere. Rows whose counts fall to zero go.
///
/// Public for `bench stats`, which writes a year of exercises for 10,000 users with the
/// triggers dropped and then fills the totals with ``backfill``.
public enum DayTotalsSchema {
    /// The body parts' column suffixes, in the order of `BodyPart.allCases` (a test checks it).
    static let bodyParts = ["chest", "back", "shoulders", "arms", "core", "legs", "full_body"]
    /// The motor abilities' column suffixes, in the order of `MotorAbility.allCases`.
    static let motorAbilities = ["strength", "endurance", "speed"]

    static var countColumns: [String] { bodyParts.map { "bp_\($0)" } + motorAbilities.map { "ma_\($0)" } }

    /// The values a row of `workout_exercise` adds (`row` is NEW or OLD), times `sign`, in
    /// the order: score, repetitions, done, skipped, then ``countColumns``.
    static func contributions(_ row: String, sign: String) -> [String] {
        let done = "(\(row).state = 'done')"
        return ["\(sign)\(done) * \(row).score", "\(sign)\(done) * \(row).repetitions", "\(sign)\(done)", "\(sign)(\(row).state = 'skipped')"]
            + bodyParts.map { "\(sign)(\(done) AND \(row).body_part = '\($0)')" }
            + motorAbilities.map { "\(sign)(\(done) AND \(row).motor_ability = '\($0)')" }
    }

    static var valueColumns: [String] { ["score", "repetitions", "done", "skipped"] + countColumns }

    /// Adds (`sign` "+") or takes back ("-") one exercise row's contribution.
    static func apply(_ row: String, sign: String) -> String {
        let columns = valueColumns
        return """
            INSERT INTO exercise_day (user_id, day, \(columns.joined(separator: ", ")))
                SELECT \(row).user_id, \(row).day, \(contributions(row, sign: sign).joined(separator: ", ")) WHERE \(row).state != 'shown'
                ON CONFLICT (user_id, day) DO UPDATE SET \(columns.map { "\($0) = \($0) + excluded.\($0)" }.joined(separator: ", "));
            DELETE FROM exercise_day WHERE user_id = \(row).user_id AND day = \(row).day AND done = 0 AND skipped = 0;
            INSERT INTO workout_day (user_id, day, workout_id, done)
                SELECT \(row).user_id, \(row).day, \(row).workout_id, \(sign)1 WHERE \(row).state = 'done'
                ON CONFLICT (user_id, day, workout_id) DO UPDATE SET done = done + excluded.done;
            DELETE FROM workout_day WHERE user_id = \(row).user_id AND day = \(row).day AND workout_id = \(row).workout_id AND done = 0;
            """
    }

    public static let triggerNames = ["exercise_day_insert", "exercise_day_delete", "exercise_day_update"]

    static var tables: String {
        """
        CREATE TABLE exercise_day (
            user_id TEXT NOT NULL,
            day TEXT NOT NULL,
            \(valueColumns.map { "\($0) INTEGER NOT NULL DEFAULT 0" }.joined(separator: ",\n    "))
            , PRIMARY KEY (user_id, day)
        ) WITHOUT ROWID;
        CREATE TABLE workout_day (
            user_id TEXT NOT NULL,
            day TEXT NOT NULL,
            workout_id TEXT NOT NULL,
            done INTEGER NOT NULL,
            PRIMARY KEY (user_id, day, workout_id)
        ) WITHOUT ROWID;
        """
    }

    /// The triggers named ``triggerNames``.
    public static var triggers: String {
        """
        CREATE TRIGGER exercise_day_insert AFTER INSERT ON workout_exercise BEGIN
        \(apply("NEW", sign: "+"))
        END;
        CREATE TRIGGER exercise_day_delete AFTER DELETE ON workout_exercise BEGIN
        \(apply("OLD", sign: "-"))
        END;
        CREATE TRIGGER exercise_day_update AFTER UPDATE ON workout_exercise BEGIN
        \(apply("OLD", sign: "-"))
        \(apply("NEW", sign: "+"))
        END;
        """
    }

    /// The totals of the exercises stored before the tables existed (or while the
    /// triggers were dropped); the tables must hold none of theirs yet.
    public static var backfill: String {
        let sums = zip(valueColumns, contributions("e", sign: "")).map { "SUM(\($1))" }
        return """
            INSERT INTO exercise_day (user_id, day, \(valueColumns.joined(separator: ", ")))
                SELECT e.user_id, e.day, \(sums.joined(separator: ", ")) FROM workout_exercise AS e WHERE e.state != 'shown' GROUP BY e.user_id, e.day;
            INSERT INTO workout_day (user_id, day, workout_id, done)
                SELECT user_id, day, workout_id, COUNT(*) FROM workout_exercise WHERE state = 'done' GROUP BY user_id, day, workout_id;
            """
    }
}

/// Runs of consecutive training days per user (`training_run`, migration `stats-3`), kept
/// by triggers on `training_day`: a current streak that reaches back before a period is
/// one lookup (the run holding the day before it), not a walk over every earlier day.
public enum TrainingRunSchema {
    static let table = """
        CREATE TABLE training_run (
            user_id TEXT NOT NULL,
            first_day TEXT NOT NULL,
            last_day TEXT NOT NULL,
            PRIMARY KEY (user_id, first_day)
        ) WITHOUT ROWID;
        """

    public static let triggerNames = ["training_run_insert", "training_run_delete"]

    /// The triggers named ``triggerNames``.
    public static let triggers = """
        -- A new training day joins the run ending the day before and the one starting the
        -- day after, or extends one of them, or starts a run of its own.
        CREATE TRIGGER training_run_insert AFTER INSERT ON training_day BEGIN
            UPDATE training_run SET last_day = COALESCE(
                    (SELECT r.last_day FROM training_run AS r WHERE r.user_id = NEW.user_id AND r.first_day = date(NEW.day, '+1 day')), NEW.day)
                WHERE user_id = NEW.user_id AND last_day = date(NEW.day, '-1 day');
            DELETE FROM training_run WHERE user_id = NEW.user_id AND first_day = date(NEW.day, '+1 day')
                AND EXISTS (SELECT 1 FROM training_run AS l WHERE l.user_id = NEW.user_id AND l.first_day < NEW.day AND l.last_day > NEW.day);
            UPDATE training_run SET first_day = NEW.day WHERE user_id = NEW.user_id AND first_day = date(NEW.day, '+1 day');
            INSERT INTO training_run (user_id, first_day, last_day) SELECT NEW.user_id, NEW.day, NEW.day
                WHERE NOT EXISTS (SELECT 1 FROM training_run WHERE user_id = NEW.user_id AND first_day <= NEW.day AND last_day >= NEW.day);
        END;
        -- A training day removed splits its run in two (or shortens it, or ends it).
        CREATE TRIGGER training_run_delete AFTER DELETE ON training_day BEGIN
            INSERT INTO training_run (user_id, first_day, last_day) SELECT user_id, date(OLD.day, '+1 day'), last_day FROM training_run
                WHERE user_id = OLD.user_id AND first_day <= OLD.day AND last_day > OLD.day;
            UPDATE training_run SET last_day = date(OLD.day, '-1 day') WHERE user_id = OLD.user_id AND first_day < OLD.day AND last_day >= OLD.day;
            DELETE FROM training_run WHERE user_id = OLD.user_id AND first_day = OLD.day;
        END;
        """

    /// The runs of the training days stored before the table existed: in a user's days in
    /// order, a day's date minus its position is the same for every day of one run.
    public static let backfill = """
        INSERT INTO training_run (user_id, first_day, last_day)
            SELECT user_id, MIN(day), MAX(day) FROM (
                SELECT user_id, day, julianday(day) - ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY day) AS run FROM training_day
            ) GROUP BY user_id, run;
        """
}

import GRDB
import Platform

/// The savings database, forward-only.
///
/// A plan keeps the terms the user chose (method, target, dates, interval, parameters);
/// its schedule is not stored but derived from them by ``SavingsSchedule`` (the plan as
/// made) and ``PlanRebalance`` (what is left after the deposits), so the two can never
/// disagree. `saved_minor` and `last_deposit` are kept in step with the `deposit` rows in
/// the transaction that changes them.
enum SavingsMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("savings-1") { db in
            try db.execute(sql: """
                CREATE TABLE method (
                    id TEXT PRIMARY KEY,
                    title TEXT NOT NULL,
                    summary TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    updated_at TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE method_slide (
                    method_id TEXT NOT NULL REFERENCES method(id),
                    position INTEGER NOT NULL,
                    title TEXT NOT NULL,
                    text TEXT NOT NULL,
                    image_id TEXT,
                    PRIMARY KEY (method_id, position)
                ) WITHOUT ROWID;

                CREATE TABLE plan (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    method TEXT NOT NULL,
                    currency TEXT NOT NULL,
                    target_minor INTEGER NOT NULL CHECK (target_minor > 0),
                    start_date TEXT NOT NULL,
                    deadline TEXT,
                    interval TEXT NOT NULL,
                    income_minor INTEGER,
                    percent INTEGER,
                    amount_minor INTEGER,
                    state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'completed', 'cancelled')),
                    -- Paused by the user (kept when the plan completes: an undo below the target pauses it again).
                    paused INTEGER NOT NULL DEFAULT 0,
                    saved_minor INTEGER NOT NULL DEFAULT 0,
                    deposits INTEGER NOT NULL DEFAULT 0,
                    last_deposit TEXT,
                    created_on TEXT NOT NULL,
                    time_zone TEXT NOT NULL,
                    reminder_time TEXT NOT NULL,
                    reminders INTEGER NOT NULL,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    closed_at TEXT
                ) WITHOUT ROWID;
                CREATE INDEX plan_user ON plan(user_id, state);
                CREATE INDEX plan_history ON plan(user_id, closed_at, id) WHERE closed_at IS NOT NULL;

                CREATE TABLE deposit (
                    id TEXT PRIMARY KEY,
                    plan_id TEXT NOT NULL REFERENCES plan(id),
                    user_id TEXT NOT NULL,
                    amount_minor INTEGER NOT NULL CHECK (amount_minor > 0),
                    date TEXT NOT NULL,
                    note TEXT,
                    created_at TEXT NOT NULL
                ) WITHOUT ROWID;
                -- One index: a user's deposits are those of their plans (a second one, by user,
                -- would be one more page written per deposit).
                CREATE INDEX deposit_plan ON deposit(plan_id, date, id);

                -- Time zones from auth's profile events: the default zone of a new plan.
                CREATE TABLE person (
                    user_id TEXT PRIMARY KEY,
                    time_zone TEXT
                ) WITHOUT ROWID;
                """)
            try MethodCatalogSeed.insert(db)
        }
    }
}

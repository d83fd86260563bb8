import GRDB

/// The tables of push delivery (the outbox itself is the platform's `platform_delivery`).
enum NotificationsMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("reminders-3-notifications") { db in
            try db.execute(sql: """
                -- A device's push token belongs to one user and app at a time: registering it
                -- again moves it. Disabled when the push gateway calls it invalid. Ids are never
                -- reused (push ids are <notification>.<device id>).
                CREATE TABLE push_device (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    token TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    locale TEXT NOT NULL,
                    registered_at TEXT NOT NULL,
                    disabled_at TEXT,
                    disabled_reason TEXT
                );
                CREATE INDEX push_device_user ON push_device(user_id, app_id);
                CREATE INDEX push_device_app ON push_device(app_id, id);

                -- Preferences per user and app; no row: the defaults.
                CREATE TABLE push_preference (
                    user_id TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    disabled TEXT NOT NULL DEFAULT '',
                    sound TEXT,
                    vibration INTEGER NOT NULL DEFAULT 1,
                    alert_style TEXT NOT NULL DEFAULT 'banner',
                    quiet_start TEXT,
                    quiet_end TEXT,
                    updated_at TEXT NOT NULL,
                    PRIMARY KEY (user_id, app_id)
                ) WITHOUT ROWID;

                -- A user's notifications (one per user and app, whatever the number of devices).
                -- Ids are unique per user: a broadcast's entry has the broadcast's id for everyone.
                CREATE TABLE notification (
                    id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    title TEXT NOT NULL,
                    body TEXT NOT NULL,
                    image_url TEXT,
                    data TEXT NOT NULL,
                    urgent INTEGER NOT NULL,
                    devices INTEGER NOT NULL,
                    created_ms INTEGER NOT NULL,
                    deliver_ms INTEGER NOT NULL,
                    read_at TEXT,
                    PRIMARY KEY (user_id, id)
                ) WITHOUT ROWID;
                CREATE INDEX notification_user ON notification(user_id, created_ms);

                -- Admins' words for a kind and language, over the shipped ones.
                CREATE TABLE push_template (
                    kind TEXT NOT NULL,
                    language TEXT NOT NULL,
                    title TEXT NOT NULL,
                    body TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    updated_by TEXT NOT NULL,
                    PRIMARY KEY (kind, language)
                ) WITHOUT ROWID;

                -- Delivery counts per day (UTC) and kind, for admins.
                CREATE TABLE push_daily (
                    day TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    notifications INTEGER NOT NULL DEFAULT 0,
                    queued INTEGER NOT NULL DEFAULT 0,
                    sent INTEGER NOT NULL DEFAULT 0,
                    failed INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (day, kind)
                ) WITHOUT ROWID;

                -- A broadcast fans out to its devices a chunk per transaction.
                CREATE TABLE push_broadcast (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL,
                    broadcast_kind TEXT NOT NULL,
                    title TEXT NOT NULL,
                    body TEXT NOT NULL,
                    image_url TEXT,
                    audience TEXT NOT NULL,
                    role TEXT,
                    user_ids TEXT,
                    cursor INTEGER NOT NULL DEFAULT 0,
                    devices INTEGER NOT NULL DEFAULT 0,
                    created_at TEXT NOT NULL,
                    created_by TEXT NOT NULL,
                    finished_at TEXT
                );

                -- Roles as auth publishes them (a broadcast to a role).
                CREATE TABLE push_role (
                    user_id TEXT NOT NULL,
                    role TEXT NOT NULL,
                    PRIMARY KEY (user_id, role)
                ) WITHOUT ROWID;
                CREATE INDEX push_role_role ON push_role(role, user_id);

                -- The last progress milestone (25, 50, 75) sponsors were told of, per goal.
                CREATE TABLE push_goal_milestone (
                    goal_id TEXT PRIMARY KEY,
                    milestone INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
        }
    }
}

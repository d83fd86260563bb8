import GRDB
import Platform

/// The reminders database, forward-only.
///
/// A reminder keeps what the user set (title and the rest, its start, zone, rule,
/// exceptions, alerts) and what the scheduler derives from it: `next_at_ms` (its next
/// occurrence, for sorting and widgets) and `alert_cursor_ms` (the instant up to which its
/// alerts have been published). Both are written in the transaction that changes the
/// reminder or fires its timer, so they never disagree with the rule.
///
/// Ids are the ones apps make offline (``ClientGeneratedID``), unique per user: the same id
/// from the same user is the same reminder, and one user's id says nothing about another's
/// (no one can learn or take an id another user's app made). The integer `rowid` exists for the
/// full-text index (FTS5 with external content, kept in step by triggers; since
/// `reminders-2` over the words as ``SearchTerms`` writes them).
enum RemindersMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("reminders-1") { db in
            try db.execute(sql: """
                CREATE TABLE reminder (
                    rowid INTEGER PRIMARY KEY,
                    id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    title TEXT NOT NULL,
                    -- The title lowercased (Swift's Unicode case folding, Cyrillic included): suggestions by prefix.
                    title_fold TEXT NOT NULL,
                    description TEXT,
                    location TEXT,
                    notes TEXT,
                    category TEXT NOT NULL,
                    importance TEXT NOT NULL CHECK (importance IN ('low', 'normal', 'high')),
                    special INTEGER NOT NULL DEFAULT 0,
                    image_id TEXT,
                    notification_kind TEXT NOT NULL CHECK (notification_kind IN ('sound', 'vibration', 'both')),
                    sound TEXT,
                    -- YYYY-MM-DDTHH:MM; all-day reminders keep 00:00 and all_day = 1.
                    start_local TEXT NOT NULL,
                    all_day INTEGER NOT NULL DEFAULT 0,
                    -- An IANA zone, or NULL: floating (follows the zone the user's device reports).
                    zone TEXT,
                    rrule TEXT,
                    -- JSON array of local date-times removed from the series.
                    exdates TEXT NOT NULL DEFAULT '[]',
                    -- JSON array of lead times in minutes (0: at the time).
                    alerts TEXT NOT NULL DEFAULT '[0]',
                    repeat_every_minutes INTEGER,
                    repeat_times INTEGER NOT NULL DEFAULT 0,
                    -- A congratulation to send to someone else (JSON), or NULL.
                    greeting TEXT,
                    status TEXT NOT NULL CHECK (status IN ('active', 'completed', 'archived')),
                    -- Where it came from: user, import, beautiful, holiday, schedule, birthday, congratulation.
                    source TEXT NOT NULL DEFAULT 'user',
                    -- What makes a generated reminder unique for its user (an .ics UID, a subscription's match).
                    source_key TEXT,
                    done_through TEXT,
                    next_at_ms INTEGER,
                    -- next_at_ms, or a far future for reminders with no occurrence ahead: the list's sort key.
                    next_sort INTEGER NOT NULL,
                    alert_cursor_ms INTEGER NOT NULL,
                    version INTEGER NOT NULL DEFAULT 1,
                    -- JSON object: field name -> when the device made the edit that set it (RFC 3339).
                    field_times TEXT NOT NULL DEFAULT '{}',
                    change_version INTEGER NOT NULL,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    closed_at TEXT,
                    closed_ms INTEGER
                );
                CREATE UNIQUE INDEX reminder_id ON reminder(user_id, id);
                CREATE INDEX reminder_list ON reminder(user_id, status, next_sort, rowid);
                CREATE INDEX reminder_history ON reminder(user_id, closed_ms, rowid) WHERE closed_ms IS NOT NULL;
                CREATE INDEX reminder_title ON reminder(user_id, title_fold);
                CREATE UNIQUE INDEX reminder_source ON reminder(user_id, source_key) WHERE source_key IS NOT NULL;
                CREATE INDEX reminder_changes ON reminder(user_id, change_version);

                -- Full-text search over title and description. `owner` holds the user id as
                -- one token (its characters that are not letters or digits removed), so a
                -- search intersects the term's postings with the user's. Ё is indexed as Е
                -- (unicode61 does not fold it; Russian writers often type е for ё).
                CREATE VIRTUAL TABLE reminder_fts USING fts5(
                    owner, title, description,
                    content = 'reminder_search', content_rowid = 'rowid',
                    tokenize = 'unicode61 remove_diacritics 2',
                    prefix = '2 3'
                );
                CREATE VIEW reminder_search AS
                    SELECT rowid, lower(replace(replace(user_id, '_', ''), '-', '')) AS owner, replace(replace(title, 'ё', 'е'), 'Ё', 'Е') AS title, replace(replace(coalesce(description, ''), 'ё', 'е'), 'Ё', 'Е') AS description FROM reminder;
                CREATE TRIGGER reminder_fts_insert AFTER INSERT ON reminder BEGIN
                    INSERT INTO reminder_fts (rowid, owner, title, description)
                    VALUES (new.rowid, lower(replace(replace(new.user_id, '_', ''), '-', '')), replace(replace(new.title, 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(new.description, ''), 'ё', 'е'), 'Ё', 'Е'));
                END;
                CREATE TRIGGER reminder_fts_delete AFTER DELETE ON reminder BEGIN
                    INSERT INTO reminder_fts (reminder_fts, rowid, owner, title, description)
                    VALUES ('delete', old.rowid, lower(replace(replace(old.user_id, '_', ''), '-', '')), replace(replace(old.title, 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(old.description, ''), 'ё', 'е'), 'Ё', 'Е'));
                END;
                CREATE TRIGGER reminder_fts_update AFTER UPDATE OF title, description ON reminder BEGIN
                    INSERT INTO reminder_fts (reminder_fts, rowid, owner, title, description)
                    VALUES ('delete', old.rowid, lower(replace(replace(old.user_id, '_', ''), '-', '')), replace(replace(old.title, 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(old.description, ''), 'ё', 'е'), 'Ё', 'Е'));
                    INSERT INTO reminder_fts (rowid, owner, title, description)
                    VALUES (new.rowid, lower(replace(replace(new.user_id, '_', ''), '-', '')), replace(replace(new.title, 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(new.description, ''), 'ё', 'е'), 'Ё', 'Е'));
                END;

                -- Each alert published: the id a snooze names.
                CREATE TABLE fired_alert (
                    id TEXT PRIMARY KEY,
                    reminder_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    occurrence_local TEXT NOT NULL,
                    occurrence_ms INTEGER NOT NULL,
                    fired_ms INTEGER NOT NULL,
                    snoozed_until_ms INTEGER
                ) WITHOUT ROWID;
                CREATE INDEX fired_alert_reminder ON fired_alert(reminder_id);
                CREATE INDEX fired_alert_age ON fired_alert(fired_ms);

                -- App settings every device of a user shares, and the zone the device reports.
                CREATE TABLE settings (
                    user_id TEXT PRIMARY KEY,
                    language TEXT,
                    theme TEXT,
                    notification_kind TEXT,
                    sound TEXT,
                    default_alerts TEXT,
                    all_day_time TEXT,
                    time_zone TEXT,
                    change_version INTEGER NOT NULL,
                    updated_at TEXT NOT NULL
                ) WITHOUT ROWID;

                -- From auth's profile events: first name, birth date, locale, zone.
                CREATE TABLE person (
                    user_id TEXT PRIMARY KEY,
                    first_name TEXT,
                    birth_date TEXT,
                    locale TEXT,
                    time_zone TEXT
                ) WITHOUT ROWID;

                -- Beautiful-date and holiday subscriptions: kept coming by a monthly timer.
                CREATE TABLE subscription (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('beautiful', 'holiday')),
                    params TEXT NOT NULL,
                    created_at TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX subscription_user ON subscription(user_id);
                """)
        }
        // Search by the user's own terms (``SearchTerms``: a common word's postings across
        // all users made a search read a million rows), and the next occurrence's local
        // text kept with its instant (a list shows it without a zone lookup per row).
        migrator.registerMigration("reminders-2") { db in
            try db.execute(sql: """
                DROP TRIGGER reminder_fts_insert;
                DROP TRIGGER reminder_fts_delete;
                DROP TRIGGER reminder_fts_update;
                DROP TABLE reminder_fts;
                DROP VIEW reminder_search;
                ALTER TABLE reminder ADD COLUMN next_local TEXT;
                -- The title and description as indexed: each word prefixed with the user's key.
                ALTER TABLE reminder ADD COLUMN search_title TEXT NOT NULL DEFAULT '';
                ALTER TABLE reminder ADD COLUMN search_body TEXT NOT NULL DEFAULT '';
                """)
            // The terms of the reminders there are, then the index built from them at once
            // (before the triggers: they keep an index in step, they do not fill one).
            let rows = try Row.fetchCursor(db, sql: "SELECT rowid, user_id, title, description FROM reminder")
            let update = try db.makeStatement(sql: "UPDATE reminder SET search_title = ?, search_body = ? WHERE rowid = ?")
            while let row = try rows.next() {
                let user: String = row[1]
                try update.execute(arguments: [SearchTerms.indexed(row[2], user: user), SearchTerms.indexed(row[3], user: user), row[0] as Int64])
            }
            try db.execute(sql: """
                CREATE VIRTUAL TABLE reminder_fts USING fts5(
                    search_title, search_body, content = 'reminder', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2'
                );
                INSERT INTO reminder_fts (reminder_fts) VALUES ('rebuild');
                CREATE TRIGGER reminder_fts_insert AFTER INSERT ON reminder BEGIN
                    INSERT INTO reminder_fts (rowid, search_title, search_body) VALUES (new.rowid, new.search_title, new.search_body);
                END;
                CREATE TRIGGER reminder_fts_delete AFTER DELETE ON reminder BEGIN
                    INSERT INTO reminder_fts (reminder_fts, rowid, search_title, search_body) VALUES ('delete', old.rowid, old.search_title, old.search_body);
                END;
                CREATE TRIGGER reminder_fts_update AFTER UPDATE OF search_title, search_body ON reminder BEGIN
                    INSERT INTO reminder_fts (reminder_fts, rowid, search_title, search_body) VALUES ('delete', old.rowid, old.search_title, old.search_body);
                    INSERT INTO reminder_fts (rowid, search_title, search_body) VALUES (new.rowid, new.search_title, new.search_body);
                END;
                """)
        }
        NotificationsMigrations.register(in: &migrator)
        // What the create that made a reminder asked for, so that the same create sent again
        // later (its reply lost offline) is told apart from another reminder under the id,
        // however the reminder changed meanwhile. Older rows have none: their current
        // content is compared, as before.
        migrator.registerMigration("reminders-3-create-hash") { db in
            try db.execute(sql: "ALTER TABLE reminder ADD COLUMN create_hash TEXT")
        }
        migrator.registerMigration("reminders-4-user-changes") { db in
            // What a list, a search and the history show of a user (their reminders, and
            // the zone from their settings or profile), counted per user for the reads
            // that answer again from memory while it stands (``UserChanges``).
            for table in ["reminder", "settings", "person"] { try db.execute(sql: UserChanges.triggers(on: table)) }
        }
        GreetingDelivery.migrate(&migrator)
    }
}

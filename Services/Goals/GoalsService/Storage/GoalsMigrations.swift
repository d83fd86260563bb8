import Foundation
import GRDB
import Platform

/// The goals database, forward-only.
///
/// Content admins write (goal types with their versioned forms, sponsor groups, body
/// options, texts, questionnaires) carries one `content_state.version`, bumped by every
/// change, so apps download it only when it changed. Users' rows (goals, sponsorships,
/// plan items, profiles) carry a `change_version` from the platform's changes feed.
enum GoalsMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("goals-1") { db in
            try db.execute(sql: """
                CREATE TABLE content_state (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
                INSERT INTO content_state (id, version) VALUES (1, 1);

                CREATE TABLE goal_type (
                    id TEXT PRIMARY KEY,
                    title TEXT NOT NULL,
                    icon_id TEXT,
                    form_version INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    active INTEGER NOT NULL DEFAULT 1,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                CREATE TABLE goal_type_form (
                    type_id TEXT NOT NULL REFERENCES goal_type(id),
                    version INTEGER NOT NULL,
                    form TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    PRIMARY KEY (type_id, version)
                ) WITHOUT ROWID;
                CREATE TABLE sponsor_group (
                    id TEXT PRIMARY KEY,
                    title TEXT NOT NULL,
                    icon_id TEXT,
                    position INTEGER NOT NULL,
                    active INTEGER NOT NULL DEFAULT 1,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                CREATE TABLE body_option (
                    id TEXT PRIMARY KEY,
                    kind TEXT NOT NULL CHECK (kind IN ('figure', 'shape')),
                    sex TEXT NOT NULL CHECK (sex IN ('male', 'female')),
                    title TEXT NOT NULL,
                    image_id TEXT,
                    position INTEGER NOT NULL,
                    active INTEGER NOT NULL DEFAULT 1
                );
                CREATE TABLE text_entry (
                    key TEXT NOT NULL,
                    locale TEXT NOT NULL,
                    text TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    PRIMARY KEY (key, locale)
                ) WITHOUT ROWID;
                CREATE TABLE question (
                    id TEXT PRIMARY KEY,
                    questionnaire TEXT NOT NULL CHECK (questionnaire IN ('recommendations', 'nutrition')),
                    section TEXT,
                    text TEXT NOT NULL,
                    options TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    active INTEGER NOT NULL DEFAULT 1
                );

                -- People as auth describes them (names for the other side, the day in their zone).
                CREATE TABLE person (
                    user_id TEXT PRIMARY KEY,
                    first_name TEXT,
                    time_zone TEXT,
                    change_version INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE recipient_profile (
                    user_id TEXT PRIMARY KEY,
                    age INTEGER CHECK (age BETWEEN 1 AND 150),
                    height_mm INTEGER CHECK (height_mm BETWEEN 500 AND 2720),
                    weight_g INTEGER CHECK (weight_g BETWEEN 2000 AND 650000),
                    sex TEXT CHECK (sex IN ('male', 'female')),
                    figure_id TEXT,
                    body_type TEXT CHECK (body_type IN ('asthenic', 'normosthenic', 'hypersthenic')),
                    shape_id TEXT,
                    units TEXT NOT NULL DEFAULT 'metric' CHECK (units IN ('metric', 'imperial')),
                    updated_at TEXT NOT NULL,
                    change_version INTEGER NOT NULL
                );
                CREATE TABLE sponsor_profile (
                    user_id TEXT PRIMARY KEY,
                    display_name TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('insurer', 'employer', 'person')),
                    group_id TEXT NOT NULL REFERENCES sponsor_group(id),
                    avatar_id TEXT,
                    about TEXT,
                    updated_at TEXT NOT NULL,
                    change_version INTEGER NOT NULL
                );
                CREATE INDEX sponsor_profile_group ON sponsor_profile(group_id, display_name, user_id);

                CREATE TABLE goal (
                    id TEXT PRIMARY KEY,
                    recipient_id TEXT NOT NULL,
                    type_id TEXT NOT NULL,
                    form_version INTEGER NOT NULL,
                    settings TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('draft', 'proposed', 'active', 'completed', 'failed', 'withdrawn')),
                    progress INTEGER CHECK (progress BETWEEN 0 AND 100),
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    activated_at TEXT,
                    closed_at TEXT,
                    seen_by_admin INTEGER NOT NULL DEFAULT 0,
                    change_version INTEGER NOT NULL,
                    FOREIGN KEY (type_id, form_version) REFERENCES goal_type_form(type_id, version)
                );
                -- One open goal per recipient, whatever the code above it does.
                CREATE UNIQUE INDEX goal_one_open ON goal(recipient_id) WHERE state IN ('draft', 'proposed', 'active');
                CREATE INDEX goal_recipient ON goal(recipient_id, created_at);
                CREATE INDEX goal_created ON goal(created_at);
                CREATE INDEX goal_state_type ON goal(state, type_id);

                CREATE TABLE sponsorship (
                    id TEXT PRIMARY KEY,
                    goal_id TEXT NOT NULL REFERENCES goal(id),
                    recipient_id TEXT NOT NULL,
                    sponsor_id TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('proposed', 'rejected', 'accepted', 'withdrawn')),
                    reward_minor INTEGER CHECK (reward_minor > 0),
                    reward_currency TEXT,
                    reward_text TEXT,
                    reward_status TEXT CHECK (reward_status IN ('promised', 'earned', 'paid', 'forfeited')),
                    rejection TEXT CHECK (rejection IN ('counter_goal', 'ask_new_goal')),
                    suggested_type_id TEXT,
                    round INTEGER NOT NULL DEFAULT 1,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    change_version INTEGER NOT NULL,
                    UNIQUE (goal_id, sponsor_id),
                    CHECK ((reward_minor IS NULL) = (reward_currency IS NULL)),
                    CHECK ((reward_minor IS NULL) != (reward_text IS NULL))
                );
                CREATE INDEX sponsorship_sponsor ON sponsorship(sponsor_id, state, updated_at);
                CREATE INDEX sponsorship_pair ON sponsorship(recipient_id, sponsor_id);

                -- The history of offers and answers of each sponsorship, oldest first.
                CREATE TABLE offer (
                    id INTEGER PRIMARY KEY,
                    sponsorship_id TEXT NOT NULL REFERENCES sponsorship(id),
                    actor_id TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('proposal', 'revision', 'accept', 'counter_goal', 'ask_new_goal', 'withdrawal')),
                    type_id TEXT,
                    settings TEXT,
                    reward_minor INTEGER,
                    reward_currency TEXT,
                    reward_text TEXT,
                    comment TEXT,
                    created_at TEXT NOT NULL
                );
                CREATE INDEX offer_sponsorship ON offer(sponsorship_id, id);

                CREATE TABLE plan_item (
                    id TEXT PRIMARY KEY,
                    goal_id TEXT NOT NULL REFERENCES goal(id),
                    kind TEXT NOT NULL CHECK (kind IN ('workout', 'nutrition', 'tip', 'recommendation')),
                    date TEXT,
                    text TEXT NOT NULL,
                    requirement TEXT,
                    checkable INTEGER NOT NULL,
                    time_of_day TEXT,
                    done INTEGER NOT NULL DEFAULT 0,
                    done_at TEXT,
                    evidence_id TEXT,
                    position INTEGER NOT NULL,
                    created_at TEXT NOT NULL,
                    change_version INTEGER NOT NULL,
                    CHECK (kind != 'workout' OR date IS NOT NULL),
                    CHECK (checkable = 1 OR done = 0)
                );
                CREATE INDEX plan_item_goal ON plan_item(goal_id, kind, date, position);
                CREATE INDEX plan_item_version ON plan_item(goal_id, change_version);

                -- Activity feed: facts of a goal (sponsor_id NULL: every sponsor of the goal
                -- sees them) and a pair's own entries (offers, decisions, comments).
                CREATE TABLE feed_entry (
                    id INTEGER PRIMARY KEY,
                    recipient_id TEXT NOT NULL,
                    sponsor_id TEXT,
                    goal_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    actor_id TEXT NOT NULL,
                    item_id TEXT,
                    text TEXT,
                    data TEXT,
                    created_at TEXT NOT NULL
                );
                CREATE INDEX feed_entry_recipient ON feed_entry(recipient_id, id);
                CREATE INDEX feed_entry_day ON feed_entry(created_at);
                CREATE TABLE comment_like (
                    entry_id INTEGER NOT NULL REFERENCES feed_entry(id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    PRIMARY KEY (entry_id, user_id)
                ) WITHOUT ROWID;

                CREATE TABLE answer_set (
                    user_id TEXT NOT NULL,
                    questionnaire TEXT NOT NULL,
                    answers TEXT NOT NULL,
                    submitted_at TEXT NOT NULL,
                    PRIMARY KEY (user_id, questionnaire)
                ) WITHOUT ROWID;
                CREATE INDEX answer_set_submitted ON answer_set(questionnaire, submitted_at);

                CREATE TABLE activity (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    source TEXT NOT NULL,
                    external_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    start_at TEXT NOT NULL,
                    duration_s INTEGER NOT NULL,
                    distance_m INTEGER,
                    calories INTEGER,
                    imported_at TEXT NOT NULL,
                    UNIQUE (user_id, source, external_id)
                );
                CREATE INDEX activity_user_start ON activity(user_id, start_at);

                CREATE TABLE admin_action (
                    id INTEGER PRIMARY KEY,
                    admin_id TEXT NOT NULL,
                    action TEXT NOT NULL,
                    target TEXT,
                    detail TEXT,
                    at TEXT NOT NULL
                );
                """)
            try GoalsCatalogSeed.insert(db, at: Instant.format(Date()))
        }
        // What a user wrote to feeds in the last 24 hours (DailyAllowance.comments).
        migrator.registerMigration("goals-2") { db in
            try db.execute(sql: "CREATE INDEX feed_entry_text_actor ON feed_entry(actor_id, created_at) WHERE text IS NOT NULL")
        }
    }
}

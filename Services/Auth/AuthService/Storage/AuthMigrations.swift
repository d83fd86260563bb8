import GRDB

/// The auth database, forward-only.
enum AuthMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("auth-1") { db in
            try db.execute(sql: """
                CREATE TABLE user (
                    id TEXT PRIMARY KEY,
                    email TEXT UNIQUE,
                    phone TEXT UNIQUE,
                    password_hash TEXT,
                    first_name TEXT NOT NULL DEFAULT '',
                    last_name TEXT NOT NULL DEFAULT '',
                    patronymic TEXT,
                    birth_date TEXT,
                    terms_version TEXT,
                    terms_accepted_at TEXT,
                    active_role TEXT,
                    created_at TEXT NOT NULL
                );
                CREATE INDEX user_created ON user(created_at);
                CREATE TABLE user_role (
                    user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                    role TEXT NOT NULL,
                    PRIMARY KEY (user_id, role)
                );
                CREATE TABLE session (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES user(id) ON DELETE CASCADE,
                    created_at TEXT NOT NULL,
                    last_seen_at TEXT NOT NULL,
                    revoked_at TEXT,
                    revoke_reason TEXT
                );
                CREATE INDEX session_user ON session(user_id);
                CREATE TABLE refresh_token (
                    hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE,
                    created_at TEXT NOT NULL,
                    used_at TEXT
                );
                CREATE TABLE challenge (
                    nonce TEXT PRIMARY KEY,
                    difficulty INTEGER NOT NULL,
                    expires_at TEXT NOT NULL,
                    used_at TEXT
                );
                CREATE TABLE attempt (
                    key TEXT NOT NULL,
                    at REAL NOT NULL
                );
                CREATE INDEX attempt_key ON attempt(key, at);
                CREATE TABLE signing_key (
                    kid TEXT PRIMARY KEY,
                    private_key BLOB NOT NULL,
                    created_at TEXT NOT NULL,
                    retired_at TEXT
                );
                -- Security events; rows are never changed or removed (see triggers).
                CREATE TABLE audit (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    at TEXT NOT NULL,
                    action TEXT NOT NULL,
                    user_id TEXT,
                    actor_id TEXT,
                    detail TEXT NOT NULL DEFAULT '{}',
                    client TEXT
                );
                CREATE INDEX audit_user ON audit(user_id, id);
                CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
                CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
                """)
        }
    }
}

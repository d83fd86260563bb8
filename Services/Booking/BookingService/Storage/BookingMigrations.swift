import GRDB

/// The booking database, forward-only. The first migration also seeds a working park
/// (Europe/Minsk, two reverses, 10:00–22:00, 30-minute slots) that staff then adjust.
enum BookingMigrations {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("booking-1") { db in
            try db.execute(sql: """
                CREATE TABLE park (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    time_zone TEXT NOT NULL,
                    slot_minutes INTEGER NOT NULL CHECK (slot_minutes BETWEEN 5 AND 240),
                    capacity INTEGER NOT NULL CHECK (capacity BETWEEN 1 AND 100),
                    min_notice_minutes INTEGER NOT NULL CHECK (min_notice_minutes >= 0),
                    horizon_days INTEGER NOT NULL CHECK (horizon_days BETWEEN 1 AND 365),
                    max_bookings_per_day INTEGER NOT NULL CHECK (max_bookings_per_day >= 1),
                    price_minor INTEGER NOT NULL CHECK (price_minor >= 0),
                    currency TEXT NOT NULL,
                    free_cancellation_seconds INTEGER NOT NULL CHECK (free_cancellation_seconds >= 0),
                    sanction TEXT NOT NULL CHECK (sanction IN ('forfeit', 'none'))
                );
                INSERT INTO park VALUES (1, 'Europe/Minsk', 30, 1, 30, 14, 4, 2500, 'BYN', 7200, 'forfeit');
                CREATE TABLE park_hours (
                    weekday INTEGER PRIMARY KEY CHECK (weekday BETWEEN 1 AND 7),
                    open INTEGER NOT NULL,
                    close INTEGER NOT NULL,
                    CHECK (0 <= open AND open < close AND close <= 1440)
                );
                INSERT INTO park_hours VALUES (1, 600, 1320), (2, 600, 1320), (3, 600, 1320), (4, 600, 1320),
                                              (5, 600, 1320), (6, 600, 1320), (7, 600, 1320);
                CREATE TABLE park_exception (
                    date TEXT PRIMARY KEY,
                    open INTEGER,
                    close INTEGER
                );
                CREATE TABLE cable (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    active INTEGER NOT NULL DEFAULT 1
                );
                INSERT INTO cable VALUES ('reverse-1', 'Reverse 1', 1), ('reverse-2', 'Reverse 2', 1);
                CREATE TABLE package (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    sessions INTEGER NOT NULL CHECK (sessions >= 0),
                    credit_minor INTEGER NOT NULL CHECK (credit_minor >= 0),
                    price_minor INTEGER NOT NULL CHECK (price_minor > 0),
                    active INTEGER NOT NULL DEFAULT 1
                );
                INSERT INTO package VALUES ('one', '1 session', 1, 0, 2500, 1), ('five', '5 sessions', 5, 0, 11500, 1),
                                           ('ten', '10 sessions', 10, 0, 21000, 1), ('credit-50', '50 BYN balance', 0, 5000, 5000, 1);
                CREATE TABLE block (
                    id TEXT PRIMARY KEY,
                    cable_id TEXT REFERENCES cable(id),
                    start_at TEXT NOT NULL,
                    end_at TEXT NOT NULL,
                    reason TEXT NOT NULL DEFAULT '',
                    CHECK (start_at < end_at)
                );
                CREATE TABLE pass (
                    user_id TEXT PRIMARY KEY,
                    sessions INTEGER NOT NULL DEFAULT 0 CHECK (sessions >= 0),
                    balance_minor INTEGER NOT NULL DEFAULT 0 CHECK (balance_minor >= 0)
                );
                -- Every movement of a pass; the pass equals the sum of its entries.
                CREATE TABLE ledger (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id TEXT NOT NULL,
                    at TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('topup', 'booking', 'refund', 'forfeit', 'waiver')),
                    sessions_delta INTEGER NOT NULL,
                    amount_minor_delta INTEGER NOT NULL,
                    booking_id TEXT,
                    payment_id TEXT
                );
                CREATE INDEX ledger_user ON ledger(user_id, id);
                CREATE TABLE booking (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    cable_id TEXT NOT NULL REFERENCES cable(id),
                    start_at TEXT NOT NULL,
                    end_at TEXT NOT NULL,
                    local_date TEXT NOT NULL,
                    local_start TEXT NOT NULL,
                    local_end TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('booked', 'cancelled', 'late_cancelled', 'attended', 'no_show', 'cancelled_by_park')),
                    paid_with TEXT NOT NULL CHECK (paid_with IN ('session', 'balance')),
                    price_minor INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    policy_free_seconds INTEGER NOT NULL,
                    policy_sanction TEXT NOT NULL,
                    sanction TEXT,
                    created_at TEXT NOT NULL,
                    cancelled_at TEXT
                );
                CREATE INDEX booking_slot ON booking(cable_id, start_at, status);
                CREATE INDEX booking_user ON booking(user_id, start_at);
                CREATE INDEX booking_day ON booking(local_date);
                CREATE TABLE payment (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    package_id TEXT NOT NULL,
                    amount_minor INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
                    provider_ref TEXT,
                    created_at TEXT NOT NULL,
                    settled_at TEXT
                );
                """)
        }
        migrator.registerMigration("booking-2-payment-contents") { db in
            // What a payment buys is fixed when it is made, not when it settles.
            try db.execute(sql: "ALTER TABLE payment ADD COLUMN sessions INTEGER NOT NULL DEFAULT 0")
            try db.execute(sql: "ALTER TABLE payment ADD COLUMN credit_minor INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("booking-3-covering-slot-index") { db in
            // booking.create counts the places held in a slot's time on its cable; with
            // end_at in the index the count is read from the index alone, instead of one
            // table row per booking in the four hours before the slot.
            try db.execute(sql: """
                DROP INDEX booking_slot;
                CREATE INDEX booking_slot ON booking(cable_id, start_at, end_at, status);
                """)
        }
        migrator.registerMigration("booking-4-payment-expiry") { db in
            // A payment the provider never settles expires (a durable timer, see
            // PaymentExpiry): the status list gains `expired`, which needs a new table.
            try db.execute(sql: """
                CREATE TABLE payment_new (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    package_id TEXT NOT NULL,
                    amount_minor INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed', 'expired')),
                    provider_ref TEXT,
                    created_at TEXT NOT NULL,
                    settled_at TEXT,
                    sessions INTEGER NOT NULL DEFAULT 0,
                    credit_minor INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO payment_new (id, user_id, package_id, amount_minor, currency, status, provider_ref, created_at, settled_at, sessions, credit_minor)
                    SELECT id, user_id, package_id, amount_minor, currency, status, provider_ref, created_at, settled_at, sessions, credit_minor FROM payment;
                DROP TABLE payment;
                ALTER TABLE payment_new RENAME TO payment;
                """)
        }
        migrator.registerMigration("booking-4-pictures") { db in
            // A picture per cable and package: the id of an upload of booking.media.put,
            // referenced in platform_media_reference as `cable:<id>` / `package:<id>`.
            try db.execute(sql: """
                ALTER TABLE cable ADD COLUMN image_id TEXT REFERENCES platform_media(id);
                ALTER TABLE package ADD COLUMN image_id TEXT REFERENCES platform_media(id);
                """)
        }
        migrator.registerMigration("booking-5-changes") { db in
            // The changes feed (booking.changes): the version of each row's last change.
            // Rows already here get versions in rowid order, after the counter, table by
            // table, and the counter moves past them, so every version is unique. Riders'
            // feeds read their own bookings through booking_user; catalog and blocks are
            // small tables read whole: no index is added to the booking path.
            for table in ["cable", "package", "block", "booking"] {
                try db.execute(sql: """
                    ALTER TABLE \(table) ADD COLUMN change_version INTEGER NOT NULL DEFAULT 0;
                    UPDATE \(table) SET change_version = (SELECT last FROM platform_change_state) + rowid;
                    UPDATE platform_change_state SET last = last + (SELECT COALESCE(MAX(rowid), 0) FROM \(table));
                    """)
            }
        }
        migrator.registerMigration("booking-6-ever-active") { db in
            // Whether a cable or package was ever on offer: the changes feed tells riders
            // of a withdrawal only then, never of an item prepared and not yet published.
            try db.execute(sql: """
                ALTER TABLE cable ADD COLUMN ever_active INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE package ADD COLUMN ever_active INTEGER NOT NULL DEFAULT 0;
                UPDATE cable SET ever_active = active;
                UPDATE package SET ever_active = active;
                """)
        }
        migrator.registerMigration("booking-7-desk") { db in
            // The desk: ledger entries say who moved a pass and why, and gain the kinds
            // closure, adjustment, cash and correction; payments keep their idem key (a
            // key reused for another package is a conflict, also after the idempotency
            // record is pruned), may be `unclaimed` (settled after the rider's account was
            // deleted: recorded, not credited) and say who reconciled them; every staff
            // action is logged. CHECK lists change only by rebuilding a table.
            let kinds = LedgerKind.names.map { "'\($0)'" }.joined(separator: ", ")
            try db.execute(sql: """
                CREATE TABLE ledger_new (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    user_id TEXT NOT NULL,
                    at TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN (\(kinds))),
                    sessions_delta INTEGER NOT NULL,
                    amount_minor_delta INTEGER NOT NULL,
                    booking_id TEXT,
                    payment_id TEXT,
                    actor TEXT,
                    reason TEXT
                );
                INSERT INTO ledger_new (id, user_id, at, kind, sessions_delta, amount_minor_delta, booking_id, payment_id)
                    SELECT id, user_id, at, kind, sessions_delta, amount_minor_delta, booking_id, payment_id FROM ledger;
                DROP TABLE ledger;
                ALTER TABLE ledger_new RENAME TO ledger;
                CREATE INDEX ledger_user ON ledger(user_id, id);
                CREATE INDEX ledger_booking ON ledger(booking_id) WHERE booking_id IS NOT NULL;

                CREATE TABLE payment_new (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    package_id TEXT NOT NULL,
                    amount_minor INTEGER NOT NULL,
                    currency TEXT NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed', 'expired', 'unclaimed')),
                    provider_ref TEXT,
                    created_at TEXT NOT NULL,
                    settled_at TEXT,
                    sessions INTEGER NOT NULL DEFAULT 0,
                    credit_minor INTEGER NOT NULL DEFAULT 0,
                    idem_key TEXT,
                    reconciled_by TEXT,
                    reconcile_reason TEXT
                );
                INSERT INTO payment_new (id, user_id, package_id, amount_minor, currency, status, provider_ref, created_at, settled_at, sessions, credit_minor)
                    SELECT id, user_id, package_id, amount_minor, currency, status, provider_ref, created_at, settled_at, sessions, credit_minor FROM payment;
                DROP TABLE payment;
                ALTER TABLE payment_new RENAME TO payment;
                CREATE UNIQUE INDEX payment_idem ON payment(user_id, idem_key) WHERE idem_key IS NOT NULL;
                CREATE INDEX payment_status ON payment(status, created_at);
                CREATE INDEX payment_user ON payment(user_id, created_at);

                CREATE TABLE staff_action (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    at TEXT NOT NULL,
                    actor TEXT NOT NULL,
                    action TEXT NOT NULL,
                    booking_id TEXT,
                    user_id TEXT,
                    reason TEXT,
                    detail TEXT NOT NULL DEFAULT '{}'
                );
                CREATE INDEX staff_action_user ON staff_action(user_id, id);
                CREATE INDEX staff_action_booking ON staff_action(booking_id, id);

                ALTER TABLE booking ADD COLUMN booked_by TEXT;
                """)
        }
        migrator.registerMigration("booking-8-settings-version") { db in
            // Counts the park's settings changes in the database itself, so a reader can
            // tell that its snapshot predates a committed change (see `BookingState`).
            try db.execute(sql: "ALTER TABLE park ADD COLUMN settings_version INTEGER NOT NULL DEFAULT 0")
        }
    }
}

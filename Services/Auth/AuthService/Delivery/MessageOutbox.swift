import Foundation
import GRDB
import Platform

/// Auth's emails and SMS on the platform's ``DeliveryOutbox``: queued in the transaction
/// that needs them (a code, say), sent by the ``DeliveryWorker`` after commit.
enum MessageOutbox {
    /// Queues a message in the current transaction; `outbox` wakes its worker after commit.
    static func enqueue(
        _ db: Database, _ channel: OutgoingMessage.Channel, to recipient: String, subject: String = "", body: String, outbox: DeliveryOutbox
    ) throws {
        try outbox.enqueue(
            db, channel: DeliveryChannel(rawValue: channel.rawValue), to: recipient, payload: OutgoingMessage.payload(subject: subject, body: body))
    }

    /// Auth's own message table (auth-2), and its move onto `platform_delivery` (auth-6):
    /// messages still unsent are carried over with their ids, attempts and due times
    /// (those given up after ten attempts as dead letters); the table goes.
    static func migrate(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("auth-2-outbox") { db in
            try db.execute(sql: """
                CREATE TABLE message (
                    id TEXT PRIMARY KEY,
                    channel TEXT NOT NULL,
                    recipient TEXT NOT NULL,
                    subject TEXT NOT NULL DEFAULT '',
                    body TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    next_attempt_at REAL NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    sent_at TEXT,
                    last_error TEXT
                );
                CREATE INDEX message_due ON message(sent_at, next_attempt_at);
                """)
        }
    }

    /// Registered after auth's other migrations: moves unsent messages to the platform's outbox.
    static func migrateToPlatform(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("auth-6-delivery-outbox") { db in
            // The old sender parked a message it gave up on at the largest Double.
            try db.execute(sql: """
                INSERT INTO platform_delivery (id, channel, destination, payload, status, attempts, next_attempt_at, last_error, created_at)
                SELECT id, channel, recipient,
                    CASE subject WHEN '' THEN json_object('body', body) ELSE json_object('subject', subject, 'body', body) END,
                    CASE WHEN next_attempt_at > 1e14 THEN 'dead' ELSE 'pending' END,
                    attempts,
                    CASE WHEN next_attempt_at > 1e14 THEN CAST(strftime('%s', 'now') AS INTEGER) * 1000
                        ELSE CAST(next_attempt_at * 1000 AS INTEGER) END,
                    last_error, created_at
                FROM message WHERE sent_at IS NULL;
                DROP TABLE message;
                """)
        }
    }
}

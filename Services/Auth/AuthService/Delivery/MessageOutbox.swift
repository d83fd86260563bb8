import Foundation
import GRDB
import Platform

extension DeliveryChannel {
    /// Emails (auth's SMTP relay or the `file` transport).
    static let email: DeliveryChannel = "email"
    /// SMS (auth's SMS webhook or the `file` transport).
    static let sms: DeliveryChannel = "sms"
}

/// An email or SMS as auth's transports read it from a queued ``DeliveryMessage``, and
/// as the `file` transport writes it.
public struct OutgoingMessage: Sendable, Equatable, Codable {
    /// `email` or `sms`.
    public enum Channel: String, Sendable, Codable { case email, sms }

    /// Unique id; transports use it to drop duplicates (file name, Message-ID, Idempotency-Key).
    public var id: String
    public var channel: Channel
    /// An email address or an E.164 phone number.
    public var recipient: String
    /// The subject (emails).
    public var subject: String
    /// The text.
    public var body: String
    /// When it was queued.
    public var createdAt: String

    /// Creates a message.
    public init(id: String, channel: Channel, recipient: String, subject: String, body: String, createdAt: String) {
        self.id = id
        self.channel = channel
        self.recipient = recipient
        self.subject = subject
        self.body = body
        self.createdAt = createdAt
    }

    /// Auth's reading of a queued message: its payload is `{"subject", "body"}`.
    init(_ message: DeliveryMessage) {
        self.init(
            id: message.id, channel: Channel(rawValue: message.channel.rawValue) ?? .email, recipient: message.destination,
            subject: message.payload["subject"]?.stringValue ?? "", body: message.payload["body"]?.stringValue ?? "",
            createdAt: message.createdAt)
    }
}

/// Auth's emails and SMS on the platform's ``DeliveryOutbox``: queued in the transaction
/// that needs them (a code, say), sent by the ``DeliveryWorker`` after commit.
enum MessageOutbox {
    /// Queues a message in the current transaction; `outbox` wakes its worker after commit.
    static func enqueue(
        _ db: Database, _ channel: OutgoingMessage.Channel, to recipient: String, subject: String = "", body: String, outbox: DeliveryOutbox
    ) throws {
        let payload: JSONValue = subject.isEmpty ? ["body": .string(body)] : ["subject": .string(subject), "body": .string(body)]
        try outbox.enqueue(db, channel: DeliveryChannel(rawValue: channel.rawValue), to: recipient, payload: payload)
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

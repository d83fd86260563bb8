import Foundation
import GRDB
import Platform

/// An email or SMS waiting to be sent.
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
}

/// The delivery outbox in auth's database: a message is queued in the same transaction
/// as the change that needs it (a code, say), and the ``MessageSender`` sends it after
/// commit. A crash between commit and send only delays it; a crash between send and
/// marking it sent resends it with the same id, which the transports use to drop the
/// duplicate.
enum MessageOutbox {
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

    /// Queues a message in the current transaction and wakes the sender after commit.
    static func enqueue(
        _ db: Database, _ channel: OutgoingMessage.Channel, to recipient: String, subject: String = "", body: String,
        wake: MessageSender.Wake?
    ) throws {
        let now = Date()
        try db.execute(
            sql: "INSERT INTO message (id, channel, recipient, subject, body, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [Identifiers.make("msg"), channel.rawValue, recipient, subject, body, Instant.format(now), now.timeIntervalSince1970])
        if let wake { db.afterNextTransaction { _ in wake.signal() } }
    }

    /// Messages due now, oldest first.
    static func due(_ db: Database, limit: Int, now: Date = Date()) throws -> [OutgoingMessage] {
        try Row.fetchAll(
            db,
            sql: "SELECT * FROM message WHERE sent_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?",
            arguments: [now.timeIntervalSince1970, limit]
        ).map { row in
            OutgoingMessage(
                id: row["id"], channel: OutgoingMessage.Channel(rawValue: row["channel"]) ?? .email, recipient: row["recipient"],
                subject: row["subject"], body: row["body"], createdAt: row["created_at"])
        }
    }
}

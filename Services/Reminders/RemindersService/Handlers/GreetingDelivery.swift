import Foundation
import GRDB
import Platform

/// Greetings a user has the service send for them (`reminders.greetings.schedule` with a
/// `channel`): the message goes to someone else's address by email or SMS at each
/// occurrence's own alert. Addresses are not the user's own and are not confirmed, so
/// sending is bounded: a greeting repeats at most yearly, each reminder sends at most once
/// in 300 days, and a user at most ``perUserPerDay`` greetings, an address (in lower case)
/// at most ``perAddressPerDay`` (from every user), in any 24 hours; beyond, it is not sent
/// (the user is still reminded: `reminders.due` carries the greeting). Every send is kept in
/// `greeting_sent` with its outbox id, so a deleted reminder or account takes back what is
/// still queued.
enum GreetingDelivery {
    static let perUserPerDay = 10
    static let perAddressPerDay = 3

    /// Why `content` cannot be saved, when its greeting is to be sent: `(field, reason)`.
    static func problem(of content: ReminderContent) -> (field: String, reason: String)? {
        guard content.greeting?.channel != nil else { return nil }
        if let rule = content.timing.rule,
            rule.frequency != .yearly || !rule.byDay.isEmpty || !rule.byMonthDay.isEmpty || !rule.byMonth.isEmpty || !rule.bySetPos.isEmpty
        {
            return ("rrule", "a greeting sent by email or SMS repeats at most once a year (FREQ=YEARLY without BY parts)")
        }
        if !content.alerts.leadMinutes.contains(0) {
            return ("alerts", "a greeting sent by email or SMS is sent at the occurrence: keep the alert at 0")
        }
        return nil
    }

    /// Queues the greeting of `row` for the occurrence of `point` when it is due now: at the
    /// occurrence itself (lead 0), within the bounds above.
    static func send(_ db: Database, _ row: ReminderRow, point: AlertPoint, alertID: String, clock: UserClock, now: Date) throws {
        guard let greeting = row.content.greeting, let channel = greeting.channel, let address = greeting.address,
            case .lead(let minutes) = point.kind, minutes == 0, problem(of: row.content) == nil
        else { return }
        let nowMs = Instant.milliseconds(now)
        let dayAgo = nowMs - 86_400_000
        // Counted by the address as a mailbox sees it: `Victim@Ex.com` is `victim@ex.com`.
        let key = addressKey(address)
        let byUser = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM greeting_sent WHERE user_id = ? AND sent_ms > ?"), arguments: [row.userID, dayAgo]) ?? 0
        let byAddress = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM greeting_sent WHERE address = ? AND sent_ms > ?"), arguments: [key, dayAgo]) ?? 0
        // Once a year per reminder, whatever its date, time or zone were changed to since.
        let recent = try Int.fetchOne(
            db.cachedStatement(sql: "SELECT COUNT(*) FROM greeting_sent WHERE user_id = ? AND reminder_id = ? AND sent_ms > ?"),
            arguments: [row.userID, row.id, nowMs - Self.oncePer]) ?? 0
        guard byUser < perUserPerDay, byAddress < perAddressPerDay, recent == 0 else { return }
        let id = "grt.\(alertID)"
        try db.cachedStatement(sql: """
            INSERT INTO greeting_sent (id, user_id, reminder_id, address, sent_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """).execute(arguments: [id, row.userID, row.id, key, nowMs])
        guard db.changesCount == 1 else { return }
        // The sends of deleted accounts count for their addresses for a day, then go.
        try db.cachedStatement(sql: "DELETE FROM greeting_sent WHERE id IN (SELECT id FROM greeting_sent WHERE user_id LIKE 'deleted:%' AND sent_ms < ? LIMIT 8)")
            .execute(arguments: [dayAgo])
        switch channel {
        case "email":
            let subject = clock.language == "ru" ? "Поздравление для \(greeting.recipientName)" : "Greetings for \(greeting.recipientName)"
            try Notifier.outbox.enqueue(db, id: id, channel: .email, to: address, payload: OutgoingMessage.payload(subject: subject, body: greeting.message))
        case "sms":
            try Notifier.outbox.enqueue(db, id: id, channel: .sms, to: address, payload: OutgoingMessage.payload(body: greeting.message))
        default:
            return
        }
    }

    /// Takes back what a reminder (deleted or purged) or a whole account still has queued.
    static func withdraw(_ db: Database, user: String, reminder: String? = nil) throws {
        try db.cachedStatement(sql: """
            DELETE FROM platform_delivery WHERE status = 'pending'
              AND id IN (SELECT id FROM greeting_sent WHERE user_id = ? AND (? IS NULL OR reminder_id = ?))
            """).execute(arguments: [user, reminder, reminder])
    }

    /// An account's deletion: its queued greetings go; what was sent keeps counting for its
    /// address for the rest of the day (else deleting an account would make room for more
    /// to the same address), under no user, and then goes.
    static func forget(_ db: Database, user: String) throws {
        try withdraw(db, user: user)
        try db.cachedStatement(sql: "UPDATE greeting_sent SET user_id = 'deleted:' || id WHERE user_id = ?").execute(arguments: [user])
    }

    /// A reminder sends at most once in this long (a yearly greeting once a year).
    static let oncePer: Int64 = 300 * 86_400_000

    /// The address as limits count it: an email address in lower case (mailboxes almost
    /// never tell case apart), a phone number as given (E.164 is already one form).
    static func addressKey(_ address: String) -> String {
        address.contains("@") ? address.lowercased() : address
    }

    static func migrate(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("reminders-5-greetings-sent") { db in
            try db.execute(sql: """
                CREATE TABLE greeting_sent (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL,
                    reminder_id TEXT NOT NULL,
                    address TEXT NOT NULL,
                    sent_ms INTEGER NOT NULL
                );
                CREATE INDEX greeting_sent_user ON greeting_sent(user_id, sent_ms);
                CREATE INDEX greeting_sent_address ON greeting_sent(address, sent_ms);
                """)
        }
    }
}

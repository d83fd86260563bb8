import Foundation
import GRDB

/// Remembers the reply of each write that carried an `idem` key, in the same
/// transaction as the write, so a retry returns the first reply and changes nothing.
///
/// Keys are scoped to the caller (the user, or `public` for anonymous requests), so one
/// client cannot read another's reply by guessing its key.
public enum IdempotencyStore {
    /// What a lookup found.
    public enum Lookup: Equatable, Sendable {
        /// The key is new: run the write.
        case new
        /// The same request ran before: answer with this reply data.
        case replay(Data)
        /// The key was used with another operation or body.
        case conflict
    }

    /// The stored outcome for (scope, key), compared with the current request's hash.
    public static func lookup(_ db: Database, scope: String, key: String, op: String, requestHash: String) throws -> Lookup {
        let found = try db.cachedStatement(sql: "SELECT op, request_hash, reply FROM platform_idempotency WHERE scope = ? AND key = ?")
            .firstRow(scope, key) { columns -> Lookup in
                guard columns.string(0) == op, columns.string(1) == requestHash else { return .conflict }
                return .replay(columns.utf8(2).map { Data($0) } ?? Data())
            }
        return found ?? .new
    }

    /// Stores the reply of a write that just ran, inside its transaction.
    public static func save(_ db: Database, scope: String, key: String, op: String, requestHash: String, reply: Data, at date: Date = Date()) throws {
        try db.cachedStatement(
            sql: "INSERT INTO platform_idempotency (scope, key, op, request_hash, reply, created_at) VALUES (?, ?, ?, ?, ?, ?)"
        ).run(scope, key, op, requestHash, UTF8Text(reply), Instant.format(date))
    }

    /// Forgets what a deleted account left in stored replies: its own keys, and every reply
    /// that names its id (another user's retry must not bring its data back). A scan of
    /// the week's replies, run once per deletion.
    public static func forget(_ db: Database, user: String) throws {
        try db.execute(sql: "DELETE FROM platform_idempotency WHERE scope = ?", arguments: ["user:\(user)"])
        try db.execute(sql: "DELETE FROM platform_idempotency WHERE instr(reply, ?) > 0", arguments: ["\"\(user)\""])
    }

    /// Deletes keys older than `age`; returns how many were removed.
    ///
    /// Rows are appended in the order they are written, so the oldest keys have the lowest
    /// rowids: keys are deleted from the low end, 1,000 at a time, until the oldest left
    /// is younger than `age`. (A key stamped out of order by a clock step back is kept
    /// until the keys before it go.)
    @discardableResult
    public static func prune(_ db: Database, olderThan age: TimeInterval, now: Date = Date()) throws -> Int {
        let cutoff = Instant.format(now.addingTimeInterval(-age))
        var removed = 0
        while true {
            try db.execute(
                sql: """
                    DELETE FROM platform_idempotency
                    WHERE rowid IN (SELECT rowid FROM platform_idempotency ORDER BY rowid LIMIT 1000) AND created_at < ?
                    """,
                arguments: [cutoff])
            let changes = db.changesCount
            removed += changes
            if changes < 1000 { return removed }
        }
    }
}

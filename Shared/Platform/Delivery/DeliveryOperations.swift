import Foundation
import GRDB

/// The dead-letter operations of a service that sends messages, for admins:
/// `<service>.delivery.dead.list` and `<service>.delivery.retry`.
///
/// Lists show who a message was for only masked, and never its payload (which may hold
/// a code).
public enum DeliveryOperations {
    /// Who may call them: admins.
    public static let admin = AuthRule.anyRole(["admin"])

    /// The operations for `outbox`'s service.
    public static func operations(outbox: DeliveryOutbox) -> [ServiceOperation] {
        [deadList(outbox), retry(outbox)]
    }

    struct ListQuery: Codable, Sendable {
        var limit: Int?
        var cursor: String?
    }

    struct DeadLetter: Codable, Sendable {
        var id: String
        var channel: String
        var destination: String
        var attempts: Int
        var lastError: String?
        var createdAt: String
        var deadAt: String
    }

    struct Page: Codable, Sendable {
        var items: [DeadLetter]
        var next: String?
    }

    static let deadLetterSchema = JSONSchema.object(
        [
            "id": .string(), "channel": .string(maxLength: 50),
            "destination": JSONSchema.string().described("masked: a***@example.com, +7916***67"),
            "attempts": .integer(minimum: 0), "lastError": JSONSchema.string().nullable().described("the provider's last answer"),
            "createdAt": .string(format: .dateTime), "deadAt": JSONSchema.string(format: .dateTime).described("when it was given up"),
        ], required: ["id", "channel", "destination", "attempts", "createdAt", "deadAt"])

    static func deadList(_ outbox: DeliveryOutbox) -> ServiceOperation {
        .read(
            "\(outbox.service).delivery.dead.list",
            summary: "Messages given up (too many failed attempts, or refused for good), most recent first; admins only. Destinations are masked and texts never shown.",
            auth: admin,
            request: .object(["limit": .integer(minimum: 1, maximum: 200), "cursor": .string(maxLength: 300)]),
            response: .object(["items": .array(of: deadLetterSchema, maxItems: 200), "next": JSONSchema.string().nullable()], required: ["items"])
        ) { (_, input: ListQuery, db: Database) in
            let limit = input.limit ?? 50
            var condition = ""
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let cursor = input.cursor {
                guard let bytes = Base64URL.decode(cursor), let text = String(bytes: bytes, encoding: .utf8),
                    let separator = text.firstIndex(of: "|"), let at = Int64(text[..<separator])
                else { throw ServiceError.invalid("cursor", "not a cursor from this list") }
                condition = "AND (next_attempt_at, id) < (?, ?)"
                arguments += [at, String(text[text.index(after: separator)...])]
            }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, channel, destination, attempts, last_error, created_at, next_attempt_at FROM platform_delivery
                    WHERE status = 'dead' \(condition) ORDER BY next_attempt_at DESC, id DESC LIMIT ?
                    """,
                arguments: StatementArguments(arguments + [limit + 1]) ?? [])
            let items = rows.prefix(limit).map { row in
                DeadLetter(
                    id: row["id"], channel: row["channel"], destination: DestinationMask.apply(row["destination"]), attempts: row["attempts"],
                    lastError: row["last_error"], createdAt: row["created_at"], deadAt: Instant.format(epochMilliseconds: row["next_attempt_at"]))
            }
            let next = rows.count > limit ? rows[limit - 1] : nil
            return Page(
                items: Array(items),
                next: next.map { Base64URL.encode(Array("\($0["next_attempt_at"] as Int64)|\($0["id"] as String)".utf8)) })
        }
    }

    struct RetryRequest: Codable, Sendable {
        var id: String
    }

    struct Retried: Codable, Sendable {
        var id: String
        var status: DeliveryStatus
        var attempts: Int
        var nextAttemptAt: String
    }

    static func retry(_ outbox: DeliveryOutbox) -> ServiceOperation {
        .write(
            "\(outbox.service).delivery.retry",
            summary: "Sends a dead message again, with a fresh round of attempts (a pending one is made due now); admins only. "
                + "A sent message is a conflict (`already_sent`); an unknown id, not_found.",
            auth: admin,
            request: .object(["id": .string(minLength: 1, maxLength: 200)], required: ["id"]),
            response: .object(
                [
                    "id": .string(), "status": .oneOf([DeliveryStatus.pending.rawValue]), "attempts": .integer(minimum: 0),
                    "nextAttemptAt": .string(format: .dateTime),
                ], required: ["id", "status", "attempts", "nextAttemptAt"])
        ) { (context, input: RetryRequest, db: Database) in
            guard let status = try DeliveryStatus.fetchOne(db, sql: "SELECT status FROM platform_delivery WHERE id = ?", arguments: [input.id])
            else { throw ServiceError.notFound("no such message") }
            guard status != .sent else { throw ServiceError.conflict("the message was already sent", reason: "already_sent") }
            let now = Instant.milliseconds(Date())
            // A dead message starts a new round of attempts; a pending one keeps its count.
            try db.execute(
                sql: """
                    UPDATE platform_delivery SET status = 'pending', next_attempt_at = ?,
                    attempts = CASE status WHEN 'dead' THEN 0 ELSE attempts END WHERE id = ?
                    """,
                arguments: [now, input.id])
            outbox.wakeAfterCommit(db)
            let attempts = try Int.fetchOne(db, sql: "SELECT attempts FROM platform_delivery WHERE id = ?", arguments: [input.id]) ?? 0
            context.logger.notice("dead letter retried", metadata: ["message": "\(input.id)", "from": "\(status.rawValue)"])
            return Retried(id: input.id, status: .pending, attempts: attempts, nextAttemptAt: Instant.format(epochMilliseconds: now))
        }
    }
}

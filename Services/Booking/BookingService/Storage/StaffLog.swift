import Foundation
import GRDB
import Platform

/// Who did what at the desk: every staff action (a booking made for a rider, a mark and
/// its correction, a sanction, a cancellation, a pass credited or debited, a period
/// blocked or freed, a payment reconciled) with the staff member, the rider and booking
/// it concerned, and the reason given. Written in the action's own transaction.
enum StaffLog {
    enum Action: String, Sendable, CaseIterable {
        case booked = "booking.booked"
        case marked = "booking.marked"
        case markCorrected = "booking.mark_corrected"
        case sanction = "booking.sanction"
        case cancelled = "booking.cancelled_by_park"
        case passAdjusted = "pass.adjusted"
        case blockAdded = "block.added"
        case blockRemoved = "block.removed"
        case paymentReconciled = "payment.reconciled"
    }

    static func record(
        _ db: Database, _ action: Action, actor: String, booking: String? = nil, user: String? = nil, reason: String?,
        detail: JSONValue = .object([:]), at: String = Instant.format(Date())
    ) throws {
        try db.execute(
            sql: "INSERT INTO staff_action (at, actor, action, booking_id, user_id, reason, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [at, actor, action.rawValue, booking, user, reason, String(decoding: detail.serialized, as: UTF8.self)])
    }

    struct Entry: Codable, Sendable {
        var id: Int64
        var at: String
        var actor: String
        var action: String
        var booking: String?
        var userId: String?
        var reason: String?
        var detail: JSONValue
    }

    static let entrySchema = JSONSchema.object(
        [
            "id": .integer(minimum: 1), "at": .string(format: .dateTime), "actor": .string().described("the staff member's user id"),
            "action": .oneOf(Action.allCases.map(\.rawValue)), "booking": JSONSchema.string().nullable(),
            "userId": JSONSchema.string().nullable().described("the rider"), "reason": JSONSchema.string().nullable(),
            "detail": .object([:], additional: .any).described("what changed, by action"),
        ], required: ["id", "at", "actor", "action", "detail"])

    /// Entries newest first, for a rider or a booking or all, after the `before` id.
    static func list(_ db: Database, user: String?, booking: String?, before: Int64?, limit: Int) throws -> [Entry] {
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let user { conditions.append("user_id = ?"); arguments.append(user) }
        if let booking { conditions.append("booking_id = ?"); arguments.append(booking) }
        if let before { conditions.append("id < ?"); arguments.append(before) }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try Row.fetchAll(
            db, sql: "SELECT * FROM staff_action \(whereClause) ORDER BY id DESC LIMIT ?", arguments: StatementArguments(arguments + [limit]) ?? []
        ).map { row in
            Entry(
                id: row["id"], at: row["at"], actor: row["actor"], action: row["action"], booking: row["booking_id"], userId: row["user_id"],
                reason: row["reason"], detail: (try? JSONParser.parse(Data((row["detail"] as String).utf8))) ?? .object([:]))
        }
    }
}

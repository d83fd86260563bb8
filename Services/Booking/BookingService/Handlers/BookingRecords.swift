import Foundation
import GRDB
import Platform

/// A booking as riders and staff see it.
struct BookingView: Codable, Sendable, Equatable {
    var id: String
    var userId: String
    var cable: String
    var date: String
    var localStart: String
    var localEnd: String
    var start: String
    var end: String
    var status: String
    var paidWith: String
    var price: Money
    /// `forfeit`, `none` or `waived` once a sanction was decided.
    var sanction: String?
    /// The cancellation rule copied when the booking was made.
    var freeCancellationUntil: String
    var createdAt: String
    var cancelledAt: String?

    init(
        id: String, userId: String, cable: String, date: String, localStart: String, localEnd: String, start: String, end: String,
        status: String, paidWith: String, price: Money, sanction: String?, freeCancellationUntil: String, createdAt: String,
        cancelledAt: String?
    ) {
        self.id = id
        self.userId = userId
        self.cable = cable
        self.date = date
        self.localStart = localStart
        self.localEnd = localEnd
        self.start = start
        self.end = end
        self.status = status
        self.paidWith = paidWith
        self.price = price
        self.sanction = sanction
        self.freeCancellationUntil = freeCancellationUntil
        self.createdAt = createdAt
        self.cancelledAt = cancelledAt
    }

    /// Encoded by hand with the fast serializer: bookings are the hottest replies.
    func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    var json: JSONValue {
        [
            "id": .string(id), "userId": .string(userId), "cable": .string(cable), "date": .string(date),
            "localStart": .string(localStart), "localEnd": .string(localEnd), "start": .string(start), "end": .string(end),
            "status": .string(status), "paidWith": .string(paidWith),
            "price": price.json,
            "sanction": sanction.map { .string($0) } ?? .null, "freeCancellationUntil": .string(freeCancellationUntil),
            "createdAt": .string(createdAt), "cancelledAt": cancelledAt.map { .string($0) } ?? .null,
        ]
    }

    init(row: Row) {
        id = row["id"]
        userId = row["user_id"]
        cable = row["cable_id"]
        date = row["local_date"]
        localStart = row["local_start"]
        localEnd = row["local_end"]
        start = row["start_at"]
        end = row["end_at"]
        status = row["status"]
        paidWith = row["paid_with"]
        price = Money(minor: row["price_minor"], currency: row["currency"])
        sanction = row["sanction"]
        let startDate = Instant.parse(row["start_at"]) ?? Date()
        freeCancellationUntil = Instant.format(startDate.addingTimeInterval(-TimeInterval(row["policy_free_seconds"] as Int64)))
        createdAt = row["created_at"]
        cancelledAt = row["cancelled_at"]
    }

    static func load(_ db: Database, id: String) throws -> BookingView? {
        try Row.fetchOne(db, sql: "SELECT * FROM booking WHERE id = ?", arguments: [id]).map(BookingView.init(row:))
    }

    /// The members of a booking on the wire; ``json`` writes every one (`null` when unset).
    static let schemaProperties: [String: JSONSchema] = [
        "id": .string(), "userId": .string().described("`deleted` once the rider's account was deleted"), "cable": .string(),
        "date": .string(format: .date), "localStart": .string(format: .time), "localEnd": .string(format: .time),
        "start": .string(format: .dateTime), "end": .string(format: .dateTime),
        "status": .oneOf(["booked", "cancelled", "late_cancelled", "attended", "no_show", "cancelled_by_park"]),
        "paidWith": .oneOf(["session", "balance"]), "price": Money.schema,
        "sanction": JSONSchema.oneOf(["forfeit", "none", "waived"]).nullable(),
        "freeCancellationUntil": .string(format: .dateTime).described("cancelling strictly before this instant is free"),
        "createdAt": .string(format: .dateTime), "cancelledAt": JSONSchema.string(format: .dateTime).nullable(),
    ]

    static let schema = JSONSchema.object(schemaProperties, required: Array(schemaProperties.keys))

    /// A booking as staff see it: with the rider's name and phone from auth.
    static let staffSchema = JSONSchema.object(
        schemaProperties.merging([
            "rider": .object(
                ["name": .string().described("`unknown` when auth does not know the rider"), "phone": JSONSchema.string(format: .e164).nullable()],
                required: ["name", "phone"])
        ]) { first, _ in first },
        required: Array(schemaProperties.keys) + ["rider"])

    /// The event payload of a booking.
    var eventData: JSONValue {
        [
            "bookingId": .string(id), "userId": .string(userId), "cable": .string(cable), "start": .string(start), "end": .string(end),
            "date": .string(date), "localStart": .string(localStart), "status": .string(status),
        ]
    }
}

/// A rider's pass: prepaid sessions and a money balance, kept equal to its ledger.
enum PassLedger {
    /// Adds a ledger entry and applies it to the pass in the same transaction. The pass's
    /// CHECK constraints keep both amounts from going negative.
    static func post(
        _ db: Database, user: String, kind: String, sessions: Int64, amount: Int64, booking: String? = nil, payment: String? = nil
    ) throws {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO pass (user_id) VALUES (?)").execute(arguments: [user])
        try db.cachedStatement(sql: "UPDATE pass SET sessions = sessions + ?, balance_minor = balance_minor + ? WHERE user_id = ?")
            .execute(arguments: [sessions, amount, user])
        try db.cachedStatement(
            sql: """
                INSERT INTO ledger (user_id, at, kind, sessions_delta, amount_minor_delta, booking_id, payment_id)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [user, Instant.format(Date()), kind, sessions, amount, booking, payment])
    }

    /// Gives back what a booking took (timely cancellation, waiver, park cancellation).
    static func refund(_ db: Database, _ booking: BookingView, kind: String = "refund") throws {
        if booking.paidWith == "session" {
            try post(db, user: booking.userId, kind: kind, sessions: 1, amount: 0, booking: booking.id)
        } else {
            try post(db, user: booking.userId, kind: kind, sessions: 0, amount: booking.price.minor, booking: booking.id)
        }
    }
}

/// Keyset cursors for paged lists: opaque to clients.
enum PageCursor {
    static func encode(_ key: String, _ id: String) -> String { Base64URL.encode(Array("\(key)|\(id)".utf8)) }

    static func decode(_ cursor: String) throws -> (key: String, id: String) {
        guard let bytes = Base64URL.decode(cursor), let text = String(bytes: bytes, encoding: .utf8),
            let bar = text.firstIndex(of: "|")
        else { throw ServiceError.invalid("cursor", "not a cursor from this list") }
        return (String(text[..<bar]), String(text[text.index(after: bar)...]))
    }
}

import Foundation
import GRDB
import Platform

/// A booking as riders and staff see it.
struct BookingView: Codable, Sendable, Equatable, JSONWritable {
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

    /// The reply's bytes, written directly (keys sorted, as ``json`` serializes): a booking
    /// is encoded for every create, and with `idem` inside the write transaction.
    func writeJSON(to output: inout [UInt8]) {
        var object = JSONObjectWriter(taking: &output)
        object.field("cable", cable)
        object.field("cancelledAt", cancelledAt)
        object.field("createdAt", createdAt)
        object.field("date", date)
        object.field("end", end)
        object.field("freeCancellationUntil", freeCancellationUntil)
        object.field("id", id)
        object.field("localEnd", localEnd)
        object.field("localStart", localStart)
        object.field("paidWith", paidWith)
        object.field("price", price)
        object.field("sanction", sanction)
        object.field("start", start)
        object.field("status", status)
        object.field("userId", userId)
        object.finish(returningTo: &output)
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
        price = Money(minor: row["price_minor"], currency: Currency(stored: row["currency"]))
        sanction = row["sanction"]
        let startDate = Instant.parse(row["start_at"]) ?? Date()
        freeCancellationUntil = Instant.format(startDate.addingTimeInterval(-TimeInterval(row["policy_free_seconds"] as Int64)))
        createdAt = row["created_at"]
        cancelledAt = row["cancelled_at"]
    }

    static func load(_ db: Database, id: String) throws -> BookingView? {
        try Row.fetchOne(db, sql: "SELECT * FROM booking WHERE id = ?", arguments: [id]).map(BookingView.init(row:))
    }

    static let schema = JSONSchema.object(properties, required: required)

    /// A booking as staff see it: with the rider's name and phone (from auth).
    static let staffSchema = JSONSchema.object(
        properties.merging([
            "rider": .object(["name": .string(), "phone": JSONSchema.string(format: .e164).nullable()], required: ["name"])
        ]) { _, new in new }, required: required + ["rider"])

    private static let required = ["id", "userId", "cable", "date", "localStart", "localEnd", "start", "end", "status", "paidWith", "price", "freeCancellationUntil", "createdAt"]

    private static let properties: [String: JSONSchema] = [
        "id": .string(), "userId": .string(), "cable": .string(), "date": .string(format: .date), "localStart": .string(format: .time),
        "localEnd": .string(format: .time), "start": .string(format: .dateTime), "end": .string(format: .dateTime),
        "status": .oneOf(BookingStatus.allCases.map(\.rawValue)),
        "paidWith": .oneOf(["session", "balance"]), "price": Money.schema,
        "sanction": JSONSchema.oneOf(["forfeit", "none", "waived"]).nullable(),
        "freeCancellationUntil": .string(format: .dateTime).described("cancelling strictly before this instant is free"),
        "createdAt": .string(format: .dateTime), "cancelledAt": JSONSchema.string(format: .dateTime).nullable(),
    ]

    /// The event payload of a booking.
    /// The event payload of a booking as bytes (the same members as ``eventData``, sorted).
    var eventBytes: RawJSON {
        var object = JSONObjectWriter(capacity: 320)
        object.field("bookingId", id)
        object.field("cable", cable)
        object.field("date", date)
        object.field("end", end)
        object.field("localStart", localStart)
        object.field("start", start)
        object.field("status", status)
        object.field("userId", userId)
        var output: [UInt8] = []
        object.finish(into: &output)
        return RawJSON(Data(output))
    }

    var eventData: JSONValue {
        [
            "bookingId": .string(id), "userId": .string(userId), "cable": .string(cable), "start": .string(start), "end": .string(end),
            "date": .string(date), "localStart": .string(localStart), "status": .string(status),
        ]
    }
}

/// The rider id bookings, ledger entries and payments keep once their rider's account
/// is deleted (`auth.user.deleted`).
enum DeletedRider {
    static let id = "deleted"
}

/// Why a pass moved: the `kind` of a ledger entry.
enum LedgerKind: String, Sendable, CaseIterable {
    /// A settled top-up.
    case topup
    /// A booking took a session or the price.
    case booking
    /// A cancellation in time or by the park gave it back.
    case refund
    /// A late cancellation or no-show kept it (a marker: nothing moves).
    case forfeit
    /// Staff waived a sanction: it came back.
    case waiver
    /// The rider's account was deleted: what was left on the pass is closed out.
    case closure
    /// Staff credited or debited the pass by hand, with a reason.
    case adjustment
    /// Cash paid at the desk for a booking, into the balance the booking then takes.
    case cash
    /// Staff corrected a mark (attended or no-show) and what it returned.
    case correction

    static var names: [String] { allCases.map(\.rawValue) }
}

/// A rider's pass: prepaid sessions and a money balance, kept equal to its ledger.
enum PassLedger {
    /// Adds a ledger entry and applies it to the pass in the same transaction. The pass's
    /// CHECK constraints keep both amounts from going negative. `actor` is the staff member
    /// who moved it (none for the rider's own actions), `reason` their words.
    ///
    /// A deleted rider's pass was closed with its account (a `closure` entry): nothing is
    /// ever posted for ``DeletedRider``, so no pass is created or credited for an
    /// anonymous id; what staff do later to such a booking changes its status only. Nor
    /// for the account's own id once its deletion was applied (``DeletedUsers``): staff
    /// who found the rider in auth just before get `not_found`.
    static func post(
        _ db: Database, user: String, kind: LedgerKind, sessions: Int64, amount: Int64, booking: String? = nil, payment: String? = nil,
        at: String = Instant.format(Date()), passExists: Bool = false, actor: String? = nil, reason: String? = nil
    ) throws {
        guard user != DeletedRider.id else { return }
        if !passExists, try DeletedUsers.contains(db, user: user) { throw ServiceError.notFound("no such rider") }
        // A caller that has just read the pass knows it exists and saves a statement.
        if !passExists {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO pass (user_id) VALUES (?)").run(user)
        }
        try db.cachedStatement(sql: "UPDATE pass SET sessions = sessions + ?, balance_minor = balance_minor + ? WHERE user_id = ?")
            .run(sessions, amount, user)
        try db.cachedStatement(
            sql: """
                INSERT INTO ledger (user_id, at, kind, sessions_delta, amount_minor_delta, booking_id, payment_id, actor, reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).run(user, at, kind.rawValue, sessions, amount, booking, payment, actor, reason)
    }

    /// What a booking took, as (sessions, amount): one session, or its price.
    static func cost(of booking: BookingView) -> (sessions: Int64, amount: Int64) {
        booking.paidWith == PaymentMethod.session.rawValue ? (1, 0) : (0, booking.price.minor)
    }

    /// Gives back what a booking took (timely cancellation, waiver, park cancellation).
    static func refund(
        _ db: Database, _ booking: BookingView, kind: LedgerKind = .refund, at: String = Instant.format(Date()), actor: String? = nil,
        reason: String? = nil
    ) throws {
        let cost = cost(of: booking)
        try post(
            db, user: booking.userId, kind: kind, sessions: cost.sessions, amount: cost.amount, booking: booking.id, at: at, actor: actor,
            reason: reason)
    }

    /// Takes back what was given back for a booking (a sanction applied after a waiver, a
    /// no-show corrected to attended), or throws `conflict` `already_spent` when the pass no
    /// longer holds it.
    static func takeBack(_ db: Database, _ booking: BookingView, kind: LedgerKind, actor: String?, reason: String?) throws {
        guard booking.userId != DeletedRider.id else { return }
        let cost = cost(of: booking)
        let pass = try Row.fetchOne(db, sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?", arguments: [booking.userId])
        guard (pass?["sessions"] as Int64? ?? 0) >= cost.sessions, (pass?["balance_minor"] as Int64? ?? 0) >= cost.amount else {
            throw ServiceError.conflict("the rider's pass no longer holds what was returned", reason: "already_spent")
        }
        try post(db, user: booking.userId, kind: kind, sessions: -cost.sessions, amount: -cost.amount, booking: booking.id, actor: actor, reason: reason)
    }

    /// Closes a pass: an entry taking out whatever is left, so the pass is zero and equal
    /// to its ledger (the rider's account is being deleted).
    static func close(_ db: Database, user: String, at: String) throws {
        guard let pass = try Row.fetchOne(db, sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?", arguments: [user]) else { return }
        let sessions: Int64 = pass["sessions"], balance: Int64 = pass["balance_minor"]
        if sessions != 0 || balance != 0 {
            try post(db, user: user, kind: .closure, sessions: -sessions, amount: -balance, at: at, passExists: true, reason: "account deleted")
        }
    }
}

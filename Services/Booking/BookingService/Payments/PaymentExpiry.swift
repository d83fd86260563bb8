import Foundation
import GRDB
import Platform

/// A top-up the provider never settles expires: when the payment is recorded, a durable
/// timer is set for `paymentExpirySeconds` later; when it fires and the payment is still
/// pending, the payment becomes `expired` and `booking.payment.expired` is published. A
/// payment that settles first cancels its timer. A provider's success that arrives after
/// expiry still credits the pass (the rider's money moved); a late failure changes nothing.
enum PaymentExpiry {
    static let timerKind = "booking.payment.expire"

    /// Sets the payment's timer, in the transaction that records it.
    static func schedule(_ db: Database, payment: String, createdAt: Date, after seconds: Int) throws {
        try DurableTimers.schedule(db, kind: timerKind, at: createdAt.addingTimeInterval(TimeInterval(seconds)), key: payment)
    }

    /// Removes the payment's timer, in the transaction that settles it.
    static func cancel(_ db: Database, payment: String) throws {
        try DurableTimers.cancel(db, kind: timerKind, key: payment)
    }

    static let event = EventDescription(
        "booking.payment.expired", summary: "A top-up the provider did not settle in time expired; nothing was credited.",
        data: .object(
            ["userId": .string(), "payment": .string(), "package": .string(), "late": .boolean], required: ["userId", "payment", "package"]))

    /// The timer's work.
    static let handler = TimerHandler(kind: timerKind) { db, timer in
        guard let payment = timer.key,
            let row = try Row.fetchOne(db, sql: "SELECT user_id, package_id, status FROM payment WHERE id = ?", arguments: [payment]),
            row["status"] as String == "pending"
        else { return }
        try db.execute(
            sql: "UPDATE payment SET status = 'expired', settled_at = ? WHERE id = ?", arguments: [Instant.format(timer.firedAt), payment])
        try Outbox.append(
            db, type: event.type,
            data: ["userId": .string(row["user_id"]), "payment": .string(payment), "package": .string(row["package_id"]), "late": .bool(timer.late)]
                as JSONValue, at: timer.firedAt)
    }
}

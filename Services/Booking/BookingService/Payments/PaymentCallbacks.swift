import Foundation
import GRDB
import HTTPTypes
import HTTPDoor
import Hummingbird
import NIOCore
import Logging
import Platform
import ServiceLifecycle

/// Where a top-up's payment stands.
enum PaymentStatus: String, Sendable, CaseIterable {
    case pending, settled, failed, expired
    /// Settled after the rider's account was deleted: recorded, never credited.
    case unclaimed

    static var names: [String] { allCases.map(\.rawValue) }
}

/// Settles pass top-ups: the HTTP endpoint a payment provider calls back, and the one
/// transaction that credits the pass.
///
/// The provider POSTs `{"id": <provider ref>, "paymentId": <ours>, "status":
/// "succeeded" | "failed"}` with header `X-Signature: <hex HMAC-SHA256 of the body with the
/// shared secret>`. Unsigned or badly signed calls get 401 and change nothing; a repeated
/// callback is answered 200 and changes nothing (settlement happens once).
public enum PaymentCallbacks {
    /// Marks a pending payment settled (crediting the pass, publishing
    /// `booking.pass.topped_up`) or failed; returns whether anything changed. An expired or
    /// failed payment the provider reports as succeeded is settled too: the money moved. A
    /// payment whose rider's account was deleted meanwhile is recorded `unclaimed` and
    /// credits nothing (admins see it in `booking.admin.payments.list` to refund it with
    /// the provider). `actor` and `reason` are an admin's, reconciling by hand.
    static func settle(
        _ db: Database, payment: String, succeeded: Bool, state: BookingState?, actor: String? = nil, reason: String? = nil
    ) throws -> Bool {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT user_id, package_id, status, sessions, credit_minor FROM payment WHERE id = ?", arguments: [payment])
        else { return false }
        let status: String = row["status"]
        // The provider's success is the truth about money that moved: it settles a payment
        // that expired waiting, or that was reported failed before (a provider retrying a
        // card, an admin who marked it failed too early). A failure never undoes a success.
        guard status == "pending" || (succeeded && (status == "expired" || status == "failed")) else { return false }
        try PaymentExpiry.cancel(db, payment: payment)
        let now = Instant.format(Date())
        let user: String = row["user_id"]
        let gone = try user == DeletedRider.id || DeletedUsers.contains(db, user: user)
        let outcome: PaymentStatus = !succeeded ? .failed : gone ? .unclaimed : .settled
        try db.execute(
            sql: "UPDATE payment SET status = ?, settled_at = ?, reconciled_by = ?, reconcile_reason = ? WHERE id = ?",
            arguments: [outcome.rawValue, now, actor, reason, payment])
        guard outcome == .settled else { return true }
        // Credited as bought: the package may have changed since.
        let sessions: Int64 = row["sessions"], credit: Int64 = row["credit_minor"]
        try PassLedger.post(db, user: user, kind: .topup, sessions: sessions, amount: credit, payment: payment, actor: actor, reason: reason)
        try Outbox.append(
            db, type: "booking.pass.topped_up",
            data: ["userId": .string(user), "payment": .string(payment), "package": .string(row["package_id"]),
                   "sessions": .integer(sessions), "credit": .integer(credit)] as JSONValue)
        state?.changed(db)
        return true
    }

    /// The signature the provider must send for `body`.
    public static func signature(of body: some ContiguousBytes, secret: String) -> String {
        Digest.hex(Digest.hmacSHA256(key: Array(secret.utf8), message: body))
    }

    /// The HTTP listener for callbacks, run beside the booking socket.
    static func server(
        host: String, port: Int, secret: String, pool: DatabasePool, state: BookingState, logger: Logger
    ) -> some Service {
        let router = Router()
        router.post("/payments/callback") { request, _ -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: 64 * 1024)
            let body = Data(buffer.readableBytesView)
            guard let sent = request.headers[HTTPField.Name("X-Signature")!],
                Digest.constantTimeEqual(Array(sent.lowercased().utf8), Array(signature(of: body, secret: secret).utf8))
            else {
                logger.warning("payment callback with a bad signature refused")
                return .unauthorized
            }
            guard let value = try? JSONParser.parse(body), case .string(let payment)? = value["paymentId"],
                case .string(let status)? = value["status"], ["succeeded", "failed"].contains(status)
            else { return .badRequest }
            let outcome = try await pool.write { db -> (known: Bool, changed: Bool) in
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM payment WHERE id = ?", arguments: [payment]) == true else { return (false, false) }
                return (true, try settle(db, payment: payment, succeeded: status == "succeeded", state: state))
            }
            logger.info("payment callback", metadata: ["payment": "\(payment)", "status": "\(status)", "changed": "\(outcome.changed)"])
            // An unknown payment is answered 404 so the provider calls again later.
            return outcome.known ? .ok : .notFound
        }
        var callbackLogger = logger
        callbackLogger.logLevel = max(logger.logLevel, .notice)
        // The provider calls now and then: a few connections, each cut off when slow or idle
        // (an attacker's idle connections once took every descriptor of the process).
        let limits = ConnectionLimits(total: 256, perAddress: 32)
        return Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: HTTPDoor.handlers(limits: limits, headerTimeout: .seconds(10), bodyTimeout: .seconds(10), idleTimeout: .seconds(30)))),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            logger: callbackLogger)
    }
}

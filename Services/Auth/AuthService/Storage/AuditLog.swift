import Foundation
import GRDB
import Platform

/// The append-only audit log of security events. Never given passwords, codes or tokens.
enum AuditLog {
    /// What happened.
    enum Action: String {
        case registered, signInSucceeded = "sign_in.succeeded", signInFailed = "sign_in.failed"
        case passwordChanged = "password.changed", roleSwitched = "role.switched", rolesChanged = "roles.changed"
        case sessionRevoked = "session.revoked", refreshReused = "refresh_token.reused", refreshRetried = "refresh_token.retried", signedOut = "signed_out"
        case profileUpdated = "profile.updated", keyRotated = "signing_key.rotated"
        case passwordReset = "password.reset", emailChanged = "email.changed", accountDeleted = "account.deleted"
        case phoneChanged = "phone.changed", facebookLinked = "facebook.linked", codeRejected = "code.rejected"
        case passwordRejected = "password.rejected"
    }

    static func record(
        _ db: Database, _ action: Action, user: String?, actor: String? = nil, detail: JSONValue = [:], client: String? = nil
    ) throws {
        try db.execute(
            sql: "INSERT INTO audit (at, action, user_id, actor_id, detail, client) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [Instant.format(Date()), action.rawValue, user, actor ?? user, String(decoding: detail.serialized, as: UTF8.self), client])
        // What the account's owner is told about (a push to their devices): a sign-in, a
        // changed email or phone. In the same transaction, so each is published once.
        guard let user else { return }
        switch action {
        case .signInSucceeded:
            try Outbox.append(db, type: signedInEvent, data: ["userId": .string(user), "method": detail["method"] ?? "email"] as JSONValue)
        case .emailChanged, .phoneChanged:
            try Outbox.append(
                db, type: contactChangedEvent, data: ["userId": .string(user), "field": .string(action == .emailChanged ? "email" : "phone")] as JSONValue)
        default:
            break
        }
    }

    static let signedInEvent = "auth.user.signed_in"
    static let contactChangedEvent = "auth.user.contact_changed"

    /// The events ``record(_:_:user:actor:detail:client:)`` publishes.
    static let events = [
        EventDescription(
            signedInEvent, summary: "A sign-in to an account (password, phone code or Facebook): tell its owner's devices.",
            data: .object(["userId": .string(), "method": .oneOf(["email", "phone", "facebook"])], required: ["userId", "method"])),
        EventDescription(
            contactChangedEvent, summary: "An account's email or phone number changed: tell its owner's devices.",
            data: .object(["userId": .string(), "field": .oneOf(["email", "phone"])], required: ["userId", "field"])),
    ]
}

/// Counts attempts per key in a sliding window (sign-in failures, codes sent, ...).
enum AttemptLimiter {
    /// Records an attempt for `key`; returns its row id.
    @discardableResult
    static func record(_ db: Database, key: String, now: Date = Date()) throws -> Int64 {
        try db.execute(sql: "INSERT INTO attempt (key, at) VALUES (?, ?)", arguments: [key, now.timeIntervalSince1970])
        return db.lastInsertedRowID
    }

    /// Takes back recorded attempts (a sign-in that succeeded).
    static func remove(_ db: Database, ids: [Int64]) throws {
        for id in ids { try db.execute(sql: "DELETE FROM attempt WHERE rowid = ?", arguments: [id]) }
    }

    /// Throws `rate_limited` when `key` has `limit` or more attempts in the last `window`,
    /// with the time until the oldest of them leaves the window.
    static func check(_ db: Database, key: String, limit: Int, window: TimeInterval, now: Date = Date()) throws {
        let since = now.timeIntervalSince1970 - window
        let times = try Double.fetchAll(
            db, sql: "SELECT at FROM attempt WHERE key = ? AND at > ? ORDER BY at", arguments: [key, since])
        guard times.count >= limit else { return }
        let oldestCounted = times[times.count - limit]
        let retryAfter = max(1, Int64(((oldestCounted + window) - now.timeIntervalSince1970) * 1000))
        throw ServiceError.rateLimited(retryAfterMs: retryAfter)
    }

    /// Forgets the attempts of `key` (after a success).
    static func clear(_ db: Database, key: String) throws {
        try db.execute(sql: "DELETE FROM attempt WHERE key = ?", arguments: [key])
    }
}

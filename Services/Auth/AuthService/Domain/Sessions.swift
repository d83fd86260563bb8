import Foundation
import GRDB
import Platform

/// What a client gets when it signs in or refreshes.
struct IssuedTokens: Codable, Sendable {
    /// The JWT for requests (5 minutes).
    var accessToken: String
    /// When the access token expires.
    var accessTokenExpiresAt: String
    /// The opaque refresh token: one use, rotated on every refresh.
    var refreshToken: String
    /// The session both belong to.
    var sessionId: String
    /// Who signed in.
    var user: AccountSummary
}

/// A fresh access token for the current session, without a new refresh token.
struct AccessTokenOnly: Codable, Sendable {
    var accessToken: String
    var accessTokenExpiresAt: String
    var sessionId: String
    var user: AccountSummary
}

/// A user's id and roles, as tokens carry them.
struct AccountSummary: Codable, Sendable {
    var id: String
    var roles: [String]
    var activeRole: String?

    static func load(_ db: Database, id: String) throws -> AccountSummary {
        guard let activeRole = try Row.fetchOne(db, sql: "SELECT active_role FROM user WHERE id = ?", arguments: [id]) else {
            throw ServiceError.notFound("no such user")
        }
        let roles = try String.fetchAll(db, sql: "SELECT role FROM user_role WHERE user_id = ? ORDER BY role", arguments: [id])
        return AccountSummary(id: id, roles: roles, activeRole: activeRole["active_role"])
    }
}

/// Opens, refreshes and revokes sessions. Every method runs inside the caller's write
/// transaction; access tokens are signed there too, so a reply never names a session
/// that did not commit.
struct SessionIssuer: Sendable {
    let keys: SigningKeys
    let policy: SessionPolicy

    /// Opens a session for `userID` and issues its first tokens.
    func open(_ db: Database, userID: String, now: Date = Date()) throws -> IssuedTokens {
        let sessionID = Identifiers.make("ses")
        let stamp = Instant.format(now)
        try db.execute(
            sql: "INSERT INTO session (id, user_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)",
            arguments: [sessionID, userID, stamp, stamp])
        // At most `maxSessions` live sessions per account: the oldest go first.
        let live = try String.fetchAll(
            db, sql: "SELECT id FROM session WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid", arguments: [userID])
        if live.count > policy.maxSessions {
            try revoke(db, sessions: Array(live.prefix(live.count - policy.maxSessions)), userID: userID, reason: "too_many_sessions", now: now)
        }
        return try issue(db, sessionID: sessionID, userID: userID, now: now)
    }

    /// Issues a new refresh token and access token for a session.
    func issue(_ db: Database, sessionID: String, userID: String, now: Date = Date()) throws -> IssuedTokens {
        let account = try AccountSummary.load(db, id: userID)
        let refreshToken = Identifiers.secret()
        try db.execute(
            sql: "INSERT INTO refresh_token (hash, session_id, created_at) VALUES (?, ?, ?)",
            arguments: [Self.hash(refreshToken), sessionID, Instant.format(now)])
        let issuedAt = Int64(now.timeIntervalSince1970)
        let expiresAt = issuedAt + Int64(policy.accessTokenLifetime)
        let claims = AccessTokenClaims(
            userID: userID, roles: account.roles, activeRole: account.activeRole, sessionID: sessionID, issuedAt: issuedAt,
            expiresAt: expiresAt)
        return IssuedTokens(
            accessToken: try keys.signer.token(for: claims),
            accessTokenExpiresAt: Instant.format(epochMilliseconds: expiresAt * 1000), refreshToken: refreshToken,
            sessionId: sessionID, user: account)
    }

    /// A new access token for a live session (after a role switch): the session must be
    /// within its idle and absolute limits, and counts as active. No refresh token is
    /// issued: that stays the one the client holds.
    func accessToken(_ db: Database, sessionID: String, userID: String, now: Date = Date()) throws -> AccessTokenOnly {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT created_at, last_seen_at, revoked_at FROM session WHERE id = ? AND user_id = ?", arguments: [sessionID, userID]),
            row["revoked_at"] as String? == nil
        else { throw ServiceError.unauthenticated("the session was revoked") }
        if let reason = policy.expiry(
            createdAt: Instant.parse(row["created_at"]) ?? now, lastSeenAt: Instant.parse(row["last_seen_at"]) ?? now, now: now)
        {
            throw ServiceError.unauthenticated(reason)
        }
        try db.execute(sql: "UPDATE session SET last_seen_at = ? WHERE id = ?", arguments: [Instant.format(now), sessionID])
        let account = try AccountSummary.load(db, id: userID)
        let issuedAt = Int64(now.timeIntervalSince1970)
        let expiresAt = issuedAt + Int64(policy.accessTokenLifetime)
        let claims = AccessTokenClaims(
            userID: userID, roles: account.roles, activeRole: account.activeRole, sessionID: sessionID, issuedAt: issuedAt, expiresAt: expiresAt)
        return AccessTokenOnly(
            accessToken: try keys.signer.token(for: claims), accessTokenExpiresAt: Instant.format(epochMilliseconds: expiresAt * 1000),
            sessionId: sessionID, user: account)
    }

    /// Rotates a refresh token. A token that was already used means it was stolen or
    /// replayed: the whole session is revoked (except a retry after a lost reply, below).
    func refresh(_ db: Database, refreshToken: String, client: String? = nil, now: Date = Date()) throws -> Result<IssuedTokens, ServiceError> {
        guard let row = try Row.fetchOne(
            db,
            sql: """
                SELECT t.session_id, t.used_at, t.superseded_at, s.user_id, s.created_at, s.last_seen_at, s.revoked_at
                FROM refresh_token t JOIN session s ON s.id = t.session_id WHERE t.hash = ?
                """, arguments: [Self.hash(refreshToken)])
        else { return .failure(.unauthenticated("the refresh token is not valid")) }
        let sessionID: String = row["session_id"], userID: String = row["user_id"]
        if row["revoked_at"] as String? != nil { return .failure(.unauthenticated("the session was revoked")) }
        // A used token is a replay, unless it is a retry: the client may not have had the
        // reply of that refresh. Within the grace, and while the token it gave is unused,
        // that token is voided instead (one voided so was never delivered: presenting it
        // is always reuse).
        var voided: String?
        if let used = row["used_at"] as String? {
            guard row["superseded_at"] as String? == nil, let usedAt = Instant.parse(used), now.timeIntervalSince(usedAt) < policy.refreshRetryGrace,
                let successor = try Self.unusedSuccessor(db, of: refreshToken, session: sessionID, usedAt: usedAt)
            else {
                try revoke(db, sessions: [sessionID], userID: userID, reason: "refresh_token_reused")
                try AuditLog.record(db, .refreshReused, user: userID, detail: ["session": .string(sessionID)], client: client)
                return .failure(.unauthenticated("the refresh token was already used; the session is revoked"))
            }
            voided = successor
        }
        let createdAt = Instant.parse(row["created_at"]) ?? now, lastSeen = Instant.parse(row["last_seen_at"]) ?? now
        if let reason = policy.expiry(createdAt: createdAt, lastSeenAt: lastSeen, now: now) {
            return .failure(.unauthenticated(reason))
        }
        if let voided {
            try db.execute(
                sql: "UPDATE refresh_token SET used_at = ?, superseded_at = ? WHERE hash = ?", arguments: [Instant.format(now), Instant.format(now), voided])
            try AuditLog.record(db, .refreshRetried, user: userID, detail: ["session": .string(sessionID)], client: client)
        } else {
            try db.execute(
                sql: "UPDATE refresh_token SET used_at = ? WHERE hash = ?", arguments: [Instant.format(now), Self.hash(refreshToken)])
        }
        try db.execute(sql: "UPDATE session SET last_seen_at = ? WHERE id = ?", arguments: [Instant.format(now), sessionID])
        return .success(try issue(db, sessionID: sessionID, userID: userID, now: now))
    }

    /// The token a refresh at `usedAt` gave (or the last a retry of it gave), if the client
    /// never used it: none of the session's tokens since then was used for a refresh (only
    /// voided by retries). `nil` once the chain moved on: presenting the old token then is reuse.
    static func unusedSuccessor(_ db: Database, of token: String, session: String, usedAt: Date) throws -> String? {
        var unused: String?
        let since = try Row.fetchAll(
            db, sql: "SELECT hash, used_at, superseded_at FROM refresh_token WHERE session_id = ? AND created_at >= ? AND hash != ? ORDER BY created_at, rowid",
            arguments: [session, Instant.format(usedAt), hash(token)])
        for row in since {
            if row["used_at"] as String? == nil {
                unused = row["hash"]
            } else if row["superseded_at"] as String? == nil {
                return nil
            }
        }
        return unused
    }

    /// Revokes sessions, publishes `auth.session.revoked` so every service refuses their
    /// access tokens, and tells auth's own verifier once the transaction commits.
    func revoke(_ db: Database, sessions: [String], userID: String, reason: String, now: Date = Date()) throws {
        guard !sessions.isEmpty else { return }
        for session in sessions {
            try db.execute(
                sql: "UPDATE session SET revoked_at = ?, revoke_reason = ? WHERE id = ? AND revoked_at IS NULL",
                arguments: [Instant.format(now), reason, session])
        }
        try Outbox.append(
            db, type: SessionRevocations.eventType,
            data: ["userId": .string(userID), "sessions": .array(sessions.map { .string($0) }), "reason": .string(reason)] as JSONValue)
        // Kept beside the sessions so that a restart of auth still refuses their tokens,
        // also when the sessions themselves go with a deleted account.
        try SessionRevocations.record(db, sessions: sessions, at: Instant.format(now))
        let verifier = keys.verifier
        db.afterNextTransaction { _ in verifier.revoke(sessions: sessions) }
    }

    /// The live sessions of a user.
    static func live(_ db: Database, userID: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT id FROM session WHERE user_id = ? AND revoked_at IS NULL", arguments: [userID])
    }

    /// Refresh tokens are stored as SHA-256: a leaked database does not leak sessions.
    static func hash(_ token: String) -> String {
        Digest.sha256Hex(Array(token.utf8))
    }
}

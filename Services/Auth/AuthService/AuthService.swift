import Foundation
import GRDB
import Logging
import Platform

/// The auth service: accounts, sign-in flows, tokens, roles and the audit log.
///
/// Durability: `synchronous=FULL`, because accounts and sessions must survive power loss.
/// Access tokens are EdDSA JWTs that every service verifies locally with the keys
/// published by `auth.keys`; revocations reach them as `auth.session.revoked` events.
public enum AuthService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "auth"

    /// The event types auth publishes.
    static let events = [
        EventDescription(
            "auth.user.registered", summary: "A new account.",
            data: .object(["userId": .string(), "roles": .array(of: AuthSchemas.role)], required: ["userId", "roles"])),
        EventDescription(
            SessionRevocations.eventType, summary: "Sessions ended (logout, revocation, password change, refresh token reuse, role removal): refuse their tokens.",
            data: .object(
                ["userId": .string(), "sessions": .array(of: .string()), "reason": .string()], required: ["userId", "sessions", "reason"])),
        EventDescription(
            "auth.user.roles_changed", summary: "A user's roles changed.",
            data: .object(["userId": .string(), "roles": .array(of: AuthSchemas.role)], required: ["userId", "roles"])),
    ]

    /// The definition with the given settings.
    public static func definition(settings: AuthSettings) -> ServiceDefinition {
        let verifier = AccessTokenVerifier()
        let keys = SigningKeys(verifier: verifier)
        let issuer = SessionIssuer(keys: keys, policy: settings.sessions)
        let hasher = PasswordHasher(logN: settings.scryptLogN)
        let operations =
            AccountOperations(issuer: issuer, hasher: hasher, settings: settings).all + ProfileOperations().all
            + AdminOperations(issuer: issuer, keys: keys).all
        return ServiceDefinition(
            name: name,
            summary: "Accounts, sign-in (email and password), tokens, sessions, roles and the audit log.",
            durability: .full,
            operations: operations,
            events: events,
            migrations: { AuthMigrations.register(in: &$0) },
            verifier: verifier,
            prepare: { pool in
                try keys.load(from: pool)
                let revoked = try pool.read { db in
                    try String.fetchAll(db, sql: "SELECT id FROM session WHERE revoked_at IS NOT NULL")
                }
                verifier.revoke(sessions: revoked)
            })
    }

    /// The definition for the process: settings from `BACKEND_AUTH_*`.
    public static var definition: ServiceDefinition {
        do {
            return definition(settings: try AuthSettings.fromEnvironment())
        } catch {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            exit(2)
        }
    }
}

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
            "auth.user.deleted", summary: "An account was deleted: remove or anonymize everything about this user.",
            data: .object(["userId": .string()], required: ["userId"])),
        EventDescription(
            ProfileOperations.changedEvent,
            summary: "A profile as other services may keep it, on registration and on every change (greetings on a birthday, days in the user's zone).",
            data: .object(
                [
                    "userId": .string(), "firstName": JSONSchema.string().nullable(), "birthDate": JSONSchema.string(format: .date).nullable(),
                    "locale": AuthSchemas.locale.nullable(), "timeZone": AuthSchemas.timeZone.nullable(),
                ], required: ["userId", "firstName", "birthDate", "locale", "timeZone"])),
        EventDescription(
            "auth.user.roles_changed", summary: "A user's roles changed.",
            data: .object(["userId": .string(), "roles": .array(of: AuthSchemas.role)], required: ["userId", "roles"])),
    ]

    /// The definition with the given settings; `dataDirectory` holds the default outbox folder.
    public static func definition(settings: AuthSettings, dataDirectory: URL) -> ServiceDefinition {
        let verifier = AccessTokenVerifier()
        let box = settings.keyEncryptionKey.map { text in
            guard let box = try? SecretBox(base64: text) else { preconditionFailure("BACKEND_AUTH_KEY_ENCRYPTION_KEY was checked when read") }
            return box
        }
        let keys = SigningKeys(verifier: verifier, box: box)
        let issuer = SessionIssuer(keys: keys, policy: settings.sessions)
        let hasher = PasswordHasher(logN: settings.scryptLogN, maxQueued: settings.hashQueue)
        let outbox = DeliveryOutbox(service: name)
        let operations =
            AccountOperations(issuer: issuer, hasher: hasher, settings: settings).all + ProfileOperations().all
            + AdminOperations(issuer: issuer, keys: keys).all
            + PhoneOperations(
                issuer: issuer, outbox: outbox,
                codes: OneTimeCodes(lifetime: settings.smsCodeLifetime, resendAfter: settings.codeResendInterval), caps: settings.smsCaps
            ).all
            + RecoveryOperations(
                issuer: issuer, hasher: hasher, outbox: outbox, resendAfter: settings.codeResendInterval, passwordLimits: settings.passwordLimits,
                smsCaps: settings.smsCaps).all
            + FacebookOperations(issuer: issuer, settings: settings).all
            + DeviceOperations(issuer: issuer).all
            + DeliveryOperations.operations(outbox: outbox)
        let transports = Self.transports(settings, dataDirectory: dataDirectory)
        return ServiceDefinition(
            name: name,
            summary: "Accounts, sign-in (email and password, phone and SMS code, Facebook), tokens, sessions, roles, recovery and the audit log.",
            durability: .full,
            operations: operations,
            events: events + AuditLog.events,
            migrations: { migrator in
                AuthMigrations.register(in: &migrator)
                MessageOutbox.migrate(&migrator)
                OneTimeCodes.migrate(&migrator)
                migrator.registerMigration("auth-4-facebook") { db in
                    try db.execute(sql: "ALTER TABLE user ADD COLUMN facebook_id TEXT")
                    try db.execute(sql: "CREATE UNIQUE INDEX user_facebook ON user(facebook_id)")
                }
                migrator.registerMigration("auth-5-email-verified") { db in
                    // Set once the mailbox is proven: a code received there, or Facebook's word.
                    try db.execute(sql: "ALTER TABLE user ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0")
                }
                MessageOutbox.migrateToPlatform(&migrator)
                migrator.registerMigration("auth-7-revocations-kept") { db in
                    // Revocations live in platform_revoked_session from now on (they outlive a
                    // deleted account's sessions); those of the last hour are copied there.
                    try db.execute(
                        sql: """
                            INSERT OR IGNORE INTO platform_revoked_session (session_id, revoked_at)
                            SELECT id, revoked_at FROM session WHERE revoked_at > ?
                            """, arguments: [Instant.format(Date().addingTimeInterval(-3_600))])
                }
                migrator.registerMigration("auth-8-locale-time-zone") { db in
                    // What other services learn through auth.user.profile_changed.
                    try db.execute(sql: "ALTER TABLE user ADD COLUMN locale TEXT")
                    try db.execute(sql: "ALTER TABLE user ADD COLUMN time_zone TEXT")
                }
                migrator.registerMigration("auth-9-device-accounts") { db in
                    // Accounts of one device with no sign-in (the fitness assistant).
                    try db.execute(sql: "ALTER TABLE user ADD COLUMN anonymous INTEGER NOT NULL DEFAULT 0")
                }
                migrator.registerMigration("auth-10-refresh-retry") { db in
                    // A session's tokens since a refresh, for a retried one (SessionIssuer.refresh);
                    // `superseded_at`: a token voided by such a retry before it was ever used.
                    try db.execute(sql: "CREATE INDEX refresh_token_session ON refresh_token(session_id, created_at)")
                    try db.execute(sql: "ALTER TABLE refresh_token ADD COLUMN superseded_at TEXT")
                }
            },
            verifier: verifier,
            prepare: { pool in
                if box == nil {
                    Logger(label: "auth").warning(
                        "signing keys are stored unencrypted: set BACKEND_AUTH_KEY_ENCRYPTION_KEY (openssl rand -base64 32) so a copy of auth.sqlite cannot mint tokens")
                }
                try keys.load(from: pool)
                // Revocations of the last hour (older ones' tokens have expired), from the
                // table that keeps them also for sessions gone with a deleted account.
                try SessionRevocations.load(into: verifier, from: pool)
            },
            workers: { pool, logger in
                [
                    DeliveryWorker(pool: pool, outbox: outbox, transports: transports, settings: settings.delivery, logger: logger),
                    DeviceAccountSweep(pool: pool, issuer: issuer, maxIdle: settings.deviceAccountMaxIdle, logger: logger),
                ]
            })
    }

    /// The configured transport of each channel: the `file` transport unless SMTP or
    /// the SMS webhook is configured.
    static func transports(_ settings: AuthSettings, dataDirectory: URL) -> [any DeliveryTransport] {
        settings.messages.transports(dataDirectory: dataDirectory)
    }

    /// The definition for the process: settings from `BACKEND_AUTH_*`.
    public static func definition(configuration: PlatformConfiguration) -> ServiceDefinition {
        do {
            return definition(settings: try AuthSettings.fromEnvironment(), dataDirectory: configuration.dataDirectoryURL)
        } catch {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            exit(2)
        }
    }
}

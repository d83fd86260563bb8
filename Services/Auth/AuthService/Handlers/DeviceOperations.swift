import Foundation
import GRDB
import Logging
import Platform
import ServiceLifecycle

/// Accounts of one device, for apps with no sign-in at all (the fitness assistant):
/// `auth.device.register {challenge}` makes an anonymous account and signs it in. The
/// device's refresh token is its only credential. The owner may later attach an email or
/// a phone (`auth.email.change.*`, `auth.phone.change.*`: the account becomes an ordinary
/// one, its data kept) or delete it (`auth.account.delete`, with nothing to confirm). An
/// anonymous account holds only the `recipient` role, and one unused for the configured
/// time is deleted (``DeviceAccountSweep``).
struct DeviceOperations: Sendable {
    let issuer: SessionIssuer

    var all: [ServiceOperation] { [register] }

    struct Registration: Codable, Sendable {
        var challenge: AccountOperations.Solution
        var locale: String?
        var timeZone: String?
    }

    /// Device registrations allowed per client address, per hour and per day.
    static let perClient = (hour: 10, day: 30)

    var register: ServiceOperation {
        let issuer = self.issuer
        return .task(
            "auth.device.register",
            summary: "Creates an anonymous account for this device (role recipient only) and signs it in. Needs a solved auth.challenge, spent whatever the answer; limited per client address. Ignores idem: the reply carries secrets.",
            auth: .public,
            request: .object(
                ["challenge": AccountOperations.solutionSchema, "locale": AuthSchemas.locale, "timeZone": AuthSchemas.timeZone],
                required: ["challenge"]),
            response: AuthSchemas.tokens
        ) { (context, input: Registration) in
            if let locale = input.locale, let problem = ProfileRules.localeProblem(locale) { throw ServiceError.invalid("locale", problem) }
            return try await context.write { db -> Result<IssuedTokens, ServiceError> in
                try AccountOperations.consume(db, input.challenge)
                do {
                    var tokens: IssuedTokens?
                    try db.inSavepoint {
                        if let client = context.clientAddress {
                            let key = "device-client:" + client
                            try AttemptLimiter.check(db, key: key, limit: Self.perClient.hour, window: 3_600)
                            try AttemptLimiter.check(db, key: key, limit: Self.perClient.day, window: 86_400)
                            try AttemptLimiter.record(db, key: key)
                        }
                        let userID = try Accounts.create(
                            db, email: nil, phone: nil, passwordHash: nil, firstName: "", lastName: "", patronymic: nil, birthDate: nil,
                            termsVersion: nil, method: "device", client: context.clientAddress, locale: input.locale, timeZone: input.timeZone,
                            roles: [.recipient], anonymous: true)
                        tokens = try issuer.open(db, userID: userID)
                        return .commit
                    }
                    return .success(tokens!)
                } catch let refusal as ServiceError {
                    return .failure(refusal)
                }
            }.get()
        }.ignoringIdem()
    }

    /// Whether `userID` is an anonymous device account.
    static func isAnonymous(_ db: Database, userID: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT anonymous FROM user WHERE id = ?", arguments: [userID]) ?? false
    }

    /// An anonymous account that got an email or phone becomes an ordinary one, with the
    /// roles every account holds.
    static func becomeOrdinary(_ db: Database, userID: String) throws {
        guard try isAnonymous(db, userID: userID) else { return }
        try db.execute(sql: "UPDATE user SET anonymous = 0 WHERE id = ?", arguments: [userID])
        for role in Role.defaults {
            try db.execute(sql: "INSERT OR IGNORE INTO user_role (user_id, role) VALUES (?, ?)", arguments: [userID, role.rawValue])
        }
        try Outbox.append(
            db, type: "auth.user.roles_changed",
            data: ["userId": .string(userID), "roles": .array(Role.defaults.map { .string($0.rawValue) })] as JSONValue)
    }
}

/// Deletes anonymous device accounts unused for `maxIdle` (no session refreshed or
/// opened since), at start and hourly, as an account deletion (`auth.user.deleted`).
struct DeviceAccountSweep: Service {
    let pool: DatabasePool
    let issuer: SessionIssuer
    let maxIdle: TimeInterval
    let logger: Logger

    /// One pass; returns how many accounts went.
    static func run(_ db: Database, issuer: SessionIssuer, maxIdle: TimeInterval, now: Date = Date()) throws -> Int {
        let cutoff = Instant.format(now.addingTimeInterval(-maxIdle))
        let idle = try String.fetchAll(
            db,
            sql: """
                SELECT id FROM user
                WHERE anonymous = 1
                  AND COALESCE((SELECT MAX(last_seen_at) FROM session WHERE session.user_id = user.id), created_at) < ?
                LIMIT 1000
                """, arguments: [cutoff])
        for id in idle { try Accounts.delete(db, userID: id, actor: "system", issuer: issuer, client: nil) }
        return idle.count
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let removed = try await pool.write { db in try Self.run(db, issuer: issuer, maxIdle: maxIdle) }
                    if removed > 0 { logger.info("deleted idle device accounts", metadata: ["count": "\(removed)"]) }
                } catch {
                    logger.warning("cannot sweep idle device accounts", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(3_600))
            }
        }
    }
}

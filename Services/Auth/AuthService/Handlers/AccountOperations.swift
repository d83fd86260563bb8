import Foundation
import GRDB
import Platform

/// Registration, sign-in and sessions.
struct AccountOperations: Sendable {
    let issuer: SessionIssuer
    let hasher: PasswordHasher
    let settings: AuthSettings

    /// The message for every failed email sign-in, whatever the cause (the goals app's text).
    static let failedSignIn = "This combination of login and password does not exist. Please try again"

    var all: [ServiceOperation] {
        [challenge, register, login, refresh, logout, sessionsList, sessionsRevoke, roleSwitch, passwordChange]
    }

    // MARK: Bot protection

    struct ChallengeResult: Codable, Sendable {
        var nonce: String
        var difficulty: Int
        var expiresAt: String
    }

    var challenge: ServiceOperation {
        let difficulty = settings.proofOfWorkDifficulty
        return .task(
            "auth.challenge",
            summary: "A proof-of-work challenge for registration and phone sign-in: find a counter such that SHA-256(nonce \":\" counter) starts with `difficulty` zero bits. Valid 10 minutes, single use. Ignores idem: every call gets a new challenge (a stored one would be handed to every anonymous caller using the same key).",
            auth: .public, request: .empty,
            response: .object(
                ["nonce": .string(), "difficulty": .integer(minimum: 0), "expiresAt": .string(format: .dateTime)],
                required: ["nonce", "difficulty", "expiresAt"])
        ) { (context, _: Empty) in try await context.write { db in try Self.newChallenge(db, difficulty: difficulty, client: context.clientAddress) } }.ignoringIdem()
    }

    /// Issues a challenge (at most 120 a minute per client address).
    static func newChallenge(_ db: Database, difficulty: Int, client: String?) throws -> ChallengeResult {
        if let client {
            try AttemptLimiter.check(db, key: "challenge:" + client, limit: 120, window: 60)
            try AttemptLimiter.record(db, key: "challenge:" + client)
        }
        // Old challenges and attempts are of no use: purge them as new ones come.
        try db.execute(sql: "DELETE FROM challenge WHERE expires_at < ?", arguments: [Instant.format(Date())])
        try db.execute(sql: "DELETE FROM attempt WHERE at < ?", arguments: [Date().timeIntervalSince1970 - 86_400])
        let nonce = Digest.hex(Digest.randomBytes(16))
        let expires = Instant.format(Date().addingTimeInterval(600))
        try db.execute(sql: "INSERT INTO challenge (nonce, difficulty, expires_at) VALUES (?, ?, ?)", arguments: [nonce, difficulty, expires])
        return ChallengeResult(nonce: nonce, difficulty: difficulty, expiresAt: expires)
    }

    struct Solution: Codable, Sendable {
        var nonce: String
        var counter: UInt64
    }

    static let solutionSchema = JSONSchema.object(
        ["nonce": .string(maxLength: 64), "counter": .integer(minimum: 0)], required: ["nonce", "counter"])

    /// Uses up a solved challenge, or throws `validation_failed` on `challenge`.
    static func consume(_ db: Database, _ solution: Solution) throws {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT difficulty, expires_at, used_at FROM challenge WHERE nonce = ?", arguments: [solution.nonce]),
            row["used_at"] as String? == nil, (row["expires_at"] as String) > Instant.format(Date())
        else { throw ServiceError.invalid("challenge", "unknown, used or expired challenge: ask auth.challenge for a new one") }
        guard ProofOfWork.isSolved(nonce: solution.nonce, counter: solution.counter, difficulty: row["difficulty"]) else {
            throw ServiceError.invalid("challenge.counter", "does not solve the challenge")
        }
        try db.execute(sql: "UPDATE challenge SET used_at = ? WHERE nonce = ?", arguments: [Instant.format(Date()), solution.nonce])
    }

    // MARK: Email and password

    struct Registration: Codable, Sendable {
        var email: String
        var password: String
        var firstName: String
        var lastName: String
        var patronymic: String?
        var birthDate: String
        var acceptTerms: Bool
        var challenge: Solution
        var locale: String?
        var timeZone: String?
    }

    var register: ServiceOperation {
        let (issuer, hasher, settings) = (self.issuer, self.hasher, self.settings)
        return .task(
            "auth.register",
            summary: "Creates an account with email and password (BuckStash fields), records the accepted terms version, and signs in. Needs a solved auth.challenge. Ignores idem: the reply carries secrets that are never stored.",
            auth: .public,
            request: .object(
                [
                    "email": AuthSchemas.email, "password": AuthSchemas.password, "firstName": AuthSchemas.name,
                    "lastName": AuthSchemas.name, "patronymic": AuthSchemas.name, "birthDate": AuthSchemas.birthDate,
                    "acceptTerms": JSONSchema.boolean.described("must be true"), "challenge": Self.solutionSchema,
                    "locale": AuthSchemas.locale, "timeZone": AuthSchemas.timeZone,
                ], required: ["email", "password", "firstName", "lastName", "birthDate", "acceptTerms", "challenge"]),
            response: AuthSchemas.tokens
        ) { (context, input: Registration) in
            var problems: [String: String] = [:]
            if let problem = PasswordPolicy.problem(with: input.password) { problems["password"] = problem }
            if let problem = ProfileRules.birthDateProblem(input.birthDate) { problems["birthDate"] = problem }
            if !input.acceptTerms { problems["acceptTerms"] = "the terms must be accepted" }
            if let locale = input.locale, let problem = ProfileRules.localeProblem(locale) { problems["locale"] = problem }
            guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
            let email = Identifiers.email(input.email)
            // The proof of work is spent before the expensive hash, so bots cannot make
            // the service hash for free, and it is spent whatever the outcome: the write
            // commits the spending and answers `email_taken` after, so one solved
            // challenge tells at most once whether an email has an account.
            let taken = try await context.write { db -> Bool in
                try Self.consume(db, input.challenge)
                return try Bool.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ?", arguments: [email]) == true
            }
            if taken { throw ServiceError.conflict("an account with this email already exists", reason: "email_taken") }
            let passwordHash = try await hasher.hash(input.password, for: .newAccount)
            // Timed out while hashing: the caller was answered `timeout`; no account is
            // made behind its back (it may simply register again).
            try Task.checkCancellation()
            return try await context.write { db in
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ?", arguments: [email]) == true {
                    throw ServiceError.conflict("an account with this email already exists", reason: "email_taken")
                }
                let userID = try Accounts.create(
                    db, email: email, phone: nil, passwordHash: passwordHash, firstName: input.firstName, lastName: input.lastName,
                    patronymic: input.patronymic, birthDate: input.birthDate, termsVersion: settings.termsVersion, method: "email",
                    client: context.clientAddress, locale: input.locale, timeZone: input.timeZone)
                return try issuer.open(db, userID: userID)
            }
        }.ignoringIdem()
    }

    struct Credentials: Codable, Sendable {
        var email: String
        var password: String
    }

    var login: ServiceOperation {
        let (issuer, hasher, settings) = (self.issuer, self.hasher, self.settings)
        return .task(
            "auth.login",
            summary: "Signs in with email and password. One message for unknown email and wrong password; wrong passwords are limited per account and client address, per account and per client address (README: 5, 50 and 20 in 15 minutes), then rate_limited with retryAfterMs. Ignores idem.",
            auth: .public,
            request: .object(["email": .string(minLength: 1, maxLength: 254), "password": AuthSchemas.password], required: ["email", "password"]),
            response: AuthSchemas.tokens
        ) { (context, input: Credentials) in
            let email = Identifiers.email(input.email)
            let check = PasswordCheck(hasher: hasher, limits: settings.passwordLimits)
            // An unknown email counts and costs the same as a wrong password.
            let userID = try await check.verify(context, operation: "auth.login", password: input.password, failure: .signInFailed) { db in
                let row = try Row.fetchOne(db, sql: "SELECT id, password_hash FROM user WHERE email = ?", arguments: [email])
                let id = row?["id"] as String?
                return PasswordCheck.Subject(accountKey: id ?? "email:" + email, userID: id, hash: row?["password_hash"])
            }
            guard let userID else { throw ServiceError.unauthenticated(Self.failedSignIn) }
            // No session is opened for a caller already answered `timeout`.
            try Task.checkCancellation()
            return try await context.write { db in
                try AuditLog.record(db, .signInSucceeded, user: userID, detail: ["method": "email"], client: context.clientAddress)
                return try issuer.open(db, userID: userID)
            }
        }.ignoringIdem()
    }

    // MARK: Sessions

    struct RefreshRequest: Codable, Sendable {
        var refreshToken: String
    }

    var refresh: ServiceOperation {
        let issuer = self.issuer
        return .task(
            "auth.refresh",
            summary: "Exchanges a refresh token for new tokens; the old refresh token is used up. Presenting a used one revokes the whole session, except as a retry within 30 seconds of its refresh while the token that refresh gave was never used (its reply was lost): the retry gets new tokens and that unused token is void. Sessions end after 15 minutes without a refresh and after 30 days. Ignores idem.",
            auth: .public, request: .object(["refreshToken": .string(minLength: 1, maxLength: 200)], required: ["refreshToken"]),
            response: AuthSchemas.tokens
        ) { (context, input: RefreshRequest) in
            // A failed refresh may still write (revoking a replayed session), so the
            // outcome is returned from the transaction rather than thrown inside it.
            try await context.write { db in try issuer.refresh(db, refreshToken: input.refreshToken, client: context.clientAddress) }.get()
        }.ignoringIdem()
    }

    var logout: ServiceOperation {
        let issuer = self.issuer
        return .write(
            "auth.logout", summary: "Ends the caller's session.", auth: .authenticated, request: .empty, response: .empty
        ) { (context, _: Empty, db: Database) in
            let principal = try context.requirePrincipal()
            try issuer.revoke(db, sessions: [principal.sessionID], userID: principal.userID, reason: "logout")
            try AuditLog.record(db, .signedOut, user: principal.userID, detail: ["session": .string(principal.sessionID)], client: context.clientAddress)
            return Empty()
        }
    }

    struct SessionInfo: Codable, Sendable {
        var id: String
        var createdAt: String
        var lastSeenAt: String
        var current: Bool
    }

    struct SessionList: Codable, Sendable {
        var items: [SessionInfo]
    }

    var sessionsList: ServiceOperation {
        .read(
            "auth.sessions.list", summary: "The caller's live sessions, newest first.", auth: .authenticated, request: .empty,
            response: .object(
                [
                    "items": .array(
                        of: .object(
                            ["id": .string(), "createdAt": .string(format: .dateTime), "lastSeenAt": .string(format: .dateTime), "current": .boolean],
                            required: ["id", "createdAt", "lastSeenAt", "current"]))
                ], required: ["items"])
        ) { (context, _: Empty, db: Database) in
            let principal = try context.requirePrincipal()
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT id, created_at, last_seen_at FROM session WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id",
                arguments: [principal.userID])
            return SessionList(
                items: rows.map {
                    SessionInfo(id: $0["id"], createdAt: $0["created_at"], lastSeenAt: $0["last_seen_at"], current: $0["id"] == principal.sessionID)
                })
        }
    }

    struct RevokeRequest: Codable, Sendable {
        var session: String
    }

    var sessionsRevoke: ServiceOperation {
        let issuer = self.issuer
        return .write(
            "auth.sessions.revoke", summary: "Ends one of the caller's sessions (e.g. a lost phone).", auth: .authenticated,
            request: .object(["session": .string(minLength: 1, maxLength: 100)], required: ["session"]), response: .empty
        ) { (context, input: RevokeRequest, db: Database) in
            let principal = try context.requirePrincipal()
            // Another user's session is reported as missing, not as forbidden.
            guard try String.fetchOne(
                db, sql: "SELECT user_id FROM session WHERE id = ? AND revoked_at IS NULL", arguments: [input.session]) == principal.userID
            else { throw ServiceError.notFound("no such session") }
            try issuer.revoke(db, sessions: [input.session], userID: principal.userID, reason: "revoked_by_user")
            try AuditLog.record(db, .sessionRevoked, user: principal.userID, detail: ["session": .string(input.session)], client: context.clientAddress)
            return Empty()
        }
    }

    struct RoleSwitch: Codable, Sendable {
        var role: String
    }

    var roleSwitch: ServiceOperation {
        let issuer = self.issuer
        return .task(
            "auth.role.switch",
            summary: "Picks the role the caller acts in (goals app: recipient or sponsor; staff and admin if held) and returns a new access token carrying it (the refresh token stays the same). Ignores idem.",
            auth: .authenticated, request: .object(["role": AuthSchemas.role], required: ["role"]),
            response: .object(
                ["accessToken": .string(), "accessTokenExpiresAt": .string(format: .dateTime), "sessionId": .string(), "user": AuthSchemas.account],
                required: ["accessToken", "accessTokenExpiresAt", "sessionId", "user"])
        ) { (context, input: RoleSwitch) in
            let principal = try context.requirePrincipal()
            return try await context.write { db in
                let held = try String.fetchAll(db, sql: "SELECT role FROM user_role WHERE user_id = ?", arguments: [principal.userID])
                guard held.contains(input.role) else { throw ServiceError.forbidden("you do not hold the role \(input.role)") }
                try db.execute(sql: "UPDATE user SET active_role = ? WHERE id = ?", arguments: [input.role, principal.userID])
                try AuditLog.record(db, .roleSwitched, user: principal.userID, detail: ["role": .string(input.role)], client: context.clientAddress)
                return try issuer.accessToken(db, sessionID: principal.sessionID, userID: principal.userID)
            }
        }.ignoringIdem()
    }

    struct PasswordChange: Codable, Sendable {
        var currentPassword: String
        var newPassword: String
    }

    var passwordChange: ServiceOperation {
        let (issuer, hasher, settings) = (self.issuer, self.hasher, self.settings)
        return .task(
            "auth.password.change", summary: "Changes the caller's password; every other session is revoked. Ignores idem (a retry with the old password is refused).", auth: .authenticated,
            request: .object(["currentPassword": AuthSchemas.password, "newPassword": AuthSchemas.password], required: ["currentPassword", "newPassword"]),
            response: .empty
        ) { (context, input: PasswordChange) in
            let principal = try context.requirePrincipal()
            if let problem = PasswordPolicy.problem(with: input.newPassword) { throw ServiceError.invalid("newPassword", problem) }
            let check = PasswordCheck(hasher: hasher, limits: settings.passwordLimits)
            guard try await check.verifyCaller(context, operation: "auth.password.change", password: input.currentPassword) else {
                throw ServiceError.invalid("currentPassword", "is not your current password")
            }
            let newHash = try await hasher.hash(input.newPassword)
            try await context.write { db in
                try db.execute(sql: "UPDATE user SET password_hash = ? WHERE id = ?", arguments: [newHash, principal.userID])
                let others = try SessionIssuer.live(db, userID: principal.userID).filter { $0 != principal.sessionID }
                try issuer.revoke(db, sessions: others, userID: principal.userID, reason: "password_changed")
                try AuditLog.record(db, .passwordChanged, user: principal.userID, client: context.clientAddress)
            }
            return Empty()
        }.ignoringIdem()
    }
}

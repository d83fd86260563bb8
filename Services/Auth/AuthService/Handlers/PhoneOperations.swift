import Foundation
import GRDB
import Platform

/// Sign-in by phone and SMS code (WAKEPARKBY): a code to the number, then the code
/// signs in, or registers on first use with the personal data.
struct PhoneOperations: Sendable {
    let issuer: SessionIssuer
    let outbox: DeliveryOutbox
    let codes: OneTimeCodes
    let caps: SMSCaps

    var all: [ServiceOperation] { [start, verify] }

    struct Start: Codable, Sendable {
        var phone: String
        var challenge: AccountOperations.Solution
    }

    struct Started: Codable, Sendable {
        var resendAfterMs: Int64
        var expiresInMs: Int64
    }

    var start: ServiceOperation {
        let (codes, caps, outbox) = (self.codes, self.caps, self.outbox)
        return .task(
            "auth.phone.start",
            summary: "Sends a 6-digit code by SMS (valid 5 minutes, resend after 60 s, capped per number and per client per hour and day). The same answer whether or not the number has an account. Needs a solved auth.challenge, spent whatever the answer. Ignores idem.",
            auth: .public,
            request: .object(["phone": AuthSchemas.phone, "challenge": AccountOperations.solutionSchema], required: ["phone", "challenge"]),
            response: .object(["resendAfterMs": .integer(), "expiresInMs": .integer()], required: ["resendAfterMs", "expiresInMs"])
        ) { (context, input: Start) in
            // The challenge is spent even when the request is refused: the refusal rolls
            // back its savepoint and is returned from the transaction, not thrown in it.
            try await context.write { db -> Result<Started, ServiceError> in
                try AccountOperations.consume(db, input.challenge)
                do {
                    var started: Started?
                    try db.inSavepoint {
                        try caps.spend(db, to: input.phone, account: nil, client: context.clientAddress)
                        let code = try codes.issue(db, .phoneSignIn, target: input.phone)
                        try MessageOutbox.enqueue(
                            db, .sms, to: input.phone, body: "WAKEPARKBY: your code is \(code). It is valid for \(Int(codes.lifetime / 60)) minutes.", outbox: outbox)
                        started = Started(resendAfterMs: Int64(codes.resendAfter * 1000), expiresInMs: Int64(codes.lifetime * 1000))
                        return .commit
                    }
                    return .success(started!)
                } catch let refusal as ServiceError {
                    return .failure(refusal)
                }
            }.get()
        }.ignoringIdem()
    }

    struct NewProfile: Codable, Sendable {
        var firstName: String
        var lastName: String
        var patronymic: String?
        var birthDate: String?
    }

    struct Verify: Codable, Sendable {
        var phone: String
        var code: String
        var profile: NewProfile?
    }

    var verify: ServiceOperation {
        let (codes, issuer) = (self.codes, self.issuer)
        return .task(
            "auth.phone.verify",
            summary: "Signs in with the SMS code; on a number's first sign-in `profile` is required and creates the account (a missing profile does not use up the code). Five wrong codes void it. Ignores idem.",
            auth: .public,
            request: .object(
                [
                    "phone": AuthSchemas.phone, "code": .string(minLength: 6, maxLength: 6),
                    "profile": .object(
                        [
                            "firstName": AuthSchemas.name, "lastName": AuthSchemas.name, "patronymic": AuthSchemas.name,
                            "birthDate": AuthSchemas.birthDate,
                        ], required: ["firstName", "lastName"]),
                ], required: ["phone", "code"]),
            response: AuthSchemas.tokens
        ) { (context, input: Verify) in
            if let birthDate = input.profile?.birthDate, let problem = ProfileRules.birthDateProblem(birthDate) {
                throw ServiceError.invalid("profile.birthDate", problem)
            }
            return try await context.write { db -> Result<IssuedTokens, ServiceError> in
                if case .failure(let refusal) = try codes.check(db, .phoneSignIn, target: input.phone, code: input.code, consume: false) {
                    try AuditLog.record(db, .signInFailed, user: nil, detail: ["method": "phone"], client: context.clientAddress)
                    return .failure(refusal.serviceError)
                }
                let existing = try String.fetchOne(db, sql: "SELECT id FROM user WHERE phone = ?", arguments: [input.phone])
                if existing == nil && input.profile == nil {
                    return .failure(.invalid("profile", "required on the first sign-in with this number"))
                }
                _ = try codes.check(db, .phoneSignIn, target: input.phone, code: input.code)
                let userID: String
                if let existing {
                    userID = existing
                } else if let profile = input.profile {
                    userID = try Accounts.create(
                        db, email: nil, phone: input.phone, passwordHash: nil, firstName: profile.firstName, lastName: profile.lastName,
                        patronymic: profile.patronymic, birthDate: profile.birthDate, termsVersion: nil, method: "phone",
                        client: context.clientAddress)
                } else {
                    return .failure(.invalid("profile", "required on the first sign-in with this number"))
                }
                try AuditLog.record(db, .signInSucceeded, user: userID, detail: ["method": "phone"], client: context.clientAddress)
                return .success(try issuer.open(db, userID: userID))
            }.get()
        }.ignoringIdem()
    }
}

/// Creating and deleting accounts: one place for every sign-up method.
enum Accounts {
    /// Inserts a user with the default roles, audits it and publishes `auth.user.registered`.
    static func create(
        _ db: Database, email: String?, phone: String?, passwordHash: String?, firstName: String, lastName: String,
        patronymic: String?, birthDate: String?, termsVersion: String?, method: String, client: String?, locale: String? = nil,
        timeZone: String? = nil, roles: [Role] = Role.defaults, anonymous: Bool = false
    ) throws -> String {
        let userID = Identifiers.make("usr")
        let now = Instant.format(Date())
        try db.execute(
            sql: """
                INSERT INTO user (id, email, phone, password_hash, first_name, last_name, patronymic, birth_date,
                                  terms_version, terms_accepted_at, active_role, created_at, locale, time_zone, anonymous)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                userID, email, phone, passwordHash, firstName, lastName, patronymic, birthDate, termsVersion,
                termsVersion == nil ? nil : now, roles[0].rawValue, now, locale, timeZone, anonymous,
            ])
        for role in roles {
            try db.execute(sql: "INSERT INTO user_role (user_id, role) VALUES (?, ?)", arguments: [userID, role.rawValue])
        }
        try AuditLog.record(db, .registered, user: userID, detail: ["method": .string(method)], client: client)
        try Outbox.append(
            db, type: "auth.user.registered",
            data: ["userId": .string(userID), "roles": .array(roles.map { .string($0.rawValue) })] as JSONValue)
        try ProfileOperations.publishChange(db, userID: userID)
        return userID
    }

    /// Deletes a user: sessions revoked, the row and everything hanging off it removed,
    /// `auth.user.deleted` published so every service removes or anonymizes its data.
    /// The audit log keeps the bare user id.
    static func delete(_ db: Database, userID: String, actor: String, issuer: SessionIssuer, client: String?) throws {
        try issuer.revoke(db, sessions: try SessionIssuer.live(db, userID: userID), userID: userID, reason: "account_deleted")
        let contacts = try Row.fetchOne(db, sql: "SELECT email, phone FROM user WHERE id = ?", arguments: [userID])
        for target in [userID, contacts?["email"] as String?, contacts?["phone"] as String?].compactMap({ $0 }) {
            try db.execute(sql: "DELETE FROM one_time_code WHERE target = ?", arguments: [target])
            try DeliveryOutbox.forget(db, destination: target)
            for prefix in ["sms:", "reset:", "sms-account:", "contact-change:"] {
                try db.execute(sql: "DELETE FROM attempt WHERE key = ?", arguments: [prefix + target])
            }
        }
        try PasswordLimits.clear(db, account: userID)
        try db.execute(sql: "DELETE FROM user WHERE id = ?", arguments: [userID])
        try AuditLog.record(db, .accountDeleted, user: userID, actor: actor, client: client)
        try Outbox.append(db, type: "auth.user.deleted", data: ["userId": .string(userID)] as JSONValue)
    }
}

import Foundation
import GRDB
import Platform

/// Forgotten passwords, email changes and account deletion: flows confirmed by a code.
///
/// The goals spec mails a generated password; we mail a one-time reset code instead (the
/// safer form of the same feature: no password travels by email, and the old one keeps
/// working until the user chooses a new one).
struct RecoveryOperations: Sendable {
    let issuer: SessionIssuer
    let hasher: PasswordHasher
    let outbox: DeliveryOutbox
    let resetCodes: OneTimeCodes
    let confirmationCodes: OneTimeCodes
    let passwordLimits: PasswordLimits
    let smsCaps: SMSCaps

    init(
        issuer: SessionIssuer, hasher: PasswordHasher, outbox: DeliveryOutbox, resendAfter: TimeInterval, passwordLimits: PasswordLimits,
        smsCaps: SMSCaps
    ) {
        self.smsCaps = smsCaps
        self.issuer = issuer
        self.hasher = hasher
        self.passwordLimits = passwordLimits
        self.outbox = outbox
        resetCodes = OneTimeCodes(lifetime: 30 * 60, resendAfter: resendAfter)
        confirmationCodes = OneTimeCodes(lifetime: 30 * 60, resendAfter: resendAfter)
    }

    var all: [ServiceOperation] {
        [forgot, reset, emailChangeStart, emailChangeConfirm, phoneChangeStart, phoneChangeConfirm, deletionStart, deleteAccount, adminDelete]
    }

    struct Forgot: Codable, Sendable {
        var email: String
    }

    var forgot: ServiceOperation {
        let (codes, outbox) = (self.resetCodes, self.outbox)
        return .task(
            "auth.password.forgot",
            summary: "Always answers ok, after the same work whatever the address: an account's email gets a one-time reset code valid 30 minutes, an address without an account a notice saying so (each address at most one a minute and five an hour; twenty an hour per client). Ignores idem: every call is answered ok, whatever it carries.",
            auth: .public, request: .object(["email": AuthSchemas.email], required: ["email"]), response: .empty
        ) { (context, input: Forgot) in
            let email = Identifiers.email(input.email)
            try await context.write { db in
                let exists = try Bool.fetchOne(db, sql: "SELECT 1 FROM user WHERE email = ?", arguments: [email]) == true
                // The same writes either way (a code, the attempts, one message), so neither
                // the answer nor its time tells whether the address has an account. Limits
                // apply silently, for the same reason.
                do {
                    try db.inSavepoint {
                        try AttemptLimiter.check(db, key: "reset:" + email, limit: 5, window: 3_600)
                        if let client = context.clientAddress {
                            try AttemptLimiter.check(db, key: "reset-client:" + client, limit: 20, window: 3_600)
                            try AttemptLimiter.record(db, key: "reset-client:" + client)
                        }
                        let code = try codes.issue(db, .passwordReset, target: email)
                        try AttemptLimiter.record(db, key: "reset:" + email)
                        let body =
                            exists
                            ? "Your code to set a new password is \(code). It is valid for 30 minutes. If you did not ask for it, ignore this email."
                            : "Someone asked to reset the password of an account with this address, but there is no account with it. If it was you, sign up instead; otherwise ignore this email."
                        try MessageOutbox.enqueue(db, .email, to: email, subject: "Your password reset code", body: body, outbox: outbox)
                        return .commit
                    }
                } catch let error as ServiceError where error.code == .rateLimited {
                    context.logger.info("password reset message not sent: rate limited")
                }
            }
            return Empty()
        }.ignoringIdem()
    }

    struct Reset: Codable, Sendable {
        var email: String
        var code: String
        var newPassword: String
    }

    var reset: ServiceOperation {
        let (codes, hasher, issuer) = (self.resetCodes, self.hasher, self.issuer)
        return .task(
            "auth.password.reset", summary: "Sets a new password with the emailed code; every session of the account is revoked. Ignores idem (the code is single use).",
            auth: .public,
            request: .object(
                ["email": .string(minLength: 1, maxLength: 254), "code": .string(minLength: 6, maxLength: 6), "newPassword": AuthSchemas.password],
                required: ["email", "code", "newPassword"]),
            response: .empty
        ) { (context, input: Reset) in
            if let problem = PasswordPolicy.problem(with: input.newPassword) { throw ServiceError.invalid("newPassword", problem) }
            let email = Identifiers.email(input.email)
            // One answer for every refusal (no account, no code, wrong code, too many
            // tries), so the reset cannot tell which emails have accounts.
            let refused = OneTimeCodes.Refusal.noValidCode.serviceError
            // The code is checked (and a wrong one counted) before the expensive hash.
            let valid = try await context.write { db -> Bool in
                guard case .success = try codes.check(db, .passwordReset, target: email, code: input.code, consume: false) else {
                    try AuditLog.record(db, .codeRejected, user: nil, detail: ["purpose": "password_reset"], client: context.clientAddress)
                    return false
                }
                return true
            }
            guard valid else { throw refused }
            let newHash = try await hasher.hash(input.newPassword)
            return try await context.write { db -> Result<Empty, ServiceError> in
                guard case .success = try codes.check(db, .passwordReset, target: email, code: input.code),
                    let userID = try String.fetchOne(db, sql: "SELECT id FROM user WHERE email = ?", arguments: [email])
                else { return .failure(refused) }
                // The code arrived by email: the mailbox is proven.
                try db.execute(sql: "UPDATE user SET password_hash = ?, email_verified = 1 WHERE id = ?", arguments: [newHash, userID])
                try issuer.revoke(db, sessions: try SessionIssuer.live(db, userID: userID), userID: userID, reason: "password_reset")
                // The mailbox is proven: the account's wrong-password counts start afresh.
                try PasswordLimits.clear(db, account: userID)
                try AuditLog.record(db, .passwordReset, user: userID, client: context.clientAddress)
                return .success(Empty())
            }.get()
        }.ignoringIdem()
    }

    var deletionStart: ServiceOperation {
        let (codes, outbox, caps) = (self.confirmationCodes, self.outbox, self.smsCaps)
        return .write(
            "auth.account.delete.start",
            summary: "Sends a code confirming account deletion, by SMS when the account has a phone (within the SMS caps, else rate_limited), else by email (for accounts without a password).",
            auth: .authenticated, request: .empty, response: .empty
        ) { (context, _: Empty, db: Database) in
            let principal = try context.requirePrincipal()
            guard let row = try Row.fetchOne(db, sql: "SELECT email, phone FROM user WHERE id = ?", arguments: [principal.userID]) else {
                throw ServiceError.notFound("no such user")
            }
            let code = try codes.issue(db, .accountDeletion, target: principal.userID)
            let text = "Your code to delete your account is \(code). It is valid for 30 minutes."
            if let phone = row["phone"] as String? {
                try caps.spend(db, to: phone, account: principal.userID, client: context.clientAddress)
                try MessageOutbox.enqueue(db, .sms, to: phone, body: text, outbox: outbox)
            } else if let email = row["email"] as String? {
                try MessageOutbox.enqueue(db, .email, to: email, subject: "Confirm account deletion", body: text, outbox: outbox)
            } else {
                throw ServiceError.conflict("the account has no phone or email to send a code to", reason: "no_contact")
            }
            return Empty()
        }
    }

    struct Deletion: Codable, Sendable {
        var password: String?
        var code: String?
    }

    var deleteAccount: ServiceOperation {
        let (codes, hasher, issuer, limits) = (self.confirmationCodes, self.hasher, self.issuer, self.passwordLimits)
        return .task(
            "auth.account.delete",
            summary: "Deletes the caller's account, confirmed by the password or by the code of auth.account.delete.start. Publishes auth.user.deleted. Ignores idem.",
            auth: .authenticated,
            request: .object(["password": AuthSchemas.password, "code": .string(minLength: 6, maxLength: 6)]),
            response: .empty
        ) { (context, input: Deletion) in
            let principal = try context.requirePrincipal()
            if let password = input.password {
                guard try await PasswordCheck(hasher: hasher, limits: limits).verifyCaller(context, operation: "auth.account.delete", password: password)
                else { throw ServiceError.invalid("password", "is not your password") }
            } else if input.code == nil {
                // A device account has nothing to confirm with: its token is its only credential.
                let anonymous = try await context.database().read { db in try DeviceOperations.isAnonymous(db, userID: principal.userID) }
                guard anonymous else {
                    throw ServiceError.validationFailed(["password": "give the password or a code", "code": "give the password or a code"])
                }
            }
            return try await context.write { db -> Result<Empty, ServiceError> in
                if input.password == nil, let code = input.code,
                    case .failure(let refusal) = try codes.check(db, .accountDeletion, target: principal.userID, code: code)
                {
                    return .failure(refusal.serviceError)
                }
                try Accounts.delete(db, userID: principal.userID, actor: principal.userID, issuer: issuer, client: context.clientAddress)
                return .success(Empty())
            }.get()
        }.ignoringIdem()
    }

    struct AdminDeletion: Codable, Sendable {
        var userId: String
    }

    var adminDelete: ServiceOperation {
        let issuer = self.issuer
        return .write(
            "auth.admin.users.delete", summary: "Deletes a user (admins). Publishes auth.user.deleted.", auth: AdminOperations.admin,
            request: .object(["userId": .string(maxLength: 100)], required: ["userId"]), response: .empty
        ) { (context, input: AdminDeletion, db: Database) in
            let admin = try context.requirePrincipal()
            guard input.userId != admin.userID else {
                throw ServiceError.conflict("use auth.account.delete to delete your own account", reason: "self_deletion")
            }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM user WHERE id = ?", arguments: [input.userId]) == true else {
                throw ServiceError.notFound("no such user")
            }
            try Accounts.delete(db, userID: input.userId, actor: admin.userID, issuer: issuer, client: context.clientAddress)
            return Empty()
        }
    }
}

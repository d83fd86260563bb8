import Foundation
import GRDB
import Platform

/// Changing the email or the phone number: the change a stolen access token must not be
/// able to make on its own.
///
/// - **Re-authentication**: `start` needs the current password (checked and limited like a
///   sign-in); an account without one (phone-only, Facebook) instead gets a code at its
///   current number or email, which `confirm` needs beside the new address's code.
/// - **The same answer and the same work whether the new address is free or taken**: a
///   code is issued either way (so the resend rule answers alike), and the address gets
///   one message either way: its code, or a notice that it already has an account.
/// - **After the change**: the old address or number gets a notice, every other session of
///   the account ends, and the change is audited.
extension RecoveryOperations {
    /// Email or phone.
    enum ContactKind: Sendable {
        case email, phone

        var column: String { self == .email ? "email" : "phone" }
        var noun: String { self == .email ? "email address" : "phone number" }
        var purpose: OneTimeCodes.Purpose { self == .email ? .emailChange : .phoneChange }
        var audit: AuditLog.Action { self == .email ? .emailChanged : .phoneChanged }
        var takenReason: String { self == .email ? "email_taken" : "phone_taken" }
        var field: String { self == .email ? "newEmail" : "phone" }
    }

    struct ContactChangeStart: Codable, Sendable {
        var newEmail: String?
        var phone: String?
        var currentPassword: String?
    }

    struct ContactChangeConfirm: Codable, Sendable {
        var code: String
        var currentCode: String?
    }

    var emailChangeStart: ServiceOperation {
        contactChangeStart(
            .email, "auth.email.change.start",
            summary: "Starts changing the email: needs `currentPassword` (accounts without a password leave it out and get a code at their current phone or email, for confirm's `currentCode`). The new address gets a code, or a notice when it already has an account; the answer is the same. Ignores idem.").ignoringIdem()
    }

    var phoneChangeStart: ServiceOperation {
        contactChangeStart(
            .phone, "auth.phone.change.start",
            summary: "Starts changing the phone number: needs `currentPassword` (accounts without a password leave it out and get a code at their current number or email, for confirm's `currentCode`). The new number gets an SMS code, or a notice when it already has an account; the answer is the same. SMS caps per number, account and client apply. Ignores idem.").ignoringIdem()
    }

    var emailChangeConfirm: ServiceOperation {
        contactChangeConfirm(
            .email, "auth.email.change.confirm",
            summary: "Confirms the new email with its `code` (and `currentCode` for accounts without a password). The old address gets a notice and the account's other sessions end. Ignores idem (codes are single use).").ignoringIdem()
    }

    var phoneChangeConfirm: ServiceOperation {
        contactChangeConfirm(
            .phone, "auth.phone.change.confirm",
            summary: "Confirms the new phone number with its SMS `code` (and `currentCode` for accounts without a password). The old number gets a notice and the account's other sessions end. Ignores idem (codes are single use).").ignoringIdem()
    }

    private func contactChangeStart(_ kind: ContactKind, _ name: String, summary: String) -> ServiceOperation {
        let (codes, outbox, caps, check) = (confirmationCodes, outbox, smsCaps, PasswordCheck(hasher: hasher, limits: passwordLimits))
        let schema = kind == .email ? AuthSchemas.email : AuthSchemas.phone
        return .task(
            name, summary: summary, auth: .authenticated,
            request: .object([kind.field: schema, "currentPassword": AuthSchemas.password], required: [kind.field]), response: .empty
        ) { (context, input: ContactChangeStart) in
            let principal = try context.requirePrincipal()
            let userID = principal.userID
            guard let requested = kind == .email ? input.newEmail.map(Identifiers.email) : input.phone else {
                throw ServiceError.invalid(kind.field, "required")
            }
            let account = try await context.database().read { db -> (email: String?, phone: String?, hasPassword: Bool, anonymous: Bool)? in
                try Row.fetchOne(db, sql: "SELECT email, phone, password_hash, anonymous FROM user WHERE id = ?", arguments: [userID]).map {
                    ($0["email"], $0["phone"], ($0["password_hash"] as String?) != nil, $0["anonymous"])
                }
            }
            guard let account else { throw ServiceError.notFound("no such user") }
            let hasPassword = account.hasPassword
            if hasPassword {
                guard let password = input.currentPassword else {
                    throw ServiceError.invalid("currentPassword", "your current password is needed to change the \(kind.noun)")
                }
                guard try await check.verifyCaller(context, operation: name, password: password) else {
                    throw ServiceError.invalid("currentPassword", "is not your current password")
                }
            } else if input.currentPassword != nil {
                throw ServiceError.invalid(
                    "currentPassword", "this account has no password: leave it out and confirm with the code sent to your current phone or email")
            }
            try await context.write { db in
                try AttemptLimiter.check(db, key: "contact-change:" + userID, limit: 5, window: 3_600)
                try AttemptLimiter.record(db, key: "contact-change:" + userID)
                // A device account has no other credential to prove: its token is all it has.
                if !hasPassword && !account.anonymous {
                    let code = try codes.issue(db, .contactChangeCurrent, target: userID)
                    let text = "Your code to confirm changing the \(kind.noun) of your account is \(code). If you did not ask for it, someone may be using your account: sign out all sessions."
                    if let phone = account.phone {
                        try caps.spend(db, to: phone, account: userID, client: context.clientAddress)
                        try MessageOutbox.enqueue(db, .sms, to: phone, body: text, outbox: outbox)
                    } else if let email = account.email {
                        try MessageOutbox.enqueue(db, .email, to: email, subject: "Confirm the change of your \(kind.noun)", body: text, outbox: outbox)
                    } else {
                        throw ServiceError.conflict("the account has no phone or email to send a code to", reason: "no_contact")
                    }
                }
                // The same work whether the address is free or taken: a code (and the
                // resend rule) either way, and one message to the address.
                let taken = try String.fetchOne(db, sql: "SELECT id FROM user WHERE \(kind.column) = ?", arguments: [requested])
                    .map { $0 != userID } ?? false
                let code = try codes.issue(db, kind.purpose, target: userID, detail: requested)
                let text =
                    taken
                    ? "Someone asked to use this \(kind.noun) for another account. It already has an account with us, so nothing changed."
                    : "Your code to confirm this \(kind.noun) is \(code). It is valid for 30 minutes."
                switch kind {
                case .email:
                    try MessageOutbox.enqueue(db, .email, to: requested, subject: "Confirm your new email", body: text, outbox: outbox)
                case .phone:
                    try caps.spend(db, to: requested, account: userID, client: context.clientAddress)
                    try MessageOutbox.enqueue(db, .sms, to: requested, body: text, outbox: outbox)
                }
            }
            return Empty()
        }
    }

    private func contactChangeConfirm(_ kind: ContactKind, _ name: String, summary: String) -> ServiceOperation {
        let (codes, outbox, caps, issuer) = (confirmationCodes, outbox, smsCaps, issuer)
        // An email proven by a code is a verified email.
        let assignment = kind == .email ? "email = ?, email_verified = 1" : "phone = ?"
        return .task(
            name, summary: summary, auth: .authenticated,
            request: .object(
                ["code": .string(minLength: 6, maxLength: 6), "currentCode": .string(minLength: 6, maxLength: 6)], required: ["code"]),
            response: AuthSchemas.profile
        ) { (context, input: ContactChangeConfirm) in
            let principal = try context.requirePrincipal()
            let userID = principal.userID
            // Refusals are returned, not thrown, so a wrong code's count commits.
            return try await context.write { db -> Result<ProfileOperations.Profile, ServiceError> in
                guard let account = try Row.fetchOne(db, sql: "SELECT email, phone, password_hash, anonymous FROM user WHERE id = ?", arguments: [userID])
                else { return .failure(.notFound("no such user")) }
                let needsCurrentCode = (account["password_hash"] as String?) == nil && !(account["anonymous"] as Bool)
                if needsCurrentCode {
                    guard let currentCode = input.currentCode else {
                        return .failure(.invalid("currentCode", "the code sent to your current phone or email is needed"))
                    }
                    if case .failure(let refusal) = try codes.check(db, .contactChangeCurrent, target: userID, code: currentCode, consume: false) {
                        return .failure(refusal.serviceError(field: "currentCode"))
                    }
                }
                let checked = try codes.check(db, kind.purpose, target: userID, code: input.code)
                guard case .success(let detail) = checked, let value = detail else {
                    if case .failure(let refusal) = checked { return .failure(refusal.serviceError) }
                    return .failure(OneTimeCodes.Refusal.noValidCode.serviceError)
                }
                if try String.fetchOne(db, sql: "SELECT id FROM user WHERE \(kind.column) = ?", arguments: [value]).map({ $0 != userID }) == true {
                    return .failure(.conflict("this \(kind.noun) belongs to another account", reason: kind.takenReason))
                }
                if needsCurrentCode, let currentCode = input.currentCode {
                    _ = try codes.check(db, .contactChangeCurrent, target: userID, code: currentCode)
                }
                let old = account[kind.column] as String?
                try db.execute(sql: "UPDATE user SET \(assignment) WHERE id = ?", arguments: [value, userID])
                try DeviceOperations.becomeOrdinary(db, userID: userID)
                // The old address hears of it: the owner learns of a change they did not make.
                if let old, old != value {
                    let notice = "The \(kind.noun) of your account was changed to \(DestinationMask.apply(value)). If this was not you, contact support at once."
                    switch kind {
                    case .email:
                        try MessageOutbox.enqueue(db, .email, to: old, subject: "Your email was changed", body: notice, outbox: outbox)
                    case .phone:
                        // A notice never fails the change; past the SMS caps the email tells instead.
                        if (try? caps.spend(db, to: old, account: userID, client: context.clientAddress)) != nil {
                            try MessageOutbox.enqueue(db, .sms, to: old, body: notice, outbox: outbox)
                        } else if let email = account["email"] as String? {
                            try MessageOutbox.enqueue(db, .email, to: email, subject: "Your phone number was changed", body: notice, outbox: outbox)
                        }
                    }
                }
                let others = try SessionIssuer.live(db, userID: userID).filter { $0 != principal.sessionID }
                try issuer.revoke(db, sessions: others, userID: userID, reason: "\(kind.column)_changed")
                try AuditLog.record(
                    db, kind.audit, user: userID, detail: ["to": .string(DestinationMask.apply(value)), "sessionsEnded": .integer(Int64(others.count))],
                    client: context.clientAddress)
                guard let profile = try ProfileOperations.Profile.load(db, id: userID) else { return .failure(.notFound("no such user")) }
                return .success(profile)
            }.get()
        }
    }
}

import Foundation
import GRDB
import Platform

/// Six-digit codes sent by SMS or email: stored hashed, single use, limited in time and
/// attempts, resent no sooner than a minute after the last one.
struct OneTimeCodes: Sendable {
    /// What a code proves.
    enum Purpose: String, Sendable {
        case phoneSignIn = "phone_sign_in"
        case passwordReset = "password_reset"
        case emailChange = "email_change"
        case accountDeletion = "account_deletion"
        case phoneChange = "phone_change"
        /// A change of email or phone on an account without a password, proven by a code
        /// sent to its current contact.
        case contactChangeCurrent = "contact_change_current"
    }

    /// How long a code is valid.
    var lifetime: TimeInterval
    /// The earliest resend.
    var resendAfter: TimeInterval = 60
    /// Wrong entries allowed before the code is void.
    var maxAttempts = 5

    static func migrate(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("auth-3-codes") { db in
            try db.execute(sql: """
                CREATE TABLE one_time_code (
                    purpose TEXT NOT NULL,
                    target TEXT NOT NULL,
                    code_hash TEXT NOT NULL,
                    salt TEXT NOT NULL,
                    detail TEXT,
                    created_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    used_at REAL,
                    PRIMARY KEY (purpose, target)
                );
                """)
        }
    }

    /// A fresh code from the CSPRNG (uniform over 000000–999999).
    static func generate() -> String {
        var value: UInt32
        repeat {
            value = Digest.randomBytes(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        } while value >= 4_294_000_000  // drop the uneven tail: every code equally likely
        return Instant.digits(Int(value % 1_000_000), width: 6)
    }

    static func hash(_ code: String, salt: String, target: String) -> String {
        Digest.sha256Hex(Array("\(salt):\(target):\(code)".utf8))
    }

    /// Stores a new code for (purpose, target), replacing an older one; throws
    /// `rate_limited` when the last one is under a minute old. `detail` travels with the
    /// code (e.g. the new email address of an email change).
    func issue(_ db: Database, _ purpose: Purpose, target: String, detail: String? = nil, now: Date = Date()) throws -> String {
        if let last = try Double.fetchOne(
            db, sql: "SELECT created_at FROM one_time_code WHERE purpose = ? AND target = ?", arguments: [purpose.rawValue, target])
        {
            let wait = last + resendAfter - now.timeIntervalSince1970
            if wait > 0 { throw ServiceError.rateLimited(retryAfterMs: Int64(wait * 1000), "a code was sent less than a minute ago") }
        }
        let code = Self.generate()
        let salt = Digest.hex(Digest.randomBytes(8))
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO one_time_code (purpose, target, code_hash, salt, detail, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                purpose.rawValue, target, Self.hash(code, salt: salt, target: target), salt, detail, now.timeIntervalSince1970,
                now.timeIntervalSince1970 + lifetime,
            ])
        return code
    }

    /// Why a code was not accepted.
    enum Refusal: Error, Equatable {
        /// No code, used, or expired.
        case noValidCode
        /// The code is wrong; attempts are left.
        case wrong
        /// Too many wrong attempts: the code is void.
        case tooManyAttempts

        var serviceError: ServiceError { serviceError(field: "code") }

        /// The refusal as the error of the request member `field` that carried the code: the
        /// same answer whichever it is, so a guess does not tell whether a code was sent to
        /// someone's number or address lately (the attempts are counted all the same).
        func serviceError(field: String) -> ServiceError {
            .invalid(field, "the code is wrong, expired or used (five wrong codes void it): check it or request a new one")
        }
    }

    /// Checks a code and, when `consume` is set and it matches, uses it up. A wrong code
    /// counts an attempt (the caller must commit even though it fails). Returns the
    /// code's detail.
    func check(
        _ db: Database, _ purpose: Purpose, target: String, code: String, consume: Bool = true, now: Date = Date()
    ) throws -> Result<String?, Refusal> {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT * FROM one_time_code WHERE purpose = ? AND target = ?", arguments: [purpose.rawValue, target]),
            row["used_at"] as Double? == nil, (row["expires_at"] as Double) > now.timeIntervalSince1970
        else { return .failure(.noValidCode) }
        let attempts: Int = row["attempts"]
        guard attempts < maxAttempts else { return .failure(.tooManyAttempts) }
        let expected: String = row["code_hash"]
        guard Digest.constantTimeEqual(Array(Self.hash(code, salt: row["salt"], target: target).utf8), Array(expected.utf8)) else {
            try db.execute(
                sql: "UPDATE one_time_code SET attempts = attempts + 1 WHERE purpose = ? AND target = ?", arguments: [purpose.rawValue, target])
            return .failure(attempts + 1 < maxAttempts ? .wrong : .tooManyAttempts)
        }
        if consume {
            try db.execute(
                sql: "UPDATE one_time_code SET used_at = ? WHERE purpose = ? AND target = ?",
                arguments: [now.timeIntervalSince1970, purpose.rawValue, target])
        }
        return .success(row["detail"])
    }
}

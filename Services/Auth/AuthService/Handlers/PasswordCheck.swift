import Foundation
import GRDB
import Platform
import Synchronization

/// How many wrong passwords are let through in a window, and keyed on what (README,
/// "Auth": the scheme follows OWASP's authentication guidance).
///
/// - per account **and** client address (5 in 15 minutes): a stranger guessing from one
///   address is stopped without locking out the owner signing in from elsewhere;
/// - per account from every address (50 in 15 minutes): guessing spread over many
///   addresses still slows everyone down on that account;
/// - per client address over every account (20 in 15 minutes): one address trying
///   passwords across many accounts (credential stuffing).
///
/// A request without an address (a service's direct socket) counts as the address
/// `direct`.
public struct PasswordLimits: Sendable, Equatable {
    public var perAccountAndClient = 5
    public var perAccount = 50
    public var perClient = 20
    public var window: TimeInterval = 15 * 60

    public init() {}

    /// Forgets every wrong-password count of an account (a reset proved the mailbox; the
    /// account is deleted).
    static func clear(_ db: Database, account: String) throws {
        let pairs = "pw:\(account)|"
        try db.execute(
            sql: "DELETE FROM attempt WHERE substr(key, 1, length(?)) = ? OR key = ?", arguments: [pairs, pairs, "pw-account:\(account)"])
    }

    /// The pair's key: the one a success clears.
    func pairKey(account: String, client: String?) -> String { "pw:\(account)|\(client ?? "direct")" }

    /// Every key an attempt counts under, with its limit.
    func keys(account: String, client: String?) -> [(key: String, limit: Int)] {
        var keys = [(pairKey(account: account, client: client), perAccountAndClient), ("pw-account:\(account)", perAccount)]
        if let client { keys.append(("pw-client:\(client)", perClient)) }
        return keys
    }
}

/// Every check of a password, whichever operation asks (sign-in, password change,
/// account deletion, email or phone change): the same limits, the same counting, the
/// same audit. An attempt is counted before the hash runs, so parallel guesses cannot
/// pass the limit together; a match takes its attempts back; a request refused before
/// it was hashed (the hashing queue full, the deadline passed) or whose deadline passed
/// while it was hashed (the caller was answered `timeout`) does not count. At most
/// ``perAccountInFlight`` checks of one account, and ``perClientInFlight`` from one client
/// address, hash at a time; more at once are refused with `rate_limited` before anything is
/// counted, so a flood on one account holds at most that many places in the hashing queue
/// ahead of everyone else's sign-ins, and so does one address signing in to many accounts
/// of its own with their right passwords (which no wrong-password count stops: a helper's
/// eight accounts, two sign-ins each at all times, kept every other user's sign-in waiting
/// past its deadline).
struct PasswordCheck: Sendable {
    let hasher: PasswordHasher
    let limits: PasswordLimits

    /// Checks of one account allowed to wait for or run a hash at once.
    static let perAccountInFlight = 2
    /// Checks from one client address allowed to wait for or run a hash at once (a quarter
    /// of the default queue of 16).
    static let perClientInFlight = 4
    private static let inFlight = Mutex<[String: Int]>([:])

    /// Takes a place for a check of `account` from `client`; false (taking nothing) when
    /// either has its most already.
    private static func enter(_ account: String, client: String) -> Bool {
        let keys = ["account:" + account, "client:" + client]
        return inFlight.withLock { counts in
            guard counts[keys[0], default: 0] < perAccountInFlight, counts[keys[1], default: 0] < perClientInFlight else { return false }
            for key in keys { counts[key, default: 0] += 1 }
            return true
        }
    }

    private static func leave(_ account: String, client: String) {
        inFlight.withLock { counts in
            for key in ["account:" + account, "client:" + client] {
                let left = counts[key, default: 1] - 1
                counts[key] = left > 0 ? left : nil
            }
        }
    }

    /// Whose password is checked: the key its attempts count under (the user id, or
    /// `email:<address>` for a sign-in to an address nobody has), the user if any, and the
    /// stored hash if the account has a password.
    struct Subject: Sendable {
        var accountKey: String
        var userID: String?
        var hash: String?
    }

    /// The user id when `password` is the password of the account `lookup` finds (in the
    /// transaction that counts the attempt); `nil` when it is not, audited as `failure`
    /// with `operation`. Throws `rate_limited` when a limit is reached or the hashing
    /// queue is full.
    func verify(
        _ context: RequestContext, operation: String, password: String, failure: AuditLog.Action = .passwordRejected,
        lookup: @escaping @Sendable (Database) throws -> Subject
    ) async throws -> String? {
        let (client, limits) = (context.clientAddress, self.limits)
        let (subject, reserved) = try await context.write { db -> (Subject, [Int64]) in
            let subject = try lookup(db)
            let keys = limits.keys(account: subject.accountKey, client: client)
            for (key, limit) in keys { try AttemptLimiter.check(db, key: key, limit: limit, window: limits.window) }
            return (subject, try keys.map { try AttemptLimiter.record(db, key: $0.key) })
        }
        let matches: Bool
        let place = client ?? "direct"
        guard Self.enter(subject.accountKey, client: place) else {
            _ = try? await context.write { db in try AttemptLimiter.remove(db, ids: reserved) }
            throw ServiceError.rateLimited(retryAfterMs: 1_000)
        }
        defer { Self.leave(subject.accountKey, client: place) }
        do {
            if let hash = subject.hash {
                matches = try await hasher.verify(password, against: hash)
            } else {
                // An account without a password costs the same time as a wrong one.
                try await hasher.verifyAgainstNothing(password)
                matches = false
            }
        } catch {
            // Never hashed (the queue full, the deadline passed first), so not a guess:
            // the attempts go back.
            _ = try? await context.write { db in try AttemptLimiter.remove(db, ids: reserved) }
            throw error
        }
        if Task.isCancelled {
            // The deadline passed while hashing: the caller was answered `timeout`, so the
            // outcome is not told and the check does not count, either way.
            _ = try? await context.write { db in try AttemptLimiter.remove(db, ids: reserved) }
            throw CancellationError()
        }
        let userID = matches ? subject.userID : nil
        try await context.write { db in
            if userID != nil {
                try AttemptLimiter.remove(db, ids: reserved)
                try AttemptLimiter.clear(db, key: limits.pairKey(account: subject.accountKey, client: client))
            } else {
                try AuditLog.record(db, failure, user: subject.userID, detail: ["operation": .string(operation)], client: client)
            }
        }
        return userID
    }

    /// ``verify(_:operation:password:failure:lookup:)`` for the signed-in caller's own password.
    func verifyCaller(_ context: RequestContext, operation: String, password: String) async throws -> Bool {
        let principal = try context.requirePrincipal()
        return try await verify(context, operation: operation, password: password) { db in
            Subject(
                accountKey: principal.userID, userID: principal.userID,
                hash: try String.fetchOne(db, sql: "SELECT password_hash FROM user WHERE id = ?", arguments: [principal.userID]))
        } != nil
    }
}

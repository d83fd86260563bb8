import Foundation
import Platform

/// The roles of the system.
public enum Role: String, Sendable, CaseIterable, Codable {
    /// Sets goals (goals app).
    case recipient
    /// Accepts goals and promises rewards (goals app).
    case sponsor
    /// Wake park staff.
    case staff
    /// Administrators.
    case admin

    /// Roles a user may pick as active themselves; staff and admin are granted by admins.
    public static let selfSelectable: Set<Role> = [.recipient, .sponsor]
    /// The roles every new account holds: the goals app lets people act as either.
    public static let defaults: [Role] = [.recipient, .sponsor]
}

/// The password rule: 8 to 128 characters, printable (letters of any script, digits,
/// punctuation, spaces); the goals app's Latin-letters-and-digits rule is a subset.
public enum PasswordPolicy {
    /// The problem with `password`, or `nil` when it is acceptable.
    public static func problem(with password: String) -> String? {
        let length = password.count
        if length < 8 { return "must have at least 8 characters" }
        if length > 128 { return "must have at most 128 characters" }
        if password.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) {
            return "must contain printable characters only"
        }
        return nil
    }
}

/// How long sessions and tokens live.
public struct SessionPolicy: Sendable, Equatable {
    /// Access token lifetime (5 minutes).
    public var accessTokenLifetime: TimeInterval = 5 * 60
    /// A session without a refresh for this long is over (the goals spec: at least 15 minutes idle).
    public var idleTimeout: TimeInterval = 15 * 60
    /// A session never lasts longer than this (30 days).
    public var absoluteLifetime: TimeInterval = 30 * 24 * 3600
    /// Live sessions per account (`BACKEND_AUTH_MAX_SESSIONS`, default 20); a new one
    /// beyond ends the oldest.
    public var maxSessions = 20
    /// How long after a refresh its refresh token may be presented again, for a client
    /// whose reply was lost (a timeout, a crash after the commit), while the token it
    /// was given has not been used: the retry gets new tokens and that unused one is void.
    /// Past this, or once the new token was used, presenting it again is reuse.
    public var refreshRetryGrace: TimeInterval = 30

    /// The defaults.
    public init() {}

    /// Why a session can no longer be refreshed at `now`, or `nil` if it can.
    public func expiry(createdAt: Date, lastSeenAt: Date, now: Date) -> String? {
        if now.timeIntervalSince(createdAt) >= absoluteLifetime { return "the session has reached its maximum age" }
        if now.timeIntervalSince(lastSeenAt) >= idleTimeout { return "the session expired after inactivity" }
        return nil
    }
}

/// Normalized identifiers.
public enum Identifiers {
    /// Emails compare case-insensitively: stored trimmed and lowercased.
    public static func email(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// A new opaque id with a readable prefix (`usr_...`).
    public static func make(_ prefix: String) -> String {
        prefix + "_" + Digest.hex(Digest.randomBytes(12))
    }

    /// An opaque secret for refresh tokens (256 bits, base64url).
    public static func secret() -> String {
        Base64URL.encode(Digest.randomBytes(32))
    }
}

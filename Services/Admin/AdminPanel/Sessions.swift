import Foundation
import Platform
import Synchronization

/// What the panel may show a signed-in person: everything (admins) or the park's desk (staff).
public enum PanelRole: String, Sendable, Equatable {
    case admin
    case staff

    /// The panel role of someone holding `roles`, `nil` when neither admin nor staff.
    public static func of(_ roles: Set<String>) -> PanelRole? {
        if roles.contains("admin") { return .admin }
        if roles.contains("staff") { return .staff }
        return nil
    }

    /// Whether this role may do what `required` allows (admins may do what staff may).
    public func allows(_ required: PanelRole) -> Bool { self == .admin || required == .staff }
}

/// One signed-in browser. The tokens never leave the panel: the browser holds only the
/// session's random id in an HttpOnly cookie.
public struct AdminSession: Sendable {
    /// The cookie's value: 32 random bytes, hex.
    public let id: String
    /// The token every form of this session carries (synchronizer token pattern).
    public let csrf: String
    public var userID: String
    public var name: String
    public var roles: Set<String>
    public var locale: String
    /// The admin's time zone (their profile's), for dates and times on the pages.
    public var timeZone: String = "UTC"
    public var accessToken: String
    public var accessExpiresAt: Date
    public var refreshToken: String
    public var createdAt: Date
    public var lastSeen: Date
    /// A message for the next page (after a redirect), shown once.
    public var flash: String?
    /// When auth last accepted the session's token (``SessionStore/confirmed(_:now:every:check:)``).
    public var confirmedAt = Date()

    public var role: PanelRole { PanelRole.of(roles) ?? .staff }
}

/// The panel's sessions, in memory: a restart of the panel signs everyone out.
///
/// A session ends after `idleTimeout` without a request (auth's own idle limit: its
/// refresh token would be refused after that anyway) and after `absoluteTimeout`.
public final class SessionStore: Sendable {
    private let sessions = Mutex<[String: AdminSession]>([:])
    private let refreshing = Mutex<[String: Task<AdminSession?, Never>]>([:])
    public let idleTimeout: TimeInterval
    public let absoluteTimeout: TimeInterval

    public init(idleTimeout: TimeInterval = 15 * 60, absoluteTimeout: TimeInterval = 12 * 3_600) {
        self.idleTimeout = idleTimeout
        self.absoluteTimeout = absoluteTimeout
    }

    /// 32 random bytes as 64 hex characters.
    public static func randomToken() -> String { Digest.hex(Digest.randomBytes(32)) }

    /// Stores a new session for a successful sign-in.
    public func create(userID: String, name: String, roles: Set<String>, locale: String, tokens: Tokens, now: Date = Date()) -> AdminSession {
        let session = AdminSession(
            id: Self.randomToken(), csrf: Self.randomToken(), userID: userID, name: name, roles: roles, locale: locale,
            accessToken: tokens.access, accessExpiresAt: tokens.accessExpiresAt, refreshToken: tokens.refresh, createdAt: now,
            lastSeen: now, confirmedAt: now)
        sessions.withLock { sessions in
            sessions = sessions.filter { isLive($0.value, now: now) }
            sessions[session.id] = session
        }
        return session
    }

    /// The live session with this id (its last-seen time moved to `now`), or `nil`.
    public func session(id: String, now: Date = Date()) -> AdminSession? {
        sessions.withLock { sessions in
            guard var session = sessions[id] else { return nil }
            guard isLive(session, now: now) else {
                sessions[id] = nil
                return nil
            }
            session.lastSeen = now
            sessions[id] = session
            return session
        }
    }

    /// Changes a stored session (no-op when it is gone).
    public func update(_ id: String, _ change: (inout AdminSession) -> Void) {
        sessions.withLock { sessions in
            guard var session = sessions[id] else { return }
            change(&session)
            sessions[id] = session
        }
    }

    /// Takes the flash message of a session, once.
    public func takeFlash(_ id: String) -> String? {
        sessions.withLock { sessions in
            let flash = sessions[id]?.flash
            sessions[id]?.flash = nil
            return flash
        }
    }

    public func remove(_ id: String) { _ = sessions.withLock { $0.removeValue(forKey: id) } }

    /// How many sessions are stored.
    public var count: Int { sessions.withLock { $0.count } }

    private func isLive(_ session: AdminSession, now: Date) -> Bool {
        now.timeIntervalSince(session.lastSeen) < idleTimeout && now.timeIntervalSince(session.createdAt) < absoluteTimeout
    }

    /// Tokens from `auth.login` or `auth.refresh`.
    public struct Tokens: Sendable {
        public var access: String
        public var accessExpiresAt: Date
        public var refresh: String

        public init(access: String, accessExpiresAt: Date, refresh: String) {
            self.access = access
            self.accessExpiresAt = accessExpiresAt
            self.refresh = refresh
        }

        /// Reads the answer of `auth.login`/`auth.refresh`.
        public init?(_ answer: JSONValue) {
            guard let access = answer["accessToken"]?.stringValue, let refresh = answer["refreshToken"]?.stringValue,
                let expires = answer["accessTokenExpiresAt"]?.stringValue.flatMap(Instant.parse)
            else { return nil }
            self.init(access: access, accessExpiresAt: expires, refresh: refresh)
        }
    }

    /// The session if auth still accepts it, asked at most once per `every` seconds: an
    /// account deleted or a role taken away since sign-in ends the account's sessions in
    /// auth, which a page reading only public data (the park, the goal texts) would not
    /// otherwise notice until the next token refresh. `check` answers false when auth
    /// refused the token; an unreachable auth keeps the session.
    public func confirmed(
        _ session: AdminSession, now: Date = Date(), every: TimeInterval = 15, check: @Sendable (String) async -> Bool
    ) async -> AdminSession? {
        guard now.timeIntervalSince(session.confirmedAt) >= every else { return session }
        guard await check(session.accessToken) else {
            remove(session.id)
            return nil
        }
        var confirmed = session
        confirmed.confirmedAt = now
        update(session.id) { $0.confirmedAt = now }
        return confirmed
    }

    /// A session whose access token is good for at least `margin` more, refreshing it
    /// through `refresh` when not. Refresh tokens are single use (a second use revokes the
    /// session), so concurrent requests of one browser share one refresh.
    public func fresh(
        _ session: AdminSession, now: Date = Date(), margin: TimeInterval = 30,
        refresh: @escaping @Sendable (String) async -> Tokens?
    ) async -> AdminSession? {
        if session.accessExpiresAt.timeIntervalSince(now) > margin { return session }
        let id = session.id
        let task: Task<AdminSession?, Never> = refreshing.withLock { running in
            if let existing = running[id] { return existing }
            let task = Task<AdminSession?, Never> { [self] in
                // Another request may have refreshed it while this one waited for the lock.
                guard let current = sessions.withLock({ $0[id] }) else { return nil }
                if current.accessExpiresAt.timeIntervalSince(Date()) > margin { return current }
                guard let tokens = await refresh(current.refreshToken) else {
                    remove(id)
                    return nil
                }
                var updated: AdminSession?
                update(id) { session in
                    session.accessToken = tokens.access
                    session.accessExpiresAt = tokens.accessExpiresAt
                    session.refreshToken = tokens.refresh
                    updated = session
                }
                return updated
            }
            running[id] = task
            return task
        }
        let result = await task.value
        refreshing.withLock { running in
            if running[id] == task { running[id] = nil }
        }
        return result
    }
}

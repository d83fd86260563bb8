/// Who is calling: the verified claims of an access token.
public struct Principal: Sendable, Hashable, Codable {
    /// The user's id.
    public var userID: String
    /// Every role the user holds (`recipient`, `sponsor`, `staff`, `admin`).
    public var roles: Set<String>
    /// The role the user acts in now (the goals app lets people switch).
    public var activeRole: String?
    /// The session the token belongs to.
    public var sessionID: String

    /// Creates a principal.
    public init(userID: String, roles: Set<String>, activeRole: String? = nil, sessionID: String) {
        self.userID = userID
        self.roles = roles
        self.activeRole = activeRole
        self.sessionID = sessionID
    }

    /// Whether the user holds `role`.
    public func has(_ role: String) -> Bool { roles.contains(role) }
}

/// Who may call an operation.
public enum AuthRule: Sendable, Equatable {
    /// Anyone, without a token.
    case `public`
    /// Any signed-in user.
    case authenticated
    /// A signed-in user holding at least one of the roles.
    case anyRole(Set<String>)
    /// Other services and operators' tools on the internal network only: the gateway
    /// refuses these for clients with `forbidden`.
    case `internal`
    /// Internal, and only from the operators' CURVE key (`ctl`, load tools): another
    /// service's key is refused, so a compromised container cannot, say, make an admin.
    /// With CURVE off (no keys to tell callers apart) it is ``internal``.
    case operatorOnly

    /// The rule as `describe` shows it.
    /// Whether only the deployment reaches it (the gateway refuses it for clients).
    public var isInternal: Bool { self == .internal || self == .operatorOnly }

    public var wireName: String {
        switch self {
        case .public: "public"
        case .authenticated: "authenticated"
        case .anyRole(let roles): "role:" + roles.sorted().joined(separator: "|")
        case .internal: "internal"
        case .operatorOnly: "internal:operator"
        }
    }
}

/// Checks access tokens locally, without asking the auth service.
public protocol TokenVerifier: Sendable {
    /// Returns the token's principal, or throws `ServiceError.unauthenticated`.
    func verify(_ token: String) throws(ServiceError) -> Principal

    /// Called when a token names a key the verifier does not know (just started, or auth
    /// rotated its keys): fetch the keys now; returns whether they may have changed.
    func refreshKeys() async -> Bool

    /// Whether the session was revoked since its token was verified: every write of an
    /// authenticated request asks again inside its transaction (see
    /// ``RequestContext/commit(requiringLiveSession:_:)``).
    func isRevoked(session: String) -> Bool

    /// Whether ``verify(_:)`` would answer `token` without a signature check (its claims
    /// are remembered): a socket's thread checks such tokens itself and leaves the others
    /// (about 80 µs of Ed25519 each, and free for anyone to send) to other threads.
    func verifiesAtOnce(_ token: String) -> Bool
}

extension TokenVerifier {
    public func refreshKeys() async -> Bool { false }
    public func isRevoked(session: String) -> Bool { false }
    public func verifiesAtOnce(_ token: String) -> Bool { true }
}

extension ServiceError {
    /// The reason a token was refused because its key is unknown (see ``TokenVerifier/refreshKeys()``).
    public static let unknownKeyReason = "unknown_key"

    /// Whether this is the refusal of a token signed by an unknown key.
    public var isUnknownKey: Bool { details["reason"] == .string(Self.unknownKeyReason) }
}

/// The verifier of a process that has not been given auth's public keys: every token
/// is refused, so only public operations can succeed.
public struct RefusingTokenVerifier: TokenVerifier {
    /// Creates the verifier.
    public init() {}
    public func verify(_ token: String) throws(ServiceError) -> Principal {
        throw .unauthenticated("this service cannot verify tokens: no signing keys are configured")
    }
}

import Foundation
import Synchronization

/// The claims of an access token (RFC 7519), as auth issues them.
public struct AccessTokenClaims: Sendable, Equatable {
    /// `sub`: the user id.
    public var userID: String
    /// `roles`: every role the user holds.
    public var roles: [String]
    /// `role`: the role the user acts in now.
    public var activeRole: String?
    /// `sid`: the session.
    public var sessionID: String
    /// `iat`, seconds since 1970.
    public var issuedAt: Int64
    /// `exp`, seconds since 1970.
    public var expiresAt: Int64

    /// Creates claims.
    public init(userID: String, roles: [String], activeRole: String?, sessionID: String, issuedAt: Int64, expiresAt: Int64) {
        self.userID = userID
        self.roles = roles
        self.activeRole = activeRole
        self.sessionID = sessionID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "iss": "auth", "sub": .string(userID), "roles": .array(roles.map { .string($0) }), "sid": .string(sessionID),
            "iat": .integer(issuedAt), "exp": .integer(expiresAt),
        ]
        if let activeRole { members["role"] = .string(activeRole) }
        return .object(members)
    }

    init?(json: JSONValue) {
        guard case .string(let subject)? = json["sub"], case .string(let session)? = json["sid"],
            case .integer(let issuedAt)? = json["iat"], case .integer(let expiresAt)? = json["exp"],
            case .array(let roleValues)? = json["roles"], json["iss"] == "auth"
        else { return nil }
        let roles = roleValues.compactMap(\.stringValue)
        guard roles.count == roleValues.count else { return nil }
        self.init(
            userID: subject, roles: roles, activeRole: json["role"]?.stringValue, sessionID: session, issuedAt: issuedAt,
            expiresAt: expiresAt)
    }

    /// The principal these claims describe.
    public var principal: Principal {
        Principal(userID: userID, roles: Set(roles), activeRole: activeRole, sessionID: sessionID)
    }
}

/// Signs access tokens: JWTs with `alg: EdDSA` (RFC 8037) and the key's id in `kid`.
public struct AccessTokenSigner: Sendable {
    /// The key id published with the public key.
    public let keyID: String
    private let key: Ed25519PrivateKey

    /// Creates a signer.
    public init(keyID: String, key: Ed25519PrivateKey) {
        self.keyID = keyID
        self.key = key
    }

    /// The compact JWT for `claims`.
    public func token(for claims: AccessTokenClaims) throws -> String {
        let header: JSONValue = ["alg": "EdDSA", "typ": "JWT", "kid": .string(keyID)]
        let signingInput = Base64URL.encode(header.serialized) + "." + Base64URL.encode(claims.json.serialized)
        return signingInput + "." + Base64URL.encode(try key.signature(for: Array(signingInput.utf8)))
    }
}

/// Verifies access tokens locally with auth's public keys (no call to auth per request):
/// the signature by a known `kid`, `alg: EdDSA`, expiry, and that the session was not
/// revoked. Recently verified tokens are cached, so a client's repeated requests cost a
/// dictionary lookup instead of a signature check.
public final class AccessTokenVerifier: TokenVerifier, Sendable {
    private let keys = Mutex<[String: Ed25519PublicKey]>([:])
    /// Revoked sessions and when they were revoked (epoch seconds), kept for
    /// ``revocationRetention``: by then every token of theirs has expired.
    private let revokedSessions = Mutex<(sessions: [String: Int64], pruneMark: Int)>(([:], 0))
    private let cache = Mutex<[String: AccessTokenClaims]>([:])
    private let now: @Sendable () -> Int64
    private let cacheLimit: Int
    private let keySource = Mutex<(@Sendable () async -> Bool)?>(nil)

    /// Where to fetch keys when a token names an unknown one (the ``AuthKeyRefresher``).
    public func setKeySource(_ fetch: @escaping @Sendable () async -> Bool) {
        keySource.withLock { $0 = fetch }
    }

    public func refreshKeys() async -> Bool {
        guard let fetch = keySource.withLock({ $0 }) else { return false }
        return await fetch()
    }

    /// Creates a verifier with the given public keys by key id.
    public init(
        keys: [String: Ed25519PublicKey] = [:], cacheLimit: Int = 4_096,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) {
        self.keys.withLock { $0 = keys }
        self.cacheLimit = cacheLimit
        self.now = now
    }

    /// Replaces the known public keys (key rotation: old and new ids side by side).
    public func setKeys(_ newKeys: [String: Ed25519PublicKey]) {
        keys.withLock { $0 = newKeys }
        cache.withLock { $0.removeAll() }
    }

    /// The key ids known.
    public var keyIDs: Set<String> { keys.withLock { Set($0.keys) } }

    /// How long a revocation is remembered: longer than any access token lives (5
    /// minutes), so a revoked session's tokens have all expired when it is forgotten.
    public static let revocationRetention: Int64 = 3_600

    /// Refuses every token of these sessions from now on (`at`: when they were revoked,
    /// epoch seconds; now by default). The token cache is left alone: every verification
    /// checks revocations anyway. Revocations older than ``revocationRetention`` are
    /// forgotten, so the set stays as small as the last hour's revocations.
    public func revoke(sessions: some Sequence<String>, at: Int64? = nil) {
        let now = self.now()
        let when = at ?? now
        guard when > now - Self.revocationRetention else { return }
        revokedSessions.withLock { revoked in
            for session in sessions { revoked.sessions[session] = max(revoked.sessions[session] ?? when, when) }
            // Pruned when the set has doubled since the last pruning: amortized O(1).
            if revoked.sessions.count >= 2 * max(revoked.pruneMark, 512) {
                revoked.sessions = revoked.sessions.filter { $0.value > now - Self.revocationRetention }
                revoked.pruneMark = revoked.sessions.count
            }
        }
    }

    /// Tokens whose verified claims are cached now.
    public var cachedTokens: Int { cache.withLock { $0.count } }

    /// Sessions remembered as revoked now.
    public var revokedCount: Int { revokedSessions.withLock { $0.sessions.count } }

    public func verify(_ token: String) throws(ServiceError) -> Principal {
        let claims: AccessTokenClaims
        if let cached = cache.withLock({ $0[token] }) {
            claims = cached
        } else {
            claims = try verifySignature(token)
            cache.withLock { cache in
                // A full cache is simply emptied: cheap, and valid tokens refill it.
                if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[token] = claims
            }
        }
        guard claims.expiresAt > now() else { throw .unauthenticated("the access token has expired") }
        guard !isRevoked(session: claims.sessionID) else { throw .unauthenticated("the session was revoked") }
        return claims.principal
    }

    public func isRevoked(session: String) -> Bool {
        revokedSessions.withLock { $0.sessions[session] } != nil
    }

    public func verifiesAtOnce(_ token: String) -> Bool {
        cache.withLock { $0[token] != nil }
    }

    private func verifySignature(_ token: String) throws(ServiceError) -> AccessTokenClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard token.utf8.count <= 4_096, parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONParser.parse(Data(headerBytes)), let payload = try? JSONParser.parse(Data(payloadBytes))
        else { throw .unauthenticated("the access token is malformed") }
        guard header["alg"] == "EdDSA", case .string(let keyID)? = header["kid"] else {
            throw .unauthenticated("the access token is not signed with EdDSA")
        }
        guard let key = keys.withLock({ $0[keyID] }) else {
            throw ServiceError(
                .unauthenticated, "the access token is signed by an unknown key", details: ["reason": .string(ServiceError.unknownKeyReason)])
        }
        let signingInput = token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)
        guard key.isValidSignature(signature, for: Array(signingInput)) else {
            throw .unauthenticated("the access token signature is not valid")
        }
        guard let claims = AccessTokenClaims(json: payload) else { throw .unauthenticated("the access token claims are malformed") }
        return claims
    }
}

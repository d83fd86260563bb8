import Foundation
import Platform
import Synchronization
import Testing

@Suite("Access tokens")
struct AccessTokenTests {
    let key: Ed25519PrivateKey
    let signer: AccessTokenSigner
    let now: Int64 = 1_800_000_000

    init() throws {
        key = try Ed25519PrivateKey()
        signer = AccessTokenSigner(keyID: "k1", key: key)
    }

    func claims(expiresIn seconds: Int64 = 300, session: String = "ses_1") -> AccessTokenClaims {
        AccessTokenClaims(
            userID: "usr_1", roles: ["recipient", "sponsor"], activeRole: "sponsor", sessionID: session, issuedAt: now,
            expiresAt: now + seconds)
    }

    func makeVerifier(_ keys: [String: Ed25519PublicKey]? = nil) -> AccessTokenVerifier {
        let now = self.now
        return AccessTokenVerifier(keys: keys ?? ["k1": key.publicKey], now: { now })
    }

    @Test("a signed token verifies to its claims; its header names EdDSA and the key id")
    func roundTrip() throws {
        let token = try signer.token(for: claims())
        let principal = try makeVerifier().verify(token)
        #expect(principal == Principal(userID: "usr_1", roles: ["recipient", "sponsor"], activeRole: "sponsor", sessionID: "ses_1"))
        let header = try JSONParser.parse(Data(try #require(Base64URL.decode(token.split(separator: ".")[0]))))
        #expect(header == ["alg": "EdDSA", "typ": "JWT", "kid": "k1"])
    }

    @Test("a revocation refuses only its sessions' tokens, keeps the cache, and is forgotten once its tokens have expired")
    func revocationsAreBounded() throws {
        let clock = Atomic<Int64>(now)
        let verifier = AccessTokenVerifier(keys: ["k1": key.publicKey], now: { clock.load(ordering: .relaxed) })
        let kept = try signer.token(for: claims(session: "ses_kept"))
        let revoked = try signer.token(for: claims(session: "ses_gone"))
        _ = try verifier.verify(kept)
        _ = try verifier.verify(revoked)
        #expect(verifier.cachedTokens == 2)
        verifier.revoke(sessions: ["ses_gone"])
        #expect(verifier.cachedTokens == 2, "a revocation does not empty the cache")
        #expect(throws: ServiceError.unauthenticated("the session was revoked")) { try verifier.verify(revoked) }
        #expect(try verifier.verify(kept).sessionID == "ses_kept")
        // An hour later, revocations pile up only as far as the last hour's.
        clock.store(now + AccessTokenVerifier.revocationRetention + 1, ordering: .relaxed)
        verifier.revoke(sessions: (0..<2_000).map { "ses_new_\($0)" })
        #expect(verifier.revokedCount <= 2_000, "the hour-old revocation is forgotten")
        verifier.revoke(sessions: ["ses_ancient"], at: now - 2 * AccessTokenVerifier.revocationRetention)
        #expect(verifier.revokedCount <= 2_000, "a revocation older than any token is not even kept")
    }

    @Test("tampered, unknown-key, expired, malformed and revoked tokens are refused")
    func refusals() throws {
        let token = try signer.token(for: claims())
        let parts = token.split(separator: ".").map(String.init)
        // Change the payload (another user) but keep the signature.
        let forgedPayload = Base64URL.encode(
            try JSONParser.parse(Data(try #require(Base64URL.decode(parts[1])))).merging(["sub": "usr_admin"]).serialized)
        let tampered = [parts[0], forgedPayload, parts[2]].joined(separator: ".")
        #expect(throws: ServiceError.self) { try makeVerifier().verify(tampered) }

        let stranger = AccessTokenSigner(keyID: "k1", key: try Ed25519PrivateKey())
        #expect(throws: ServiceError.unauthenticated("the access token signature is not valid")) {
            try makeVerifier().verify(try stranger.token(for: claims()))
        }
        let unknownKey = AccessTokenSigner(keyID: "k9", key: try Ed25519PrivateKey())
        let unknown = #expect(throws: ServiceError.self) { try makeVerifier().verify(try unknownKey.token(for: claims())) }
        #expect(unknown?.code == .unauthenticated && unknown?.isUnknownKey == true)
        #expect(throws: ServiceError.unauthenticated("the access token has expired")) {
            try makeVerifier().verify(try signer.token(for: claims(expiresIn: 0)))
        }
        for garbage in ["", "a.b", "a.b.c", "x.y.z.w", parts[0] + "." + parts[1] + "."] {
            #expect(throws: ServiceError.self) { try makeVerifier().verify(garbage) }
        }
        let noneHeader: JSONValue = ["alg": "none", "kid": "k1"]
        let unsigned = Base64URL.encode(noneHeader.serialized) + "." + parts[1] + "."
        #expect(throws: ServiceError.self) { try makeVerifier().verify(unsigned) }

        let verifier = makeVerifier()
        #expect(try verifier.verify(token).sessionID == "ses_1")
        verifier.revoke(sessions: ["ses_1"])
        #expect(throws: ServiceError.unauthenticated("the session was revoked")) { try verifier.verify(token) }
    }

    @Test("a token of an unknown key makes the verifier fetch keys once, then it verifies")
    func fetchOnUnknownKey() async throws {
        let newKey = try Ed25519PrivateKey()
        let verifier = makeVerifier()
        let publication = KeyPublication(verifier, keys: ["k1": key.publicKey, "k2": newKey.publicKey])
        verifier.setKeySource { await publication.fetch() }
        let token = try AccessTokenSigner(keyID: "k2", key: newKey).token(for: claims())
        #expect(throws: ServiceError.self) { try verifier.verify(token) }
        #expect(await verifier.refreshKeys())
        #expect(try verifier.verify(token).userID == "usr_1")
        #expect(publication.fetches == 1)
    }

    /// Requests arriving together with a token of a key not yet fetched (a service started
    /// just before auth) all wait for one fetch and verify; none is refused meanwhile.
    @Test("many requests with an unknown key share one fetch and all verify; forged ids fetch at most once a period")
    func concurrentFetchOnUnknownKey() async throws {
        let newKey = try Ed25519PrivateKey()
        let verifier = makeVerifier()
        let publication = KeyPublication(verifier, keys: ["k1": key.publicKey, "k2": newKey.publicKey], taking: .milliseconds(50))
        let flight = SingleFlight(quietPeriod: .milliseconds(300)) { await publication.fetch() }
        verifier.setKeySource { await flight.run() }
        let token = try AccessTokenSigner(keyID: "k2", key: newKey).token(for: claims())
        let verified = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    if (try? verifier.verify(token)) != nil { return true }
                    guard await verifier.refreshKeys() else { return false }
                    return (try? verifier.verify(token)) != nil
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(verified == 64)
        #expect(publication.fetches == 1)

        // A forged key id right after: the last result, no new fetch; after the quiet
        // period, one more.
        #expect(await verifier.refreshKeys())
        #expect(publication.fetches == 1)
        try await Task.sleep(for: .milliseconds(400))
        #expect(await verifier.refreshKeys())
        #expect(publication.fetches == 2)
    }

    @Test("base64url encodes as Foundation's base64 with - and _ and no padding, and decodes back")
    func base64URL() {
        var generator = SystemRandomNumberGenerator()
        for length in Array(0...70) + [255, 256, 1_000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == expected)
            #expect(Base64URL.decode(encoded) == bytes)
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test("key rotation: tokens of every published key verify")
    func rotation() throws {
        let newKey = try Ed25519PrivateKey()
        let verifier = makeVerifier(["k1": key.publicKey, "k2": newKey.publicKey])
        #expect(throws: Never.self) { try verifier.verify(try signer.token(for: claims())) }
        #expect(throws: Never.self) { try verifier.verify(try AccessTokenSigner(keyID: "k2", key: newKey).token(for: claims())) }
        verifier.setKeys(["k2": newKey.publicKey])
        #expect(throws: ServiceError.self) { try verifier.verify(try signer.token(for: claims())) }
    }

    @Test("the JWK set round-trips the keys")
    func jwks() throws {
        let document = JSONWebKeySet.document([("k1", key.publicKey)])
        #expect(document["keys"]?.arrayValue?.first?["kty"] == "OKP")
        let keys = JSONWebKeySet.keys(from: document)
        #expect(keys["k1"]?.rawRepresentation == key.publicKey.rawRepresentation)
    }

    @Test("Ed25519 matches RFC 8032 test vector 1")
    func rfc8032Vector() throws {
        func bytes(_ hex: String) -> [UInt8] {
            stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
        }
        let secret = try Ed25519PrivateKey(
            rawRepresentation: bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        #expect(secret.publicKey.rawRepresentation == bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        let signature = try secret.signature(for: [UInt8]())
        #expect(
            Digest.hex(signature)
                == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(secret.publicKey.isValidSignature(signature, for: [UInt8]()))
        #expect(!secret.publicKey.isValidSignature(signature, for: [0]))
    }
}

@Suite("Secret box")
struct SecretBoxTests {
    @Test("sealed values open with their key and context only, and any change is detected")
    func sealing() throws {
        let box = try SecretBox(key: Digest.randomBytes(32))
        let secret = Digest.randomBytes(32)
        let sealed = try box.seal(secret, context: Array("k1".utf8))
        #expect(SecretBox.isSealed(sealed) && !SecretBox.isSealed(secret))
        #expect(sealed.count == 3 + 12 + 32 + 16)
        #expect(try box.open(sealed, context: Array("k1".utf8)) == secret)
        #expect(try box.seal(secret, context: Array("k1".utf8)) != sealed, "a fresh nonce each time")
        #expect(throws: CryptoError.self) { try box.open(sealed, context: Array("k2".utf8)) }
        #expect(throws: CryptoError.self) { try SecretBox(key: Digest.randomBytes(32)).open(sealed, context: Array("k1".utf8)) }
        for index in [3, 20, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 1
            #expect(throws: CryptoError.self) { try box.open(tampered, context: Array("k1".utf8)) }
        }
        #expect(throws: CryptoError.self) { try SecretBox(base64: "c2hvcnQ=") }
        #expect(try SecretBox(base64: Data(Digest.randomBytes(32)).base64EncodedString()).seal([1], context: []).count == 3 + 12 + 1 + 16)
    }
}

/// A key fetch for tests: it publishes `keys` to `verifier` (after `delay`, as a call to
/// auth takes a while) and counts its runs.
final class KeyPublication: Sendable {
    private let verifier: AccessTokenVerifier
    private let keys: [String: Ed25519PublicKey]
    private let delay: Duration
    private let runs = Mutex(0)

    init(_ verifier: AccessTokenVerifier, keys: [String: Ed25519PublicKey], taking delay: Duration = .zero) {
        self.verifier = verifier
        self.keys = keys
        self.delay = delay
    }

    /// How many fetches ran.
    var fetches: Int { runs.withLock { $0 } }

    func fetch() async -> Bool {
        runs.withLock { $0 += 1 }
        if delay > .zero { try? await Task.sleep(for: delay) }
        verifier.setKeys(keys)
        return true
    }
}

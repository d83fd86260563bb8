import Foundation
import Platform
import SharedTesting
import Testing

/// Operations with a fast path check the token on the socket thread; a token of a key the
/// service has not fetched yet must still reach the fetch, as for every other operation.
@Suite("Fast paths and unknown keys")
struct FastPathKeysTests {
    @Test("a token of a key not fetched yet is verified after the fetch, on a fast path as elsewhere")
    func fastPathFetchesKeys() async throws {
        let oldKey = try Ed25519PrivateKey(), newKey = try Ed25519PrivateKey()
        let verifier = AccessTokenVerifier(keys: ["k1": oldKey.publicKey])
        let publication = KeyPublication(verifier, keys: ["k1": oldKey.publicKey, "k2": newKey.publicKey])
        let flight = SingleFlight(quietPeriod: .milliseconds(1)) { await publication.fetch() }
        verifier.setKeySource { await flight.run() }
        let now = Int64(Date().timeIntervalSince1970)
        let claims = AccessTokenClaims(userID: "usr_9", roles: [], activeRole: nil, sessionID: "ses_9", issuedAt: now, expiresAt: now + 300)
        let token = try AccessTokenSigner(keyID: "k2", key: newKey).token(for: claims)
        try await InProcessService.with(TestService.definition(), verifier: verifier) { service in
            let fast = try await service.call("test.me.fast", as: .token(token))
            #expect(fast.data == "usr_9")
            #expect(publication.fetches == 1)
            // A token no key verifies is still refused.
            let forged = try AccessTokenSigner(keyID: "k3", key: try Ed25519PrivateKey()).token(for: claims)
            #expect(try await service.call("test.me.fast", as: .token(forged)).error?.code == .unauthenticated)
        }
    }
}

import Foundation
import GRDB
import Platform
import Synchronization

/// Auth's Ed25519 signing keys, kept in its database. Tokens are signed with the newest
/// key; every key not retired is published by `auth.keys`, so tokens signed before a
/// rotation stay valid until they expire.
///
/// With a key-encryption key (`BACKEND_AUTH_KEY_ENCRYPTION_KEY`) the private keys are
/// stored sealed (``SecretBox``, AES-256-GCM bound to the key id); keys stored in the
/// clear before one was set are sealed at the next start. A copy of `auth.sqlite` alone
/// then mints no tokens.
final class SigningKeys: Sendable {
    private struct State {
        var signer: AccessTokenSigner
        var published: [(id: String, key: Ed25519PublicKey)]
    }

    private let state = Mutex<State?>(nil)
    /// The verifier auth itself uses, sharing these keys.
    let verifier: AccessTokenVerifier

    /// Seals private keys at rest, when a key-encryption key is configured.
    let box: SecretBox?

    /// Keys that are loaded with ``load(from:)`` once the database is open.
    init(verifier: AccessTokenVerifier, box: SecretBox? = nil) {
        self.verifier = verifier
        self.box = box
    }

    /// The stored form of a private key.
    static func stored(_ key: Ed25519PrivateKey, id: String, box: SecretBox?) throws -> Data {
        guard let box else { return Data(key.rawRepresentation) }
        return Data(try box.seal(key.rawRepresentation, context: Array(id.utf8)))
    }

    /// The private key of a stored form.
    static func key(stored: Data, id: String, box: SecretBox?) throws -> Ed25519PrivateKey {
        let bytes = Array(stored)
        guard SecretBox.isSealed(bytes) else { return try Ed25519PrivateKey(rawRepresentation: bytes) }
        guard let box else {
            throw ConfigurationError("the signing keys are encrypted: set BACKEND_AUTH_KEY_ENCRYPTION_KEY to the key they were sealed with")
        }
        return try Ed25519PrivateKey(rawRepresentation: try box.open(bytes, context: Array(id.utf8)))
    }

    /// Loads the keys, creating the first one on first start, and seals any stored in the
    /// clear when a key-encryption key is configured.
    func load(from pool: DatabasePool) throws {
        let box = self.box
        let keys = try pool.write { db -> [(String, Ed25519PrivateKey)] in
            if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM signing_key WHERE retired_at IS NULL") == 0 {
                try Self.insertNewKey(db, box: box)
            }
            let rows = try Row.fetchAll(
                db, sql: "SELECT kid, private_key FROM signing_key WHERE retired_at IS NULL ORDER BY created_at, kid")
            return try rows.map { row in
                let id: String = row["kid"], stored: Data = row["private_key"]
                let key = try Self.key(stored: stored, id: id, box: box)
                if box != nil, !SecretBox.isSealed(Array(stored)) {
                    try db.execute(
                        sql: "UPDATE signing_key SET private_key = ? WHERE kid = ?", arguments: [try Self.stored(key, id: id, box: box), id])
                }
                return (id, key)
            }
        }
        guard let newest = keys.last else { throw CryptoError("no signing key") }
        state.withLock {
            $0 = State(signer: AccessTokenSigner(keyID: newest.0, key: newest.1), published: keys.map { ($0.0, $0.1.publicKey) })
        }
        verifier.setKeys(Dictionary(uniqueKeysWithValues: keys.map { ($0.0, $0.1.publicKey) }))
    }

    @discardableResult
    static func insertNewKey(_ db: Database, box: SecretBox?) throws -> (id: String, key: Ed25519PrivateKey) {
        let key = try Ed25519PrivateKey()
        let id = "k" + Digest.hex(Digest.randomBytes(6))
        try db.execute(
            sql: "INSERT INTO signing_key (kid, private_key, created_at) VALUES (?, ?, ?)",
            arguments: [id, try stored(key, id: id, box: box), Instant.format(Date())])
        return (id, key)
    }

    /// The signer of new tokens.
    var signer: AccessTokenSigner {
        get throws {
            guard let signer = state.withLock({ $0?.signer }) else { throw CryptoError("signing keys are not loaded") }
            return signer
        }
    }

    /// The published keys as a JWK set.
    var document: JSONValue { JSONWebKeySet.document(state.withLock { $0?.published ?? [] }) }

    /// Withdraws a key; the newest remaining key signs from now on. The last key cannot go.
    func retire(_ id: String, pool: DatabasePool) throws {
        try pool.write { db in
            let live = try String.fetchAll(db, sql: "SELECT kid FROM signing_key WHERE retired_at IS NULL")
            guard live.contains(id) else { throw ServiceError.notFound("no such live key") }
            guard live.count > 1 else { throw ServiceError.conflict("rotate in a new key before retiring the last one", reason: "last_key") }
            try db.execute(sql: "UPDATE signing_key SET retired_at = ? WHERE kid = ?", arguments: [Instant.format(Date()), id])
            try AuditLog.record(db, .keyRotated, user: nil, detail: ["retired": .string(id)])
        }
        try load(from: pool)
    }

    /// Adds a new signing key; the old ones stay published.
    func rotate(pool: DatabasePool) throws -> String {
        let box = self.box
        let (id, key) = try pool.write { db -> (String, Ed25519PrivateKey) in
            let new = try Self.insertNewKey(db, box: box)
            try AuditLog.record(db, .keyRotated, user: nil, detail: ["kid": .string(new.id)])
            return new
        }
        let published = state.withLock { state -> [(id: String, key: Ed25519PublicKey)] in
            let published = (state?.published ?? []) + [(id, key.publicKey)]
            state = State(signer: AccessTokenSigner(keyID: id, key: key), published: published)
            return published
        }
        verifier.setKeys(Dictionary(uniqueKeysWithValues: published.map { ($0.id, $0.key) }))
        return id
    }
}

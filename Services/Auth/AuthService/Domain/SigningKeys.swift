import Foundation
import GRDB
import Platform
import Synchronization

/// Auth's Ed25519 signing keys, kept in its database. Tokens are signed with the newest
/// key; every key not retired is published by `auth.keys`, so tokens signed before a
/// rotation stay valid until they expire.
final class SigningKeys: Sendable {
    private struct State {
        var signer: AccessTokenSigner
        var published: [(id: String, key: Ed25519PublicKey)]
    }

    private let state = Mutex<State?>(nil)
    /// The verifier auth itself uses, sharing these keys.
    let verifier: AccessTokenVerifier

    /// Keys that are loaded with ``load(from:)`` once the database is open.
    init(verifier: AccessTokenVerifier) {
        self.verifier = verifier
    }

    /// Loads the keys, creating the first one on first start.
    func load(from pool: DatabasePool) throws {
        let rows = try pool.write { db -> [Row] in
            if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM signing_key WHERE retired_at IS NULL") == 0 {
                try Self.insertNewKey(db)
            }
            return try Row.fetchAll(
                db, sql: "SELECT kid, private_key FROM signing_key WHERE retired_at IS NULL ORDER BY created_at, kid")
        }
        let keys = try rows.map { row -> (String, Ed25519PrivateKey) in
            let raw: Data = row["private_key"]
            return (row["kid"], try Ed25519PrivateKey(rawRepresentation: Array(raw)))
        }
        guard let newest = keys.last else { throw CryptoError("no signing key") }
        state.withLock {
            $0 = State(signer: AccessTokenSigner(keyID: newest.0, key: newest.1), published: keys.map { ($0.0, $0.1.publicKey) })
        }
        verifier.setKeys(Dictionary(uniqueKeysWithValues: keys.map { ($0.0, $0.1.publicKey) }))
    }

    @discardableResult
    static func insertNewKey(_ db: Database) throws -> String {
        let key = try Ed25519PrivateKey()
        let id = "k" + Digest.hex(Digest.randomBytes(6))
        try db.execute(
            sql: "INSERT INTO signing_key (kid, private_key, created_at) VALUES (?, ?, ?)",
            arguments: [id, Data(key.rawRepresentation), Instant.format(Date())])
        return id
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
        let (id, raw) = try pool.write { db -> (String, Data) in
            let id = try Self.insertNewKey(db)
            try AuditLog.record(db, .keyRotated, user: nil, detail: ["kid": .string(id)])
            let raw = try Data.fetchOne(db, sql: "SELECT private_key FROM signing_key WHERE kid = ?", arguments: [id]) ?? Data()
            return (id, raw)
        }
        let key = try Ed25519PrivateKey(rawRepresentation: Array(raw))
        let published = state.withLock { state -> [(id: String, key: Ed25519PublicKey)] in
            let published = (state?.published ?? []) + [(id, key.publicKey)]
            state = State(signer: AccessTokenSigner(keyID: id, key: key), published: published)
            return published
        }
        verifier.setKeys(Dictionary(uniqueKeysWithValues: published.map { ($0.id, $0.key) }))
        return id
    }
}

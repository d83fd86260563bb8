import COpenSSL
import Foundation

/// Backups readable only by operators (README, "Backups"): a backup is sealed to the
/// operators' `backup` public key (an X25519 key, made by `ctl keys generate` beside the
/// CURVE keys; no process of the system holds its secret), so a copy of the backup volume
/// shows nothing of the audit log or of anyone's data.
///
/// Sealed form: `"bks1"` ‖ a fresh ephemeral X25519 public key (32 bytes) ‖ the
/// ``SecretBox`` (AES-256-GCM) of the backup under
/// `HMAC-SHA256(ECDH(ephemeral, recipient), "backend backup seal v1" ‖ ephemeral ‖ recipient)`,
/// with the magic, both public keys bound as associated data. Changing a byte, or opening
/// with another key, fails.
public enum BackupSeal {
    static let magic: [UInt8] = Array("bks1".utf8)

    /// Whether `bytes` starts like a sealed backup.
    public static func isSealed(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count > magic.count + 32 && Array(bytes.prefix(magic.count)) == magic
    }

    /// Seals `plaintext` to the 32-byte X25519 public key `recipient`.
    public static func seal(_ plaintext: [UInt8], to recipient: [UInt8]) throws -> [UInt8] {
        guard recipient.count == 32 else { throw CryptoError("a backup recipient key has 32 bytes") }
        let ephemeralSecret = Digest.randomBytes(32)
        let ephemeralPublic = try publicKey(ofSecret: ephemeralSecret)
        let key = try sealingKey(secret: ephemeralSecret, peer: recipient, ephemeral: ephemeralPublic, recipient: recipient)
        let box = try SecretBox(key: key)
        return magic + ephemeralPublic + (try box.seal(plaintext, context: magic + ephemeralPublic + recipient))
    }

    /// Opens a sealed backup with the recipient's 32-byte X25519 secret key.
    public static func open(_ sealed: [UInt8], secretKey: [UInt8]) throws -> [UInt8] {
        guard isSealed(sealed), secretKey.count == 32 else { throw CryptoError("not a sealed backup, or not a 32-byte key") }
        let ephemeralPublic = Array(sealed[magic.count..<(magic.count + 32)])
        let recipient = try publicKey(ofSecret: secretKey)
        let key = try sealingKey(secret: secretKey, peer: ephemeralPublic, ephemeral: ephemeralPublic, recipient: recipient)
        do {
            return try SecretBox(key: key).open(Array(sealed.dropFirst(magic.count + 32)), context: magic + ephemeralPublic + recipient)
        } catch {
            throw CryptoError("the backup cannot be opened with this key (another key, or the file was changed)")
        }
    }

    private static func sealingKey(secret: [UInt8], peer: [UInt8], ephemeral: [UInt8], recipient: [UInt8]) throws -> [UInt8] {
        let shared = try agree(secret: secret, peer: peer)
        return Digest.hmacSHA256(key: shared, message: Array("backend backup seal v1".utf8) + ephemeral + recipient)
    }

    /// The X25519 public key of a secret key.
    static func publicKey(ofSecret secret: [UInt8]) throws -> [UInt8] {
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, secret, 32) else { throw CryptoError("not an X25519 key") }
        defer { EVP_PKEY_free(key) }
        var bytes = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key, &bytes, &length) == 1, length == 32 else { throw CryptoError("no X25519 public key") }
        return bytes
    }

    /// X25519 key agreement.
    static func agree(secret: [UInt8], peer: [UInt8]) throws -> [UInt8] {
        guard let own = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, secret, 32) else { throw CryptoError("not an X25519 key") }
        defer { EVP_PKEY_free(own) }
        guard let other = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, peer, 32) else { throw CryptoError("not an X25519 public key") }
        defer { EVP_PKEY_free(other) }
        guard let context = EVP_PKEY_CTX_new(own, nil) else { throw CryptoError("no key agreement context") }
        defer { EVP_PKEY_CTX_free(context) }
        var shared = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, other) == 1,
            EVP_PKEY_derive(context, &shared, &length) == 1, length == 32
        else { throw CryptoError("X25519 key agreement failed") }
        // An all-zero secret means a low-order peer key: refuse it.
        guard shared.contains(where: { $0 != 0 }) else { throw CryptoError("X25519 key agreement gave a zero secret") }
        return shared
    }
}

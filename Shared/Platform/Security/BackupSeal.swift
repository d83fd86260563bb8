import COpenSSL
import Foundation

/// Backups readable only by operators, and made only by the deployment (README,
/// "Backups"): a backup is sealed to the operators' `backup` public key (an X25519 key,
/// made by `ctl keys generate` beside the CURVE keys; no process of the system holds its
/// secret), so a copy of the backup volume shows nothing of the audit log or of anyone's
/// data; and it is sealed *by* the CURVE key of whoever made it (a service, or the
/// operator's `ctl`), so a file written into the backup folder by someone without one of
/// those keys cannot pass for a backup: restore accepts only the service's own key and
/// the operator's.
///
/// Sealed form: `"bks2"` ‖ a fresh ephemeral X25519 public key (32 bytes) ‖ the sender's
/// public key (32 bytes) ‖ the ``SecretBox`` (AES-256-GCM) of the backup under
/// `HMAC-SHA256(ECDH(ephemeral, recipient) ‖ ECDH(sender, recipient), "backend backup seal v2" ‖ ephemeral ‖ sender ‖ recipient)`,
/// with the magic and the three public keys bound as associated data. Changing a byte,
/// claiming another sender, or opening with another key, fails.
public enum BackupSeal {
    static let magic: [UInt8] = Array("bks2".utf8)
    /// The first format (no sender): recognised, and refused.
    static let firstMagic: [UInt8] = Array("bks1".utf8)

    /// Whether `bytes` starts like a sealed backup.
    public static func isSealed(_ bytes: some Collection<UInt8>) -> Bool {
        let head = Array(bytes.prefix(magic.count))
        return bytes.count > magic.count + 32 && (head == magic || head == firstMagic)
    }

    /// Seals `plaintext` to the 32-byte X25519 public key `recipient`, as the holder of
    /// the 32-byte X25519 (CURVE) secret key `sender`.
    public static func seal(_ plaintext: [UInt8], to recipient: [UInt8], from sender: [UInt8]) throws -> [UInt8] {
        guard recipient.count == 32 else { throw CryptoError("a backup recipient key has 32 bytes") }
        guard sender.count == 32 else { throw CryptoError("a backup sender key has 32 bytes") }
        let ephemeralSecret = Digest.randomBytes(32)
        let ephemeralPublic = try publicKey(ofSecret: ephemeralSecret)
        let senderPublic = try publicKey(ofSecret: sender)
        let shared = try agree(secret: ephemeralSecret, peer: recipient) + (try agree(secret: sender, peer: recipient))
        let key = sealingKey(shared: shared, ephemeral: ephemeralPublic, sender: senderPublic, recipient: recipient)
        let header = magic + ephemeralPublic + senderPublic
        return header + (try SecretBox(key: key).seal(plaintext, context: header + recipient))
    }

    /// What an opened backup holds, and who sealed it.
    public struct Opened: Sendable {
        public var plaintext: [UInt8]
        /// The sender's 32-byte public key (proven: only its secret key could seal it).
        public var sender: [UInt8]
    }

    /// Opens a sealed backup with the recipient's 32-byte X25519 secret key.
    public static func open(_ sealed: [UInt8], secretKey: [UInt8]) throws -> Opened {
        guard isSealed(sealed), secretKey.count == 32 else { throw CryptoError("not a sealed backup, or not a 32-byte key") }
        guard Array(sealed.prefix(magic.count)) == magic, sealed.count > magic.count + 64 else {
            throw CryptoError("the backup was sealed by an earlier version that did not prove who made it: take a new backup")
        }
        let ephemeralPublic = Array(sealed[magic.count..<(magic.count + 32)])
        let senderPublic = Array(sealed[(magic.count + 32)..<(magic.count + 64)])
        let recipient = try publicKey(ofSecret: secretKey)
        do {
            let shared = try agree(secret: secretKey, peer: ephemeralPublic) + (try agree(secret: secretKey, peer: senderPublic))
            let key = sealingKey(shared: shared, ephemeral: ephemeralPublic, sender: senderPublic, recipient: recipient)
            let plaintext = try SecretBox(key: key).open(
                Array(sealed.dropFirst(magic.count + 64)), context: magic + ephemeralPublic + senderPublic + recipient)
            return Opened(plaintext: plaintext, sender: senderPublic)
        } catch {
            throw CryptoError("the backup cannot be opened with this key (another key, or the file was changed)")
        }
    }

    private static func sealingKey(shared: [UInt8], ephemeral: [UInt8], sender: [UInt8], recipient: [UInt8]) -> [UInt8] {
        Digest.hmacSHA256(key: shared, message: Array("backend backup seal v2".utf8) + ephemeral + sender + recipient)
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

/// Who seals backups to whom: the operators' public key, and the sealing process's own
/// CURVE secret key (both 32 bytes).
public struct BackupSealing: Sendable {
    public var recipient: [UInt8]
    public var sender: [UInt8]

    public init(recipient: [UInt8], sender: [UInt8]) {
        self.recipient = recipient
        self.sender = sender
    }
}

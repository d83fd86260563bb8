import COpenSSL
import Foundation

/// Why a key or signature operation failed.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public let description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// An Ed25519 public key (RFC 8032), loaded once into OpenSSL for fast verification.
public final class Ed25519PublicKey: @unchecked Sendable {
    // The EVP_PKEY is created in init, never mutated, and freed in deinit; OpenSSL 3
    // allows one key to be used by concurrent verifications, each with its own
    // EVP_MD_CTX, so sharing it across threads is safe.
    private let key: OpaquePointer
    /// The 32 raw bytes.
    public let rawRepresentation: [UInt8]

    /// Loads a key from its 32 raw bytes.
    public init(rawRepresentation: [UInt8]) throws {
        guard rawRepresentation.count == 32,
            let key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, rawRepresentation, 32)
        else { throw CryptoError("not an Ed25519 public key") }
        self.key = key
        self.rawRepresentation = rawRepresentation
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` is this key's signature of `message`.
    public func isValidSignature(_ signature: some ContiguousBytes, for message: some ContiguousBytes) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        return signature.withUnsafeBytes { signatureBytes in
            message.withUnsafeBytes { messageBytes in
                signatureBytes.count == 64
                    && EVP_DigestVerify(
                        context, signatureBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), 64,
                        messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count) == 1
            }
        }
    }
}

/// An Ed25519 private key. Never log it.
public final class Ed25519PrivateKey: @unchecked Sendable {
    // Same reasoning as Ed25519PublicKey: immutable after init, one EVP_MD_CTX per use.
    private let key: OpaquePointer
    /// The 32 raw bytes (the seed), for storage.
    public let rawRepresentation: [UInt8]
    /// The matching public key.
    public let publicKey: Ed25519PublicKey

    /// Generates a new key from OpenSSL's CSPRNG.
    public convenience init() throws {
        try self.init(rawRepresentation: Digest.randomBytes(32))
    }

    /// Loads a key from its 32 raw bytes.
    public init(rawRepresentation: [UInt8]) throws {
        guard rawRepresentation.count == 32,
            let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, rawRepresentation, 32)
        else { throw CryptoError("not an Ed25519 private key") }
        var publicBytes = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key, &publicBytes, &length) == 1 else {
            EVP_PKEY_free(key)
            throw CryptoError("cannot derive the public key")
        }
        self.key = key
        self.rawRepresentation = rawRepresentation
        self.publicKey = try Ed25519PublicKey(rawRepresentation: publicBytes)
    }

    deinit { EVP_PKEY_free(key) }

    /// Signs `message` (64-byte signature).
    public func signature(for message: some ContiguousBytes) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1 else { throw CryptoError("EVP_DigestSignInit failed") }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = 64
        let ok = message.withUnsafeBytes { bytes in
            EVP_DigestSign(context, &signature, &length, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        guard ok == 1, length == 64 else { throw CryptoError("EVP_DigestSign failed") }
        return signature
    }
}

/// Base64url without padding (RFC 4648 §5), as JWTs use it.
public enum Base64URL {
    /// Encodes bytes, without padding (table-driven: Foundation's base64 and three
    /// `replacingOccurrences` took a twentieth of a list page's reader in a profile).
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        return String(unsafeUninitializedCapacity: (input.count * 4 + 2) / 3) { output in
            var written = 0
            // The six-bit digits of a 24-bit group, from the highest; `count` of them.
            func put(_ group: UInt32, _ count: Int) {
                for digit in 0..<count {
                    output[written] = encodingTable[Int(group >> UInt32(18 - 6 * digit) & 0x3F)]
                    written += 1
                }
            }
            var index = 0
            while index + 3 <= input.count {
                put(UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2]), 4)
                index += 3
            }
            switch input.count - index {
            case 1: put(UInt32(input[index]) << 16, 2)
            case 2: put(UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8, 3)
            default: break
            }
            return written
        }
    }

    private static let encodingTable: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Decodes text; `nil` when it is not base64url (table-driven: tokens are decoded on
    /// every verification).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            let value = decodingTable[Int(byte)]
            guard value != 0xFF else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero padding, and a single leftover character is invalid.
        guard bits < 6, buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }

    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()
}

extension Digest {
    /// Compares two byte strings in time that depends only on their length.
    public static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, lhs.count) == 0 } }
    }

    /// HMAC-SHA256 of `message` under `key`.
    public static func hmacSHA256(key: [UInt8], message: some ContiguousBytes) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        message.withUnsafeBytes { bytes in
            _ = HMAC(EVP_sha256(), key, Int32(key.count), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &output, &length)
        }
        return output
    }
}

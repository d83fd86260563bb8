import COpenSSL
import Foundation

/// Hashes from OpenSSL libcrypto.
public enum Digest {
    /// OpenSSL's SHA-256, fetched once: its one-shot `SHA256()` fetches the algorithm
    /// again on every call (a lock and a lookup, half the cost of hashing a request).
    /// Immutable once fetched, and shared by threads as OpenSSL allows.
    nonisolated(unsafe) private static let sha256Algorithm: OpaquePointer? = EVP_MD_fetch(nil, "SHA2-256", nil)

    /// SHA-256 of `bytes`.
    public static func sha256(_ bytes: some ContiguousBytes) -> [UInt8] {
        sha256 { update in bytes.withUnsafeBytes(update) }
    }

    /// SHA-256 of the bytes `feed` hands to its `update`, in order, without joining them
    /// into one buffer first.
    public static func sha256(_ feed: (_ update: (UnsafeRawBufferPointer) -> Void) -> Void) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestInit_ex2(context, sha256Algorithm, nil) == 1, "SHA-256 is not available")
        feed { bytes in _ = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
        var output = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &output, &length) == 1 && length == SHA256_DIGEST_LENGTH, "SHA-256 failed")
        return output
    }

    /// SHA-256 of `bytes` as lowercase hex.
    public static func sha256Hex(_ bytes: some ContiguousBytes) -> String {
        hex(sha256(bytes))
    }

    /// Lowercase hex of bytes.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var output = [UInt8]()
        output.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `count` bytes from OpenSSL's CSPRNG.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        let ok = RAND_bytes(&output, Int32(count))
        precondition(ok == 1, "RAND_bytes failed")
        return output
    }
}

import COpenSSL
import Foundation

/// Hashes from OpenSSL libcrypto.
public enum Digest {
    /// SHA-256 of `bytes`.
    public static func sha256(_ bytes: some ContiguousBytes) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        bytes.withUnsafeBytes { input in
            _ = SHA256(input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, &output)
        }
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

import COpenSSL
import Foundation
import Platform

/// Password hashing with scrypt (OpenSSL `EVP_PBE_scrypt`).
///
/// Stored form: `scrypt$<log2 N>$<r>$<p>$<salt base64url>$<hash base64url>`, so the cost
/// can be raised later and old hashes still verify. Hashing runs on two dedicated
/// threads (each hash takes 128 MiB at N=2^17), never on the cooperative pool, the
/// dispatch queues nor the socket thread: sign-ins queue there while everything else
/// keeps answering. The queue is bounded: with `maxQueued` hashes waiting, another is
/// refused at once with `rate_limited` rather than answered after its deadline; a
/// request past its deadline is dropped before it is hashed. Hashes of new accounts'
/// passwords may take only half the queue, so a flood of registrations (each with a
/// new email, so no per-account limit applies) leaves room for sign-ins.
public struct PasswordHasher: Sendable {
    /// log2 of scrypt's N; 17 (N=2^17) is the minimum for production.
    public let logN: Int
    /// Block size.
    public let r = 8
    /// Parallelism.
    public let p = 1

    /// Hashes allowed to wait for a thread.
    public let maxQueued: Int

    /// What a hash is for, which decides how much of the queue it may wait in.
    public enum Purpose: Sendable {
        /// Checking a password, or setting a new one for an existing account: the whole queue.
        case existingAccount
        /// A registration's password: at most half the queue.
        case newAccount
    }

    /// Creates a hasher with cost 2^`logN` and at most `maxQueued` hashes waiting.
    public init(logN: Int = 17, maxQueued: Int = 16) {
        self.logN = logN
        self.maxQueued = maxQueued
    }

    /// Two hashing threads: each hash takes 128 MiB at N=2^17 and a core for ~0.3 s.
    private static let workers = WorkerThreads(name: "password-hashing", count: 2, niceness: 15)

    /// Hashes a password with a new random salt, in Unicode's composed form (NFC, as NIST
    /// SP 800-63B asks), so "ä" typed as one character or as "a" and a combining mark is
    /// the same password. Throws `rate_limited` when the queue has no room for `purpose`.
    public func hash(_ password: String, for purpose: Purpose = .existingAccount) async throws -> String {
        let salt = Digest.randomBytes(16)
        let (logN, r, p) = (self.logN, self.r, self.p)
        let composed = Self.composed(password)
        let derived = try await run(purpose) { try Self.scrypt(composed, salt: salt, logN: logN, r: r, p: p) }
        return "scrypt$\(logN)$\(r)$\(p)$\(Base64URL.encode(salt))$\(Base64URL.encode(derived))"
    }

    /// Whether `password` matches `stored`, compared in constant time. A malformed
    /// stored hash never matches. Throws `rate_limited` when the queue is full and
    /// `CancellationError` when the request gave up first: neither is a wrong password.
    public func verify(_ password: String, against stored: String) async throws -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let logN = Int(parts[1]), let r = Int(parts[2]), let p = Int(parts[3]),
            (10...22).contains(logN), let salt = Base64URL.decode(parts[4]), let expected = Base64URL.decode(parts[5])
        else { return false }
        let composed = Self.composed(password)
        let derived = try await run(.existingAccount) { try Self.scrypt(composed, salt: salt, logN: logN, r: r, p: p) }
        if Digest.constantTimeEqual(derived, expected) { return true }
        // Hashes made before passwords were composed hold the bytes as typed then. (Bytes
        // compared: Swift's `==` on strings already counts the two forms as equal.)
        guard !composed.utf8.elementsEqual(password.utf8) else { return false }
        let typed = try await run(.existingAccount) { try Self.scrypt(password, salt: salt, logN: logN, r: r, p: p) }
        return Digest.constantTimeEqual(typed, expected)
    }

    /// `password` in Unicode's canonical composed form (NFC).
    static func composed(_ password: String) -> String { password.precomposedStringWithCanonicalMapping }

    /// Spends as long as a real verification, for unknown accounts, so that timing does
    /// not tell which emails exist.
    public func verifyAgainstNothing(_ password: String) async throws {
        _ = try await verify(password, against: "scrypt$\(logN)$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
    }

    private func run(_ purpose: Purpose, _ work: @escaping @Sendable () throws -> [UInt8]) async throws -> [UInt8] {
        let room = purpose == .newAccount ? max(1, maxQueued / 2) : maxQueued
        do {
            return try await Self.workers.run(maxQueued: room, work)
        } catch is WorkerThreads.Full {
            throw ServiceError.rateLimited(retryAfterMs: 1_000, "too many passwords are being checked; try again shortly")
        }
    }

    static func scrypt(_ password: String, salt: [UInt8], logN: Int, r: Int, p: Int) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let n = UInt64(1) << UInt64(logN)
        let memory = UInt64(129) * n * UInt64(r) * UInt64(p) + (1 << 20)
        let passwordBytes = Array(password.utf8)
        let ok = passwordBytes.withUnsafeBufferPointer { passwordBuffer in
            passwordBuffer.withMemoryRebound(to: CChar.self) { pass in
                EVP_PBE_scrypt(pass.baseAddress, pass.count, salt, salt.count, n, UInt64(r), UInt64(p), memory, &output, output.count)
            }
        }
        guard ok == 1 else { throw CryptoError("scrypt failed") }
        return output
    }
}

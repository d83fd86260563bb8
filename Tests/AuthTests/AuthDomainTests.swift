import Foundation
import Platform
import Testing

@testable import AuthService

@Suite("Auth domain rules")
struct AuthDomainTests {
    @Test(
        "password policy",
        arguments: [
            ("short7ch", nil), ("1234567", "must have at least 8 characters"), ("пароль-из-букв", nil),
            ("with space ok", nil), ("tab\there!", "must contain printable characters only"),
            (String(repeating: "x", count: 129), "must have at most 128 characters"),
        ] as [(String, String?)])
    func passwordPolicy(password: String, problem: String?) {
        #expect(PasswordPolicy.problem(with: password) == problem)
    }

    @Test("sessions end after the idle timeout and the absolute lifetime, to the second")
    func sessionPolicy() {
        let policy = SessionPolicy()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(policy.expiry(createdAt: start, lastSeenAt: start, now: start.addingTimeInterval(899)) == nil)
        #expect(policy.expiry(createdAt: start, lastSeenAt: start, now: start.addingTimeInterval(900)) != nil)
        let active = start.addingTimeInterval(30 * 86_400 - 60)
        #expect(policy.expiry(createdAt: start, lastSeenAt: active, now: active.addingTimeInterval(59)) == nil)
        #expect(policy.expiry(createdAt: start, lastSeenAt: active, now: active.addingTimeInterval(60)) == "the session has reached its maximum age")
    }

    @Test("proof of work: a found counter solves the challenge, a wrong one does not")
    func proofOfWork() {
        let counter = ProofOfWork.solve(nonce: "abc", difficulty: 12)
        #expect(ProofOfWork.isSolved(nonce: "abc", counter: counter, difficulty: 12))
        #expect(ProofOfWork.leadingZeroBits(Digest.sha256(Array("abc:\(counter)".utf8))) >= 12)
        #expect(ProofOfWork.isSolved(nonce: "abc", counter: 12345, difficulty: 0))
        #expect(ProofOfWork.leadingZeroBits([0, 0, 0x10]) == 19)
    }

    @Test("scrypt hashes verify, carry their parameters, and reject wrong passwords")
    func passwordHashing() async throws {
        let hasher = PasswordHasher(logN: 10)
        let stored = try await hasher.hash("correct horse")
        #expect(stored.hasPrefix("scrypt$10$8$1$"))
        #expect(try await hasher.verify("correct horse", against: stored))
        #expect(!(try await hasher.verify("correct horsE", against: stored)))
        #expect(!(try await hasher.verify("correct horse", against: "scrypt$10$8$1$bad")))
        // A hash made with other parameters still verifies: they are read from the hash.
        #expect(try await PasswordHasher(logN: 12).verify("correct horse", against: stored))
        #expect(try await hasher.hash("correct horse") != stored)
    }

    @Test("a password is the same however its accents are encoded (NFC and NFD), also for hashes of the decomposed form made before")
    func passwordNormalization() async throws {
        let hasher = PasswordHasher(logN: 10)
        let composed = "p\u{E4}ssw\u{F6}rd-\u{E9}\u{E9}1", decomposed = "pa\u{308}sswo\u{308}rd-e\u{301}e\u{301}1"
        #expect(Array(composed.utf8) != Array(decomposed.utf8))
        let stored = try await hasher.hash(composed)
        #expect(try await hasher.verify(decomposed, against: stored))
        #expect(try await hasher.verify(composed, against: stored))
        #expect(try await hasher.verify(decomposed, against: try await hasher.hash(decomposed)))
        #expect(!(try await hasher.verify("passwor-ee1", against: stored)))
        // A hash of the decomposed bytes, as made before passwords were composed, still verifies.
        let salt = [UInt8](repeating: 7, count: 16)
        let legacy = "scrypt$10$8$1$\(Base64URL.encode(salt))$\(Base64URL.encode(try PasswordHasher.scrypt(decomposed, salt: salt, logN: 10, r: 8, p: 1)))"
        #expect(try await hasher.verify(decomposed, against: legacy))
    }

    @Test("birth dates: not in the future, not before 1900")
    func birthDates() {
        #expect(ProfileRules.birthDateProblem("1990-05-01", today: "2026-11-22") == nil)
        #expect(ProfileRules.birthDateProblem("2026-11-23", today: "2026-11-22") == "must not be in the future")
        #expect(ProfileRules.birthDateProblem("1899-12-31", today: "2026-11-22") != nil)
    }
}

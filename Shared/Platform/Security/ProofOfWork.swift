import Foundation

/// Proof of work, the bot check of registration and phone sign-in (`auth.challenge`): find a counter such that SHA-256(nonce ":" counter) starts
/// with `difficulty` zero bits. Part of the wire protocol, so clients, tools and tests
/// share it.
public enum ProofOfWork {
    /// Whether `counter` solves the challenge `nonce` at `difficulty`.
    public static func isSolved(nonce: String, counter: UInt64, difficulty: Int) -> Bool {
        leadingZeroBits(Digest.sha256(Array("\(nonce):\(counter)".utf8))) >= difficulty
    }

    /// Finds a solution (what a client does; used by tests and tools).
    public static func solve(nonce: String, difficulty: Int) -> UInt64 {
        var counter: UInt64 = 0
        while !isSolved(nonce: nonce, counter: counter, difficulty: difficulty) { counter += 1 }
        return counter
    }

    /// What an app sends back for an `auth.challenge` reply's data `{nonce, difficulty}`:
    /// `{"nonce", "counter"}` with the counter found; `nil` when the data is no challenge.
    public static func answer(toChallenge data: JSONValue?) -> JSONValue? {
        guard let nonce = data?["nonce"]?.stringValue, let difficulty = data?["difficulty"]?.integerValue, (0...32).contains(difficulty) else { return nil }
        return ["nonce": .string(nonce), "counter": .integer(Int64(solve(nonce: nonce, difficulty: Int(difficulty))))]
    }

    /// The number of leading zero bits of a digest.
    public static func leadingZeroBits(_ bytes: [UInt8]) -> Int {
        var count = 0
        for byte in bytes {
            if byte == 0 {
                count += 8
                continue
            }
            return count + byte.leadingZeroBitCount
        }
        return count
    }
}


import Foundation

extension RequestEnvelope {
    /// SHA-256 of the operation and the bytes of `data`, to tell an idempotent retry from a
    /// reuse of its key: computed over the bytes already at hand (a retry resends the same
    /// request), falling back to the canonical form for envelopes built in code.
    public var requestHash: String {
        var input = Data(op.utf8)
        input.append(0)
        input.append(dataBytes ?? data.serialized)
        return Digest.sha256Hex(input)
    }
}

import Foundation

extension RequestEnvelope {
    /// SHA-256 of the operation and the bytes of `data`, to tell an idempotent retry from a
    /// reuse of its key: computed over the bytes already at hand (a retry resends the same
    /// request), falling back to the canonical form for envelopes built in code.
    public var requestHash: String {
        let digest = Digest.sha256 { update in
            var op = op
            op.withUTF8 { update(UnsafeRawBufferPointer($0)) }
            withUnsafeBytes(of: UInt8(0)) { update($0) }
            (dataBytes ?? data.serialized).withUnsafeBytes { update($0) }
        }
        return Digest.hex(digest)
    }
}

import CZeroMQ
import Foundation

/// A CURVE key pair in Z85 text (40 characters each), as libzmq's socket options take.
public struct CurveKeyPair: Sendable, Equatable, Codable {
    /// The public key, Z85-encoded.
    public let publicKey: String
    /// The secret key, Z85-encoded. Never log it.
    public let secretKey: String

    /// Wraps existing Z85 keys after checking their form.
    public init(publicKey: String, secretKey: String) throws(ZMQError) {
        guard Z85.decode(publicKey)?.count == 32, Z85.decode(secretKey)?.count == 32 else {
            throw ZMQError(code: EINVAL, call: "CurveKeyPair(z85)")
        }
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Generates a new key pair (`zmq_curve_keypair`).
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        _ = try zmqCall("zmq_curve_keypair") { zmq_curve_keypair(&publicKey, &secretKey) }
        return try CurveKeyPair(publicKey: Z85.string(publicKey), secretKey: Z85.string(secretKey))
    }

    /// Derives the public key of a Z85 secret key (`zmq_curve_public`).
    public static func publicKey(forSecret secretKey: String) throws(ZMQError) -> String {
        var publicKey = [CChar](repeating: 0, count: 41)
        _ = try zmqCall("zmq_curve_public") { zmq_curve_public(&publicKey, secretKey) }
        return Z85.string(publicKey)
    }
}

/// Z85 (ZeroMQ RFC 32) encoding of binary keys.
public enum Z85 {
    /// Encodes bytes whose count is a multiple of 4.
    public static func encode(_ bytes: [UInt8]) -> String? {
        guard bytes.count % 4 == 0 else { return nil }
        var output = [CChar](repeating: 0, count: bytes.count * 5 / 4 + 1)
        guard zmq_z85_encode(&output, bytes, bytes.count) != nil else { return nil }
        return string(output)
    }

    /// Decodes text whose length is a multiple of 5.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count % 5 == 0, !text.isEmpty else { return nil }
        var output = [UInt8](repeating: 0, count: text.utf8.count * 4 / 5)
        guard zmq_z85_decode(&output, text) != nil else { return nil }
        return output
    }

    static func string(_ cString: [CChar]) -> String {
        String(decoding: cString.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

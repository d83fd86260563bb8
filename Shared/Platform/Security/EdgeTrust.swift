import Foundation
import ZeroMQ

/// How the gateway knows that a request comes from the HTTP edge, the only client allowed
/// to say which address an app user called from (README, "HTTP edge").
///
/// The gateway binds a second ROUTER for the edge (``PlatformConfiguration/gatewayEdgeEndpoint``)
/// that speaks CURVE and admits one client key. Both key pairs are derived from one shared
/// secret (`BACKEND_EDGE_SECRET`) with HMAC-SHA256, so operators set one value on two
/// processes. A request on that socket may carry a top-level `client` member (the app user's
/// address); on the public socket the same member is ignored like any unknown member.
public struct EdgeTrust: Sendable, Equatable {
    /// The fewest characters a secret may have.
    public static let minimumSecretLength = 32

    /// The key pair of the gateway's edge socket.
    public let gatewayKeys: CurveKeyPair
    /// The key pair the edge connects with.
    public let edgeKeys: CurveKeyPair

    /// Derives both key pairs from `secret`.
    public init(secret: String) throws(ConfigurationError) {
        guard secret.utf8.count >= Self.minimumSecretLength else {
            throw ConfigurationError("BACKEND_EDGE_SECRET must have at least \(Self.minimumSecretLength) characters")
        }
        func keys(_ purpose: String) throws(ConfigurationError) -> CurveKeyPair {
            // Any 32 bytes are a Curve25519 secret key (the curve clamps them).
            let secretBytes = Digest.hmacSHA256(key: Array(secret.utf8), message: Array("backend edge trust: \(purpose)".utf8))
            do {
                guard let secretKey = Z85.encode(secretBytes) else { throw ConfigurationError("cannot encode a CURVE key") }
                return try CurveKeyPair(publicKey: CurveKeyPair.publicKey(forSecret: secretKey), secretKey: secretKey)
            } catch let error as ConfigurationError {
                throw error
            } catch {
                throw ConfigurationError("cannot derive the edge's CURVE keys: \(error)")
            }
        }
        gatewayKeys = try keys("gateway")
        edgeKeys = try keys("edge")
    }

    /// The ZAP domain of the edge socket, one per secret (two gateways in one test process
    /// never share an admission).
    public var domain: String { "edge-" + Digest.sha256Hex(Data(gatewayKeys.publicKey.utf8)).prefix(16) }

    /// The role of the gateway's edge socket; the process's ZAP handler admits the edge's
    /// key, and only it, on the socket's domain.
    public func gatewayRole() throws(ConfigurationError) -> CurveRole {
        try CurveKeyring.admit(.keys([edgeKeys.publicKey]), domain: domain)
        return .server(secretKey: gatewayKeys.secretKey, domain: domain)
    }

    /// The role of the edge's socket to the gateway.
    public var edgeRole: CurveRole { .client(serverPublicKey: gatewayKeys.publicKey, keys: edgeKeys) }

    /// A new random secret (64 hex characters), as the stack runner makes when none is set.
    public static func generateSecret() -> String {
        Digest.hex(Digest.randomBytes(32))
    }

    /// The longest client address the gateway takes from the edge (an IPv6 address with a
    /// zone fits).
    public static let maxAddressLength = 64

    /// Whether `text` can be an address the edge passes on: digits, hex letters, `.`, `:`
    /// and `%` (an IPv6 zone), nothing that could forge a log line.
    public static func isPlausibleAddress(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maxAddressLength else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "%"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
    }
}

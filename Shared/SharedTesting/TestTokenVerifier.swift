import Platform

/// Accepts tokens of the form `user:<id>:<role>,<role>` (tests only), so a service's
/// operations can be called in process as any user with any roles, without auth.
///
/// ```swift
/// try await service.client.call("booking.pass.get", token: TestTokenVerifier.token(user: "u1"))
/// ```
public struct TestTokenVerifier: TokenVerifier {
    /// Creates the verifier.
    public init() {}

    /// A token for `user` with `roles`.
    public static func token(user: String, roles: [String] = []) -> String {
        "user:\(user):\(roles.joined(separator: ","))"
    }

    public func verify(_ token: String) throws(ServiceError) -> Principal {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, parts[0] == "user", !parts[1].isEmpty else { throw .unauthenticated("malformed token") }
        return Principal(userID: parts[1], roles: Set(parts[2].split(separator: ",").map(String.init)), sessionID: "s")
    }
}

import Platform

/// Accepts test tokens, `user:<id>:<role>,<role>` with an optional `:<active role>`, so a
/// service's operations can be called in process as any user without an auth process,
/// proof of work or SMS codes. Never used outside tests.
///
/// ```swift
/// let token = TestTokenVerifier.token(user: "u1", roles: ["staff"])   // "user:u1:staff"
/// ```
public struct TestTokenVerifier: TokenVerifier {
    /// Creates the verifier.
    public init() {}

    /// The principal a test token names, or `unauthenticated` for anything else.
    public func verify(_ token: String) throws(ServiceError) -> Principal {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 || parts.count == 4, parts[0] == "user", !parts[1].isEmpty else {
            throw .unauthenticated("malformed token")
        }
        let roles = Set(parts[2].split(separator: ",").map(String.init))
        let active = parts.count == 4 && !parts[3].isEmpty ? parts[3] : nil
        // One session per user, so operations that key anything by session still see a
        // stable value across a test's calls.
        return Principal(userID: parts[1], roles: roles, activeRole: active, sessionID: "test-session-\(parts[1])")
    }

    /// The test token of a user with `roles`, acting as `activeRole` when given.
    public static func token(user: String, roles: Set<String> = [], activeRole: String? = nil) -> String {
        let base = "user:\(user):\(roles.sorted().joined(separator: ","))"
        return activeRole.map { "\(base):\($0)" } ?? base
    }
}

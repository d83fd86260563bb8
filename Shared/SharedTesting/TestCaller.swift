/// Who calls an operation in a test: nobody, a user by test token, or a real token.
///
/// ```swift
/// try await service.call("booking.pass.get", as: .user("u1"))
/// try await service.call("booking.staff.day", data: ["date": "2026-11-22"], as: .user("s1", roles: ["staff"]))
/// ```
public enum TestCaller: Sendable, Hashable {
    /// No token: public operations only.
    case anonymous
    /// A user with a chosen id and roles, as a test token (see ``TestTokenVerifier``):
    /// accepted by services started with the test verifier.
    case user(String, roles: Set<String> = [], activeRole: String? = nil)
    /// A token as it is, e.g. an access token auth issued.
    case token(String)

    /// The token the request carries, if any.
    public var token: String? {
        switch self {
        case .anonymous: nil
        case .user(let id, let roles, let activeRole): TestTokenVerifier.token(user: id, roles: roles, activeRole: activeRole)
        case .token(let token): token
        }
    }
}

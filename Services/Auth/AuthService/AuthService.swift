import Platform

/// The auth service: accounts, sign-in (email and password, phone and SMS code, Facebook), tokens, roles and the audit log.
///
/// Durability: `synchronous=FULL`, because accounts and sessions must survive power loss.
public enum AuthService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "auth"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: "Accounts, sign-in (email and password, phone and SMS code, Facebook), tokens, roles and the audit log.",
            durability: .full)
    }
}

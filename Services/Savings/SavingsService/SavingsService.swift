import Platform

/// The savings service: buckStash: saving money by chosen algorithms, with plans and reminders.
///
/// Durability: `synchronous=FULL`, because money plans and deposits must survive power loss.
public enum SavingsService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "savings"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: "BuckStash: saving money by chosen algorithms, with plans and reminders.",
            durability: .full)
    }
}

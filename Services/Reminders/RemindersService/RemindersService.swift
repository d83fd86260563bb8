import Platform

/// The reminders service: beautiful dates, holidays and anniversaries with recurring reminders, and push delivery.
///
/// Durability: `synchronous=FULL`, because reminders people set must survive power loss.
public enum RemindersService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "reminders"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: "Beautiful dates, holidays and anniversaries with recurring reminders, and push delivery.",
            durability: .full)
    }
}

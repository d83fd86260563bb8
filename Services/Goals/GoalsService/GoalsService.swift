import Platform

/// The goals service: sponsored fitness goals: recipients set goals, sponsors accept them with a reward, admins write plans, progress is tracked.
///
/// Durability: `synchronous=FULL`, because goals and promised rewards must survive power loss.
public enum GoalsService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "goals"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: "Sponsored fitness goals: recipients set goals, sponsors accept them with a reward, admins write plans, progress is tracked.",
            durability: .full)
    }
}

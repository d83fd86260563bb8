import Platform

/// The stats service: fitness assistant: workouts of exercises, a training schedule and statistics.
///
/// Durability: `synchronous=FULL`, because workouts people log must survive power loss.
public enum StatsService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "stats"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: "Fitness assistant: workouts of exercises, a training schedule and statistics.",
            durability: .full)
    }
}

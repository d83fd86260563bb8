import Platform

/// The booking service: wAKEPARKBY: training slots at the wake park, prepaid passes, cancellation rules.
///
/// Durability: `synchronous=FULL`, because bookings and the pass ledger must survive power loss.
public enum BookingService {
    /// The service's name: the first segment of its operations and its database file.
    public static let name = "booking"

    /// Everything the runtime needs to run the service.
    public static var definition: ServiceDefinition {
        ServiceDefinition(
            name: name,
            summary: "WAKEPARKBY: training slots at the wake park, prepaid passes, cancellation rules.",
            durability: .full)
    }
}

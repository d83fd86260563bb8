import Synchronization

/// A flag one thread raises and loops on other threads check, e.g. to stop.
public final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    /// Creates a lowered flag.
    public init() {}

    /// Raises the flag.
    public func raise() { raised.store(true, ordering: .relaxed) }

    /// Whether the flag is raised.
    public var isRaised: Bool { raised.load(ordering: .relaxed) }
}

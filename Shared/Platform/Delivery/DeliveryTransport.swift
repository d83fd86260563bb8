import Foundation

/// What a transport made of one attempt.
public enum DeliveryOutcome: Sendable, Equatable {
    /// The provider accepted the message.
    case delivered
    /// It failed for now (provider down, busy, timed out): try again after the backoff.
    case retry(reason: String)
    /// The provider refused it for good (no such mailbox, an invalid number): the message
    /// goes to the dead letters at once.
    case permanent(reason: String)

    /// Whether the provider refused the message for good.
    public var isPermanent: Bool {
        if case .permanent = self { return true }
        return false
    }
}

/// Sends the messages of one channel: an SMTP relay, an SMS gateway, a push service, a
/// folder. A plug-in of ``DeliveryWorker``.
///
/// `send` blocks: the worker calls it on its own thread, never on the cooperative pool.
/// An error it throws counts as ``DeliveryOutcome/retry(reason:)``. Reasons are stored
/// and shown to admins, so they name the provider's answer, never the payload.
public protocol DeliveryTransport: Sendable {
    /// The channel it serves.
    var channel: DeliveryChannel { get }
    /// Makes one attempt at delivering `message`.
    func send(_ message: DeliveryMessage) throws -> DeliveryOutcome
}

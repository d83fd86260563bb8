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
///
/// A transport whose provider takes many messages in one request (a push gateway) says
/// how many in ``batchLimit`` and implements ``send(batch:)``, which answers one outcome
/// per message, in order.
public protocol DeliveryTransport: Sendable {
    /// The channel it serves.
    var channel: DeliveryChannel { get }
    /// Makes one attempt at delivering `message`.
    func send(_ message: DeliveryMessage) throws -> DeliveryOutcome
    /// The most messages ``send(batch:)`` takes at once (1: one at a time).
    var batchLimit: Int { get }
    /// Makes one attempt at each message of `batch` (at most ``batchLimit``); one outcome
    /// per message, in order.
    func send(batch: [DeliveryMessage]) -> [DeliveryOutcome]
}

extension DeliveryTransport {
    public var batchLimit: Int { 1 }

    public func send(batch: [DeliveryMessage]) -> [DeliveryOutcome] {
        batch.map { message in
            do { return try send(message) } catch { return .retry(reason: String(describing: error)) }
        }
    }
}

/// What became of a message in one attempt, as the worker recorded it: a service's
/// ``DeliveryWorker/outcomeHook`` sees these in the transaction that records them (to
/// disable a device token a push gateway refused, to count deliveries).
public struct DeliveryResult: Sendable {
    public enum State: Sendable, Equatable { case sent, retrying, dead }
    /// The message as it was sent.
    public var message: DeliveryMessage
    public var state: State
    /// The provider's answer when it failed.
    public var reason: String?
    /// Whether the provider refused it for good (rather than running out of attempts).
    public var permanent: Bool
}

import Foundation
import GRDB

/// The kind of address a message goes to (`email`, `sms`, `push`): each channel has one
/// transport, and rate limits count per channel and destination.
public struct DeliveryChannel: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, DatabaseValueConvertible,
    CustomStringConvertible
{
    public let rawValue: String

    /// A channel by name: lowercase letters, digits and `_`.
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
}

/// Where a queued message stands.
public enum DeliveryStatus: String, Sendable, Codable, CaseIterable, DatabaseValueConvertible {
    /// Waiting for its first attempt, or for the next one after a failure.
    case pending
    /// Accepted by the transport; its payload is erased.
    case sent
    /// Given up (too many attempts, or a permanent refusal): waits for an admin's retry.
    case dead
}

/// Which due messages go first: when more is due than the worker sends at once, every
/// `urgent` one before any `normal` one, and those before `bulk` (a broadcast to every
/// device never starves a reminder that is due).
public enum DeliveryPriority: Int, Sendable, Codable, CaseIterable, Comparable {
    case bulk = 0
    case normal = 1
    case urgent = 2

    public static func < (lhs: DeliveryPriority, rhs: DeliveryPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A message as the outbox hands it to a transport.
public struct DeliveryMessage: Sendable, Equatable {
    /// Unique id, chosen by the caller or generated; transports pass it on so providers can
    /// drop a resent duplicate (file name, `Message-ID`, `Idempotency-Key`).
    public var id: String
    public var channel: DeliveryChannel
    /// An email address, a phone number, a device token: whatever the channel's transport reads.
    public var destination: String
    /// What the transport needs besides the destination (subject, text, ...). It may hold
    /// secrets (codes): never logged, never shown by the admin operations, erased once sent.
    public var payload: JSONValue
    /// Attempts made before this one.
    public var attempts: Int
    /// When it was queued (RFC 3339).
    public var createdAt: String

    /// Creates a message.
    public init(id: String, channel: DeliveryChannel, destination: String, payload: JSONValue, attempts: Int = 0, createdAt: String) {
        self.id = id
        self.channel = channel
        self.destination = destination
        self.payload = payload
        self.attempts = attempts
        self.createdAt = createdAt
    }
}

/// Destinations as admins see them: enough to tell messages apart, not enough to harvest
/// addresses or numbers from a list (`a***@example.com`, `+7916***67`).
public enum DestinationMask {
    /// The masked form of `destination`.
    public static func apply(_ destination: String) -> String {
        let characters = Array(destination)
        if let at = characters.lastIndex(of: "@"), at > 0 {
            return String(characters[0]) + "***" + String(characters[at...])
        }
        guard characters.count > 6 else { return String(repeating: "*", count: characters.count) }
        return String(characters.prefix(5)) + "***" + String(characters.suffix(2))
    }
}

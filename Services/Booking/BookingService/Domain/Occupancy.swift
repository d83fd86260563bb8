import Foundation

/// How many of a cable's places a period has taken: the one rule behind both the slot
/// list (`booking.slots`, `booking.days`, the staff's day) and admission
/// (`booking.create`, a booking at the desk).
///
/// A place is taken at an instant by every place-holding booking whose time covers that
/// instant, whatever grid it was made on; a period has as many places taken as the most
/// bookings covering any one instant of it. So after the slot length changes from 30 to
/// 60 minutes, a 60-minute slot holding two 30-minute bookings one after the other has
/// one place taken, not two, and a slot holding one booking that covers half of it has
/// that place taken for the whole slot. Times are real instants, so DST nights and slot
/// lengths that do not divide an hour need nothing special.
public enum Occupancy {
    /// A booking's time: `[start, end)`.
    public struct Interval: Sendable, Equatable {
        public var start: Date
        public var end: Date

        public init(start: Date, end: Date) {
            self.start = start
            self.end = end
        }
    }

    /// The most of `bookings` that cover one instant of `[start, end)`. Bookings outside
    /// the period do not count; one that ends exactly when another starts does not
    /// overlap it.
    public static func taken(from start: Date, to end: Date, by bookings: [Interval]) -> Int {
        // A sweep over the bookings' edges inside the period: an end before a start at the
        // same instant, so back-to-back bookings never count twice.
        var edges: [(at: Date, delta: Int)] = []
        for booking in bookings where booking.start < end && start < booking.end {
            edges.append((max(booking.start, start), 1))
            edges.append((min(booking.end, end), -1))
        }
        guard !edges.isEmpty else { return 0 }
        edges.sort { $0.at != $1.at ? $0.at < $1.at : $0.delta < $1.delta }
        var current = 0, peak = 0
        for edge in edges {
            current += edge.delta
            peak = max(peak, current)
        }
        return peak
    }

    /// The places left of `capacity` in `[start, end)`.
    public static func free(capacity: Int, from start: Date, to end: Date, by bookings: [Interval]) -> Int {
        max(0, capacity - taken(from: start, to: end, by: bookings))
    }
}

import Foundation
import GRDB
import Platform

/// A bookable cable system (the spec's "reverse").
struct Cable: Codable, Sendable, Equatable {
    var id: String
    var name: String
    var active: Bool
    /// Its picture (`booking.media.get`), if staff set one.
    var image: String?

    /// The owner name of its picture's reference (``MediaCatalog``).
    static func imageOwner(_ id: String) -> String { "cable:\(id)" }
}

/// A top-up package of the pass.
struct Package: Codable, Sendable, Equatable {
    var id: String
    var name: String
    var sessions: Int64
    var credit: Money
    var price: Money
    /// Its picture (`booking.media.get`), if staff set one.
    var image: String?

    /// The owner name of its picture's reference (``MediaCatalog``).
    static func imageOwner(_ id: String) -> String { "package:\(id)" }
}

/// The park's configuration as stored: everything the booking rules need.
struct ParkConfiguration: Sendable {
    var schedule: ParkSchedule
    var capacity: Int
    var minimumNotice: TimeInterval
    var horizonDays: Int
    var maxBookingsPerDay: Int
    var price: Money
    var policy: LateCancellationPolicy
    var cables: [Cable]
    /// The settings version it was loaded at (see ``BookingState``).
    var version = 0
    /// The park's `settings_version` in the snapshot it was read from.
    var stored = 0

    static func load(_ db: Database) throws -> ParkConfiguration {
        guard let park = try Row.fetchOne(db, sql: "SELECT * FROM park WHERE id = 1") else {
            throw ServiceError.internal(ref: "park-missing")
        }
        var weekly: [Int: OpeningHours] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT weekday, open, close FROM park_hours") {
            weekly[row["weekday"]] = OpeningHours(open: row["open"], close: row["close"])
        }
        var exceptions: [LocalDate: OpeningHours?] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT date, open, close FROM park_exception") {
            guard let date = LocalDate(row["date"]) else { continue }
            if let open = row["open"] as Int?, let close = row["close"] as Int? {
                exceptions[date] = .some(OpeningHours(open: open, close: close))
            } else {
                exceptions[date] = .some(nil)
            }
        }
        let currency = Currency(stored: park["currency"])
        return ParkConfiguration(
            schedule: ParkSchedule(
                timeZone: TimeZone(identifier: park["time_zone"]) ?? TimeZone(identifier: "UTC")!, weekly: weekly,
                exceptions: exceptions, slotMinutes: park["slot_minutes"]),
            capacity: park["capacity"], minimumNotice: TimeInterval(park["min_notice_minutes"] as Int * 60),
            horizonDays: park["horizon_days"], maxBookingsPerDay: park["max_bookings_per_day"],
            price: Money(minor: park["price_minor"], currency: currency),
            policy: LateCancellationPolicy(
                freeCancellationSeconds: park["free_cancellation_seconds"],
                sanction: LateCancellationPolicy.Sanction(rawValue: park["sanction"]) ?? .forfeit),
            cables: try Row.fetchAll(db, sql: "SELECT id, name, active, image_id FROM cable ORDER BY id").map {
                Cable(id: $0["id"], name: $0["name"], active: $0["active"], image: $0["image_id"])
            }, stored: park["settings_version"])
    }

    static func packages(_ db: Database, currency: Currency) throws -> [Package] {
        try Row.fetchAll(db, sql: "SELECT * FROM package WHERE active = 1 ORDER BY price_minor, id").map {
            Package(
                id: $0["id"], name: $0["name"], sessions: $0["sessions"], credit: Money(minor: $0["credit_minor"], currency: currency),
                price: Money(minor: $0["price_minor"], currency: currency), image: $0["image_id"])
        }
    }
}

/// Places taken and blocked periods of a day, read once for availability.
struct DayOccupancy {
    /// The place-holding bookings that may overlap the day, per cable.
    var bookings: [String: [Occupancy.Interval]]
    /// Blocked periods: (cable or nil for all, start, end).
    var blocks: [(cable: String?, start: String, end: String)]

    static func load(_ db: Database, date: LocalDate, cables: [String]) throws -> DayOccupancy {
        // Bookings that start up to 4 hours (the longest slot) before the day may reach into it.
        let window = ParkDates.utcWindow(of: date, earlier: 4 * 3_600)
        var bookings: [String: [Occupancy.Interval]] = [:]
        for cable in cables {
            bookings[cable] = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT start_at, end_at FROM booking
                        WHERE cable_id = ? AND start_at > ? AND start_at < ? AND status IN \(BookingStatus.holdingSQL)
                        """),
                arguments: [cable, window.from, window.to]
            ).compactMap { row in
                guard let start = Instant.parse(row[0]), let end = Instant.parse(row[1]) else { return nil }
                return Occupancy.Interval(start: start, end: end)
            }
        }
        let blocks = try Row.fetchAll(db, sql: "SELECT cable_id, start_at, end_at FROM block").map {
            (cable: $0["cable_id"] as String?, start: $0["start_at"] as String, end: $0["end_at"] as String)
        }
        return DayOccupancy(bookings: bookings, blocks: blocks)
    }

    /// Places left on `cable` in the slot.
    func free(cable: String, slot: Slot, capacity: Int) -> Int {
        Occupancy.free(capacity: capacity, from: slot.start, to: slot.end, by: bookings[cable] ?? [])
    }

    func isBlocked(cable: String, start: String, end: String) -> Bool {
        blocks.contains { ($0.cable == nil || $0.cable == cable) && $0.start < end && start < $0.end }
    }
}

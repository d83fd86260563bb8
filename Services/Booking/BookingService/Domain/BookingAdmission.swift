import Foundation
import Platform

/// Where a booking stands. Stored as its raw value (`BookingStatus+Database.swift`; the
/// `booking.status` column's CHECK lists the same values).
enum BookingStatus: String, Sendable, Codable, CaseIterable {
    case booked
    case cancelled
    case lateCancelled = "late_cancelled"
    case cancelledByPark = "cancelled_by_park"
    case attended
    case noShow = "no_show"

    /// The statuses that hold a place on the cable.
    static let holding: [BookingStatus] = [.booked, .attended, .noShow]

    /// `('booked', 'attended', 'no_show')`, for SQL over the holding statuses.
    static let holdingSQL = "(" + holding.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"
}

/// How a booking was paid: a session from the pass, or the price from its money balance.
enum PaymentMethod: String, Sendable, Codable {
    case session
    case balance
}

/// Why a booking is refused: each is a `conflict` with this `reason` on the wire.
enum BookingRefusal: String, Error, Sendable, CaseIterable {
    case past
    case minimumNotice = "minimum_notice"
    case notOpenYet = "not_open_yet"
    case blocked
    case full
    case alreadyBooked = "already_booked"
    case dailyLimit = "daily_limit"
    case noCredit = "no_credit"
}

/// The booking rules as one pure decision: given a slot, the time, the park's rules and
/// what the database holds for that slot and rider, may the rider book, and how is it paid?
///
/// `booking.create` loads the facts in its write transaction, asks this, and writes what
/// it answers; the rules are tested here apart from sockets and SQL.
enum BookingAdmission {
    /// The park's rules that bear on admission.
    struct Rules: Sendable, Equatable {
        var capacity: Int
        var minimumNotice: TimeInterval
        var horizonDays: Int
        var maxBookingsPerDay: Int
        var priceMinor: Int64
    }

    /// What the database holds for the slot and the rider at decision time.
    struct Facts: Sendable, Equatable {
        /// A park block covers the slot.
        var blocked: Bool
        /// Places already held in the slot's time on that cable.
        var taken: Int
        /// The rider's place-holding bookings that day, as (start, end) instants.
        var ridersDay: [(start: Date, end: Date)]
        /// Sessions left on the rider's pass.
        var sessions: Int64
        /// The pass's money balance, minor units.
        var balanceMinor: Int64

        static func == (lhs: Facts, rhs: Facts) -> Bool {
            lhs.blocked == rhs.blocked && lhs.taken == rhs.taken && lhs.sessions == rhs.sessions && lhs.balanceMinor == rhs.balanceMinor
                && lhs.ridersDay.elementsEqual(rhs.ridersDay) { $0.start == $1.start && $0.end == $1.end }
        }
    }

    /// Who books and how it is paid.
    enum Channel: Sendable, Equatable {
        /// The rider, in the app: from the pass (a session first, else the balance).
        case rider
        /// Staff at the desk for a rider who phoned or walked in: the minimum notice does
        /// not apply (the rider is there); paid from the pass, or in cash at the desk.
        case desk(cash: Bool)
    }

    /// The refusals that depend only on the time: judged before the transaction.
    static func timing(start: Date, now: Date, rules: Rules, channel: Channel = .rider) -> BookingRefusal? {
        if start <= now { return .past }
        if channel == .rider && start < now.addingTimeInterval(rules.minimumNotice) { return .minimumNotice }
        if start > now.addingTimeInterval(TimeInterval(rules.horizonDays * 86_400)) { return .notOpenYet }
        return nil
    }

    /// The whole decision, in the order riders are told: time, block, capacity, their own
    /// bookings, then payment (a session first, else the balance; cash at the desk is
    /// paid into the balance first, so it always pays).
    static func decide(
        start: Date, end: Date, now: Date, rules: Rules, facts: Facts, channel: Channel = .rider
    ) -> Result<PaymentMethod, BookingRefusal> {
        if let refusal = timing(start: start, now: now, rules: rules, channel: channel) { return .failure(refusal) }
        if facts.blocked { return .failure(.blocked) }
        if facts.taken >= rules.capacity { return .failure(.full) }
        if facts.ridersDay.contains(where: { $0.start < end && $0.end > start }) { return .failure(.alreadyBooked) }
        if facts.ridersDay.count >= rules.maxBookingsPerDay { return .failure(.dailyLimit) }
        if channel == .desk(cash: true) { return .success(.balance) }
        if facts.sessions > 0 { return .success(.session) }
        if facts.balanceMinor >= rules.priceMinor { return .success(.balance) }
        return .failure(.noCredit)
    }
}

extension BookingRefusal {
    /// The reply's error, with words for people.
    func error(rules: BookingAdmission.Rules) -> ServiceError {
        let message: String
        switch self {
        case .past: message = "this slot has already started"
        case .minimumNotice: message = "bookings close \(Int(rules.minimumNotice / 60)) minutes before the start"
        case .notOpenYet: message = "booking opens \(rules.horizonDays) days ahead"
        case .blocked: message = "this slot is blocked by the park"
        case .full: message = "no free place left in this slot"
        case .alreadyBooked: message = "you already have a booking at this time"
        case .dailyLimit: message = "at most \(rules.maxBookingsPerDay) bookings per day"
        case .noCredit: message = "no sessions or balance left: top up the pass"
        }
        return ServiceError.conflict(message, reason: rawValue)
    }
}

extension ParkConfiguration {
    /// The rules admission needs.
    var admissionRules: BookingAdmission.Rules {
        BookingAdmission.Rules(
            capacity: capacity, minimumNotice: minimumNotice, horizonDays: horizonDays, maxBookingsPerDay: maxBookingsPerDay,
            priceMinor: price.minor)
    }
}

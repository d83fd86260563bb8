import Foundation
import Platform
import Testing

@testable import BookingService

/// The pure rules behind the desk and occupancy: no sockets, no SQL.
@Suite("Booking rules: occupancy and marks")
struct BookingDeskRulesTests {
    static let base = Date(timeIntervalSince1970: 1_800_000_000)

    static func at(_ minutes: Int) -> Date { base.addingTimeInterval(TimeInterval(minutes * 60)) }

    static func booking(_ from: Int, _ to: Int) -> Occupancy.Interval { Occupancy.Interval(start: at(from), end: at(to)) }

    @Test("a period has as many places taken as the most bookings covering one instant of it")
    func peakOccupancy() {
        // Two 30-minute bookings one after the other, under a 60-minute slot: one place.
        #expect(Occupancy.taken(from: Self.at(0), to: Self.at(60), by: [Self.booking(0, 30), Self.booking(30, 60)]) == 1)
        // Overlapping: two.
        #expect(Occupancy.taken(from: Self.at(0), to: Self.at(60), by: [Self.booking(0, 30), Self.booking(15, 45)]) == 2)
        // A booking covering half the slot takes the place for the whole slot.
        #expect(Occupancy.taken(from: Self.at(0), to: Self.at(60), by: [Self.booking(30, 60)]) == 1)
        // Back to back with the slot, outside it: none.
        #expect(Occupancy.taken(from: Self.at(60), to: Self.at(90), by: [Self.booking(30, 60), Self.booking(90, 120)]) == 0)
        // A 45-minute grid over 30-minute bookings: 00:45–01:30 meets 00:30–01:00 and 01:00–01:30, one at a time.
        #expect(Occupancy.taken(from: Self.at(45), to: Self.at(90), by: [Self.booking(30, 60), Self.booking(60, 90)]) == 1)
        #expect(Occupancy.free(capacity: 2, from: Self.at(45), to: Self.at(90), by: [Self.booking(30, 60), Self.booking(60, 90)]) == 1)
        #expect(Occupancy.free(capacity: 1, from: Self.at(0), to: Self.at(30), by: [Self.booking(0, 30), Self.booking(0, 30)]) == 0)
        #expect(Occupancy.taken(from: Self.at(0), to: Self.at(30), by: []) == 0)
    }

    @Test("peak occupancy equals a minute-by-minute count, for random bookings and periods")
    func peakMatchesBruteForce() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let bookings = (0..<Int.random(in: 0...6, using: &generator)).map { _ -> Occupancy.Interval in
                let start = Int.random(in: 0...180, using: &generator)
                return Self.booking(start, start + Int.random(in: 5...120, using: &generator))
            }
            let from = Int.random(in: 0...200, using: &generator), to = from + Int.random(in: 5...240, using: &generator)
            // Brute force on half-minute points: every edge is on a whole minute.
            var peak = 0
            var point = Double(from) + 0.5
            while point < Double(to) {
                let instant = Self.base.addingTimeInterval(point * 60)
                peak = max(peak, bookings.filter { $0.start <= instant && instant < $0.end }.count)
                point += 1
            }
            #expect(Occupancy.taken(from: Self.at(from), to: Self.at(to), by: bookings) == peak, "\(bookings) over \(from)–\(to)")
        }
    }

    typealias State = AttendanceMark.State

    @Test("marks and their corrections move the pass by the difference of what each gave back")
    func marks() {
        func apply(_ outcome: AttendanceMark.Outcome, _ status: BookingStatus, _ sanction: String?, _ policy: LateCancellationPolicy.Sanction)
            -> Result<AttendanceMark.Change, AttendanceMark.Refusal>
        {
            AttendanceMark.apply(outcome, to: State(status: status, sanction: sanction), policy: policy)
        }
        #expect(apply(.attended, .booked, nil, .forfeit) == .success(.init(status: .attended, sanction: nil, movement: 0, correction: false)))
        #expect(apply(.noShow, .booked, nil, .forfeit) == .success(.init(status: .noShow, sanction: "forfeit", movement: 0, correction: false)))
        #expect(apply(.noShow, .booked, nil, .none) == .success(.init(status: .noShow, sanction: "none", movement: 1, correction: false)))
        // Corrections.
        #expect(apply(.attended, .noShow, "forfeit", .forfeit) == .success(.init(status: .attended, sanction: nil, movement: 0, correction: true)))
        #expect(apply(.attended, .noShow, "waived", .forfeit) == .success(.init(status: .attended, sanction: nil, movement: -1, correction: true)))
        #expect(apply(.attended, .noShow, "none", .none) == .success(.init(status: .attended, sanction: nil, movement: -1, correction: true)))
        #expect(apply(.noShow, .attended, nil, .none) == .success(.init(status: .noShow, sanction: "none", movement: 1, correction: true)))
        #expect(apply(.noShow, .attended, nil, .forfeit) == .success(.init(status: .noShow, sanction: "forfeit", movement: 0, correction: true)))
        // Nothing to do, or nothing to mark.
        #expect(apply(.attended, .attended, nil, .forfeit) == .failure(.unchanged))
        for status in [BookingStatus.cancelled, .lateCancelled, .cancelledByPark] {
            #expect(apply(.attended, status, nil, .forfeit) == .failure(.notActive))
        }
    }

    @Test("at the desk the minimum notice does not apply and cash always pays")
    func deskAdmission() {
        let rules = BookingAdmission.Rules(capacity: 1, minimumNotice: 1_800, horizonDays: 14, maxBookingsPerDay: 4, priceMinor: 2_500)
        let now = Self.base, start = Self.at(10), end = Self.at(40)
        let empty = BookingAdmission.Facts(blocked: false, taken: 0, ridersDay: [], sessions: 0, balanceMinor: 0)
        #expect(BookingAdmission.decide(start: start, end: end, now: now, rules: rules, facts: empty) == .failure(.minimumNotice))
        #expect(BookingAdmission.decide(start: start, end: end, now: now, rules: rules, facts: empty, channel: .desk(cash: false)) == .failure(.noCredit))
        #expect(BookingAdmission.decide(start: start, end: end, now: now, rules: rules, facts: empty, channel: .desk(cash: true)) == .success(.balance))
        var full = empty
        full.taken = 1
        #expect(BookingAdmission.decide(start: start, end: end, now: now, rules: rules, facts: full, channel: .desk(cash: true)) == .failure(.full))
        #expect(BookingAdmission.decide(start: Self.at(-1), end: end, now: now, rules: rules, facts: empty, channel: .desk(cash: true)) == .failure(.past))
    }
}

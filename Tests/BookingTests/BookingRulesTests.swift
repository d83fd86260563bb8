import Foundation
import Platform
import Testing

@testable import BookingService

@Suite("Booking rules")
struct BookingRulesTests {
    func schedule(_ zone: String, open: Int = 9 * 60, close: Int = 21 * 60, slot: Int = 60) -> ParkSchedule {
        ParkSchedule(
            timeZone: TimeZone(identifier: zone)!, weekly: Dictionary(uniqueKeysWithValues: (1...7).map { ($0, OpeningHours(open: open, close: close)) }),
            slotMinutes: slot)
    }

    @Test("an ordinary day is cut into slots with local and UTC times")
    func ordinaryDay() throws {
        let minsk = schedule("Europe/Minsk")
        let slots = minsk.slots(on: try #require(LocalDate("2026-07-01")))
        #expect(slots.count == 12)
        #expect(Slot.clock(slots[0].localStart) == "09:00")
        #expect(Instant.format(slots[0].start) == "2026-07-01T06:00:00.000Z")  // UTC+3
        #expect(Instant.format(slots[11].end) == "2026-07-01T18:00:00.000Z")
    }

    @Test("spring forward: the skipped hour has no slot")
    func springForward() throws {
        let berlin = schedule("Europe/Berlin", open: 0, close: 6 * 60)
        let slots = berlin.slots(on: try #require(LocalDate("2026-03-29")))
        #expect(slots.map { Slot.clock($0.localStart) } == ["00:00", "01:00", "03:00", "04:00", "05:00"])
        #expect(Instant.format(slots[1].start) == "2026-03-29T00:00:00.000Z")
        #expect(Instant.format(slots[2].start) == "2026-03-29T01:00:00.000Z")
    }

    @Test("a slot's local end is the time the clock shows at its end")
    func localEndAcrossSpringForward() throws {
        let berlin = schedule("Europe/Berlin", open: 0, close: 6 * 60)
        let springForward = try #require(LocalDate("2026-03-29"))
        let slot = try #require(berlin.slots(on: springForward).first { $0.localStart == 60 })
        #expect(Slot.clock(slot.localEnd % 1440) == "03:00")
        let found = try #require(berlin.slot(startingAt: slot.start))
        #expect(found.localEnd == slot.localEnd)
        // The second occurrence of a repeated time is not a slot start.
        let fallBack = try #require(LocalDate("2026-10-25"))
        let first = try #require(berlin.slots(on: fallBack).first { $0.localStart == 120 })
        #expect(berlin.slot(startingAt: first.start) != nil)
        #expect(berlin.slot(startingAt: first.start.addingTimeInterval(3_600)) == nil)
    }

    @Test("fall back: the repeated hour is one slot, each slot an hour of real time")
    func fallBack() throws {
        let berlin = schedule("Europe/Berlin", open: 0, close: 5 * 60)
        let slots = berlin.slots(on: try #require(LocalDate("2026-10-25")))
        #expect(slots.count == 5)
        #expect(slots.allSatisfy { $0.end.timeIntervalSince($0.start) == 3_600 })
        #expect(Instant.format(slots[2].start) == "2026-10-25T00:00:00.000Z")  // 02:00 CEST, the first occurrence
        #expect(Instant.format(slots[3].start) == "2026-10-25T02:00:00.000Z")  // 03:00 CET
    }

    @Test("exceptions override the weekly hours; a missing day is closed")
    func exceptions() throws {
        var park = schedule("Europe/Minsk")
        park.weekly[7] = nil
        let holiday = try #require(LocalDate("2026-07-03"))
        park.exceptions[holiday] = .some(nil)
        park.exceptions[try #require(LocalDate("2026-07-04"))] = OpeningHours(open: 10 * 60, close: 12 * 60)
        #expect(park.slots(on: holiday).isEmpty)
        #expect(park.slots(on: try #require(LocalDate("2026-07-04"))).count == 2)
        #expect(park.slots(on: try #require(LocalDate("2026-07-05"))).isEmpty)  // a Sunday
        #expect(try #require(LocalDate("2026-07-05")).isoWeekday == 7)
    }

    @Test("cancellation: strictly more than two hours before is free, to the second")
    func lateCancellationBoundary() {
        let policy = LateCancellationPolicy.standard
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(!policy.isLate(start: start, now: start.addingTimeInterval(-7_201)))
        #expect(!policy.isLate(start: start, now: start.addingTimeInterval(-7_200.001)))
        #expect(policy.isLate(start: start, now: start.addingTimeInterval(-7_200)))
        #expect(policy.isLate(start: start, now: start.addingTimeInterval(-60)))
    }

    @Test("the schedule answers for years 1970 to 9998 only, so no slot's instant falls off the wire's range")
    func dateRange() throws {
        #expect(try ParkDates.parse("2026-07-01", field: "date") == LocalDate("2026-07-01"))
        for edge in ["9999-12-31", "0000-01-01", "1969-12-31"] {
            #expect(throws: ServiceError.self) { try ParkDates.parse(edge, field: "date") }
        }
    }
}

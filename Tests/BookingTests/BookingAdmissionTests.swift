import Foundation
import Platform
import SharedTesting
import Testing

@testable import BookingService

@Suite("Booking admission")
struct BookingAdmissionTests {
    static let now = Date(timeIntervalSince1970: 1_795_341_600)  // 2026-11-22T10:00:00Z
    static let rules = BookingAdmission.Rules(capacity: 2, minimumNotice: 1_800, horizonDays: 14, maxBookingsPerDay: 2, priceMinor: 2_500)
    static let start = now.addingTimeInterval(3 * 3_600)
    static let end = start.addingTimeInterval(1_800)
    static let open = BookingAdmission.Facts(blocked: false, taken: 0, ridersDay: [], sessions: 1, balanceMinor: 0)

    func decide(start: Date = start, facts: BookingAdmission.Facts = open) -> Result<PaymentMethod, BookingRefusal> {
        BookingAdmission.decide(start: start, end: start.addingTimeInterval(1_800), now: Self.now, rules: Self.rules, facts: facts)
    }

    @Test("the time decides first: started, inside the notice, beyond the horizon; the notice's edge is bookable")
    func timing() {
        #expect(decide(start: Self.now) == .failure(.past))
        #expect(decide(start: Self.now.addingTimeInterval(1_799.999)) == .failure(.minimumNotice))
        #expect(decide(start: Self.now.addingTimeInterval(1_800)) == .success(.session))
        #expect(decide(start: Self.now.addingTimeInterval(14 * 86_400)) == .success(.session))
        #expect(decide(start: Self.now.addingTimeInterval(14 * 86_400 + 0.001)) == .failure(.notOpenYet))
    }

    @Test("a block, a full slot, an overlapping booking of the rider and the daily limit refuse, in that order")
    func refusals() {
        var facts = Self.open
        facts.blocked = true
        facts.taken = 2
        #expect(decide(facts: facts) == .failure(.blocked))
        facts.blocked = false
        #expect(decide(facts: facts) == .failure(.full))
        facts.taken = 1
        #expect(decide(facts: facts) == .success(.session), "one place of two is still free")
        facts.ridersDay = [(Self.start.addingTimeInterval(-900), Self.start.addingTimeInterval(900))]
        #expect(decide(facts: facts) == .failure(.alreadyBooked))
        facts.ridersDay = [(Self.end, Self.end.addingTimeInterval(1_800))]
        #expect(decide(facts: facts) == .success(.session), "back to back is not overlapping")
        facts.ridersDay.append((Self.start.addingTimeInterval(-3_600), Self.start))
        #expect(decide(facts: facts) == .failure(.dailyLimit))
    }

    @Test("a session pays first, then the balance if it covers the price, else no credit")
    func payment() {
        var facts = Self.open
        facts.balanceMinor = 10_000
        #expect(decide(facts: facts) == .success(.session))
        facts.sessions = 0
        #expect(decide(facts: facts) == .success(.balance))
        facts.balanceMinor = 2_500
        #expect(decide(facts: facts) == .success(.balance), "exactly the price is enough")
        facts.balanceMinor = 2_499
        #expect(decide(facts: facts) == .failure(.noCredit))
    }

    @Test("every refusal is a conflict whose reason is its wire name", arguments: BookingRefusal.allCases)
    func refusalErrors(refusal: BookingRefusal) {
        let error = refusal.error(rules: Self.rules)
        #expect(error.code == .conflict)
        #expect(error.details["reason"] == .string(refusal.rawValue))
        #expect(!error.message.isEmpty)
    }

    @Test("the holding statuses in SQL are the enum's")
    func holdingSQL() {
        #expect(BookingStatus.holdingSQL == "('booked', 'attended', 'no_show')")
    }
}

@Suite("Booking replies")
struct BookingReplyTests {
    @Test("a booking writes the same bytes as its JSON tree, with and without optional fields")
    func writesLikeTheTree() throws {
        var booking = BookingView(
            id: "bkg_1", userId: "u\"1", cable: "reverse-1", date: "2026-11-23", localStart: "10:00", localEnd: "10:30",
            start: "2026-11-23T07:00:00.000Z", end: "2026-11-23T07:30:00.000Z", status: "booked", paidWith: "session",
            price: Money(minor: -2_500, currency: "BYN"), sanction: nil, freeCancellationUntil: "2026-11-23T05:00:00.000Z",
            createdAt: "2026-11-22T10:00:00.000Z", cancelledAt: nil)
        #expect(try WireJSON.encode(booking) == booking.json.serialized)
        booking.sanction = "forfeit"
        booking.cancelledAt = "2026-11-23T06:00:00.000Z"
        #expect(try WireJSON.encode(booking) == booking.json.serialized)
        #expect(try WireJSON.encode(booking.price) == booking.price.json.serialized)
        #expect(booking.eventBytes.bytes == booking.eventData.serialized)
    }
}

@Suite("Booking plans")
struct BookingPlanTests {
    @Test("a plan made before a settings change is stale: the version moves and the new grid refuses the old start")
    func stalePlan() async throws {
        let folder = try TemporaryDirectory()
        let pool = try ServiceDatabase.open(
            directory: folder.url, name: "booking", durability: .normal, migrations: { BookingMigrations.register(in: &$0) })
        let state = BookingState()
        try await pool.write { db in
            try db.execute(sql: "UPDATE park SET slot_minutes = 30, min_notice_minutes = 0, horizon_days = 365")
            try state.settingsChanged(db)
        }
        let before = try await state.configuration(outside: pool)
        // A start on the half hour, two days ahead, at a time the park is open.
        let day = before.schedule.localDate(of: Date().addingTimeInterval(2 * 86_400))
        let slot = try #require(before.schedule.slots(on: day).first { $0.localStart % 60 == 30 })
        let cable = try #require(before.cables.first { $0.active }).id
        let input = RiderOperations.CreateRequest(cable: cable, start: Instant.format(slot.start))
        let plan = try BookingPlan(input, rider: "u1", park: before, now: Date())
        #expect(plan.parkVersion == before.version)

        try await pool.write { db in
            try db.execute(sql: "UPDATE park SET slot_minutes = 60")
            try state.settingsChanged(db)
        }
        let after = try await pool.read { db in try state.configuration(db) }
        #expect(after.version != plan.parkVersion, "the writer must notice the plan is stale")
        #expect(throws: ServiceError.self) { try BookingPlan(input, rider: "u1", park: after, now: Date()) }
    }
}

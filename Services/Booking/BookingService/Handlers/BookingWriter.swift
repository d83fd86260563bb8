import Foundation
import GRDB
import Platform

/// What a booking settles before its transaction: the slot on the park's grid, its times
/// formatted, the new id, and who books how. The transaction re-plans only if the park's
/// settings changed in between.
struct BookingPlan: Sendable {
    var input: RiderOperations.CreateRequest
    var rider: String
    var now: Date
    var channel: BookingAdmission.Channel
    /// The staff member booking at the desk, and their reason.
    var actor: String?
    var reason: String?
    var parkVersion: Int
    var slot: Slot
    var start: String
    var end: String
    /// Bookings that overlap the slot start after this (no slot is longer than 4 hours).
    var earliestOverlapping: String
    /// Every instant of the slot's local date lies in this UTC window (offsets run from
    /// -12 to +14 hours), which bounds the scan of the rider's bookings that day.
    var dayWindow: (from: String, to: String)
    var freeCancellationUntil: String
    var createdAt: String
    var id: String

    /// Whether a written instant's fraction of a second, if it has one, is zeros only: a
    /// slot starts on a whole minute, and `10:00:00.0000001` is not its start (a Date's
    /// precision would round so small a fraction away).
    static func namesWholeSecond(_ text: String) -> Bool {
        guard let dot = text.firstIndex(of: ".") else { return true }
        return text[text.index(after: dot)...].prefix(while: \.isNumber).allSatisfy { $0 == "0" }
    }

    init(
        _ input: RiderOperations.CreateRequest, rider: String, park: ParkConfiguration, now: Date, channel: BookingAdmission.Channel = .rider,
        actor: String? = nil, reason: String? = nil, id: String? = nil
    ) throws {
        guard park.cables.contains(where: { $0.id == input.cable && $0.active }) else {
            throw ServiceError.invalid("cable", "no such cable")
        }
        guard Self.namesWholeSecond(input.start), let instant = Instant.parse(input.start), let slot = park.schedule.slot(startingAt: instant) else {
            throw ServiceError.invalid("start", "not the start of a slot on the park's grid")
        }
        if let refusal = BookingAdmission.timing(start: slot.start, now: now, rules: park.admissionRules, channel: channel) {
            throw refusal.error(rules: park.admissionRules)
        }
        self.input = input
        self.rider = rider
        self.now = now
        self.channel = channel
        self.actor = actor
        self.reason = reason
        parkVersion = park.version
        self.slot = slot
        start = Instant.format(slot.start)
        end = Instant.format(slot.end)
        earliestOverlapping = Instant.format(slot.start.addingTimeInterval(-4 * 3_600))
        dayWindow = ParkDates.utcWindow(of: slot.date)
        freeCancellationUntil = Instant.format(slot.start.addingTimeInterval(-TimeInterval(park.policy.freeCancellationSeconds)))
        createdAt = Instant.format(now)
        self.id = id ?? RecordID.make(prefix: "bkg", at: now)
    }

    /// The plan again under the park's current settings, if they changed since it was made.
    func current(_ park: ParkConfiguration) throws -> BookingPlan {
        park.version == parkVersion
            ? self : try BookingPlan(input, rider: rider, park: park, now: now, channel: channel, actor: actor, reason: reason, id: id)
    }
}

/// The one way a booking is made, by the rider in the app or by staff at the desk: the
/// facts are loaded in the write transaction, ``BookingAdmission`` decides, and the
/// booking, its ledger entries and its event are written together.
enum BookingWriter {
    static func book(_ db: Database, _ prepared: BookingPlan, state: BookingState) throws -> BookingView {
        let park = try state.configuration(db, inWriter: true)
        // Settings changed since the plan was made (even earlier in this group commit): plan again.
        let plan = try prepared.current(park)
        let cable = plan.input.cable, rider = plan.rider, start = plan.start, end = plan.end
        // Staff found the rider in auth before this transaction; the account may have gone
        // since. (A rider's own request is stopped by the revoked session.)
        if plan.actor != nil, try DeletedUsers.contains(db, user: rider) { throw ServiceError.notFound("no such rider") }
        let (paidWith, hadPass) = try admit(db, plan, park: park)
        // Write.
        let booking = BookingView(
            id: plan.id, userId: rider, cable: cable, date: plan.slot.date.description, localStart: Slot.clock(plan.slot.localStart),
            localEnd: Slot.clock(plan.slot.localEnd % 1440), start: start, end: end, status: BookingStatus.booked.rawValue,
            paidWith: paidWith.rawValue, price: park.price, sanction: nil, freeCancellationUntil: plan.freeCancellationUntil,
            createdAt: plan.createdAt, cancelledAt: nil)
        try db.cachedStatement(
            sql: """
                INSERT INTO booking (id, user_id, cable_id, start_at, end_at, local_date, local_start, local_end, status, paid_with,
                                     price_minor, currency, policy_free_seconds, policy_sanction, created_at, change_version, booked_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).run(
            booking.id, rider, cable, start, end, booking.date, booking.localStart, booking.localEnd, BookingStatus.booked.rawValue,
            paidWith.rawValue, park.price.minor, park.price.currency.code, park.policy.freeCancellationSeconds, park.policy.sanction.rawValue,
            booking.createdAt, try ChangeFeed.stamp(db), plan.actor)
        var passExists = hadPass
        if plan.channel == .desk(cash: true) {
            // The cash taken at the desk goes into the balance, which the booking then takes:
            // a later refund returns it to the balance, like any money on the pass.
            try PassLedger.post(
                db, user: rider, kind: .cash, sessions: 0, amount: park.price.minor, booking: booking.id, at: plan.createdAt,
                passExists: passExists, actor: plan.actor, reason: plan.reason)
            passExists = true
        }
        try PassLedger.post(
            db, user: rider, kind: .booking, sessions: paidWith == .session ? -1 : 0, amount: paidWith == .balance ? -park.price.minor : 0,
            booking: booking.id, at: plan.createdAt, passExists: passExists, actor: plan.actor)
        if let actor = plan.actor {
            try StaffLog.record(
                db, .booked, actor: actor, booking: booking.id, user: rider, reason: plan.reason,
                detail: ["paidWith": .string(plan.channel == .desk(cash: true) ? "cash" : paidWith.rawValue)], at: plan.createdAt)
        }
        try Outbox.append(db, type: "booking.created", data: booking.eventBytes, at: plan.now)
        state.changed(db)
        return booking
    }

    /// Loads the facts ``BookingAdmission`` needs and decides: how the booking is paid and
    /// whether the rider has a pass, or the refusal thrown. `knownRider: false` checks the
    /// slot alone (capacity, blocks, timing), for the desk before it looks the rider up
    /// (and perhaps creates them) in auth; the write checks everything again.
    static func admit(
        _ db: Database, _ plan: BookingPlan, park: ParkConfiguration, knownRider: Bool = true
    ) throws -> (method: PaymentMethod, hadPass: Bool) {
        let cable = plan.input.cable, rider = plan.rider, start = plan.start, end = plan.end
        // Load: targeted, cached statements, as this is the hottest write of the service.
        // Writes are serialized, so what is read below cannot interleave with another booking.
        let blocked = try db.cachedStatement(
            sql: "SELECT 1 FROM block WHERE (cable_id IS NULL OR cable_id = ?) AND start_at < ? AND ? < end_at LIMIT 1"
        ).firstRow(cable, end, start) { _ in true } ?? false
        // The bookings on the cable that overlap the slot's time, for the one occupancy rule.
        // (Rows read by position straight from SQLite: no GRDB `Row` per booking.)
        func intervals<each Value: SQLiteBindable>(_ sql: String, _ values: repeat each Value) throws -> [(start: Date, end: Date)] {
            var found: [(start: Date, end: Date)] = []
            try db.cachedStatement(sql: sql).forEachRow(repeat each values) { columns in
                found.append((Instant.parse(columns.text(0) ?? "") ?? .distantPast, Instant.parse(columns.text(1) ?? "") ?? .distantPast))
            }
            return found
        }
        let overlapping = try intervals(
            """
            SELECT start_at, end_at FROM booking
            WHERE cable_id = ? AND start_at > ? AND start_at < ? AND end_at > ? AND status IN \(BookingStatus.holdingSQL)
            """, cable, plan.earliestOverlapping, end, start
        ).map { Occupancy.Interval(start: $0.start, end: $0.end) }
        let ridersDay = try intervals(
            """
            SELECT start_at, end_at FROM booking
            WHERE user_id = ? AND start_at >= ? AND start_at < ? AND local_date = ? AND status IN \(BookingStatus.holdingSQL)
            """, rider, plan.dayWindow.from, plan.dayWindow.to, plan.slot.date.description)
        let pass = try db.cachedStatement(sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?").firstRow(rider) { columns in
            (sessions: columns.integer(0) ?? 0, balance: columns.integer(1) ?? 0)
        }
        let facts = BookingAdmission.Facts(
            blocked: blocked, taken: Occupancy.taken(from: plan.slot.start, to: plan.slot.end, by: overlapping),
            ridersDay: knownRider ? ridersDay : [], sessions: knownRider ? pass?.sessions ?? 0 : .max,
            balanceMinor: knownRider ? pass?.balance ?? 0 : .max)
        // Decide.
        switch BookingAdmission.decide(
            start: plan.slot.start, end: plan.slot.end, now: plan.now, rules: park.admissionRules, facts: facts, channel: plan.channel)
        {
        case .success(let method): return (method, pass != nil)
        case .failure(let refusal): throw refusal.error(rules: park.admissionRules)
        }
    }
}

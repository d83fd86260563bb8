import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import BookingService

/// The booking issue's three bugs, each with its regression test, and the desk's pieces
/// that need no auth process (marks corrected, a storm closing a period, roles, payments).
@Suite("Booking: bugs and the desk in process")
struct BookingBugTests {
    typealias Ops = BookingOperationTests

    /// Moves a booking so that its training started ten minutes ago.
    static func start(_ booking: InProcessService, _ id: JSONValue?) async throws {
        let now = Date()
        try await booking.runtime.pool.write { db in
            try db.execute(
                sql: "UPDATE booking SET start_at = ?, end_at = ? WHERE id = ?",
                arguments: [Instant.format(now.addingTimeInterval(-600)), Instant.format(now.addingTimeInterval(1_200)), id?.stringValue])
        }
    }

    static func pass(_ booking: InProcessService, _ rider: TestCaller) async throws -> (sessions: Int64, balance: Int64) {
        let pass = try await booking.call("booking.pass.get", as: rider)
        return (pass.data?["sessions"]?.integerValue ?? -1, pass.data?["balance"]?["minor"]?.integerValue ?? -1)
    }

    /// Checks that every slot of `date` on reverse-1 that `booking.slots` shows with a free
    /// place can be booked, and every one it shows full is refused `full`: booking each
    /// with a new rider.
    static func slotsAgreeWithBooking(_ booking: InProcessService, date: String, label: String) async throws {
        let answer = try await booking.call("booking.slots", data: ["date": .string(date), "cable": "reverse-1"], idempotent: true)
        let slots = BookingFlowTests.flatten(answer.data ?? .null).filter { (Instant.parse($0["start"]?.stringValue ?? "") ?? .distantPast) > Date() }
        #expect(!slots.isEmpty, "\(label): no slots")
        for (index, slot) in slots.enumerated() {
            let rider = Ops.rider("agree-\(label)-\(index)")
            #expect(try await booking.call("booking.pass.topup", data: ["package": "one"], as: rider, idem: "t").ok)
            let made = try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slot["start"]!], as: rider)
            if slot["free"] == 0 {
                #expect(made.error?.details["reason"] == "full", "\(label) \(slot["localStart"] ?? nil): listed full, booking said \(made.error?.details["reason"] ?? "ok")")
            } else {
                #expect(made.ok, "\(label) \(slot["localStart"] ?? nil): listed free, booking said \(made.error?.details["reason"] ?? "")")
            }
        }
    }

    @Test("bug 3: the slot list and booking agree on taken places after the slot length changes, with 45-minute slots and on DST nights")
    func slotsAndBookingAgree() async throws {
        try await Ops.withPark(capacity: 1) { booking in
            let tomorrow = try #require(LocalDate(String(Instant.format(Date().addingTimeInterval(86_400)).prefix(10))))
            // Minsk is UTC+3: 10:30 local is 07:30Z.
            let rider = Ops.rider("early")
            #expect(try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "t").ok)
            let start = "\(tomorrow)T07:30:00Z"
            #expect(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": .string(start)], as: rider).ok)
            #expect(try await booking.call("booking.admin.park.update", data: ["slotMinutes": 60], as: Ops.admin).ok)
            let hour = try await booking.call("booking.slots", data: ["date": .string(tomorrow.description), "cable": "reverse-1"], idempotent: true)
            let tenToEleven = BookingFlowTests.flatten(hour.data ?? .null).first { $0["localStart"] == "10:00" }
            #expect(tenToEleven?["free"] == 0, "the 10:00–11:00 slot holds the 10:30 booking")
            try await Self.slotsAgreeWithBooking(booking, date: tomorrow.description, label: "60")
            #expect(try await booking.call("booking.admin.park.update", data: ["slotMinutes": 45], as: Ops.admin).ok)
            try await Self.slotsAgreeWithBooking(booking, date: tomorrow.description, label: "45")

            // A zone with DST: the nights clocks go forward (2027-03-28) and back (2027-10-31).
            #expect(try await booking.call("booking.admin.park.update", data: ["timeZone": "Europe/Berlin", "horizonDays": 365, "slotMinutes": 60], as: Ops.admin).ok)
            for date in ["2027-03-28", "2027-10-31"] {
                // 01:00 local, 30 minutes long, made on a 30-minute grid; then the hour grid.
                #expect(try await booking.call("booking.admin.park.update", data: ["slotMinutes": 30], as: Ops.admin).ok)
                let night = try await booking.call("booking.slots", data: ["date": .string(date), "cable": "reverse-1"], idempotent: true)
                let oneThirty = try #require(BookingFlowTests.flatten(night.data ?? .null).first { $0["localStart"] == "01:30" })
                #expect(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": oneThirty["start"]!], as: Ops.rider("night-\(date)")).error?.details["reason"] == "no_credit")
                let sleeper = Ops.rider("night-\(date)")
                #expect(try await booking.call("booking.pass.topup", data: ["package": "one"], as: sleeper, idem: "t").ok)
                #expect(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": oneThirty["start"]!], as: sleeper).ok)
                #expect(try await booking.call("booking.admin.park.update", data: ["slotMinutes": 60], as: Ops.admin).ok)
                try await Self.slotsAgreeWithBooking(booking, date: date, label: "dst-\(date)")
            }
            #expect(try await Ops.ledgerDrift(booking) == 0)
        }
    }

    @Test("bug 1: a deleted rider's pass is closed by the ledger; a started booking stays consistent; a late payment is recorded, not credited")
    func deletionClosesThePass() async throws {
        try await Ops.withPark(capacity: 2) { booking in
            #expect(try await booking.call("booking.admin.park.update", data: ["lateSanction": "none"], as: Ops.admin).ok)
            let leaver = Ops.rider("leaver")
            #expect(try await booking.call("booking.pass.topup", data: ["package": "ten"], as: leaver, idem: "a").ok)
            #expect(try await booking.call("booking.pass.topup", data: ["package": "credit-50"], as: leaver, idem: "b").ok)
            let slots = try await BookingFlowTests.bookableSlots(booking.client)
            var ids: [JSONValue?] = []
            for slot in slots.suffix(3) {
                ids.append(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slot["start"]!], as: leaver).data?["id"])
            }
            // Two trainings have started; one is still ahead.
            try await Self.start(booking, ids[0])
            try await Self.start(booking, ids[1])
            let pending = "pay_pending_before_deletion"
            try await booking.runtime.pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO payment (id, user_id, package_id, amount_minor, currency, status, created_at, sessions, credit_minor)
                        VALUES (?, 'leaver', 'five', 11500, 'BYN', 'pending', ?, 5, 0)
                        """, arguments: [pending, Instant.format(Date())])
            }
            // auth.user.deleted, applied as the subscriber applies it.
            let event = Event(source: "auth", seq: 1, type: "auth.user.deleted", at: Instant.format(Date()), data: ["userId": "leaver"])
            try await booking.runtime.pool.write { db in try BookingService.userDeleted(BookingState()).apply(db, event) }

            let (ledger, passes, closure) = try await booking.runtime.pool.read { db in
                (
                    try Row.fetchOne(db, sql: "SELECT SUM(sessions_delta) AS s, SUM(amount_minor_delta) AS a FROM ledger WHERE user_id = 'deleted'"),
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pass") ?? -1,
                    try Row.fetchOne(db, sql: "SELECT sessions_delta, amount_minor_delta FROM ledger WHERE kind = 'closure'")
                )
            }
            #expect(ledger?["s"] == 0 && ledger?["a"] == 0, "the anonymous ledger sums to zero")
            #expect(passes == 0)
            // 10 sessions, 3 booked, the future one refunded: 8 left, closed; and the 50 BYN.
            #expect(closure?["sessions_delta"] == -8 && closure?["amount_minor_delta"] == -5_000)
            // The future booking's cancellation is published without the user id.
            let events = try await booking.runtime.pool.read { db in
                try String.fetchAll(db, sql: "SELECT data FROM platform_event WHERE type = 'booking.cancelled'")
            }
            let published = try events.map { try JSONParser.parse(Data($0.utf8)) }
            #expect(published.count == 1 && published.first?["userId"] == "deleted" && published.first?["status"] == "cancelled")
            #expect(published.first?["bookingId"] == ids[2] && !events.contains { $0.contains("leaver") })
            // Events stored before the deletion (top-ups, bookings) no longer name the rider.
            let stored = try await booking.runtime.pool.read { db in try String.fetchAll(db, sql: "SELECT data FROM platform_event") }
            #expect(stored.count >= 6 && !stored.contains { $0.contains("leaver") })
            #expect(stored.filter { $0.contains(#""userId":"deleted""#) }.count >= 6)

            // Staff act on the started bookings: statuses change, no pass appears.
            let cancelled = try await booking.call("booking.staff.cancel", data: ["booking": ids[0] ?? nil, "reason": "storm"], as: Ops.staff)
            #expect(cancelled.data?["status"] == "cancelled_by_park" && cancelled.data?["userId"] == "deleted")
            let marked = try await booking.call("booking.staff.mark", data: ["booking": ids[1] ?? nil, "outcome": "no_show"], as: Ops.staff)
            #expect(marked.data?["status"] == "no_show", "\(marked.error?.message ?? "")")
            let sanction = try await booking.call("booking.staff.sanction", data: ["booking": ids[1] ?? nil, "action": "forfeit"], as: Ops.staff)
            #expect(sanction.error?.details["reason"] == "rider_deleted")
            // The provider settles the payment made before the deletion: recorded, not credited.
            let settled = try await booking.runtime.pool.write { db in try PaymentCallbacks.settle(db, payment: pending, succeeded: true, state: nil) }
            #expect(settled)
            let (status, passesAfter, drift) = try await booking.runtime.pool.read { db in
                (
                    try String.fetchOne(db, sql: "SELECT status FROM payment WHERE id = ?", arguments: [pending]),
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pass") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT SUM(sessions_delta) + SUM(amount_minor_delta) FROM ledger WHERE user_id = 'deleted'")
                )
            }
            #expect(status == "unclaimed" && passesAfter == 0 && drift == 0)
            let unclaimed = try await booking.call("booking.admin.payments.list", data: ["status": "unclaimed"], as: Ops.admin)
            #expect(unclaimed.data?["items"]?.arrayValue?.map { $0["id"] } == [.string(pending)])
        }
    }

    @Test("bug 2: each charge gets its own payment id; an idem key reused for another package is a conflict, also after the idempotency record is gone")
    func topupKeys() async throws {
        try await Ops.withPark { booking in
            let rider = Ops.rider("keyed")
            let first = try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "k")
            let paymentID = try #require(first.data?["payment"]?.stringValue)
            // A week later the idempotency record is pruned.
            try await booking.runtime.pool.write { db in try db.execute(sql: "DELETE FROM platform_idempotency") }
            let other = try await booking.call("booking.pass.topup", data: ["package": "ten"], as: rider, idem: "k")
            #expect(other.error?.code == .conflict && other.error?.details["reason"] == "idempotency_key_reused")
            let same = try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "k")
            #expect(same.data?["payment"]?.stringValue == paymentID && same.data?["status"] == "settled")
            #expect(try await Self.pass(booking, rider).sessions == 5, "paid once")
            let next = try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "k2")
            let plain = try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider)
            let ids = [paymentID, next.data?["payment"]?.stringValue, plain.data?["payment"]?.stringValue]
            #expect(Set(ids.compactMap { $0 }).count == 3)
            #expect(try await Self.pass(booking, rider).sessions == 15)
            #expect(try await Ops.ledgerDrift(booking) == 0)
        }
    }

    @Test("without a configured payment provider a top-up is unavailable and nothing is recorded")
    func noProvider() async throws {
        try await InProcessService.with(BookingService.definition(auth: nil)) { booking in
            let reply = try await booking.call("booking.pass.topup", data: ["package": "five"], as: Ops.rider("r"), idem: "x")
            #expect(reply.error?.code == .unavailable && (reply.error?.message ?? "").contains("BACKEND_BOOKING_PAYMENT_PROVIDER"))
            let payments = try await booking.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM payment") }
            #expect(payments == 0)
        }
    }

    @Test("prices, packages, hours and settings are admin-only; staff run the day")
    func roles() async throws {
        try await Ops.withPark { booking in
            let attempts: [(String, JSONValue)] = [
                ("booking.admin.park.update", ["capacity": 3]),
                ("booking.admin.hours.set", ["weekday": 1, "open": "09:00", "close": "20:00"]),
                ("booking.admin.cables.set", ["id": "reverse-3", "name": "Reverse 3"]),
                ("booking.admin.packages.set", ["id": "x", "name": "X", "sessions": 1, "credit": 0, "price": 100]),
                ("booking.admin.payments.list", [:]),
                ("booking.admin.payments.reconcile", ["payment": "p", "outcome": "failed", "reason": "r"]),
            ]
            for (op, data) in attempts {
                let reply = try await booking.call(op, data: data, as: Ops.staff)
                #expect(reply.error?.code == .forbidden, "\(op)")
            }
            #expect(try await booking.call("booking.admin.park.update", data: ["capacity": 3], as: Ops.admin).ok)
            let staff = try await booking.call("booking.staff.actions", as: Ops.staff)
            #expect(staff.ok)
            let rider = try await booking.call("booking.staff.actions", as: Ops.rider("r"))
            #expect(rider.error?.code == .forbidden)
        }
    }

    @Test("marks are corrected with the pass adjusted; a storm closes a period with refunds; each step is in the staff log")
    func correctionsAndStorms() async throws {
        try await Ops.withPark(capacity: 2) { booking in
            let rider = Ops.rider("rider"), second = Ops.rider("second")
            for caller in [rider, second] { #expect(try await booking.call("booking.pass.topup", data: ["package": "ten"], as: caller, idem: "t").ok) }
            let slots = try await BookingFlowTests.bookableSlots(booking.client)
            let trained = try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slots.last!["start"]!], as: rider)
            try await Self.start(booking, trained.data?["id"])
            let id = trained.data?["id"] ?? nil
            // no-show (forfeit: the session stays taken) → attended → no-show.
            var steps: [(String, Int64)] = []
            for outcome in ["no_show", "attended", "no_show", "no_show"] {
                let marked = try await booking.call("booking.staff.mark", data: ["booking": id, "outcome": .string(outcome), "reason": "checked the list"], as: Ops.staff)
                #expect(marked.data?["status"] == .string(outcome), "\(marked.error?.message ?? "")")
                steps.append((outcome, try await Self.pass(booking, rider).sessions))
            }
            #expect(steps.map(\.1) == [9, 9, 9, 9])
            // Waived, then corrected to attended: the waived session is taken back.
            #expect(try await booking.call("booking.staff.sanction", data: ["booking": id, "action": "waive", "reason": "ill"], as: Ops.staff).ok)
            #expect(try await Self.pass(booking, rider).sessions == 10)
            let corrected = try await booking.call("booking.staff.mark", data: ["booking": id, "outcome": "attended", "reason": "was there after all"], as: Ops.staff)
            #expect(corrected.data?["status"] == "attended" && corrected.data?["sanction"] == .null)
            #expect(try await Self.pass(booking, rider).sessions == 9)
            let kinds = try await booking.call("booking.pass.get", as: rider).data?["recent"]?.arrayValue?.map { $0["kind"]?.stringValue ?? "" }
            #expect(kinds?.first == "correction")

            // A storm over two bookings of different riders: both cancelled with refunds.
            let stormSlot = try #require(slots.dropLast().last)
            for caller in [rider, second] {
                #expect(try await booking.call("booking.create", data: ["cable": "reverse-2", "start": stormSlot["start"]!], as: caller).ok)
            }
            let storm = try await booking.call(
                "booking.staff.blocks.add",
                data: ["start": stormSlot["start"]!, "end": stormSlot["end"]!, "reason": "storm", "cancelBookings": true], as: Ops.staff)
            #expect(storm.data?["cancelled"]?.arrayValue?.count == 2, "\(storm.error?.message ?? "")")
            let (first, other) = (try await Self.pass(booking, rider), try await Self.pass(booking, second))
            #expect(first.sessions == 9 && other.sessions == 10)
            let actions = try await booking.call("booking.staff.actions", data: ["user": "rider"], as: Ops.staff)
            let logged = actions.data?["items"]?.arrayValue?.map { $0["action"]?.stringValue ?? "" } ?? []
            #expect(logged.filter { $0 == "booking.cancelled_by_park" }.count == 1)
            #expect(logged.filter { $0 == "booking.mark_corrected" }.count == 3 && logged.contains("booking.marked") && logged.contains("booking.sanction"))
            #expect(actions.data?["items"]?.arrayValue?.allSatisfy { $0["actor"] == "staff-1" } == true)
            #expect(try await Ops.ledgerDrift(booking) == 0)
        }
    }

    @Test("booking.days answers only within the booking horizon, and from memory")
    func daysWithinHorizon() async throws {
        try await Ops.withPark { booking in
            let today = try #require(LocalDate(String(Instant.format(Date()).prefix(10))))
            let data: JSONValue = ["from": .string(today.adding(days: -5).description), "to": .string(today.adding(days: 50).description)]
            let days = try await booking.call("booking.days", data: data, idempotent: true)
            let dates = days.data?["items"]?.arrayValue?.compactMap { $0["date"]?.stringValue.flatMap(LocalDate.init) } ?? []
            #expect(!dates.isEmpty && dates.allSatisfy { $0 >= today.adding(days: -1) && $0 <= today.adding(days: 15) }, "\(dates)")
            #expect(try await booking.call("booking.days", data: data, idempotent: true).data == days.data)
        }
    }
}

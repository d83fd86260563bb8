import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import BookingService

/// Booking's operations in process with test tokens: riders and staff are users with
/// chosen ids and roles, so no auth process, proof of work or SMS code is needed.
@Suite("Booking operations")
struct BookingOperationTests {
    static let staff = TestCaller.user("staff-1", roles: ["staff"])
    static let admin = TestCaller.user("admin-1", roles: ["admin"])

    static func rider(_ id: String) -> TestCaller { .user(id, roles: ["recipient"]) }

    /// Booking in process with a park open around the clock and no minimum notice (so
    /// tests find slots near and far whatever the hour).
    static func withPark<T>(
        capacity: Int = 1, verifier: any TokenVerifier = TestTokenVerifier(), _ body: (InProcessService) async throws -> T
    ) async throws -> T {
        let booking = try await InProcessService(BookingService.definition(auth: nil, settings: .dev), verifier: verifier)
        do {
            let configured = try await booking.call(
                "booking.admin.park.update",
                data: ["minimumNoticeMinutes": 0, "capacity": .integer(Int64(capacity)), "slotMinutes": 30, "timeZone": "Europe/Minsk"],
                as: Self.admin)
            #expect(configured.ok, "\(configured.error?.message ?? "")")
            for weekday in 1...7 {
                let hours = try await booking.call(
                    "booking.admin.hours.set", data: ["weekday": .integer(Int64(weekday)), "open": "00:00", "close": "00:00"], as: Self.admin)
                #expect(hours.ok, "\(hours.error?.message ?? "") \(hours.error?.fields ?? [:])")
            }
            let result = try await body(booking)
            await booking.stop()
            return result
        } catch {
            await booking.stop()
            throw error
        }
    }

    /// Passes whose sessions or balance differ from the sum of their ledger.
    static func ledgerDrift(_ booking: InProcessService) async throws -> Int {
        try await booking.runtime.pool.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM pass p WHERE p.sessions != (SELECT COALESCE(SUM(sessions_delta), 0) FROM ledger l WHERE l.user_id = p.user_id)
                       OR p.balance_minor != (SELECT COALESCE(SUM(amount_minor_delta), 0) FROM ledger l WHERE l.user_id = p.user_id)
                    """) ?? -1
        }
    }

    @Test("bad bookings are refused with the field or the reason")
    func badBookings() async throws {
        try await Self.withPark { booking in
            let rider = Self.rider("bad")
            let slots = try await BookingFlowTests.bookableSlots(booking.client)
            let start = try #require(slots.last?["start"])
            #expect(try await booking.call("booking.create", data: ["cable": "reverse-9", "start": start], as: rider).error?.fields["cable"] != nil)
            #expect(
                try await booking.call("booking.create", data: ["cable": "reverse-1", "start": "2026-11-22T10:00:00"], as: rider).error?.fields["start"]
                    != nil)
            let offGrid = Instant.format((Instant.parse(start.stringValue ?? "") ?? Date()).addingTimeInterval(60))
            #expect(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": .string(offGrid)], as: rider).error?.fields["start"] != nil)
            // A slot starts on a whole second: 100 ns after it is not its start; zeros are.
            let text = start.stringValue ?? ""
            let (seconds, zone) = (text.prefix(19), text.dropFirst(19).drop { $0 == "." || $0.isNumber })
            #expect(
                try await booking.call("booking.create", data: ["cable": "reverse-1", "start": .string("\(seconds).0000001\(zone)")], as: rider)
                    .error?.fields["start"] != nil)
            #expect(
                try await booking.call("booking.create", data: ["cable": "reverse-1", "start": .string("\(seconds).000\(zone)")], as: rider)
                    .error?.details["reason"] == "no_credit", "\(text)")
            let noCredit = try await booking.call("booking.create", data: ["cable": "reverse-1", "start": start], as: rider)
            #expect(noCredit.error?.code == .conflict && noCredit.error?.details["reason"] == "no_credit")
            #expect(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": start]).error?.code == .unauthenticated)
            #expect(try await booking.call("booking.pass.topup", data: ["package": "nope"], as: rider).error?.fields["package"] != nil)
            #expect(try await booking.call("booking.slots", data: ["date": "2026-02-30"], idempotent: true).error?.fields["date"] != nil)
            #expect(try await booking.call("booking.admin.park.update", data: ["capacity": 5], as: rider).error?.code == .forbidden)
        }
    }

    @Test("a pass starts empty; a top-up is paid once per idem key and shows in the ledger")
    func topUp() async throws {
        try await Self.withPark { booking in
            let rider = Self.rider("payer")
            let empty = try await booking.call("booking.pass.get", as: rider)
            #expect(empty.data == ["sessions": 0, "balance": ["minor": 0, "currency": "BYN"], "recent": []])
            let topup = try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "t-1")
            #expect(topup.data?["status"] == "settled" && topup.data?["pass"]?["sessions"] == 5)
            let retry = try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "t-1")
            #expect(retry.data?["payment"] == topup.data?["payment"])
            let pass = try await booking.call("booking.pass.get", as: rider)
            #expect(pass.data?["sessions"] == 5)
            #expect(pass.data?["recent"]?.arrayValue?.map { $0["kind"] } == ["topup"])
            // Another user's same key is another payment.
            let other = try await booking.call("booking.pass.topup", data: ["package": "five"], as: Self.rider("other"), idem: "t-1")
            #expect(other.data?["payment"] != topup.data?["payment"])
            #expect(try await Self.ledgerDrift(booking) == 0)
        }
    }

    @Test("staff: blocks, park cancellations with a full refund, exception days, cables and packages")
    func staffTools() async throws {
        try await Self.withPark(capacity: 2) { booking in
            let rider = Self.rider("staffed"), staff = Self.staff
            #expect(
                try await booking.call(
                    "booking.admin.packages.set", data: ["id": "three", "name": "3 sessions", "sessions": 3, "credit": 0, "price": 7000], as: Self.admin
                ).ok)
            let parkInfo = try await booking.call("booking.park.get", idempotent: true)
            #expect(parkInfo.data?["packages"]?.arrayValue?.contains { $0["id"] == "three" } == true)
            // The hours are shown as they were set: per weekday, and dates from today on.
            #expect(try await booking.call("booking.admin.hours.set", data: ["weekday": 2, "open": "10:24", "close": "21:00"], as: Self.admin).ok)
            let utcToday = LocalDate(daysSinceEpoch: Int64(Date().timeIntervalSince1970 / 86_400))
            let closed = LocalDate(daysSinceEpoch: utcToday.daysSinceEpoch + 40).description
            let other = LocalDate(daysSinceEpoch: utcToday.daysSinceEpoch + 41).description
            #expect(try await booking.call("booking.admin.hours.set", data: ["date": .string(closed)], as: Self.admin).ok)
            #expect(try await booking.call("booking.admin.hours.set", data: ["date": .string(other), "open": "12:00", "close": "23:30"], as: Self.admin).ok)
            #expect(try await booking.call("booking.admin.hours.set", data: ["date": "2001-01-01"], as: Self.admin).ok)
            let hours = try await booking.call("booking.park.get", idempotent: true).data
            #expect(hours?["hours"]?.arrayValue?.first { $0["weekday"] == 2 } == ["weekday": 2, "open": "10:24", "close": "21:00"])
            #expect(
                hours?["exceptions"]?.arrayValue == [
                    ["date": .string(closed), "open": nil, "close": nil], ["date": .string(other), "open": "12:00", "close": "23:30"],
                ])
            #expect(try await booking.call("booking.pass.topup", data: ["package": "three"], as: rider, idem: "p").data?["pass"]?["sessions"] == 3)

            let slots = try await BookingFlowTests.bookableSlots(booking.client)
            let first = try #require(slots.last), second = try #require(slots.dropLast().last)
            let made = try await booking.call("booking.create", data: ["cable": "reverse-1", "start": first["start"]!], as: rider)
            let cancelled = try await booking.call("booking.staff.cancel", data: ["booking": made.data?["id"] ?? nil, "reason": "storm"], as: staff)
            #expect(cancelled.data?["status"] == "cancelled_by_park")
            #expect(try await booking.call("booking.pass.get", as: rider).data?["sessions"] == 3)

            // A block on reverse-1 over the second slot: not bookable there, still on reverse-2.
            let block = try await booking.call(
                "booking.staff.blocks.add", data: ["cable": "reverse-1", "start": second["start"]!, "end": second["end"]!, "reason": "maintenance"],
                as: staff)
            let blocked = try await booking.call("booking.create", data: ["cable": "reverse-1", "start": second["start"]!], as: rider)
            #expect(blocked.error?.details["reason"] == "blocked")
            #expect(try await booking.call("booking.create", data: ["cable": "reverse-2", "start": second["start"]!], as: rider).ok)
            #expect(try await booking.call("booking.staff.blocks.remove", data: ["id": block.data?["id"] ?? nil], as: staff).ok)
            let reopened = try await booking.call("booking.slots", data: ["date": second["date"]!, "cable": "reverse-1"], idempotent: true)
            #expect(BookingFlowTests.flatten(reopened.data ?? .null).first { $0["start"] == second["start"] }?["bookable"] == true)

            // The staff's day lists the slot's bookings; without auth the rider is unknown.
            let day = try await booking.call("booking.staff.day", data: ["date": second["date"]!], as: staff)
            let slot = try #require(day.data?["items"]?.arrayValue?.first { $0["start"] == second["start"] && $0["cable"] == "reverse-2" })
            #expect(slot["bookings"]?[0]?["rider"] == ["name": "unknown", "phone": nil])
            #expect(try await booking.call("booking.staff.day", data: ["date": second["date"]!], as: rider).error?.code == .forbidden)

            // Amounts out of range are refused with the field.
            let free = try await booking.call(
                "booking.admin.packages.set", data: ["id": "free", "name": "Free", "sessions": 1, "credit": 0, "price": 0], as: Self.admin)
            #expect(free.error?.fields["price"] == "must be at least 1")
            let negative = try await booking.call("booking.admin.park.update", data: ["price": ["minor": -5, "currency": "BYN"]], as: Self.admin)
            #expect(negative.error?.fields["price.minor"] != nil)

            // Which days have bookable slots.
            let today = try #require(LocalDate(String(Instant.format(Date()).prefix(10))))
            let days = try await booking.call(
                "booking.days", data: ["from": .string(today.description), "to": .string(today.adding(days: 3).description)], idempotent: true)
            #expect((days.data?["items"]?.arrayValue?.count ?? 0) >= 3)
            #expect(days.data?["items"]?.arrayValue?.allSatisfy { ($0["bookableSlots"]?.integerValue ?? 0) > 0 } == true)
            let tooLong = try await booking.call(
                "booking.days", data: ["from": .string(today.description), "to": .string(today.adding(days: 90).description)], idempotent: true)
            #expect(tooLong.error?.fields["to"] != nil)

            // A late cancellation's sanction, waived, applied again and waived again: the pass
            // follows each step and never drifts from its ledger.
            let near = try #require(slots.first)
            let late = try await booking.call("booking.create", data: ["cable": "reverse-2", "start": near["start"]!], as: rider)
            let lateID = try #require(late.data?["id"])
            let sessionsBefore = try await booking.call("booking.pass.get", as: rider).data?["sessions"]?.integerValue ?? 0
            #expect(try await booking.call("booking.cancel", data: ["booking": lateID], as: rider).data?["sanction"] == "forfeit")
            var expected = sessionsBefore
            for (action, delta) in [("waive", Int64(1)), ("forfeit", -1), ("waive", 1), ("waive", 0)] {
                let changed = try await booking.call("booking.staff.sanction", data: ["booking": lateID, "action": .string(action)], as: staff)
                #expect(changed.ok, "\(action): \(changed.error?.message ?? "")")
                expected += delta
                #expect(try await booking.call("booking.pass.get", as: rider).data?["sessions"]?.integerValue == expected)
            }
            #expect(try await Self.ledgerDrift(booking) == 0)

            // A closed exception day has no slots; a new cable appears in the park.
            let date = try #require(first["date"])
            #expect(try await booking.call("booking.admin.hours.set", data: ["date": date], as: Self.admin).ok)
            #expect(try await booking.call("booking.slots", data: ["date": date], idempotent: true).data?["items"] == [])
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-3", "name": "Reverse 3"], as: Self.admin).ok)
            #expect(try await booking.call("booking.park.get", idempotent: true).data?["cables"]?.arrayValue?.count == 3)
        }
    }

    @Test("a retry with the same idem key gets the first booking back after the settings changed")
    func retryAfterSettingsChange() async throws {
        try await Self.withPark(capacity: 2) { booking in
            let rider = Self.rider("retrier")
            #expect(try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "t").ok)
            let slot = try #require(try await BookingFlowTests.bookableSlots(booking.client).last)
            let request: JSONValue = ["cable": "reverse-1", "start": slot["start"]!]
            let first = try await booking.call("booking.create", data: request, as: rider, idem: "lost-reply")
            let id = try #require(first.data?["id"])
            // The cable is taken out of service, then the grid changes: a new request is refused.
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-1", "name": "Reverse 1", "active": false], as: Self.admin).ok)
            #expect(try await booking.call("booking.create", data: request, as: rider, idem: "new-key").error?.code == .validationFailed)
            let retry = try await booking.call("booking.create", data: request, as: rider, idem: "lost-reply")
            #expect(retry.ok, "\(retry.error?.code.rawValue ?? "") \(retry.error?.message ?? "")")
            #expect(retry.data?["id"] == id)
            #expect(try await booking.call("booking.admin.park.update", data: ["slotMinutes": 45], as: Self.admin).ok)
            #expect(try await booking.call("booking.create", data: request, as: rider, idem: "lost-reply").data?["id"] == id)
        }
    }

    @Test("history pages through a rider's bookings")
    func historyPages() async throws {
        try await Self.withPark(capacity: 1) { booking in
            let rider = Self.rider("pager")
            #expect(try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "t").ok)
            let slots = try await BookingFlowTests.bookableSlots(booking.client)
            for slot in slots.suffix(3) {
                #expect(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slot["start"]!], as: rider).ok)
            }
            let first = try await booking.call("booking.history", data: ["filter": "upcoming", "limit": 2], as: rider)
            #expect(first.data?["items"]?.arrayValue?.count == 2)
            let next = try #require(first.data?["next"])
            let rest = try await booking.call("booking.history", data: ["filter": "upcoming", "limit": 2, "cursor": next], as: rider)
            #expect(rest.data?["items"]?.arrayValue?.count == 1 && rest.data?["next"] == JSONValue.null)
            #expect(rest.data?["items"]?[0]?["start"] == slots.last?["start"])
        }
    }

    @Test("50 riders race for the last place: exactly one books it")
    func raceForTheLastPlace() async throws {
        try await Self.withPark(capacity: 1) { booking in
            let riders = (0..<50).map { Self.rider("racer\($0)") }
            for rider in riders {
                #expect(try await booking.call("booking.pass.topup", data: ["package": "one"], as: rider, idem: "t").ok)
            }
            let slot = try #require(try await BookingFlowTests.bookableSlots(booking.client).last)
            let outcomes = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for rider in riders {
                    group.addTask {
                        try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slot["start"]!], as: rider, idem: "race")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter(\.ok).count == 1)
            #expect(outcomes.filter { $0.error?.details["reason"] == "full" }.count == 49)
            let after = try await booking.call("booking.slots", data: ["date": slot["date"]!, "cable": "reverse-1"], idempotent: true)
            #expect(BookingFlowTests.flatten(after.data ?? .null).first { $0["start"] == slot["start"] }?["free"] == 0)
        }
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import AuthService
@testable import BookingService

/// WAKEPARKBY through the gateway: auth and booking as real processes.
@Suite("Booking flows", .serialized)
struct BookingFlowTests {
    static let environment = [
        "BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4", "BACKEND_AUTH_CODE_RESEND_S": "0",
    ]

    /// A stack with auth and booking, an admin token, and a park open around the clock
    /// with no minimum notice (so tests find slots near and far whatever the hour).
    struct Park {
        let stack: TestStack
        let admin: String

        static func with<T>(capacity: Int = 1, _ body: (Park) async throws -> T) async throws -> T {
            try await TestStack.with(services: ["auth", "booking"], extraEnvironment: BookingFlowTests.environment) { stack in
                let admin = try await signUp(stack, "admin@park.example")
                let direct = try stack.directClient("auth")
                _ = try await direct.call("auth.internal.admin.grant", data: ["email": "admin@park.example"])
                let adminToken = try #require(
                    try await stack.client.call("auth.login", data: ["email": "admin@park.example", "password": "secret-pass-1"]).data?["accessToken"]?.stringValue)
                _ = admin
                let configured = try await stack.client.call(
                    "booking.admin.park.update",
                    data: ["minimumNoticeMinutes": 0, "capacity": .integer(Int64(capacity)), "slotMinutes": 30, "timeZone": "Europe/Minsk"],
                    token: adminToken)
                #expect(configured.ok, "\(configured.error?.message ?? "")")
                for weekday in 1...7 {
                    let hours = try await stack.client.call(
                        "booking.admin.hours.set", data: ["weekday": .integer(Int64(weekday)), "open": "00:00", "close": "00:00"], token: adminToken)
                    #expect(hours.ok, "\(hours.error?.message ?? "") \(hours.error?.fields ?? [:])")
                }
                return try await body(Park(stack: stack, admin: adminToken))
            }
        }
    }

    /// Registers by email and returns the access token.
    static func signUp(_ stack: TestStack, _ email: String) async throws -> String {
        try await AuthFixtures.signUp(stack.client, email: email)
    }

    /// Signs a rider in by phone and SMS code, registering on first use.
    static func phoneSignIn(_ stack: TestStack, _ phone: String, first: String, last: String) async throws -> String {
        let started = try await stack.client.call(
            "auth.phone.start", data: ["phone": .string(phone), "challenge": try await AuthFixtures.solvedChallenge(stack.client)])
        #expect(started.ok)
        let code = try await AuthFixtures.code(to: phone, dataDirectory: stack.configuration.dataDirectoryURL)
        let verified = try await stack.client.call(
            "auth.phone.verify",
            data: ["phone": .string(phone), "code": .string(code), "profile": ["firstName": .string(first), "lastName": .string(last)]])
        return try #require(verified.data?["accessToken"]?.stringValue, "\(verified.error?.message ?? "")")
    }

    /// Bookable slots of today and tomorrow on `cable`, soonest first.
    static func bookableSlots(_ stack: TestStack, cable: String = "reverse-1") async throws -> [JSONValue] {
        var slots: [JSONValue] = []
        let today = Date()
        for offset in [0, 1] {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Europe/Minsk")!
            let day = calendar.dateComponents([.year, .month, .day], from: today.addingTimeInterval(Double(offset) * 86_400))
            let date = String(format: "%04d-%02d-%02d", day.year!, day.month!, day.day!)
            let reply = try await stack.client.call("booking.slots", data: ["date": .string(date), "cable": .string(cable)], idempotent: true)
            slots += Self.flatten(reply.data ?? .null).filter { $0["bookable"] == true }
        }
        return slots
    }

    /// One entry per (time, cable) from a `booking.slots` answer, with its date.
    static func flatten(_ answer: JSONValue) -> [JSONValue] {
        guard case .array(let cables)? = answer["cables"], case .array(let items)? = answer["items"] else { return [] }
        var slots: [JSONValue] = []
        for item in items {
            for (index, cable) in cables.enumerated() {
                slots.append([
                    "cable": cable, "date": answer["date"] ?? .null, "start": item["start"] ?? .null, "end": item["end"] ?? .null,
                    "localStart": item["localStart"] ?? .null, "free": item["free"]?[index] ?? .null,
                    "bookable": item["bookable"]?[index] ?? .null,
                ])
            }
        }
        return slots
    }

    @Test("a rider signs in by phone, tops up, books, cancels in time and late, sees history; staff see the day and mark a no-show")
    func riderJourney() async throws {
        try await Park.with { park in
            let stack = park.stack
            let rider = try await Self.phoneSignIn(stack, "+375291234567", first: "Ivan", last: "Rider")

            let topup = try await stack.client.call("booking.pass.topup", data: ["package": "five"], token: rider, idem: "topup-1")
            #expect(topup.data?["status"] == "settled" && topup.data?["pass"]?["sessions"] == 5)
            let again = try await stack.client.call("booking.pass.topup", data: ["package": "five"], token: rider, idem: "topup-1")
            #expect(again.data?["payment"] == topup.data?["payment"])
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 5)

            let slots = try await Self.bookableSlots(stack)
            let now = Date()
            let near = try #require(slots.first { (Instant.parse($0["start"]?.stringValue ?? "") ?? now).timeIntervalSince(now) < 7_000 })
            let farSlots = slots.filter { (Instant.parse($0["start"]?.stringValue ?? "") ?? now).timeIntervalSince(now) > 4 * 3_600 }
            let far = try #require(farSlots.first)
            let third = try #require(farSlots.dropFirst().first)

            let booked = try await stack.client.call(
                "booking.create", data: ["cable": "reverse-1", "start": far["start"]!], token: rider, idem: "book-far")
            #expect(booked.data?["status"] == "booked", "\(booked.error?.message ?? "")")
            let retried = try await stack.client.call(
                "booking.create", data: ["cable": "reverse-1", "start": far["start"]!], token: rider, idem: "book-far")
            #expect(retried.data?["id"] == booked.data?["id"])
            let nearBooking = try await stack.client.call(
                "booking.create", data: ["cable": "reverse-1", "start": near["start"]!], token: rider, idem: "book-near")
            #expect(nearBooking.ok, "\(nearBooking.error?.message ?? "")")
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 3)

            let upcoming = try await stack.client.call("booking.history", data: ["filter": "upcoming"], token: rider, idempotent: true)
            #expect(upcoming.data?["items"]?.arrayValue?.compactMap { $0["id"] } == [nearBooking.data?["id"], booked.data?["id"]].compactMap { $0 })

            let timely = try await stack.client.call("booking.cancel", data: ["booking": booked.data?["id"] ?? nil], token: rider)
            #expect(timely.data?["status"] == "cancelled")
            let late = try await stack.client.call("booking.cancel", data: ["booking": nearBooking.data?["id"] ?? nil], token: rider)
            #expect(late.data?["status"] == "late_cancelled" && late.data?["sanction"] == "forfeit")

            let cancelled = try await stack.client.call("booking.history", data: ["filter": "cancelled"], token: rider, idempotent: true)
            #expect(Set(cancelled.data?["items"]?.arrayValue?.compactMap { $0["status"]?.stringValue } ?? []) == ["cancelled", "late_cancelled"])
            let pass = try await stack.client.call("booking.pass.get", token: rider, idempotent: true)
            #expect(pass.data?["sessions"] == 4)

            // Staff: the day with the rider's name and phone, then a no-show.
            let noShow = try await stack.client.call(
                "booking.create", data: ["cable": "reverse-1", "start": third["start"]!], token: rider, idem: "book-third")
            let noShowID = try #require(noShow.data?["id"])
            let day = try await stack.client.call("booking.staff.day", data: ["date": third["date"]!], token: park.admin, idempotent: true)
            let slot = try #require(day.data?["items"]?.arrayValue?.first { $0["start"] == third["start"] && $0["cable"] == "reverse-1" })
            #expect(slot["bookings"]?.arrayValue?.first?["rider"] == ["name": "Ivan Rider", "phone": "+375291234567"])
            #expect(day.data?["bookings"]?.arrayValue?.contains { $0["id"] == noShowID } == true)
            #expect(try await stack.client.call("booking.staff.day", data: ["date": third["date"]!], token: rider, idempotent: true).error?.code == .forbidden)
            // Attendance is marked once the training has started: not yet...
            let early = try await stack.client.call("booking.staff.mark", data: ["booking": noShowID, "outcome": "no_show"], token: park.admin)
            #expect(early.error?.details["reason"] == "not_started")
            // ...so the test moves the booking's time into the past, as the clock would.
            let bookingFile = stack.configuration.dataDirectoryURL.appendingPathComponent("booking.sqlite").path
            let writable = try DatabaseQueue(path: bookingFile)
            try await writable.write { db in
                try db.execute(
                    sql: "UPDATE booking SET start_at = ?, end_at = ? WHERE id = ?",
                    arguments: [Instant.format(Date().addingTimeInterval(-3_600)), Instant.format(Date().addingTimeInterval(-1_800)), noShowID.stringValue])
            }
            try writable.close()
            let marked = try await stack.client.call("booking.staff.mark", data: ["booking": noShowID, "outcome": "no_show"], token: park.admin)
            #expect(marked.data?["status"] == "no_show" && marked.data?["sanction"] == "forfeit")
            let waived = try await stack.client.call("booking.staff.sanction", data: ["booking": noShowID, "action": "waive"], token: park.admin)
            #expect(waived.data?["sanction"] == "waived")
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 4)

            // Another rider can neither see nor cancel these bookings.
            let other = try await Self.phoneSignIn(stack, "+375297654321", first: "Olga", last: "Other")
            #expect(try await stack.client.call("booking.cancel", data: ["booking": noShowID], token: other).error?.code == .notFound)
            #expect(try await stack.client.call("booking.history", data: ["filter": "past"], token: other, idempotent: true).data?["items"] == [])

            // Every pass equals the sum of its ledger.
            let database = try DatabaseQueue(
                path: stack.configuration.dataDirectoryURL.appendingPathComponent("booking.sqlite").path,
                configuration: { var configuration = Configuration(); configuration.readonly = true; return configuration }())
            let mismatches = try await database.read { db in
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) FROM pass p WHERE p.sessions != (SELECT COALESCE(SUM(sessions_delta), 0) FROM ledger l WHERE l.user_id = p.user_id)
                           OR p.balance_minor != (SELECT COALESCE(SUM(amount_minor_delta), 0) FROM ledger l WHERE l.user_id = p.user_id)
                        """)
            }
            #expect(mismatches == 0)

            // A deleted account leaves no personal link in booking; its future bookings free their places.
            _ = try await stack.client.call("booking.pass.topup", data: ["package": "one"], token: other, idem: "o")
            let otherBooking = try await stack.client.call("booking.create", data: ["cable": "reverse-2", "start": far["start"]!], token: other)
            #expect(otherBooking.ok)
            let otherID = try #require(try await stack.client.call("auth.profile.get", token: other, idempotent: true).data?["id"])
            #expect(try await stack.client.call("auth.admin.users.delete", data: ["userId": otherID], token: park.admin).ok)
            var remaining = 1
            for _ in 0..<200 where remaining > 0 {
                remaining = try await database.read { db in
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM booking WHERE user_id = ?", arguments: [otherID.stringValue]) ?? 0
                }
                if remaining > 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(remaining == 0)
            let freed = try await database.read { db in
                try String.fetchOne(db, sql: "SELECT status FROM booking WHERE id = ?", arguments: [otherBooking.data?["id"]?.stringValue])
            }
            #expect(freed == "cancelled")
        }
    }

    @Test("bad bookings are refused with the field or the reason")
    func badBookings() async throws {
        try await Park.with { park in
            let stack = park.stack
            let rider = try await Self.signUp(stack, "bad@example.com")
            let slots = try await Self.bookableSlots(stack)
            let start = try #require(slots.last?["start"])
            #expect(try await stack.client.call("booking.create", data: ["cable": "reverse-9", "start": start], token: rider).error?.fields["cable"] != nil)
            #expect(
                try await stack.client.call("booking.create", data: ["cable": "reverse-1", "start": "2026-11-22T10:00:00"], token: rider).error?.fields["start"]
                    != nil)
            let offGrid = Instant.format((Instant.parse(start.stringValue ?? "") ?? Date()).addingTimeInterval(60))
            #expect(try await stack.client.call("booking.create", data: ["cable": "reverse-1", "start": .string(offGrid)], token: rider).error?.fields["start"] != nil)
            let noCredit = try await stack.client.call("booking.create", data: ["cable": "reverse-1", "start": start], token: rider)
            #expect(noCredit.error?.code == .conflict && noCredit.error?.details["reason"] == "no_credit")
            #expect(try await stack.client.call("booking.create", data: ["cable": "reverse-1", "start": start]).error?.code == .unauthenticated)
            #expect(try await stack.client.call("booking.pass.topup", data: ["package": "nope"], token: rider).error?.fields["package"] != nil)
            #expect(try await stack.client.call("booking.slots", data: ["date": "2026-02-30"], idempotent: true).error?.fields["date"] != nil)
            #expect(try await stack.client.call("booking.admin.park.update", data: ["capacity": 5], token: rider).error?.code == .forbidden)
        }
    }

    @Test("staff: blocks, park cancellations with a full refund, exception days, cables and packages")
    func staffTools() async throws {
        try await Park.with(capacity: 2) { park in
            let stack = park.stack
            let rider = try await Self.signUp(stack, "staffed@example.com")
            #expect(
                try await stack.client.call(
                    "booking.admin.packages.set", data: ["id": "three", "name": "3 sessions", "sessions": 3, "credit": 0, "price": 7000],
                    token: park.admin
                ).ok)
            let parkInfo = try await stack.client.call("booking.park.get", idempotent: true)
            #expect(parkInfo.data?["packages"]?.arrayValue?.contains { $0["id"] == "three" } == true)
            #expect(try await stack.client.call("booking.pass.topup", data: ["package": "three"], token: rider, idem: "p").data?["pass"]?["sessions"] == 3)

            let slots = try await Self.bookableSlots(stack)
            let first = try #require(slots.last), second = try #require(slots.dropLast().last)
            let booking = try await stack.client.call("booking.create", data: ["cable": "reverse-1", "start": first["start"]!], token: rider)
            let cancelled = try await stack.client.call(
                "booking.staff.cancel", data: ["booking": booking.data?["id"] ?? nil, "reason": "storm"], token: park.admin)
            #expect(cancelled.data?["status"] == "cancelled_by_park")
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 3)

            // A block on reverse-1 over the second slot: not bookable there, still on reverse-2.
            let block = try await stack.client.call(
                "booking.staff.blocks.add", data: ["cable": "reverse-1", "start": second["start"]!, "end": second["end"]!, "reason": "maintenance"],
                token: park.admin)
            let blocked = try await stack.client.call("booking.create", data: ["cable": "reverse-1", "start": second["start"]!], token: rider)
            #expect(blocked.error?.details["reason"] == "blocked")
            #expect(try await stack.client.call("booking.create", data: ["cable": "reverse-2", "start": second["start"]!], token: rider).ok)
            #expect(try await stack.client.call("booking.staff.blocks.remove", data: ["id": block.data?["id"] ?? nil], token: park.admin).ok)
            let reopened = try await stack.client.call("booking.slots", data: ["date": second["date"]!, "cable": "reverse-1"], idempotent: true)
            #expect(Self.flatten(reopened.data ?? .null).first { $0["start"] == second["start"] }?["bookable"] == true)

            // Amounts out of range are refused with the field.
            let free = try await stack.client.call(
                "booking.admin.packages.set", data: ["id": "free", "name": "Free", "sessions": 1, "credit": 0, "price": 0], token: park.admin)
            #expect(free.error?.fields["price"] == "must be at least 1")
            let negative = try await stack.client.call(
                "booking.admin.park.update", data: ["price": ["minor": -5, "currency": "BYN"]], token: park.admin)
            #expect(negative.error?.fields["price.minor"] != nil)

            // Which days have bookable slots.
            let today = try #require(LocalDate(String(Instant.format(Date()).prefix(10))))
            let days = try await stack.client.call(
                "booking.days", data: ["from": .string(today.description), "to": .string(today.adding(days: 3).description)], idempotent: true)
            #expect((days.data?["items"]?.arrayValue?.count ?? 0) >= 3)
            #expect(days.data?["items"]?.arrayValue?.allSatisfy { ($0["bookableSlots"]?.integerValue ?? 0) > 0 } == true)
            let tooLong = try await stack.client.call(
                "booking.days", data: ["from": .string(today.description), "to": .string(today.adding(days: 90).description)], idempotent: true)
            #expect(tooLong.error?.fields["to"] != nil)

            // A late cancellation's sanction, waived, applied again and waived again: the pass
            // follows each step and never drifts from its ledger.
            let near = try #require(slots.first)
            let late = try await stack.client.call("booking.create", data: ["cable": "reverse-2", "start": near["start"]!], token: rider)
            let lateID = try #require(late.data?["id"])
            let sessionsBefore = try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"]?.integerValue ?? 0
            #expect(try await stack.client.call("booking.cancel", data: ["booking": lateID], token: rider).data?["sanction"] == "forfeit")
            var expected = sessionsBefore
            for (action, delta) in [("waive", Int64(1)), ("forfeit", -1), ("waive", 1), ("waive", 0)] {
                let changed = try await stack.client.call("booking.staff.sanction", data: ["booking": lateID, "action": .string(action)], token: park.admin)
                #expect(changed.ok, "\(action): \(changed.error?.message ?? "")")
                expected += delta
                #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"]?.integerValue == expected)
            }
            let ledger = try DatabaseQueue(
                path: stack.configuration.dataDirectoryURL.appendingPathComponent("booking.sqlite").path,
                configuration: { var configuration = Configuration(); configuration.readonly = true; return configuration }())
            let drift = try await ledger.read { db in
                try Int.fetchOne(
                    db,
                    sql: "SELECT COUNT(*) FROM pass p WHERE p.sessions != (SELECT COALESCE(SUM(sessions_delta), 0) FROM ledger l WHERE l.user_id = p.user_id)")
            }
            #expect(drift == 0)

            // A closed exception day has no slots; a new cable appears in the day.
            let date = try #require(first["date"])
            #expect(try await stack.client.call("booking.admin.hours.set", data: ["date": date], token: park.admin).ok)
            #expect(try await stack.client.call("booking.slots", data: ["date": date], idempotent: true).data?["items"] == [])
            #expect(try await stack.client.call("booking.admin.cables.set", data: ["id": "reverse-3", "name": "Reverse 3"], token: park.admin).ok)
            let park3 = try await stack.client.call("booking.park.get", idempotent: true)
            #expect(park3.data?["cables"]?.arrayValue?.count == 3)
        }
    }

    @Test("50 riders race for the last place: exactly one books it")
    func raceForTheLastPlace() async throws {
        try await Park.with(capacity: 1) { park in
            let stack = park.stack
            var riders: [String] = []
            for index in 0..<50 {
                let token = try await Self.signUp(stack, "racer\(index)@example.com")
                #expect(try await stack.client.call("booking.pass.topup", data: ["package": "one"], token: token, idem: "t").ok)
                riders.append(token)
            }
            let slot = try #require(try await Self.bookableSlots(stack).last)
            let outcomes = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for token in riders {
                    group.addTask {
                        try await stack.client.call("booking.create", data: ["cable": "reverse-1", "start": slot["start"]!], token: token, idem: "race")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter(\.ok).count == 1)
            #expect(outcomes.filter { $0.error?.details["reason"] == "full" }.count == 49)
            let after = try await stack.client.call("booking.slots", data: ["date": slot["date"]!, "cable": "reverse-1"], idempotent: true)
            #expect(Self.flatten(after.data ?? .null).first { $0["start"] == slot["start"] }?["free"] == 0)
        }
    }
}

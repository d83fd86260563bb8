import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import AuthService
@testable import BookingService

/// WAKEPARKBY's one journey through the gateway: auth and booking as real processes.
/// Every other booking scenario runs in process (``BookingOperationTests``).
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
                let adminToken = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@park.example")
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
    static func bookableSlots(_ client: CheckedClient, cable: String = "reverse-1") async throws -> [JSONValue] {
        var slots: [JSONValue] = []
        let today = Date()
        for offset in [0, 1] {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Europe/Minsk")!
            let day = calendar.dateComponents([.year, .month, .day], from: today.addingTimeInterval(Double(offset) * 86_400))
            let date = String(format: "%04d-%02d-%02d", day.year!, day.month!, day.day!)
            let reply = try await client.call("booking.slots", data: ["date": .string(date), "cable": .string(cable)], idempotent: true)
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

            let slots = try await Self.bookableSlots(stack.client)
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

    @Test("pictures through the gateway: an admin uploads one and sets it on a cable, a rider reads it back; a text file and an oversized image are refused")
    func picturesThroughTheGateway() async throws {
        try await Park.with { park in
            let stack = park.stack
            let rider = try await Self.signUp(stack, "rider-pictures@park.example")
            let content = TestImages.png(width: 120, height: 80)
            let put = try await stack.client.call(
                "booking.media.put", data: ["content": .string(content.base64EncodedString())], token: park.admin, idem: "picture-1")
            #expect(put.data?["contentType"] == "image/png" && put.data?["width"] == 120 && put.data?["height"] == 80)
            let id = try #require(put.data?["id"], "\(put.error?.message ?? "")")
            let set = try await stack.client.call(
                "booking.admin.cables.set", data: ["id": "reverse-1", "name": "Reverse 1", "image": id], token: park.admin)
            #expect(set.ok, "\(set.error?.message ?? "")")
            let cables = try await stack.client.call("booking.park.get", idempotent: true).data?["cables"]?.arrayValue ?? []
            #expect(cables.first { $0["id"] == "reverse-1" }?["image"] == id)

            for caller in [rider, nil] {
                let got = try await stack.client.call("booking.media.get", data: ["id": id], token: caller, idempotent: true)
                #expect(got.data?["contentType"] == "image/png")
                #expect(got.data?["content"]?.stringValue.flatMap { Data(base64Encoded: $0) } == content)
            }
            let text = try await stack.client.call(
                "booking.media.put", data: ["content": .string(Data("not a picture, though named reverse.png".utf8).base64EncodedString())],
                token: park.admin)
            #expect(text.error?.code == .validationFailed && text.error?.fields["content"] != nil)
            let byRider = try await stack.client.call("booking.media.put", data: ["content": .string(content.base64EncodedString())], token: rider)
            #expect(byRider.error?.code == .forbidden)
            // Over 512 KiB but within a request: booking refuses it with the limit.
            let oversized = TestImages.png(width: 300, height: 582)
            let tooLarge = try await stack.client.call(
                "booking.media.put", data: ["content": .string(oversized.base64EncodedString())], token: park.admin)
            #expect(tooLarge.error?.code == .payloadTooLarge && tooLarge.error?.details["limitBytes"] == 524_288)
            // Over the 1 MiB request limit: the gateway refuses it unread.
            let huge = TestImages.png(width: 300, height: 900)
            let request = try await stack.client.call("booking.media.put", data: ["content": .string(huge.base64EncodedString())], token: park.admin)
            #expect(request.error?.code == .payloadTooLarge)
            #expect(try await stack.client.call("booking.media.get", data: ["id": "med_0193a4f2c1e8_5f0c2d9a8b7e6f10"]).error?.code == .notFound)
        }
    }
}

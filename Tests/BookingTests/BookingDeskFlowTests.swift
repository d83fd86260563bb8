import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// A day at the desk through the gateway, with auth and booking as real processes.
@Suite("Booking: the desk through the gateway", .serialized)
struct BookingDeskFlowTests {
    /// Signs up a staff member: an account granted `staff` by the admin, signed in again.
    static func staff(_ park: BookingFlowTests.Park) async throws -> (token: String, id: String) {
        let stack = park.stack
        _ = try await AuthFixtures.signUp(stack.client, email: "desk@park.example")
        let login = try await AuthFixtures.signIn(stack.client, email: "desk@park.example", password: "secret-pass-1")
        let id = try #require(login.data?["user"]?["id"]?.stringValue)
        #expect(try await stack.client.call("auth.admin.roles.grant", data: ["userId": .string(id), "role": "staff"], token: park.admin).ok)
        let again = try await AuthFixtures.signIn(stack.client, email: "desk@park.example", password: "secret-pass-1")
        let token = try #require(again.data?["accessToken"]?.stringValue)
        let switched = try await stack.client.call("auth.role.switch", data: ["role": "staff"], token: token)
        return (try #require(switched.data?["accessToken"]?.stringValue, "\(switched.error?.message ?? "")"), id)
    }

    /// Moves a booking so that its training started ten minutes ago (the test writes the
    /// service's file, as time passing would).
    static func start(_ stack: TestStack, _ id: String) async throws {
        let database = try DatabaseQueue(path: stack.configuration.dataDirectoryURL.appendingPathComponent("booking.sqlite").path)
        let now = Date()
        try await database.write { db in
            try db.execute(
                sql: "UPDATE booking SET start_at = ?, end_at = ? WHERE id = ?",
                arguments: [Instant.format(now.addingTimeInterval(-600)), Instant.format(now.addingTimeInterval(1_200)), id])
        }
    }

    @Test("walk-ins racing at the desk for the last place: one is booked, and only that rider gets an account")
    func racingWalkIns() async throws {
        try await BookingFlowTests.Park.with(capacity: 1) { park in
            let stack = park.stack
            let (staff, _) = try await Self.staff(park)
            let slot = try #require(try await BookingFlowTests.bookableSlots(stack.client).first?["start"])
            let users = try DatabaseQueue(path: stack.configuration.dataDirectoryURL.appendingPathComponent("auth.sqlite").path)
            let before = try await users.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user") ?? -1 }
            let client = stack.client
            let answers = try await withThrowingTaskGroup(of: (ok: Bool, reason: JSONValue?).self) { group in
                for index in 0..<8 {
                    let walkIn: JSONValue = [
                        "phone": .string("+37529555000\(index)"), "firstName": "Walk", "lastName": .string("In\(index)"), "cable": "reverse-1",
                        "start": slot, "payWith": "cash",
                    ]
                    group.addTask {
                        let reply = try await client.call("booking.staff.book", data: walkIn, token: staff, timeout: .seconds(30), attempts: 1)
                        return (reply.ok, reply.error?.details["reason"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter(\.ok).count == 1)
            #expect(answers.filter { $0.reason == "full" }.count == 7, "\(answers)")
            let after = try await users.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user") ?? -1 }
            #expect(after == before + 1, "one account, for the rider who got the place")
        }
    }

    @Test("a walk-in submitted twice at once (a double click): both copies get the one booking, neither a refusal")
    func doubleSubmittedWalkIn() async throws {
        try await BookingFlowTests.Park.with(capacity: 1) { park in
            let stack = park.stack
            let (staff, _) = try await Self.staff(park)
            let slot = try #require(try await BookingFlowTests.bookableSlots(stack.client).first?["start"])
            let walkIn: JSONValue = ["phone": "+375295550099", "firstName": "Double", "lastName": "Click", "cable": "reverse-1", "start": slot, "payWith": "cash"]
            let client = stack.client
            let replies = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await client.call("booking.staff.book", data: walkIn, token: staff, idem: "desk-double-click", timeout: .seconds(30), attempts: 1)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let refusals = replies.compactMap(\.error)
            #expect(refusals.isEmpty, "\(refusals)")
            #expect(Set(replies.compactMap { $0.data?["booking"]?["id"] }).count == 1)
        }
    }

    @Test("staff book a walk-in for cash, credit a pass, close a stormy afternoon with refunds and correct a mark; the ledger and the log show each step")
    func deskDay() async throws {
        try await BookingFlowTests.Park.with(capacity: 2) { park in
            let stack = park.stack
            let (staff, staffID) = try await Self.staff(park)
            let slots = try await BookingFlowTests.bookableSlots(stack.client)
            #expect(slots.count >= 4)
            // Settings are the admin's; staff run the day.
            #expect(try await stack.client.call("booking.admin.park.update", data: ["capacity": 3], token: staff).error?.code == .forbidden)

            // 1. A walk-in with no account: found by phone, created, booked for cash.
            let walkIn = try await stack.client.call(
                "booking.staff.book",
                data: [
                    "phone": "+375297770011", "firstName": "Olga", "lastName": "Walker", "cable": "reverse-1", "start": slots[0]["start"]!,
                    "payWith": "cash", "reason": "walked in",
                ], token: staff, idem: "walk-in-1")
            #expect(walkIn.data?["booking"]?["status"] == "booked", "\(walkIn.error?.message ?? "") \(walkIn.error?.fields ?? [:])")
            #expect(walkIn.data?["rider"]?["created"] == true && walkIn.data?["rider"]?["name"] == "Olga Walker")
            let riderID = try #require(walkIn.data?["rider"]?["id"]?.stringValue)
            let retried = try await stack.client.call(
                "booking.staff.book",
                data: [
                    "phone": "+375297770011", "firstName": "Olga", "lastName": "Walker", "cable": "reverse-1", "start": slots[0]["start"]!,
                    "payWith": "cash", "reason": "walked in",
                ], token: staff, idem: "walk-in-1")
            #expect(retried.data?["booking"]?["id"] == walkIn.data?["booking"]?["id"], "a retry books once")
            // The desk finds the rider at the counter by phone (never making an account).
            let byPhone = try await stack.client.call("booking.staff.rider", data: ["phone": "+375297770011"], token: staff, idempotent: true)
            #expect(byPhone.data?["rider"]?["id"] == .string(riderID) && byPhone.data?["bookings"]?.arrayValue?.count == 1)
            // The staff member who booked it, by name.
            #expect(byPhone.data?["staff"]?[staffID]?.stringValue?.isEmpty == false, "\(byPhone.data?["staff"] ?? .null)")
            let nobody = try await stack.client.call("booking.staff.rider", data: ["phone": "+375297770099"], token: staff, idempotent: true)
            #expect(nobody.error?.code == .notFound)
            let both = try await stack.client.call(
                "booking.staff.rider", data: ["phone": "+375297770011", "user": .string(riderID)], token: staff, idempotent: true)
            #expect(both.error?.code == .validationFailed)
            // The rider later signs in with an SMS code and finds the booking.
            let rider = try await BookingFlowTests.phoneSignIn(stack, "+375297770011", first: "Olga", last: "Walker")
            let upcoming = try await stack.client.call("booking.history", data: ["filter": "upcoming"], token: rider, idempotent: true)
            #expect(upcoming.data?["items"]?[0]?["id"] == walkIn.data?["booking"]?["id"])

            // 2. A pass credited by hand (a cash sale of five sessions), and a debit too large.
            let credited = try await stack.client.call(
                "booking.staff.pass.adjust", data: ["user": .string(riderID), "sessions": 5, "reason": "sold 5 sessions for cash"], token: staff, idem: "adj-1")
            #expect(credited.data?["sessions"] == 5, "\(credited.error?.message ?? "")")
            let tooMuch = try await stack.client.call(
                "booking.staff.pass.adjust", data: ["user": .string(riderID), "sessions": -9, "reason": "oops"], token: staff, idem: "adj-2")
            #expect(tooMuch.error?.details["reason"] == "insufficient")
            let stranger = try await stack.client.call(
                "booking.staff.pass.adjust", data: ["user": "usr_nobody", "sessions": 1, "reason": "x"], token: staff, idem: "adj-3")
            #expect(stranger.error?.code == .notFound)

            // 3. Booked from the pass for the afternoon; a storm closes it: refunds and events.
            let afternoon = [slots[1], slots[2]]
            var stormBookings: [String] = []
            for slot in afternoon {
                let made = try await stack.client.call(
                    "booking.staff.book", data: ["user": .string(riderID), "cable": "reverse-2", "start": slot["start"]!, "payWith": "pass"], token: staff)
                stormBookings.append(try #require(made.data?["booking"]?["id"]?.stringValue, "\(made.error?.message ?? "")"))
            }
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 3)
            let storm = try await stack.client.call(
                "booking.staff.blocks.add",
                data: ["start": afternoon[0]["start"]!, "end": afternoon[1]["end"]!, "reason": "storm", "cancelBookings": true], token: staff)
            #expect(Set(storm.data?["cancelled"]?.arrayValue?.compactMap(\.stringValue) ?? []) == Set(stormBookings), "\(storm.error?.message ?? "")")
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 5)
            let cancelled = try await stack.client.call("booking.history", data: ["filter": "cancelled"], token: rider, idempotent: true)
            #expect(cancelled.data?["items"]?.arrayValue?.filter { $0["status"] == "cancelled_by_park" }.count == 2)

            // 4. The walk-in trained; marked a no-show by mistake, corrected to attended.
            let walkInID = try #require(walkIn.data?["booking"]?["id"]?.stringValue)
            try await Self.start(stack, walkInID)
            let noShow = try await stack.client.call(
                "booking.staff.mark", data: ["booking": .string(walkInID), "outcome": "no_show", "reason": "not at the cable"], token: staff)
            #expect(noShow.data?["status"] == "no_show", "\(noShow.error?.message ?? "")")
            let attended = try await stack.client.call(
                "booking.staff.mark", data: ["booking": .string(walkInID), "outcome": "attended", "reason": "was on reverse 2 by mistake"], token: staff)
            #expect(attended.data?["status"] == "attended")

            // The rider's page at the desk: pass, ledger with who did what, bookings, actions.
            let page = try await stack.client.call("booking.staff.rider", data: ["user": .string(riderID)], token: staff, idempotent: true)
            #expect(page.data?["rider"]?["phone"] == "+375297770011")
            let ledger = page.data?["pass"]?["recent"]?.arrayValue ?? []
            let kinds = ledger.reversed().map { $0["kind"]?.stringValue ?? "" }
            #expect(kinds == ["cash", "booking", "adjustment", "booking", "booking", "refund", "refund", "forfeit"], "\(kinds)")
            #expect(ledger.first { $0["kind"] == "cash" }?["actor"] == .string(staffID))
            #expect(ledger.first { $0["kind"] == "adjustment" }?["reason"] == "sold 5 sessions for cash")
            let actions = (page.data?["actions"]?.arrayValue ?? []).reversed().map { $0["action"]?.stringValue ?? "" }
            #expect(
                actions == [
                    "booking.booked", "pass.adjusted", "booking.booked", "booking.booked", "booking.cancelled_by_park", "booking.cancelled_by_park",
                    "booking.marked", "booking.mark_corrected",
                ], "\(actions)")
            #expect(page.data?["actions"]?.arrayValue?.allSatisfy { $0["actor"] == .string(staffID) } == true)
            let log = try await stack.client.call("booking.staff.actions", data: ["booking": .string(walkInID)], token: staff, idempotent: true)
            #expect(log.data?["items"]?[0]?["reason"] == "was on reverse 2 by mistake")
            // Riders see their own ledger with staff's reasons, never the staff member.
            let own = try await stack.client.call("booking.pass.get", token: rider, idempotent: true)
            #expect(own.data?["recent"]?.arrayValue?.allSatisfy { $0["actor"] == nil } == true)
            #expect(try await stack.client.call("booking.staff.rider", data: ["user": .string(riderID)], token: rider, idempotent: true).error?.code == .forbidden)
            // An id neither auth nor the park knows is not found; staff do not credit themselves.
            let unknownRider = try await stack.client.call("booking.staff.rider", data: ["user": "usr_nobody"], token: staff, idempotent: true)
            #expect(unknownRider.error?.code == .notFound)
            let selfCredit = try await stack.client.call(
                "booking.staff.pass.adjust", data: ["user": .string(staffID), "sessions": 5, "reason": "mine"], token: staff)
            #expect(selfCredit.error?.code == .forbidden)
        }
    }
}

/// The rider's rules through the gateway: each refusal, payment from the balance, the
/// copied cancellation rule, the two-hour boundary, a DST night and history paging.
@Suite("Booking: the rider's rules through the gateway", .serialized)
struct BookingRulesFlowTests {
    static func shift(_ stack: TestStack, _ id: String, startsIn seconds: TimeInterval) async throws {
        let database = try DatabaseQueue(path: stack.configuration.dataDirectoryURL.appendingPathComponent("booking.sqlite").path)
        let start = Date().addingTimeInterval(seconds)
        try await database.write { db in
            try db.execute(
                sql: "UPDATE booking SET start_at = ?, end_at = ? WHERE id = ?",
                arguments: [Instant.format(start), Instant.format(start.addingTimeInterval(1_800)), id])
        }
    }

    @Test("refusals, the balance, the copied rule, the two-hour boundary, a DST night and history pages")
    func riderRules() async throws {
        try await BookingFlowTests.Park.with(capacity: 2) { park in
            let stack = park.stack
            let admin = park.admin
            func update(_ data: JSONValue) async throws {
                let reply = try await stack.client.call("booking.admin.park.update", data: data, token: admin)
                #expect(reply.ok, "\(reply.error?.message ?? "")")
            }
            func book(_ token: String, _ start: JSONValue, cable: String = "reverse-1") async throws -> Reply.Parsed {
                try await stack.client.call("booking.create", data: ["cable": .string(cable), "start": start], token: token)
            }
            let rider = try await BookingFlowTests.signUp(stack, "rules@park.example")
            // Paying from the money balance: 50 BYN, 25 BYN a session.
            #expect(try await stack.client.call("booking.pass.topup", data: ["package": "credit-50"], token: rider, idem: "c").ok)
            let slots = try await BookingFlowTests.bookableSlots(stack.client)
            let far = slots.filter { (Instant.parse($0["start"]?.stringValue ?? "") ?? Date()).timeIntervalSinceNow > 5 * 3_600 }
            #expect(far.count >= 10)
            let paid = try await book(rider, far[0]["start"]!)
            #expect(paid.data?["paidWith"] == "balance", "\(paid.error?.message ?? "")")
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["balance"]?["minor"] == 2_500)
            #expect(try await stack.client.call("booking.pass.topup", data: ["package": "ten"], token: rider, idem: "t").ok)

            // Each refusal, with its reason.
            let yesterday = try #require(LocalDate(String(Instant.format(Date().addingTimeInterval(-86_400)).prefix(10))))
            #expect(try await book(rider, .string("\(yesterday)T09:00:00Z")).error?.details["reason"] == "past")
            let later = try await book(rider, .string("\(yesterday.adding(days: 21))T09:00:00Z"))
            #expect(later.error?.details["reason"] == "not_open_yet")
            #expect(try await book(rider, far[0]["start"]!, cable: "reverse-1").error?.details["reason"] == "already_booked")
            try await update(["maxBookingsPerDay": 1])
            // A day with two free slots, the first booked (far[0] already is, on its day).
            let day = try #require(Dictionary(grouping: far.dropFirst(6)) { $0["date"]?.stringValue ?? "" }.values.first { $0.count >= 2 })
            if day[0]["date"] != far[0]["date"] { #expect(try await book(rider, day[0]["start"]!).ok) }
            #expect(try await book(rider, day[1]["start"]!).error?.details["reason"] == "daily_limit")
            try await update(["maxBookingsPerDay": 4, "minimumNoticeMinutes": 600])
            let soon = try #require(slots.first)
            #expect(try await book(rider, soon["start"]!).error?.details["reason"] == "minimum_notice")
            try await update(["minimumNoticeMinutes": 0])

            // The cancellation rule is copied onto the booking: a stricter policy later does
            // not make its cancellation late.
            let kept = try #require(try await book(rider, far[1]["start"]!).data)
            try await update(["freeCancellationSeconds": 604_800])
            let cancelled = try await stack.client.call("booking.cancel", data: ["booking": kept["id"]!], token: rider)
            #expect(cancelled.data?["status"] == "cancelled" && cancelled.data?["freeCancellationUntil"] == kept["freeCancellationUntil"])
            try await update(["freeCancellationSeconds": 7_200])

            // The two-hour boundary: just over two hours before is free, just under is late.
            for (offset, expected) in [(7_230.0, "cancelled"), (7_170.0, "late_cancelled")] {
                let made = try #require(try await book(rider, far[2]["start"]!, cable: "reverse-2").data?["id"]?.stringValue)
                try await Self.shift(stack, made, startsIn: offset)
                let reply = try await stack.client.call("booking.cancel", data: ["booking": .string(made)], token: rider)
                #expect(reply.data?["status"] == .string(expected), "\(offset) s before: \(reply.error?.message ?? "")")
            }

            // History: past and cancelled, newest first, paged without loss or repeat.
            for (index, slot) in far.dropFirst(3).prefix(3).enumerated() {
                let made = try #require(try await book(rider, slot["start"]!).data?["id"]?.stringValue)
                try await Self.shift(stack, made, startsIn: -Double(index + 1) * 86_400)
            }
            for filter in ["past", "cancelled"] {
                var seen: [JSONValue] = []
                var cursor: JSONValue = .null
                repeat {
                    var data: [String: JSONValue] = ["filter": .string(filter), "limit": 2]
                    if cursor != .null { data["cursor"] = cursor }
                    let page = try await stack.client.call("booking.history", data: .object(data), token: rider, idempotent: true)
                    seen += page.data?["items"]?.arrayValue ?? []
                    cursor = page.data?["next"] ?? .null
                } while cursor != .null
                let starts = seen.compactMap { $0["start"]?.stringValue }
                #expect(starts.count == 3 && starts == starts.sorted(by: >) && Set(seen.compactMap { $0["id"] }).count == 3, "\(filter): \(starts)")
            }

            // A DST night in a zone with DST: 02:00–03:00 does not exist on 2027-03-28.
            try await update(["timeZone": "Europe/Berlin", "horizonDays": 365, "slotMinutes": 30])
            let night = try await stack.client.call("booking.slots", data: ["date": "2027-03-28", "cable": "reverse-1"], idempotent: true)
            let starts = BookingFlowTests.flatten(night.data ?? .null).compactMap { $0["localStart"]?.stringValue }
            #expect(!starts.contains("02:00") && !starts.contains("02:30") && starts.contains("01:30") && starts.contains("03:00"))
            let lastBeforeGap = try await book(rider, "2027-03-28T00:30:00Z")
            #expect(lastBeforeGap.data?["localStart"] == "01:30" && lastBeforeGap.data?["localEnd"] == "03:00", "\(lastBeforeGap.error?.message ?? "")")
            let back = try await stack.client.call("booking.slots", data: ["date": "2027-10-31", "cable": "reverse-1"], idempotent: true)
            #expect(BookingFlowTests.flatten(back.data ?? .null).filter { $0["localStart"] == "02:00" }.count == 1)
        }
    }
}

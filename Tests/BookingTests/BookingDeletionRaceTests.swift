import Foundation
import GRDB
import Platform
import SharedTesting
import Synchronization
import Testing

@testable import BookingService

/// Test tokens whose sessions can be revoked while the check at the door still lets them
/// in: a request verified just before its session was revoked, caught in the window
/// between the door and its write.
final class LateRevocationVerifier: TokenVerifier {
    private let revoked = Mutex<Set<String>>([])

    func verify(_ token: String) throws(ServiceError) -> Principal { try TestTokenVerifier().verify(token) }

    func isRevoked(session: String) -> Bool { revoked.withLock { $0.contains(session) } }

    func revoke(user: String) { _ = revoked.withLock { $0.insert("test-session-\(user)") } }
}

/// The attack's findings on the booking issue: writes racing an account deletion, a
/// provider's success after a failure, the desk creating accounts for slots it cannot
/// book, and the edges of staff input.
@Suite("Booking: deletion races and the desk's edges")
struct BookingDeletionRaceTests {
    typealias Ops = BookingOperationTests

    /// Revokes the rider's session and applies `auth.user.deleted`, as auth publishes them.
    static func delete(_ user: String, _ booking: InProcessService, verifier: LateRevocationVerifier) async throws {
        verifier.revoke(user: user)
        let event = Event(source: "auth", seq: 1, type: "auth.user.deleted", at: Instant.format(Date()), data: ["userId": .string(user)])
        try await booking.runtime.pool.write { db in try BookingService.userDeleted(BookingState()).apply(db, event) }
    }

    static func insertPendingPayment(_ booking: InProcessService, id: String, user: String) async throws {
        try await booking.runtime.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO payment (id, user_id, package_id, amount_minor, currency, status, created_at, sessions, credit_minor)
                    VALUES (?, ?, 'five', 11500, 'BYN', 'pending', ?, 5, 0)
                    """,
                arguments: [id, user, Instant.format(Date())])
        }
    }

    @Test("requests of a deleted account that passed the door before the deletion write nothing: no pass, payment or booking under its id")
    func deletedAccountWritesNothing() async throws {
        let verifier = LateRevocationVerifier()
        try await Ops.withPark(verifier: verifier) { booking in
            let leaver = Ops.rider("leaver")
            #expect(try await booking.call("booking.pass.topup", data: ["package": "five"], as: leaver, idem: "t1").ok)
            try await Self.delete("leaver", booking, verifier: verifier)

            let slot = try #require(try await BookingFlowTests.bookableSlots(booking.client).first?["start"])
            let topup = try await booking.call("booking.pass.topup", data: ["package": "five"], as: leaver, idem: "t2")
            #expect(topup.error?.code == .unauthenticated, "\(topup.error?.code.rawValue ?? "ok")")
            let made = try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slot], as: leaver)
            #expect(made.error?.code == .unauthenticated)
            let (passes, payments, bookings, ledger) = try await booking.runtime.pool.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pass WHERE user_id = 'leaver'") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM payment WHERE user_id = 'leaver'") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM booking WHERE user_id = 'leaver'") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ledger WHERE user_id = 'leaver'") ?? -1
                )
            }
            #expect(passes == 0 && payments == 0 && bookings == 0 && ledger == 0)

            // Staff who found the rider in auth just before: nothing is posted for the id.
            await #expect(throws: ServiceError.self) {
                try await booking.runtime.pool.write { db in
                    try PassLedger.post(db, user: "leaver", kind: .adjustment, sessions: 5, amount: 0, actor: "staff-1", reason: "late")
                }
            }
            // A payment recorded under the id before the deletion reached it settles unclaimed.
            try await Self.insertPendingPayment(booking, id: "pay_late", user: "leaver")
            let settled = try await booking.runtime.pool.write { db in
                try PaymentCallbacks.settle(db, payment: "pay_late", succeeded: true, state: nil)
            }
            let status = try await booking.runtime.pool.read { db in
                try String.fetchOne(db, sql: "SELECT status FROM payment WHERE id = 'pay_late'")
            }
            #expect(settled && status == "unclaimed")
            #expect(try await booking.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pass WHERE user_id = 'leaver'") } == 0)
            // Others are untouched.
            #expect(try await booking.call("booking.pass.topup", data: ["package": "five"], as: Ops.rider("stayer"), idem: "s").ok)
            #expect(try await Ops.ledgerDrift(booking) == 0)
        }
    }

    @Test("a provider's success after its failure settles and credits once; a failure after a success changes nothing; an admin may settle a failed one")
    func successAfterFailure() async throws {
        try await Ops.withPark { booking in
            let rider = Ops.rider("retrying-card")
            try await Self.insertPendingPayment(booking, id: "pay_retry", user: "retrying-card")
            func settle(_ succeeded: Bool) async throws -> Bool {
                try await booking.runtime.pool.write { db in try PaymentCallbacks.settle(db, payment: "pay_retry", succeeded: succeeded, state: nil) }
            }
            #expect(try await settle(false))
            #expect(try await BookingBugTests.pass(booking, rider).sessions == 0)
            #expect(try await settle(true), "the money moved after all")
            #expect(try await settle(true) == false, "once")
            #expect(try await settle(false) == false, "a failure never undoes a success")
            #expect(try await BookingBugTests.pass(booking, rider).sessions == 5)

            try await Self.insertPendingPayment(booking, id: "pay_admin", user: "retrying-card")
            let failed = try await booking.call(
                "booking.admin.payments.reconcile", data: ["payment": "pay_admin", "outcome": "failed", "reason": "provider said declined"], as: Ops.admin)
            #expect(failed.data?["status"] == "failed")
            let again = try await booking.call(
                "booking.admin.payments.reconcile", data: ["payment": "pay_admin", "outcome": "failed", "reason": "twice"], as: Ops.admin)
            #expect(again.error?.details["reason"] == "not_pending")
            let paid = try await booking.call(
                "booking.admin.payments.reconcile", data: ["payment": "pay_admin", "outcome": "succeeded", "reason": "the provider's report shows it paid"],
                as: Ops.admin)
            #expect(paid.data?["status"] == "settled", "\(paid.error?.message ?? "")")
            #expect(try await BookingBugTests.pass(booking, rider).sessions == 10)
            #expect(try await Ops.ledgerDrift(booking) == 0)
        }
    }

    @Test("the desk refuses a full or blocked slot before it looks the rider up in auth (so no account is created for it)")
    func deskChecksTheSlotFirst() async throws {
        // No auth process: reaching it would answer `unavailable`; a refusal for the slot
        // proves the slot was checked first.
        try await Ops.withPark(capacity: 1) { booking in
            let slots = try await BookingFlowTests.bookableSlots(booking.client).compactMap { $0["start"] }
            try #require(slots.count > 6)
            let slot = slots[0]
            let rider = Ops.rider("first")
            #expect(try await booking.call("booking.pass.topup", data: ["package": "five"], as: rider, idem: "t").ok)
            #expect(try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slot], as: rider).ok)
            let walkIn: JSONValue = [
                "phone": "+375291112233", "firstName": "Ivan", "lastName": "Walker", "cable": "reverse-1", "start": slot, "payWith": "cash",
            ]
            let full = try await booking.call("booking.staff.book", data: walkIn, as: Ops.staff)
            #expect(full.error?.details["reason"] == "full", "\(full.error?.code.rawValue ?? "ok") \(full.error?.message ?? "")")

            let later = try #require(Instant.parse(slots[2].stringValue ?? ""))
            let blocked = try await booking.call(
                "booking.staff.blocks.add",
                data: ["start": .string(Instant.format(later)), "end": .string(Instant.format(later.addingTimeInterval(1_800)))], as: Ops.staff)
            #expect(blocked.ok)
            let inBlock = walkIn.merging(["start": slots[2]])
            #expect(try await booking.call("booking.staff.book", data: inBlock, as: Ops.staff).error?.details["reason"] == "blocked")
            // Free and open: now auth is asked, which this test has not started.
            let free = walkIn.merging(["start": slots[5]])
            #expect(try await booking.call("booking.staff.book", data: free, as: Ops.staff).error?.code == .unavailable)
            for invisible in ["   ", "\u{200B}", "\u{202E}naviI"] {
                let blank = walkIn.merging(["firstName": .string(invisible)])
                #expect(try await booking.call("booking.staff.book", data: blank, as: Ops.staff).error?.fields["firstName"] != nil)
            }
        }
    }

    @Test("the desk's powers are for riders: staff neither book, cancel, mark nor waive for their own account; a colleague may")
    func staffOwnAccount() async throws {
        try await Ops.withPark(capacity: 2) { booking in
            let me = TestCaller.user("staff-2", roles: ["staff", "recipient"])
            let colleague = TestCaller.user("staff-3", roles: ["staff"])
            let slots = try await BookingFlowTests.bookableSlots(booking.client).compactMap { $0["start"] }
            try #require(slots.count > 2)
            #expect(try await booking.call("booking.pass.topup", data: ["package": "five"], as: me, idem: "t").ok)
            let own = try await booking.call("booking.create", data: ["cable": "reverse-1", "start": slots[1]], as: me)
            let id = try #require(own.data?["id"])
            let forMyself = try await booking.call(
                "booking.staff.book", data: ["user": "staff-2", "cable": "reverse-1", "start": slots[2], "payWith": "cash"], as: me)
            #expect(forMyself.error?.code == .forbidden)
            #expect(try await booking.call("booking.staff.cancel", data: ["booking": id], as: me).error?.code == .forbidden)
            #expect(try await booking.call("booking.staff.mark", data: ["booking": id, "outcome": "no_show"], as: me).error?.code == .forbidden)
            #expect(try await booking.call("booking.staff.sanction", data: ["booking": id, "action": "waive"], as: me).error?.code == .forbidden)
            #expect(try await booking.call("booking.staff.pass.adjust", data: ["user": "staff-2", "sessions": 3, "reason": "mine"], as: me).error?.code == .forbidden)
            #expect(try await BookingBugTests.pass(booking, me).sessions == 4)
            let byColleague = try await booking.call("booking.staff.cancel", data: ["booking": id, "reason": "asked at the desk"], as: colleague)
            #expect(byColleague.data?["status"] == "cancelled_by_park")
            #expect(try await BookingBugTests.pass(booking, me).sessions == 5)
            #expect(try await Ops.ledgerDrift(booking) == 0)
        }
    }

    @Test("staff input at the edges: dates outside 1970-9998, cable ids people cannot type, a price beyond the bound in describe")
    func staffInputEdges() async throws {
        try await Ops.withPark { booking in
            let oldDay = try await booking.call("booking.admin.hours.set", data: ["date": "0000-01-01"], as: Ops.admin)
            #expect(oldDay.error?.fields["date"] != nil)
            #expect(try await booking.call("booking.admin.hours.set", data: ["date": "9999-12-31"], as: Ops.admin).error?.fields["date"] != nil)
            #expect(try await booking.call("booking.admin.hours.set", data: ["date": "2030-01-07"], as: Ops.admin).ok)
            let farBlock = try await booking.call(
                "booking.staff.blocks.add", data: ["start": "9999-12-31T10:00:00Z", "end": "9999-12-31T11:00:00Z"], as: Ops.staff)
            #expect(farBlock.error?.fields["start"] != nil)
            for id in ["reverse 4", "реверс", "🏄", "a/b", "A", "UPPER", ".", "..", "-"] {
                let cable = try await booking.call("booking.admin.cables.set", data: ["id": .string(id), "name": "New"], as: Ops.admin)
                #expect(cable.error?.fields["id"] != nil, "\(id)")
            }
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse_4.b", "name": "New"], as: Ops.admin).ok)
            for name in ["  ", "\u{200B}"] {
                #expect(try await booking.call("booking.admin.cables.set", data: ["id": "c2", "name": .string(name)], as: Ops.admin).error?.fields["name"] != nil)
                let package: JSONValue = ["id": "p2", "name": .string(name), "sessions": 1, "credit": 0, "price": 100]
                #expect(try await booking.call("booking.admin.packages.set", data: package, as: Ops.admin).error?.fields["name"] != nil)
            }
            let price = try await booking.call(
                "booking.admin.park.update", data: ["price": ["minor": 200_000_000, "currency": "BYN"]], as: Ops.admin)
            #expect(price.error?.fields["price.minor"] != nil)
            let described = try await booking.call("booking.describe", idempotent: true)
            let update = described.data?["operations"]?.arrayValue?.first { $0["op"] == "booking.admin.park.update" }
            #expect(update?["request"]?["properties"]?["price"]?["properties"]?["minor"]?["maximum"] == 100_000_000)
        }
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// `booking.changes` over real processes: an app that syncs, goes away, and comes back.
@Suite("Booking changes feed", .serialized)
struct BookingChangesTests {
    /// A device's offline copy: rows by entity and id, and the version it holds.
    struct Device {
        var rows: [String: JSONValue] = [:]
        /// Every entity/id an item ever named, deleted or not.
        var seen: Set<String> = []
        var since = "0"
        var resyncs = 0

        /// Pulls pages of `limit` until nothing more waits; a `resync` drops the copy and
        /// starts again from 0.
        mutating func sync(_ client: CheckedClient, token: String, limit: Int = 2) async throws {
            for _ in 0..<200 {
                let page = try await client.call(
                    "booking.changes", data: ["since": .string(since), "limit": .integer(Int64(limit))], token: token, idempotent: true)
                let data = try #require(page.data, "\(page.error?.message ?? "")")
                if data["resync"] == true {
                    #expect(data["items"] == .array([]))
                    rows = [:]
                    since = "0"
                    resyncs += 1
                    continue
                }
                guard case .array(let items)? = data["items"] else { Issue.record("no items"); return }
                #expect(items.count <= limit)
                var previous = Int64(since.split(separator: "-")[0]) ?? 0
                for item in items {
                    let version = try #require(item["version"]?.integerValue)
                    #expect(version > previous, "versions only grow")
                    previous = version
                    let key = "\(item["entity"]!.stringValue!)/\(item["id"]!.stringValue!)"
                    seen.insert(key)
                    if item["deleted"] == true { rows[key] = nil } else { rows[key] = item["data"] }
                }
                since = try #require(data["next"]?.stringValue)
                if data["more"] == false { return }
            }
            Issue.record("the feed never ended")
        }

        func ids(_ entity: String) -> Set<String> {
            Set(rows.keys.filter { $0.hasPrefix(entity + "/") }.map { String($0.dropFirst(entity.count + 1)) })
        }
    }

    @Test("a device away for a month gets the deletions it missed; one away longer is told to sync again, and then matches")
    func awayDevice() async throws {
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: BookingFlowTests.environment) { stack in
            let direct = try stack.directClient("auth")
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: direct, email: "desk@example.com")
            let rider = try await BookingFlowTests.signUp(stack, "feed-rider@example.com")

            // First syncs: the catalog for both; the admin's block only for the admin.
            let block = try await stack.client.call(
                "booking.staff.blocks.add", data: ["start": "2030-01-01T10:00:00Z", "end": "2030-01-01T12:00:00Z", "reason": "repairs"],
                token: admin, idem: "block-1")
            let blockID = try #require(block.data?["id"]?.stringValue)
            var phone = Device(), desk = Device()
            try await phone.sync(stack.client, token: rider)
            try await desk.sync(stack.client, token: admin)
            #expect(phone.ids("cable") == ["reverse-1", "reverse-2"])
            #expect(phone.ids("package") == ["one", "five", "ten", "credit-50"])
            #expect(phone.ids("block").isEmpty)
            #expect(desk.ids("block") == [blockID])

            // The rider tops up and books: the booking arrives, then its cancellation.
            #expect(try await stack.client.call("booking.pass.topup", data: ["package": "five"], token: rider, idem: "pay-1").ok)
            let slot = try #require(try await BookingFlowTests.bookableSlots(stack.client).last)
            let booked = try await stack.client.call(
                "booking.create", data: ["cable": "reverse-1", "start": slot["start"]!], token: rider, idem: "book-1")
            let bookingID = try #require(booked.data?["id"]?.stringValue, "\(booked.error?.message ?? "")")
            try await phone.sync(stack.client, token: rider)
            #expect(phone.rows["booking/\(bookingID)"]?["status"] == "booked")
            #expect(try await stack.client.call("booking.cancel", data: ["booking": .string(bookingID)], token: rider, idem: "cancel-1").ok)

            // While both are away: a package withdrawn, a cable renamed, the block removed.
            #expect(try await stack.client.call(
                "booking.admin.packages.set", data: ["id": "ten", "name": "10 sessions", "sessions": 10, "credit": 0, "price": 21000, "active": false],
                token: admin, idem: "withdraw-ten").ok)
            #expect(try await stack.client.call(
                "booking.admin.cables.set", data: ["id": "reverse-2", "name": "Reverse 2 (long)"], token: admin, idem: "rename").ok)
            #expect(try await stack.client.call("booking.staff.blocks.remove", data: ["id": .string(blockID)], token: admin, idem: "unblock").ok)
            // Prepared but never on offer: no device ever hears of it, not even its id.
            #expect(try await stack.client.call(
                "booking.admin.packages.set", data: ["id": "secret-promo", "name": "Promo", "sessions": 3, "credit": 0, "price": 100, "active": false],
                token: admin, idem: "secret").ok)

            // A month passes: booking is stopped, its deletion markers made 31 days old.
            let database = stack.configuration.dataDirectoryURL.appendingPathComponent("booking.sqlite").path
            try await Self.restartAging(stack, database: database, days: 31)
            try await phone.sync(stack.client, token: rider)
            try await desk.sync(stack.client, token: admin)
            #expect(phone.resyncs == 0 && desk.resyncs == 0)
            #expect(phone.ids("package") == ["one", "five", "credit-50"])
            #expect(phone.rows["cable/reverse-2"]?["name"] == "Reverse 2 (long)")
            #expect(phone.rows["booking/\(bookingID)"]?["status"] == "cancelled")
            #expect(desk.ids("block").isEmpty, "the removed block reached the device that was away")
            #expect(desk.ids("booking").isEmpty, "the rider's booking is not in the admin's feed")
            #expect(phone.seen.allSatisfy { !$0.hasSuffix("/secret-promo") } && desk.seen.allSatisfy { !$0.hasSuffix("/secret-promo") })

            // Another block, removed, and then more than 45 days pass: the markers are
            // pruned at start-up, a device that holds an older version starts again.
            let second = try await stack.client.call(
                "booking.staff.blocks.add", data: ["start": "2030-02-01T10:00:00Z", "end": "2030-02-01T12:00:00Z"], token: admin, idem: "block-2")
            let secondID = try #require(second.data?["id"]?.stringValue)
            try await desk.sync(stack.client, token: admin)
            #expect(desk.ids("block") == [secondID])
            let beforeRemoval = desk
            #expect(try await stack.client.call("booking.staff.blocks.remove", data: ["id": .string(secondID)], token: admin, idem: "unblock-2").ok)
            try await Self.restartAging(stack, database: database, days: 46)
            var away = beforeRemoval
            try await away.sync(stack.client, token: admin)
            #expect(away.resyncs == 1, "told to sync again")
            #expect(away.ids("block").isEmpty)
            var fresh = Device()
            try await fresh.sync(stack.client, token: admin)
            #expect(away.rows == fresh.rows, "after the resync the device holds what a new one would")

            // Bad input and other people's rows.
            let bad = try await stack.client.call("booking.changes", data: ["since": -1], token: rider, idempotent: true)
            #expect(bad.error?.code == .validationFailed)
            let tooMany = try await stack.client.call("booking.changes", data: ["limit": 501], token: rider, idempotent: true)
            #expect(tooMany.error?.code == .validationFailed)
            let anonymous = try await stack.client.call("booking.changes", data: [:], idempotent: true)
            #expect(anonymous.error?.code == .unauthenticated)
            let future = try await stack.client.call("booking.changes", data: ["since": "1000000"], token: rider, idempotent: true)
            #expect(future.data?["resync"] == true, "a version this database never gave out")
            let garbage = try await stack.client.call("booking.changes", data: ["since": "12-3"], token: rider, idempotent: true)
            #expect(garbage.error?.code == .validationFailed)
            let fromZero = try await stack.client.call("booking.changes", data: ["since": 0, "limit": 1], token: rider, idempotent: true)
            #expect(fromZero.data?["more"] == true)
        }
    }

    /// Stops booking, moves its deletion markers `days` into the past, starts it again.
    static func restartAging(_ stack: TestStack, database: String, days: Int) async throws {
        let booking = try #require(stack.process("booking"))
        booking.kill(signal: SIGTERM)
        await booking.waitForExit(timeout: .seconds(10))
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in
            try db.execute(sql: "UPDATE platform_tombstone SET deleted_at = deleted_at - ?", arguments: [Int64(days) * 86_400_000])
        }
        try queue.close()
        try stack.start("booking")
        try await stack.waitUntilHealthy(["booking"], timeout: .seconds(20))
    }
}

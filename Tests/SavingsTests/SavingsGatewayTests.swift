import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import SavingsService

/// BuckStash's journey through the gateway, with auth and savings as real processes and
/// real tokens: sign in, read the presentations, preview, start, record deposits (late,
/// too small, too large), see the rebalance, complete, find the plan in the history.
@Suite("Savings through the gateway", .serialized)
struct SavingsGatewayTests {
    static let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4"]

    @Test("sign in, presentations, preview, start, a late, a small and a large deposit, rebalance, completion, history, deletion")
    func journey() async throws {
        try await TestStack.with(services: ["auth", "savings"], extraEnvironment: Self.environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@savings.example")
            let vera = try await AuthFixtures.signUp(stack.client, email: "vera@savings.example")
            let veraID = try #require(try await stack.client.ok("auth.profile.get", token: vera)["id"]?.stringValue)

            // The presentations, before choosing.
            let methods = try await stack.client.ok("savings.methods.list")
            #expect(methods["items"]?.arrayValue?.count == 5)
            let equal = try await stack.client.ok("savings.methods.get", ["id": "equal"])
            #expect((equal["slides"]?.arrayValue?.count ?? 0) >= 3 && equal["needs"] == ["deadline"])

            let clock = ZoneClock.utc
            let today = clock.localDate(of: Date())
            let terms: JSONValue = [
                "method": "equal", "target": ["minor": 10_000, "currency": "RUB"], "startDate": .string(today.description),
                "deadline": .string(today.adding(days: 63).description), "interval": "week", "timeZone": "UTC",
            ]
            let preview = try await stack.client.ok("savings.plans.preview", terms, token: vera)
            #expect(preview["count"] == 10 && preview["installments"]?[9]?["cumulative"] == ["minor": 10_000, "currency": "RUB"])
            var start = terms.objectValue ?? [:]
            start["name"] = "Sea trip"
            let plan = try await stack.client.ok("savings.plans.start", .object(start), token: vera, idem: "start-1")
            let planID = try #require(plan["id"]?.stringValue)
            #expect(plan["state"] == "active" && plan["upcoming"]?.arrayValue?.count == 10)

            // Three weeks on (the plan's dates moved back in its database file: the clock cannot be turned).
            let file = URL(fileURLWithPath: stack.configuration.dataDirectory).appendingPathComponent("savings.sqlite")
            // The running service may be writing (a reminder's timer): wait for its lock.
            var waiting = Configuration()
            waiting.busyMode = .timeout(10)
            let database = try DatabaseQueue(path: file.path, configuration: waiting)
            try await database.write { db in
                try db.execute(
                    sql: "UPDATE plan SET start_date = date(start_date, '-21 days'), created_on = date(created_on, '-21 days'), deadline = date(deadline, '-21 days') WHERE id = ?",
                    arguments: [planID])
            }
            try await database.close()
            let deposits: [(Int64, Int)] = [(1_000, -21), (500, -14), (3_000, 0)]
            var last = JSONValue.null
            for (index, (amount, days)) in deposits.enumerated() {
                last = try await stack.client.ok("savings.deposits.record",
                    ["planId": .string(planID), "amount": ["minor": .integer(amount), "currency": "RUB"], "date": .string(today.adding(days: days).description)],
                    token: vera, idem: "deposit-\(index)")
            }
            let rebalanced = try #require(last["plan"])
            #expect(rebalanced["saved"]?["minor"] == 4_500 && rebalanced["percent"] == 45 && rebalanced["status"] == "on_track")
            let schedule = try await stack.client.ok("savings.plans.schedule", ["planId": .string(planID)], token: vera)
            #expect(schedule["total"]?["minor"] == 10_000 && schedule["count"] == 6)
            #expect((schedule["installments"]?.arrayValue ?? []).compactMap { $0["amount"]?["minor"]?.integerValue } == [916, 916, 917, 917, 917, 917])
            let stats = try await stack.client.ok("savings.stats", token: vera)
            #expect(stats["totals"]?[0]?["remaining"]?["minor"] == 5_500)

            let done = try await stack.client.ok("savings.deposits.record",
                ["planId": .string(planID), "amount": ["minor": 5_500, "currency": "RUB"], "date": .string(today.description)], token: vera, idem: "deposit-last")
            #expect(done["plan"]?["state"] == "completed")
            let history = try await stack.client.ok("savings.history", token: vera)
            #expect(history["items"]?[0]?["id"] == .string(planID) && history["items"]?[0]?["name"] == "Sea trip")
            let all = try await stack.client.ok("savings.deposits.list", ["planId": .string(planID)], token: vera)
            #expect(all["items"]?.arrayValue?.count == 4)

            // Every operation and event is documented.
            let describe = try await stack.client.call("savings.describe", data: [:], idempotent: true)
            let documented = Set((describe.data?["operations"]?.arrayValue ?? []).compactMap { $0["op"]?.stringValue })
            #expect(Set(SavingsService.definition.operations.map(\.name)).isSubset(of: documented))
            let events = Set((describe.data?["events"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue })
            #expect(events.isSuperset(of: ["savings.plan.started", "savings.installment.due", "savings.deposit.recorded", "savings.plan.completed", "savings.plan.cancelled"]))

            // A deleted account's savings go with it.
            try await stack.client.ok("auth.admin.users.delete", ["userId": .string(veraID)], token: admin)
            #expect(
                try await Poll.until {
                    let reader = try DatabaseQueue(path: file.path)
                    defer { try? reader.close() }
                    return try await reader.read { db in
                        try Int.fetchOne(db, sql: "SELECT (SELECT COUNT(*) FROM plan) + (SELECT COUNT(*) FROM deposit)") == 0
                            && Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_event WHERE data LIKE ?", arguments: ["%\(veraID)%"]) == 0
                    }
                })
        }
    }
}

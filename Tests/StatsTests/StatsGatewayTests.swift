import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// The fitness assistant's journey through the gateway, with auth and stats as real
/// processes: a device account (no sign-in), preferences, a workout with an early
/// completion attempt and a skip, an offline workout uploaded, the statistics, and the
/// account's deletion taking its workouts.
@Suite("Stats through the gateway", .serialized)
struct StatsGatewayTests {
    static let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4"]

    @Test("device account, preferences, a workout with a skip and an early completion, an offline upload, statistics, deletion")
    func journey() async throws {
        try await TestStack.with(services: ["auth", "stats"], extraEnvironment: Self.environment) { stack in
            let device = try await stack.client.ok(
                "auth.device.register", ["challenge": try await AuthFixtures.solvedChallenge(stack.client), "timeZone": "Europe/Berlin"])
            let token = try #require(device["accessToken"]?.stringValue)
            #expect(try await stack.client.call("stats.preferences.get", data: [:]).error?.code == .unauthenticated)
            // The zone the device gave auth is the statistics' zone until the app sets one.
            #expect(try await Poll.until { try await stack.client.ok("stats.preferences.get", token: token)["timeZone"] == "Europe/Berlin" })

            try await stack.client.ok("stats.preferences.set", ["countdownSeconds": 5, "exercisesPerWorkout": 1, "timeZone": "Europe/Berlin"], token: token)
            let slogan = try await stack.client.ok("stats.slogan", token: token)
            #expect(slogan["text"]?.stringValue?.isEmpty == false)

            let first = try await stack.client.ok("stats.workout.start", token: token)
            let workout = try #require(first["workoutId"])
            let early = try await stack.client.call(
                "stats.workout.complete",
                data: ["workoutId": workout, "number": 1, "exerciseId": try #require(first["exercise"]?["id"]), "repetitions": 10], token: token)
            #expect(early.error?.code == .conflict && early.error?.details["reason"] == "too_early")
            let shown = try await stack.client.ok("stats.workout.skip", ["workoutId": workout], token: token)
            try await Task.sleep(for: .seconds(8.2))
            let done = try await stack.client.ok(
                "stats.workout.complete",
                ["workoutId": workout, "number": 1, "exerciseId": try #require(shown["exercise"]?["id"]), "repetitions": try #require(shown["recommended"])],
                token: token)
            #expect(done["finished"] == true && done["summary"]?["exercisesDone"] == 1 && done["summary"]?["exercisesSkipped"] == 1)

            let base = Date().addingTimeInterval(-2 * 3_600)
            let offline = try await stack.client.ok(
                "stats.workouts.sync",
                [
                    "workouts": [
                        [
                            "id": "device-offline-1", "countdownSeconds": 5,
                            "exercises": [
                                [
                                    "exerciseId": "squat", "shownAt": .string(Instant.format(base)), "completedAt": .string(Instant.format(base.addingTimeInterval(30))),
                                    "repetitions": 12, "recommended": 12,
                                ]
                            ],
                        ]
                    ]
                ], token: token)
            #expect(offline["accepted"]?.arrayValue?.count == 1)

            let facts = try await stack.client.ok("stats.keyFacts", ["period": "week"], token: token)
            #expect(facts["workouts"] == 2 && facts["exercisesDone"] == 2 && facts["exercisesSkipped"] == 1)
            let points = try await stack.client.ok("stats.performance", ["period": "month"], token: token)["points"]?.arrayValue ?? []
            #expect((28...31).contains(points.count) && points.reduce(0) { $0 + ($1["exercises"]?.integerValue ?? 0) } == 2)
            let parts = try await stack.client.ok("stats.bodyParts", ["period": "two_weeks"], token: token)["shares"]?.arrayValue ?? []
            #expect(parts.reduce(0) { $0 + ($1["percent"]?.integerValue ?? 0) } == 100)

            // Every operation and event is documented.
            let describe = try await stack.client.call("stats.describe", data: [:], idempotent: true)
            let operations = Set(describe.data?["operations"]?.arrayValue?.compactMap { $0["op"]?.stringValue } ?? [])
            #expect(operations.isSuperset(of: ["stats.workout.start", "stats.workouts.sync", "stats.keyFacts", "stats.bodyParts", "stats.motorAbilities"]))

            // Deleting the device account takes its workouts (the only ones in the database).
            let file = URL(fileURLWithPath: stack.configuration.dataDirectory).appendingPathComponent("stats.sqlite").path
            func workouts() throws -> Int {
                var configuration = Configuration()
                configuration.readonly = true
                let database = try DatabaseQueue(path: file, configuration: configuration)
                defer { try? database.close() }
                return try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM workout") ?? -1 }
            }
            #expect(try workouts() == 2)
            try await stack.client.ok("auth.account.delete", [:], token: token)
            #expect(try await Poll.until { try workouts() == 0 })
        }
    }

    @Test("a deposit made in savings shows in stats.overview, once, also after stats restarts; admins see registrations and activity")
    func overview() async throws {
        try await TestStack.with(services: ["auth", "savings", "stats"], extraEnvironment: Self.environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@stats.example")
            let vera = try await AuthFixtures.signUp(stack.client, email: "vera@stats.example")
            let today = ZoneClock.utc.localDate(of: Date())
            /// A weekly plan in roubles started today, and one deposit to it today.
            func planWithDeposit(_ name: String, target: Int64, weeks: Int, deposit: Int64, key: String) async throws -> JSONValue {
                let plan = try await stack.client.ok(
                    "savings.plans.start",
                    [
                        "name": .string(name), "method": "equal", "target": ["minor": .integer(target), "currency": "RUB"],
                        "startDate": .string(today.description), "deadline": .string(today.adding(days: 7 * weeks).description), "interval": "week",
                        "timeZone": "UTC",
                    ], token: vera, idem: "start-\(key)")
                try await stack.client.ok(
                    "savings.deposits.record",
                    ["planId": try #require(plan["id"]), "amount": ["minor": .integer(deposit), "currency": "RUB"], "date": .string(today.description)],
                    token: vera, idem: "deposit-\(key)")
                return plan
            }
            _ = try await planWithDeposit("Bike", target: 10_000, weeks: 9, deposit: 2_500, key: "1")
            let month = String(today.description.prefix(7))
            let expected: JSONValue = [["month": .string(month), "figures": ["saved:RUB": 2_500]]]
            #expect(try await Poll.until { try await stack.client.ok("stats.overview", token: vera)["savings"] == expected })

            // Restarted, stats reads on from its cursor: the deposit is not counted twice.
            _ = await stack.process("stats")?.stop()
            try stack.start("stats")
            try await stack.waitUntilHealthy(["stats"])
            try await Task.sleep(for: .seconds(1))
            #expect(try await stack.client.ok("stats.overview", token: vera)["savings"] == expected)

            // A second plan completed by one deposit, then deleted with its deposits: what it
            // added leaves the figures again.
            let small = try await planWithDeposit("Book", target: 1_000, weeks: 2, deposit: 1_000, key: "2")
            func figures() async throws -> JSONValue? { try await stack.client.ok("stats.overview", token: vera)["savings"]?[0]?["figures"] }
            #expect(try await Poll.until {
                let now = try await figures()
                return now?["saved:RUB"] == 3_500 && now?["plans_completed"] == 1
            })
            try await stack.client.ok("savings.plans.delete", ["planId": try #require(small["id"])], token: vera, idem: "delete-2")
            #expect(try await Poll.until { try await figures()?["saved:RUB"] == 2_500 })
            let after = try await figures()
            #expect(after?["plans_completed"] == nil || after?["plans_completed"] == 0, "\(String(describing: after))")

            let monitoring = try await stack.client.ok("stats.admin.overview", ["from": .string(today.description), "to": .string(today.description)], token: admin)
            let day = try #require(monitoring["days"]?.arrayValue?.first)
            #expect((day["registered"]?.integerValue ?? 0) >= 2 && (day["activeUsers"]?.integerValue ?? 0) >= 2)
            #expect((day["events"]?["savings"]?.integerValue ?? 0) >= 1)
            #expect(try await stack.client.call("stats.admin.overview", data: [:], token: vera).error?.code == .forbidden)
            // Days before year 1 have no date to print: refused, not written as year 0000 out of order.
            let ancient = try await stack.client.call("stats.admin.overview", data: ["to": "0000-01-01"], token: admin)
            #expect(ancient.error?.code == .validationFailed && ancient.error?.fields["to"] != nil)
        }
    }
}

import ArgumentParser
import Foundation
import LoadKit
import GRDB
import Platform
import SharedTesting

/// Goals' figures (Goals issue, "Performance"): with 10,000 recipients, 1,000 sponsors and a
/// year of plans, `goals.dashboard` and `goals.calendar` latency through the gateway at 32
/// in flight, and `goals.items.check` (write, event, feed entry) throughput against SQLite's
/// one-commit durable rate measured in the same run.
struct GoalsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goals", abstract: "goals.dashboard and goals.calendar p99 at 32 in flight, goals.items.check throughput vs the SQLite reference.")

    @Option(help: "Seconds per measurement.")
    var seconds: Double = 5
    @Option(help: "Recipients in the database (those beyond the signed-in ones are written directly).")
    var recipients: Int = 10_000
    @Option(help: "Sponsors in the database.")
    var sponsors: Int = 1_000
    @Option(help: "Log level of the measured processes.")
    var serviceLogLevel: String = "info"

    /// Signed-in pairs that the measurements use.
    static let measured = 32

    func run() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-goals")
        let configuration = try BenchStack.configuration(in: directory.url, logLevel: serviceLogLevel)
        let environment = configuration.environment.merging(["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0"]) { _, new in new }
        let processes = try BenchStack.start(["auth", "goals", "gateway"], environment: environment, in: directory.url)
        defer { for process in processes { process.kill(signal: SIGKILL) } }
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "bench")
        try await BenchStack.waitUntilHealthy(["auth", "goals"], client: client)

        // Signed-in pairs, each with an accepted goal and a year of plans written through the API.
        let direct = ServiceClient(link: try configuration.operatorLink(to: "auth"))
        _ = try await AuthFixtures.signUp(direct, email: "admin@bench.example", password: "bench-password")
        _ = try await direct.call("auth.internal.admin.grant", data: ["email": "admin@bench.example"])
        let admin = try await token(client, "admin@bench.example")
        var recipientTokens: [String] = [], items: [(id: String, owner: String)] = []
        let today = ZoneClock.utc.localDate(of: Date())
        for index in 0..<Self.measured {
            let recipient = try await AuthFixtures.signUp(direct, email: "r\(index)@bench.example", password: "bench-password")
            let sponsor = try await AuthFixtures.signUp(direct, email: "s\(index)@bench.example", password: "bench-password")
            let sponsorID = try require(try await client.call("auth.profile.get", token: sponsor).data?["id"]?.stringValue)
            _ = try await client.call("goals.sponsor.profile.save", data: ["name": .string("Sponsor \(index)"), "kind": "employer", "group": "employers"], token: sponsor)
            let goal = try require(try await client.call("goals.create", data: ["type": "marathon"], token: recipient).data?["id"])
            let offer = try await client.call(
                "goals.propose", data: ["goalId": goal, "sponsor": .string(sponsorID), "reward": ["money": ["minor": 10_000, "currency": "EUR"]]],
                token: recipient)
            _ = try await client.call("goals.accept", data: ["sponsorshipId": try require(offer.data?["id"])], token: sponsor)
            // Half a year behind and half ahead: only what is dated today or before (or not
            // dated) can be checked.
            let added = try await client.call(
                "goals.admin.items.add", data: ["goalId": goal, "items": .array(Self.yearOfPlans(from: today.adding(days: -182)))], token: admin)
            for item in added.data?["items"]?.arrayValue ?? [] where item["checkable"] == true && (item["date"]?.stringValue ?? "") <= today.description {
                if let id = item["id"]?.stringValue { items.append((id, recipient)) }
            }
            recipientTokens.append(recipient)
        }
        await direct.close()

        // The rest of the population, written straight into goals' database (the service is idle).
        let seeded = try Self.seed(
            path: directory.url.appendingPathComponent("data/goals.sqlite").path, recipients: recipients - Self.measured,
            sponsors: sponsors - Self.measured, from: today)
        report("goals: \(recipients) recipients, \(sponsors) sponsors, a year of plans each (\(seeded) plan items in all)")

        // (1) Reads at 32 in flight.
        let tokens = recipientTokens
        for (op, data) in [("goals.dashboard", "{}"), ("goals.calendar", "{\"date\":\"\(today.adding(days: 2))\"}")] {
            let bodies: @Sendable (Int) -> Data? = { number in
                Data(#"{"id":"r\#(number)","op":"\#(op)","token":"\#(tokens[number % tokens.count])","data":\#(data)}"#.utf8)
            }
            let result = try await LoadGenerator.run(
                endpoint: configuration.gatewayEndpoint, bodies: bodies, expected: Data(#""ok":true"#.utf8), inFlight: 32, warmup: 1, seconds: seconds)
            report(String(
                format: "%@, 32 in flight: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %d errors (target p99 under 5 ms) %@", op, result.rate,
                result.p50 / 1000, result.p99 / 1000, result.errors, result.p99 < 5_000 && result.errors == 0 ? "PASS" : "FAIL"))
        }

        // (2) Checks: each request changes an item (done, then undone on the next pass), so
        // each is a write, an event and a feed entry, durable (synchronous=FULL).
        let reference = try SQLiteReference.measure(directory: directory.url, seconds: seconds)
        report(String(format: "SQLite reference: one small row per transaction, WAL, synchronous=FULL, same disk: %.0f commits/s", reference))
        let checkable = items
        let checks: @Sendable (Int) -> Data? = { number in
            let index = number % checkable.count
            let done = (number / checkable.count) % 2 == 0
            return Data(
                #"{"id":"c\#(number)","op":"goals.items.check","token":"\#(checkable[index].owner)","data":{"itemId":"\#(checkable[index].id)","done":\#(done)}}"#.utf8)
        }
        let result = try await LoadGenerator.run(
            endpoint: configuration.gatewayEndpoint, bodies: checks, expected: Data(#""ok":true"#.utf8), inFlight: 64, warmup: 0, seconds: seconds)
        let ratio = result.rate / reference
        report(String(
            format: "goals.items.check, 64 in flight: %.0f checks/s (%d refused), p50 %.2f ms, p99 %.2f ms; %.2fx the SQLite reference (floor 1.5x) %@",
            result.rate, result.errors, result.p50 / 1000, result.p99 / 1000, ratio, ratio >= 1.5 && result.errors == 0 ? "PASS" : "FAIL"))
        await client.close()
        for process in processes { await process.stop() }
    }

    /// A year of one goal's plans from `start`: three workouts a week, a dated nutrition
    /// item a week, undated nutrition, tips and recommendations.
    static func yearOfPlans(from start: LocalDate) -> [JSONValue] {
        var items: [JSONValue] = []
        for week in 0..<52 {
            for day in [0, 2, 4] {
                items.append(["kind": "workout", "date": .string(start.adding(days: week * 7 + day).description), "text": "Run 5 km", "requirement": "30 min"])
            }
            items.append(["kind": "nutrition", "date": .string(start.adding(days: week * 7 + 1).description), "text": "No sugar today"])
        }
        for index in 0..<5 { items.append(["kind": "recommendation", "text": .string("Recommendation \(index)"), "checkable": true]) }
        items.append(["kind": "tip", "text": "Drink water"])
        return items
    }

    /// Writes `recipients` goals (each with a sponsor among `sponsors`, accepted, and a
    /// year of plans); returns the plan items in the database.
    static func seed(path: String, recipients: Int, sponsors: Int, from start: LocalDate) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        let now = Instant.format(Date())
        let plan = yearOfPlans(from: start)
        try queue.write { db in
            for index in 0..<max(sponsors, 1) {
                try db.execute(
                    sql: "INSERT INTO sponsor_profile (user_id, display_name, kind, group_id, updated_at, change_version) VALUES (?, ?, 'employer', 'employers', ?, 0)",
                    arguments: ["seed-sponsor-\(index)", "Seeded sponsor \(index)", now])
            }
            let insertItem = try db.makeStatement(
                sql: "INSERT INTO plan_item (id, goal_id, kind, date, text, requirement, checkable, position, created_at, change_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)")
            for index in 0..<recipients {
                let goal = "goal-seed-\(index)", sponsor = "seed-sponsor-\(index % max(sponsors, 1))"
                try db.execute(
                    sql: """
                        INSERT INTO goal (id, recipient_id, type_id, form_version, settings, state, created_at, updated_at, activated_at, change_version)
                        VALUES (?, ?, 'marathon', 1, '{}', 'active', ?, ?, ?, 0)
                        """, arguments: [goal, "seed-recipient-\(index)", now, now, now])
                try db.execute(
                    sql: """
                        INSERT INTO sponsorship (id, goal_id, recipient_id, sponsor_id, state, reward_text, reward_status, created_at, updated_at, change_version)
                        VALUES (?, ?, ?, ?, 'accepted', 'a prize', 'promised', ?, ?, 0)
                        """, arguments: ["spn-seed-\(index)", goal, "seed-recipient-\(index)", sponsor, now, now])
                for (position, item) in plan.enumerated() {
                    let kind = item["kind"]?.stringValue ?? "workout"
                    try insertItem.execute(arguments: [
                        "itm-seed-\(index)-\(position)", goal, kind, item["date"]?.stringValue, item["text"]?.stringValue ?? "", item["requirement"]?.stringValue,
                        kind != "tip", position, now,
                    ])
                }
            }
        }
        let count = try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM plan_item") ?? 0 }
        try queue.close()
        return count
    }

    func token(_ client: ServiceClient, _ email: String) async throws -> String {
        let reply = try await client.call("auth.login", data: ["email": .string(email), "password": "bench-password"])
        guard let token = reply.data?["accessToken"]?.stringValue else { throw ValidationError("sign-in failed") }
        return token
    }
}

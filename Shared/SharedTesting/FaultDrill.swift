import Foundation
import GRDB
import Platform
import Synchronization

/// The fault suite (Load and reliability issue): under a steady write load through the
/// gateway, each service in turn and then the gateway (which carries the event bus) is
/// killed with SIGKILL and started again. Writers retry with the same `idem` (or client
/// id) until acknowledged, as apps do. Afterwards every acknowledged write must exist
/// once, every event must have been applied once by its subscriber, every reminder due
/// must have been published once and pushed once to its owner's device (through a fake
/// Gorush gateway speaking Gorush's HTTP API), and nothing may be left stuck.
///
/// The CI test runs it reduced (`FaultDrillTests`); `bench faults` runs it in full.
public struct FaultDrill: Sendable {
    /// Writers (each a user with a savings plan), writing all the time.
    public var writers = 8
    /// Load between two kills.
    public var pause: Duration = .seconds(2)
    /// How long a killed process stays down.
    public var downtime: Duration = .milliseconds(500)
    /// What is killed, in order (`gateway` carries the bus).
    public var victims = ["auth", "savings", "booking", "goals", "reminders", "stats", "gateway"]
    /// Rounds over the victims.
    public var rounds = 1
    /// Processes frozen (SIGSTOP, then SIGCONT) after each round: a hung subscriber whose
    /// bus queue fills while the others go on.
    public var frozen = ["stats"]
    /// How long a frozen process stays stopped.
    public var freeze: Duration = .seconds(3)

    public init() {}

    /// What the drill found.
    public struct Findings: Sendable, CustomStringConvertible {
        public var acknowledgedDeposits = 0
        public var acknowledgedReminders = 0
        public var acknowledgedTopUps = 0
        public var retries = 0
        public var kills: [String] = []
        public var frozen: [String] = []
        /// Each a broken promise (missing, duplicated, not applied, stuck); empty when all held.
        public var problems: [String] = []
        public var dueReminders = 0
        /// Pushes the push gateway received.
        public var pushes = 0

        public var description: String {
            "\(kills.count) kills (\(kills.joined(separator: ", "))), \(frozen.count) freezes; \(acknowledgedDeposits) deposits, \(acknowledgedTopUps) top-ups and \(acknowledgedReminders) reminders acknowledged "
                + "after \(retries) retries; \(dueReminders) reminders due, \(pushes) pushes; "
                + (problems.isEmpty ? "nothing lost, duplicated or stuck" : "problems: " + problems.joined(separator: "; "))
        }
    }

    /// One writer's acknowledged work.
    private struct Ledger: Sendable {
        var deposits: [Int64] = []
        /// Pass top-ups (five sessions each) acknowledged by booking.
        var topUps = 0
        /// Whether goals acknowledged the writer's goal.
        var goal = false
        var reminders: [String] = []
        var retries = 0
        var refused = 0
    }

    /// The writers' ledgers, shared by their tasks.
    private final class LedgerBook: Sendable {
        let entries: Mutex<[Ledger]>
        init(count: Int) { entries = Mutex([Ledger](repeating: Ledger(), count: count)) }
    }

    /// Runs the drill on a stack of its own and returns what it found.
    public func run(log: @escaping @Sendable (String) -> Void = { _ in }) async throws -> Findings {
        let services = ["auth", "savings", "booking", "goals", "reminders", "stats"]
        let gorush = try await FakeGorush.start()
        defer { gorush.stop() }
        let environment = [
            "BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0",
            "BACKEND_REMINDERS_PUSH_TRANSPORT": "http", "BACKEND_REMINDERS_PUSH_URL": gorush.url, "BACKEND_REMINDERS_PUSH_BACKOFF_MS": "200",
            // Every reminder of a writer falls due at once: a per-device pace would hold them back.
            "BACKEND_REMINDERS_PUSH_RATE_LIMIT": "off",
        ]
        return try await TestStack.with(services: services, extraEnvironment: environment) { stack in
            try await drill(stack, services: services, gorush: gorush, log: log)
        }
    }

    /// The push token of writer `index`'s phone.
    private static func device(_ index: Int) -> String { "drill-device-token-\(100_000 + index)" }

    private func drill(_ stack: TestStack, services: [String], gorush: FakeGorush, log: @escaping @Sendable (String) -> Void) async throws -> Findings {
        let auth = try stack.directClient("auth")
        let today = ZoneClock.utc.localDate(of: Date())
        var users: [(token: String, plan: String, id: String)] = []
        for index in 0..<writers {
            let token = try await AuthFixtures.signUp(auth, email: "drill\(index)@drill.example")
            let plan = try await stack.client.call(
                "savings.plans.start",
                data: [
                    "method": "equal", "target": ["minor": 100_000_000, "currency": "RUB"], "startDate": .string(today.description),
                    "deadline": .string(today.adding(years: 1).description), "interval": "week", "timeZone": "UTC",
                ], token: token)
            guard let planID = plan.data?["id"]?.stringValue, let user = try await stack.client.call("auth.profile.get", token: token).data?["id"]?.stringValue else {
                throw TestStackError("drill set-up failed: \(plan.error?.message ?? "no plan")")
            }
            let device = try await stack.client.call(
                "reminders.devices.register", data: ["platform": "ios", "token": .string(Self.device(index)), "locale": "en-GB", "appId": "reminder"],
                token: token)
            guard device.ok else { throw TestStackError("drill set-up failed: \(device.error?.message ?? "no device")") }
            users.append((token, planID, user))
        }
        // Reminders are due at the first whole minute at least 10 s away (alerts are
        // minute-precise): their timers are pending while processes are killed, and may
        // fall due during the kills.
        let firstDue = ((Date().timeIntervalSince1970 + 10) / 60).rounded(.up) * 60
        let stopping = StopFlag()
        let ledgers = LedgerBook(count: writers)
        let client = ServiceClient(endpoint: stack.configuration.gatewayEndpoint, name: "drill")
        defer { Task { await client.close() } }

        let accounts = users
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for (index, user) in accounts.enumerated() {
                    group.addTask {
                        var number = 0
                        while !stopping.isRaised {
                            number += 1
                            let amount = Int64(number)
                            let retries = await Self.untilAcknowledged(client) {
                                (
                                    "savings.deposits.record",
                                    ["planId": .string(user.plan), "amount": ["minor": .integer(amount), "currency": "RUB"], "date": .string(today.description)],
                                    user.token, "drill-\(index)-\(number)"
                                )
                            }
                            guard let retries else {
                                ledgers.entries.withLock { $0[index].refused += 1 }
                                continue
                            }
                            ledgers.entries.withLock { $0[index].deposits.append(amount); $0[index].retries += retries }
                            // A pass top-up now and then, and the writer's one goal (a second
                            // open goal would be refused: a retry must find the first).
                            if number % 8 == 2 || number == 3 {
                                let (op, data): (String, JSONValue) =
                                    number == 3
                                    ? ("goals.create", ["type": "muscle_mass", "settings": ["equipment": "dumbbells"]])
                                    : ("booking.pass.topup", ["package": "five"])
                                let retried = await Self.untilAcknowledged(client) { (op, data, user.token, "drill-\(op)-\(index)-\(number)") }
                                ledgers.entries.withLock {
                                    guard let retried else { return $0[index].refused += 1 }
                                    $0[index].retries += retried
                                    if number == 3 { $0[index].goal = true } else { $0[index].topUps += 1 }
                                }
                            }
                            // Reminders only while their minute is ahead (one made later would not be due).
                            if number % 4 == 0, Date().timeIntervalSince1970 < firstDue - 5 {
                                let due = Date(timeIntervalSince1970: firstDue)
                                let local = ZoneClock.utc.local(due)
                                let start = "\(local.date)T\(Instant.digits(local.time.hour, width: 2)):\(Instant.digits(local.time.minute, width: 2))"
                                let id = "drill-\(index)-\(number)"
                                let retried = await Self.untilAcknowledged(client) {
                                    ("reminders.create", ["id": .string(id), "title": "Drill", "start": .string(start), "zone": "UTC", "alerts": [0]], user.token, nil)
                                }
                                ledgers.entries.withLock {
                                    if let retried {
                                        $0[index].reminders.append(id)
                                        $0[index].retries += retried
                                    } else {
                                        $0[index].refused += 1
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }

        var findings = Findings()
        for round in 0..<rounds {
            for victim in victims {
                try await Task.sleep(for: pause)
                guard let process = stack.process(victim) else { continue }
                log("round \(round + 1): SIGKILL \(victim)")
                process.kill(signal: SIGKILL)
                await process.waitForExit(timeout: .seconds(5))
                findings.kills.append(victim)
                try await Task.sleep(for: downtime)
                try stack.start(victim)
                try await stack.waitUntilHealthy(victim == "gateway" ? services : [victim], timeout: .seconds(30))
            }
            for name in frozen {
                guard let process = stack.process(name) else { continue }
                try await Task.sleep(for: pause)
                log("round \(round + 1): SIGSTOP \(name) for \(freeze)")
                process.kill(signal: SIGSTOP)
                try await Task.sleep(for: freeze)
                process.kill(signal: SIGCONT)
                findings.frozen.append(name)
            }
        }
        try await Task.sleep(for: pause)
        stopping.raise()
        await load.value

        // Wait until the last reminder is due and published, and stats has caught up.
        let lastDue = Date(timeIntervalSince1970: firstDue)
        if lastDue > Date() { try await Task.sleep(for: .seconds(lastDue.timeIntervalSinceNow + 3)) }
        let data = stack.configuration.dataDirectoryURL
        for _ in 0..<100 {
            let caughtUp = try Self.read(data, "savings") { try Int64.fetchOne($0, sql: "SELECT COALESCE(MAX(seq), 0) FROM platform_event") ?? 0 }
                == (try Self.read(data, "stats") { try Int64.fetchOne($0, sql: "SELECT seq FROM platform_event_cursor WHERE source = 'savings'") ?? 0 })
            if caughtUp { break }
            try await Task.sleep(for: .milliseconds(200))
        }

        // The checks.
        let acknowledged = ledgers.entries.withLock { $0 }
        findings.retries = acknowledged.map(\.retries).reduce(0, +)
        findings.acknowledgedDeposits = acknowledged.map(\.deposits.count).reduce(0, +)
        findings.acknowledgedReminders = acknowledged.map(\.reminders.count).reduce(0, +)
        findings.acknowledgedTopUps = acknowledged.map(\.topUps).reduce(0, +)
        for (index, user) in users.enumerated() {
            let ledger = acknowledged[index]
            if ledger.refused > 0 { findings.problems.append("writer \(index): \(ledger.refused) valid writes refused") }
            let (count, sum) = try Self.read(data, "savings") { db in
                let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), COALESCE(SUM(amount_minor), 0) FROM deposit WHERE plan_id = ?", arguments: [user.plan])!
                return (row[0] as Int, row[1] as Int64)
            }
            let expected = ledger.deposits.reduce(0, +)
            if count != ledger.deposits.count || sum != expected {
                findings.problems.append("writer \(index): \(ledger.deposits.count) deposits acknowledged (sum \(expected)), \(count) stored (sum \(sum))")
            }
            let counted = try Self.read(data, "stats") { db in
                try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(value), 0) FROM app_month WHERE user_id = ? AND app = 'savings' AND metric = 'saved:RUB'", arguments: [user.id])
                    ?? 0
            }
            if counted != sum { findings.problems.append("writer \(index): stats counted \(counted) saved, savings holds \(sum)") }
            let stored = try Self.read(data, "reminders") { db in
                try String.fetchSet(db, sql: "SELECT id FROM reminder WHERE user_id = ?", arguments: [user.id])
            }
            let (sessions, topUpRows) = try Self.read(data, "booking") { db in
                (
                    try Int.fetchOne(db, sql: "SELECT sessions FROM pass WHERE user_id = ?", arguments: [user.id]) ?? 0,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM ledger WHERE user_id = ? AND kind = 'topup'", arguments: [user.id]) ?? 0
                )
            }
            if sessions != 5 * ledger.topUps || topUpRows != ledger.topUps {
                findings.problems.append("writer \(index): \(ledger.topUps) top-ups acknowledged, \(topUpRows) stored, \(sessions) sessions")
            }
            let goals = try Self.read(data, "goals") { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM goal WHERE recipient_id = ?", arguments: [user.id]) ?? 0
            }
            if goals != (ledger.goal ? 1 : 0) { findings.problems.append("writer \(index): goal acknowledged \(ledger.goal), \(goals) stored") }
            let missing = Set(ledger.reminders).subtracting(stored)
            if !missing.isEmpty { findings.problems.append("writer \(index): acknowledged reminders missing: \(missing.sorted().prefix(5))") }
        }
        // Each reminder due is published once (its outbox event), none twice.
        let dueCounts = try Self.read(data, "reminders") { db in
            try Row.fetchAll(
                db, sql: "SELECT json_extract(data, '$.reminderId') AS id, COUNT(*) AS n FROM platform_event WHERE type = 'reminders.due' GROUP BY id"
            ).map { ($0["id"] as String, $0["n"] as Int) }
        }
        findings.dueReminders = dueCounts.count
        let acknowledgedReminderIDs = Set(acknowledged.flatMap(\.reminders))
        for (id, count) in dueCounts where count != 1 { findings.problems.append("reminder \(id) published \(count) times") }
        let published = Set(dueCounts.map(\.0))
        let unpublished = acknowledgedReminderIDs.subtracting(published)
        if !unpublished.isEmpty { findings.problems.append("\(unpublished.count) reminders due were not published, e.g. \(unpublished.sorted().prefix(3))") }
        // Each reminder due is one push to its owner's phone, none twice (a resend after a
        // crash would carry the same notification id) and none missing.
        let expectedPushes = acknowledged.map(\.reminders.count).reduce(0, +)
        _ = try await Poll.until(timeout: .seconds(30), interval: .milliseconds(200)) { gorush.delivered.count >= expectedPushes }
        try await Task.sleep(for: .milliseconds(500))
        let delivered = gorush.delivered
        findings.pushes = delivered.count
        for (index, ledger) in acknowledged.enumerated() {
            let pushes = delivered.filter { $0["token"]?.stringValue == Self.device(index) }
            let ids = Set(pushes.compactMap { $0["notificationId"]?.stringValue })
            if ids.count != ledger.reminders.count {
                findings.problems.append("writer \(index): \(ledger.reminders.count) reminders due, \(ids.count) different pushes")
            }
            if pushes.count != ids.count { findings.problems.append("writer \(index): \(pushes.count - ids.count) pushes sent twice") }
        }
        if delivered.contains(where: { push in !(0..<writers).contains { Self.device($0) == push["token"]?.stringValue } }) {
            findings.problems.append("pushes to devices nobody registered")
        }
        // Nothing stuck: no timer overdue, stats has applied every savings event.
        let overdue = try Self.read(data, "reminders") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_timer WHERE due_ms < ?", arguments: [Int64(Date().timeIntervalSince1970 * 1000) - 5_000]) ?? 0
        }
        if overdue > 0 { findings.problems.append("\(overdue) timers overdue in reminders") }
        let savingsLast = try Self.read(data, "savings") { try Int64.fetchOne($0, sql: "SELECT COALESCE(MAX(seq), 0) FROM platform_event") ?? 0 }
        let statsCursor = try Self.read(data, "stats") { try Int64.fetchOne($0, sql: "SELECT seq FROM platform_event_cursor WHERE source = 'savings'") ?? 0 }
        if statsCursor != savingsLast { findings.problems.append("stats applied savings events up to \(statsCursor) of \(savingsLast)") }
        log(findings.description)
        return findings
    }

    /// Sends `request()` until it is acknowledged, with the same `idem` every time; returns
    /// the retries it took, or `nil` when the system refused it (a refusal is an answer,
    /// not a loss: the drill's writes are all valid, so it counts as a problem upstream).
    private static func untilAcknowledged(
        _ client: ServiceClient, _ request: () -> (op: String, data: JSONValue, token: String, idem: String?)
    ) async -> Int? {
        let (op, data, token, idem) = request()
        var retries = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let reply = try? await client.call(op, data: data, token: token, idem: idem, idempotent: true, timeout: .seconds(3), attempts: 1) {
                if reply.ok { return retries }
                // Retryable answers: the service or the token check was down.
                guard let code = reply.error?.code, [.unavailable, .timeout, .internal, .unauthenticated, .rateLimited].contains(code) else { return nil }
            }
            retries += 1
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Reads a service's database (read-only, beside the running service).
    private static func read<T>(_ data: URL, _ service: String, _ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: data.appendingPathComponent("\(service).sqlite").path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read(body)
    }
}

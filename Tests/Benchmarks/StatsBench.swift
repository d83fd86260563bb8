import ArgumentParser
import Foundation
import GRDB
import LoadKit
import Platform
import SharedTesting
import StatsService

/// Stats' figures (Stats issue, "Performance"): with a year of daily workouts (eight
/// exercises a day) for `users` users, every period statistic through the gateway at 64
/// in flight; then the event consumer catching up with a backlog of savings deposits
/// (events applied per second from replay), and how long a live deposit takes to show
/// in `stats.overview` while it does.
struct StatsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Period statistics p99 at 64 in flight over a year of workouts for 10,000 users; events applied per second from replay; overview lag.")

    @Option(help: "Seconds per measurement.")
    var seconds: Double = 5
    @Option(help: "Users with a year of daily workouts (the measured one included).")
    var users: Int = 10_000
    @Option(help: "Savings events in the backlog the consumer replays.")
    var backlog: Int = 100_000
    @Option(help: "Log level of the measured processes.")
    var serviceLogLevel: String = "notice"

    func run() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-stats")
        let configuration = try BenchStack.configuration(in: directory.url, logLevel: serviceLogLevel)
        let environment = configuration.environment.merging(["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0"]) { _, new in new }
        var processes = try BenchStack.start(["auth", "savings", "stats", "gateway"], environment: environment, in: directory.url)
        defer { for process in processes { process.kill(signal: SIGKILL) } }
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "bench")
        try await BenchStack.waitUntilHealthy(["auth", "savings", "stats"], client: client)
        let direct = ServiceClient(link: try configuration.operatorLink(to: "auth"))
        _ = try await AuthFixtures.signUp(direct, email: "reader@bench.example", password: "bench-password")
        /// A fresh access token: writing the year of workouts takes longer than one lives.
        func signIn() async throws -> String {
            let reply = try await AuthFixtures.signIn(direct, email: "reader@bench.example", password: "bench-password")
            guard let token = reply.data?["accessToken"]?.stringValue else { throw ValidationError("cannot sign in: \(reply.error?.message ?? "")") }
            return token
        }
        var reader = try await signIn()
        let readerID = try await client.call("auth.profile.get", token: reader).data?["id"]?.stringValue ?? ""

        // A year of daily workouts, eight exercises each, for every user (the reader first),
        // written straight into the database.
        let statsFile = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("stats.sqlite").path
        let today = ZoneClock.utc.localDate(of: Date())
        let first = today.adding(days: -364)
        var started = Date()
        // The services write their own files meanwhile (cursors, the publisher's position):
        // wait for their short transactions rather than fail.
        var waiting = Configuration()
        waiting.busyMode = .timeout(30)
        let database = try DatabaseQueue(path: statsFile, configuration: waiting)
        try await database.write { db in
            try db.execute(
                sql: """
                    CREATE TEMP TABLE bench_user AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
                        SELECT i, CASE WHEN i = 0 THEN ? ELSE 'user-' || i END AS id FROM n;
                    CREATE TEMP TABLE bench_day AS WITH RECURSIVE d(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM d WHERE k + 1 < 365)
                        SELECT k, date(?, '+' || k || ' days') AS day FROM d;
                    CREATE TEMP TABLE bench_slot AS WITH RECURSIVE s(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM s WHERE j < 8) SELECT j FROM s;
                    CREATE TEMP TABLE bench_part AS SELECT column1 AS j, column2 AS part, column3 AS ability FROM (VALUES (1, 'chest', 'strength'),
                        (2, 'back', 'strength'), (3, 'legs', 'strength'), (4, 'core', 'endurance'), (5, 'arms', 'strength'), (6, 'shoulders', 'endurance'),
                        (7, 'full_body', 'speed'), (8, 'legs', 'speed'));
                    \((DayTotalsSchema.triggerNames + TrainingRunSchema.triggerNames).map { "DROP TRIGGER \($0);" }.joined(separator: " "))
                    INSERT INTO workout (user_id, id, state, source, planned, countdown_seconds, started_ms, ended_ms, day)
                        SELECT u.id, 'w' || d.k, 'finished', 'live', 8, 30, 0, 0, d.day FROM bench_user AS u, bench_day AS d;
                    INSERT INTO training_day (user_id, day) SELECT u.id, d.day FROM bench_user AS u, bench_day AS d;
                    INSERT INTO workout_exercise (user_id, workout_id, number, attempt, exercise_id, body_part, motor_ability, recommended, shown_ms, state,
                        completed_ms, repetitions, score, day)
                        SELECT u.id, 'w' || d.k, s.j, 1, 'push_up', p.part, p.ability, 15, 0, 'done', 0, 10 + (d.k + s.j) % 10, 60 + (d.k * 7 + s.j) % 90, d.day
                        FROM bench_user AS u, bench_day AS d, bench_slot AS s JOIN bench_part AS p ON p.j = s.j;
                    """, arguments: [users, readerID, first.description])
            // The day totals the statistics read, made in one pass rather than by a trigger per row.
            try db.execute(sql: DayTotalsSchema.backfill)
            try db.execute(sql: DayTotalsSchema.triggers)
            try db.execute(sql: TrainingRunSchema.backfill)
            try db.execute(sql: TrainingRunSchema.triggers)
        }
        try await database.close()
        report(String(format: "wrote a year of daily workouts (8 exercises a day) for %d users straight into the database in %.0f s", users, Date().timeIntervalSince(started)))
        reader = try await signIn()
        await direct.close()

        // (1) Every period statistic, 64 in flight, as a user with a year of workouts.
        for op in ["stats.performance", "stats.bodyParts", "stats.motorAbilities", "stats.keyFacts"] {
            for period in ["week", "month"] {
                let body = Data(#"{"id":"s","op":"\#(op)","token":"\#(reader)","data":{"period":"\#(period)"}}"#.utf8)
                let result = try await LoadGenerator.run(
                    endpoint: configuration.gatewayEndpoint, body: body, expected: Data(#""ok":true"#.utf8), inFlight: 64, warmup: 1, seconds: seconds)
                report(String(
                    format: "%@ (%@), 64 in flight: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %d errors (target p99 under 5 ms) %@", op, period, result.rate,
                    result.p50 / 1000, result.p99 / 1000, result.errors, result.p99 < 5_000 && result.errors == 0 ? "PASS" : "FAIL")
                    + (result.errors > 0 ? " (\(result.codeSummary))" : ""))
            }
        }

        // (2) A backlog of savings deposits for stats to replay: stats is stopped, the events
        // are written into savings' outbox, stats starts again and catches up.
        await processes[2].stop()
        let savingsFile = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("savings.sqlite").path
        let month = String(today.description.prefix(7))
        let savings = try DatabaseQueue(path: savingsFile, configuration: waiting)
        try await savings.write { db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
                    INSERT INTO platform_event (type, at, data)
                    SELECT 'savings.deposit.recorded', ?, json_object('planId', 'p', 'userId', 'user-' || (1 + i % 5000), 'depositId', 'd' || i,
                        'amount', json_object('minor', 100, 'currency', 'RUB'), 'date', ?, 'saved', json_object('minor', 100, 'currency', 'RUB'),
                        'target', json_object('minor', 1000, 'currency', 'RUB'), 'percent', 10)
                    FROM n
                    """, arguments: [backlog, Instant.format(Date()), today.description])
        }
        let lastSeq = try await savings.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM platform_event") ?? 0 }
        try await savings.close()
        started = Date()
        processes[2] = try BenchStack.start(["stats"], environment: environment, in: directory.url)[0]
        let stats = try DatabaseQueue(path: statsFile, configuration: { var c = Configuration(); c.readonly = true; return c }())
        var applied = Date()
        while Date().timeIntervalSince(started) < 300 {
            let seq = try await stats.read { db in try Int64.fetchOne(db, sql: "SELECT seq FROM platform_event_cursor WHERE source = 'savings'") ?? 0 }
            if seq >= lastSeq {
                applied = Date()
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let total = try await stats.read { db in
            try Int64.fetchOne(db, sql: "SELECT SUM(value) FROM app_month WHERE app = 'savings' AND metric = 'saved:RUB' AND month = ?", arguments: [month]) ?? 0
        }
        try await stats.close()
        let rate = Double(backlog) / applied.timeIntervalSince(started)
        report(String(
            format: "replayed %d savings events in %.1f s after stats started: %.0f events/s applied (target at least 5,000), each once (%lld minor units, %lld expected) %@",
            backlog, applied.timeIntervalSince(started), rate, total, Int64(backlog) * 100, rate >= 5_000 && total == Int64(backlog) * 100 ? "PASS" : "FAIL"))

        // (3) A live deposit's way to stats.overview: 100 deposits one after another, each
        // timed from its reply until the reader's overview shows it.
        try await BenchStack.waitUntilHealthy(["stats"], client: client)
        let plan = try await client.call(
            "savings.plans.start",
            data: [
                "name": "Bench", "method": "equal", "target": ["minor": 1_000_000_000, "currency": "RUB"], "startDate": .string(today.description),
                "deadline": .string(today.adding(days: 700).description), "interval": "month", "timeZone": "UTC",
            ], token: reader)
        guard let planID = plan.data?["id"] else { throw ValidationError("cannot start a plan: \(plan.error?.message ?? "")") }
        // Each deposit's event as the bus carries it: the lag counts from its publication
        // (the issue's measure) as well as from the deposit's reply (which adds the time the
        // event waits in savings' outbox: here behind the 100,000 events of the backlog,
        // which savings announces on the bus for several seconds after the replay).
        let tap = BusTap(bus: try configuration.links(as: "operator").busOut, prefix: "savings.deposit.recorded")
        while !tap.isReady { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(200))
        var lags: [Double] = []
        var shown: [Int: Date] = [:]
        var slow: [String] = []
        for number in 1...100 {
            let deposit = try await client.call(
                "savings.deposits.record", data: ["planId": planID, "amount": ["minor": 1, "currency": "RUB"], "date": .string(today.description)],
                token: reader, idem: "bench-\(number)")
            guard deposit.ok else { continue }
            let sent = Date()
            while Date().timeIntervalSince(sent) < 5 {
                let overview = try await client.call("stats.overview", data: ["months": 1], token: reader)
                if overview.data?["savings"]?[0]?["figures"]?["saved:RUB"]?.integerValue == Int64(number) {
                    lags.append(Date().timeIntervalSince(sent) * 1000)
                    shown[number] = Date()
                    if lags[lags.count - 1] > 100 { slow.append(String(format: "#%d %.0f ms at %@", number, lags[lags.count - 1], Instant.format(sent))) }
                    break
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
        // The live deposits' events, in order (the backlog's belong to another plan).
        let published = await tap.stop().filter { arrival in
            guard let event = try? JSONParser.parse(arrival.event) else { return false }
            return event["data"]?["planId"] == planID
        }.map(\.at)
        var fromPublication: [Double] = []
        for (index, at) in published.enumerated() {
            if let shownAt = shown[index + 1] { fromPublication.append(max(0, shownAt.timeIntervalSince(at)) * 1000) }
        }
        func percentiles(_ values: [Double]) -> (p50: Double, p99: Double) {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return (0, .infinity) }
            return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))])
        }
        let (fromReply, fromBus) = (percentiles(lags), percentiles(fromPublication))
        report(String(
            format: "a live deposit shown in stats.overview: %d of 100; from its publication on the bus (%d seen) p50 %.0f ms, p99 %.0f ms (target p99 under 1 s) %@; from the deposit's reply p50 %.0f ms, p99 %.0f ms",
            lags.count, fromPublication.count, fromBus.p50, fromBus.p99, lags.count == 100 && fromPublication.count == 100 && fromBus.p99 < 1_000 ? "PASS" : "FAIL",
            fromReply.p50, fromReply.p99)
            + (slow.isEmpty ? "" : "; over 100 ms from the reply: " + slow.joined(separator: ", ")))
        await client.close()
        for process in processes { await process.stop() }
    }
}

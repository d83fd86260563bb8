import ArgumentParser
import Foundation
import LoadKit
import GRDB
import Platform
import RemindersService
import SharedTesting
import ZeroMQ

/// Reminders' figures (Reminders issue, "Performance"): with 10,000 reminders for one user
/// and 1,000,000 in the database, `reminders.list` and `reminders.search` latency through
/// the gateway at 32 in flight; then a burst of 10,000 alerts due at the same instant,
/// each `reminders.due` timed where a subscriber receives it on the event bus.
struct RemindersBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reminders", abstract: "reminders.list and reminders.search p99 at 32 in flight among 1,000,000 reminders; a burst of 10,000 alerts due at once.")

    @Option(help: "Seconds per measurement.")
    var seconds: Double = 5
    @Option(help: "Reminders in the database in all (the measured user's 10,000 included).")
    var total: Int = 1_000_000
    @Option(help: "Alerts due at the same instant.")
    var burst: Int = 10_000
    @Option(help: "Log level of the measured processes.")
    var serviceLogLevel: String = "notice"

    static let words = [
        "Купить", "Позвонить", "Оплатить", "Записаться", "Забрать", "Отправить", "Поздравить", "Проверить", "Встреча", "Тренировка",
        "молоко", "маме", "врачу", "интернет", "подарок", "документы", "посылку", "отчёт", "друзьям", "квартиру",
    ]

    func run() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-reminders")
        let configuration = try BenchStack.configuration(in: directory.url, logLevel: serviceLogLevel)
        let environment = configuration.environment.merging(["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0"]) { _, new in new }
        let processes = try BenchStack.start(["auth", "reminders", "gateway"], environment: environment, in: directory.url)
        defer { for process in processes { process.kill(signal: SIGKILL) } }
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "bench")
        try await BenchStack.waitUntilHealthy(["auth", "reminders"], client: client)
        let direct = ServiceClient(link: try configuration.operatorLink(to: "auth"))
        let reader = try await AuthFixtures.signUp(direct, email: "reader@bench.example", password: "bench-password")
        let burstUser = try await AuthFixtures.signUp(direct, email: "burst@bench.example", password: "bench-password")
        await direct.close()

        // The measured user's 10,000 reminders, made through the gateway.
        let words = Self.words
        let made = try await LoadGenerator.run(
            endpoint: configuration.gatewayEndpoint,
            bodies: { number in
                guard number < 10_000 else { return nil }
                let title = "\(words[number % 10]) \(words[10 + number / 10 % 10]) \(number)"
                let start = "20\(27 + number % 4)-\(Instant.digits(1 + number % 12, width: 2))-\(Instant.digits(1 + number % 28, width: 2))T09:00"
                let rule = number % 3 == 0 ? #","rrule":"FREQ=WEEKLY""# : ""
                return Data(#"{"id":"c\#(number)","op":"reminders.create","token":"\#(reader)","data":{"title":"\#(title)","start":"\#(start)","zone":"Europe/Moscow"\#(rule)}}"#.utf8)
            }, expected: Data(#""ok":true"#.utf8), inFlight: 64, warmup: 0, seconds: 600)
        report(String(format: "made the user's 10,000 reminders through the gateway: %.0f creates/s, p99 %.1f ms, %d refused", made.rate, made.p99 / 1000, made.errors)
            + (made.errors > 0 ? " (\(made.codeSummary))" : ""))

        // The rest, for 100 reminders per other user, written straight into the database.
        let file = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("reminders.sqlite")
        let others = max(0, total - 10_000)
        let started = Date()
        let database = try DatabaseQueue(path: file.path)
        try await database.write { db in
            // What the service indexes for a title (each word with its user's key).
            db.add(function: DatabaseFunction("search_terms", argumentCount: 2, pure: true) { values in
                SearchTerms.indexed(String.fromDatabaseValue(values[0]), user: String.fromDatabaseValue(values[1]) ?? "")
            })
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?),
                    w(k, word) AS (VALUES (0,'Купить'),(1,'Позвонить'),(2,'Оплатить'),(3,'Записаться'),(4,'Забрать'),(5,'Отправить'),(6,'Поздравить'),(7,'Проверить'),(8,'Встреча'),(9,'Тренировка'),(10,'молоко'),(11,'маме'),(12,'врачу'),(13,'интернет'),(14,'подарок'),(15,'документы'),(16,'посылку'),(17,'отчёт'),(18,'друзьям'),(19,'квартиру'))
                    INSERT INTO reminder (id, user_id, title, title_fold, search_title, category, importance, notification_kind, start_local, status,
                        next_at_ms, next_sort, alert_cursor_ms, change_version, created_at, updated_at)
                    SELECT 'bulk-' || i, 'user-' || (i / 100), a.word || ' ' || b.word || ' ' || i, lower(a.word || ' ' || b.word || ' ' || i),
                        search_terms(a.word || ' ' || b.word || ' ' || i, 'user-' || (i / 100)), 'personal',
                        'normal', 'sound', '2028-01-01T09:00', 'active', 1830000000000 + i * 1000, 1830000000000 + i * 1000, 0, 0,
                        '2026-11-23T00:00:00Z', '2026-11-23T00:00:00Z'
                    FROM n JOIN w AS a ON a.k = i % 10 JOIN w AS b ON b.k = 10 + i / 10 % 10
                    """, arguments: [others])
        }
        try await database.close()
        report(String(format: "wrote %d more reminders for %d other users straight into the database in %.0f s", others, others / 100, Date().timeIntervalSince(started)))

        // (1) The list and search, 32 in flight, as the user with 10,000 reminders.
        let requests: [(String, String)] = [
            ("reminders.list (first page of 50, by next occurrence)", #""op":"reminders.list","data":{"limit":50}"#),
            ("reminders.list (a page deep in, cursor after 5,000)", ""),
            ("reminders.search \"купить\" (1,000 of the user's match, 100,000 in the database)", #""op":"reminders.search","data":{"query":"купить","limit":50}"#),
            ("reminders.search \"позвон мам\" (two prefixes)", #""op":"reminders.search","data":{"query":"позвон мам","limit":50}"#),
        ]
        var cursor = ""
        var page = try await client.call("reminders.list", data: ["limit": 200], token: reader)
        for _ in 0..<24 {
            guard let next = page.data?["next"]?.stringValue else { break }
            cursor = next
            page = try await client.call("reminders.list", data: ["limit": 200, "cursor": .string(next)], token: reader)
        }
        for (name, body) in requests {
            let op = body.isEmpty ? #""op":"reminders.list","data":{"limit":50,"cursor":"\#(cursor)"}"# : body
            let bytes = Data(#"{"id":"r",\#(op),"token":"\#(reader)"}"#.utf8)
            let result = try await LoadGenerator.run(
                endpoint: configuration.gatewayEndpoint, body: bytes, expected: Data(#""ok":true"#.utf8), inFlight: 32, warmup: 1, seconds: seconds)
            report(String(
                format: "%@, 32 in flight: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %d errors (target p99 under 10 ms) %@", name, result.rate, result.p50 / 1000,
                result.p99 / 1000, result.errors, result.p99 < 10_000 && result.errors == 0 ? "PASS" : "FAIL"))
        }

        // (2) A burst: `burst` reminders whose alert falls on the same whole minute.
        let due = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + 50) / 60).rounded(.up) * 60)
        let local = ZoneClock.utc.local(due)
        let dueText = "\(local.date)T\(Instant.digits(local.time.hour, width: 2)):\(Instant.digits(local.time.minute, width: 2))"
        let count = burst
        let created = try await LoadGenerator.run(
            endpoint: configuration.gatewayEndpoint,
            bodies: { number in
                guard number < count else { return nil }
                return Data(#"{"id":"b\#(number)","op":"reminders.create","token":"\#(burstUser)","data":{"title":"Burst \#(number)","start":"\#(dueText)","zone":"UTC","alerts":[0]}}"#.utf8)
            }, expected: Data(#""ok":true"#.utf8), inFlight: 64, warmup: 0, seconds: 600)
        report(String(format: "made %d reminders due at %@ (%.0f creates/s, %d refused); %.0f s to spare", count, Instant.format(due), created.rate, created.errors, due.timeIntervalSinceNow))
        let tap = BusTap(bus: try configuration.links(as: "operator").busOut, prefix: "reminders.due")
        while tap.received.count < count, Date() < due.addingTimeInterval(60) { try await Task.sleep(for: .milliseconds(50)) }
        let arrivals = await tap.stop().map(\.at)
        let delays = arrivals.map { $0.timeIntervalSince(due) * 1000 }.sorted()
        let p99 = delays.isEmpty ? .infinity : delays[min(delays.count - 1, Int(Double(delays.count) * 0.99))]
        let last = delays.last ?? .infinity
        report(String(
            format: "burst of %d alerts due at once: %d reminders.due received on the bus; the first %.0f ms and the last %.0f ms after the due instant (target within 1 s); delay p50 %.0f ms, p99 %.0f ms (target p99 under 1 s) %@",
            count, arrivals.count, delays.first ?? .infinity, last, delays.isEmpty ? 0 : delays[delays.count / 2], p99, arrivals.count == count && last < 1_000 && p99 < 1_000 ? "PASS" : "FAIL"))
        await client.close()
        for process in processes { await process.stop() }
    }
}

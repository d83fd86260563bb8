import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// The scheduler driven by a clock the test turns: the real tables, timers and handlers
/// on a real SQLite file, with each timer fired at the instant it is due. A year of a
/// daily 09:00 reminder in Berlin crosses both DST changes and stays at 09:00 local.
@Suite("Reminders scheduler with a controllable clock")
struct RemindersSchedulerTests {
    /// A service database in a temporary folder, removed afterwards.
    static func withDatabase<T>(_ body: (DatabasePool) async throws -> T) async throws -> T {
        let directory = try TemporaryDirectory(prefix: "reminders-clock")
        defer { directory.remove() }
        let pool = try ServiceDatabase.open(directory: directory.url, name: "reminders", durability: .normal) { RemindersMigrations.register(in: &$0) }
        defer { try? pool.close() }
        return try await body(pool)
    }

    static func instant(_ text: String) -> Date { Instant.parse(text)! }

    static func content(start: String, zone: String?, rule: String?, alerts: [Int], repeatEvery: Int? = nil, times: Int = 0, allDay: Bool = false) throws -> ReminderContent {
        ReminderContent(
            title: "Vitamins", category: .health, importance: .normal, special: false, notificationKind: .sound,
            timing: ReminderTiming(
                start: allDay ? LocalDateTime(date: LocalDate(start)!, time: .midnight) : LocalText.dateTime(start)!, allDay: allDay, zone: zone,
                rule: try rule.map { try RecurrenceRule.parse($0) }, exceptions: []),
            alerts: AlertPlan(leadMinutes: alerts, repeatEveryMinutes: repeatEvery, repeatTimes: times))
    }

    /// Fires the reminder's timer at its due instant, `count` times (the clock jumps to
    /// each due instant), and returns the `reminders.due` events in order.
    static func run(_ pool: DatabasePool, reminder: String, firings count: Int, firedLate: TimeInterval = 0) async throws -> [JSONValue] {
        for _ in 0..<count {
            let found = try await pool.read { db in
                try Row.fetchOne(db, sql: "SELECT id, due_ms FROM platform_timer WHERE kind = ? AND key = ?", arguments: [ReminderScheduler.timerKind, reminder])
                    .map { ($0["id"] as Int64, $0["due_ms"] as Int64) }
            }
            guard let (timerID, dueMs) = found else { break }
            let due = Instant.date(milliseconds: dueMs)
            try await pool.write { db in
                try db.execute(sql: "DELETE FROM platform_timer WHERE id = ?", arguments: [timerID])
                try ReminderScheduler.handler.run(
                    db, FiredTimer(id: timerID, kind: ReminderScheduler.timerKind, key: reminder, dueAt: due, firedAt: due.addingTimeInterval(firedLate)))
            }
        }
        return try await pool.read { db in
            try String.fetchAll(db, sql: "SELECT data FROM platform_event WHERE type = 'reminders.due' ORDER BY seq").map { try JSONParser.parse(Data($0.utf8)) }
        }
    }

    static func insert(_ pool: DatabasePool, _ content: ReminderContent, user: String = "user-ann", at now: Date) async throws -> String {
        try await pool.write { db in
            let clock = try UserClock.load(db, user: user)
            // The timer's key names the reminder.
            return try ReminderStore.insert(db, id: "reminder-\(UUID().uuidString.prefix(8))", user: user, content: content, source: "user", clock: clock, now: now).timerKey
        }
    }

    @Test("a daily 09:00 reminder in Berlin fires at 09:00 local across both DST changes of 2027")
    func dailyAcrossDST() async throws {
        try await Self.withDatabase { pool in
            let id = try await Self.insert(
                pool, try Self.content(start: "2027-03-20T09:00", zone: "Europe/Berlin", rule: "FREQ=DAILY", alerts: [0]), at: Self.instant("2027-03-19T12:00:00Z"))
            let events = try await Self.run(pool, reminder: id, firings: 230)
            let byLocal = Dictionary(events.compactMap { event -> (String, String)? in
                guard let local = event["occurrence"]?["local"]?.stringValue, let utc = event["occurrence"]?["utc"]?.stringValue else { return nil }
                return (local, utc)
            }, uniquingKeysWith: { first, _ in first })
            // Winter time (UTC+1) before 28 March, summer time (UTC+2) after, winter again from 31 October.
            #expect(byLocal["2027-03-27T09:00"].flatMap(Instant.parse) == Self.instant("2027-03-27T08:00:00Z"))
            #expect(byLocal["2027-03-28T09:00"].flatMap(Instant.parse) == Self.instant("2027-03-28T07:00:00Z"))
            #expect(byLocal["2027-10-30T09:00"].flatMap(Instant.parse) == Self.instant("2027-10-30T07:00:00Z"))
            #expect(byLocal["2027-10-31T09:00"].flatMap(Instant.parse) == Self.instant("2027-10-31T08:00:00Z"))
            // Every day once, none twice, none late.
            #expect(events.count == 230 && byLocal.count == 230)
            #expect(events.allSatisfy { $0["late"] == false && $0["kind"] == "alert" && $0["dueAt"] == $0["occurrence"]?["utc"] })
        }
    }

    @Test("a 02:30 reminder on the spring-forward night fires at 03:30; on the fall-back night at the first 02:30")
    func gapAndOverlap() async throws {
        try await Self.withDatabase { pool in
            let spring = try await Self.insert(
                pool, try Self.content(start: "2027-03-27T02:30", zone: "Europe/Berlin", rule: "FREQ=DAILY;COUNT=3", alerts: [0]), at: Self.instant("2027-03-26T00:00:00Z"))
            let springEvents = try await Self.run(pool, reminder: spring, firings: 5)
            #expect(springEvents.compactMap { $0["occurrence"]?["utc"]?.stringValue }.compactMap(Instant.parse) == [
                Self.instant("2027-03-27T01:30:00Z"), Self.instant("2027-03-28T01:30:00Z"), Self.instant("2027-03-29T00:30:00Z"),
            ])
            let fall = try await Self.insert(
                pool, try Self.content(start: "2027-11-07T01:30", zone: "America/New_York", rule: nil, alerts: [0]), at: Self.instant("2027-11-01T00:00:00Z"))
            let all = try await Self.run(pool, reminder: fall, firings: 2)
            // EDT (UTC-4) is the first 01:30 of that night.
            #expect(all.last?["occurrence"]?["utc"]?.stringValue.flatMap(Instant.parse) == Self.instant("2027-11-07T05:30:00Z"))
        }
    }

    @Test("lead times and repeats until done: each alert once, in time order; done stops the repeats")
    func leadsAndRepeats() async throws {
        try await Self.withDatabase { pool in
            let id = try await Self.insert(
                pool, try Self.content(start: "2027-05-10T10:00", zone: "UTC", rule: "FREQ=WEEKLY;COUNT=2", alerts: [0, 60, 1_440], repeatEvery: 30, times: 2),
                at: Self.instant("2027-05-01T00:00:00Z"))
            let events = try await Self.run(pool, reminder: id, firings: 20)
            let moments = events.map { ($0["dueAt"]?.stringValue.flatMap(Instant.parse) ?? .distantPast, $0["kind"]?.stringValue ?? "") }
            #expect(moments.map(\.0) == [
                "2027-05-09T10:00:00Z", "2027-05-10T09:00:00Z", "2027-05-10T10:00:00Z", "2027-05-10T10:30:00Z", "2027-05-10T11:00:00Z",
                "2027-05-16T10:00:00Z", "2027-05-17T09:00:00Z", "2027-05-17T10:00:00Z", "2027-05-17T10:30:00Z", "2027-05-17T11:00:00Z",
            ].map(Self.instant))
            #expect(moments.map(\.1) == ["alert", "alert", "alert", "repeat", "repeat", "alert", "alert", "alert", "repeat", "repeat"])
        }
    }

    @Test("two alerts due at the same instant both fire: a daily reminder's \"a day before\" for tomorrow and today's own")
    func tiedAlertsBothFire() async throws {
        try await Self.withDatabase { pool in
            let id = try await Self.insert(
                pool, try Self.content(start: "2027-05-10T10:00", zone: "UTC", rule: "FREQ=DAILY;COUNT=3", alerts: [0, 1_440]),
                at: Self.instant("2027-05-01T00:00:00Z"))
            let events = try await Self.run(pool, reminder: id, firings: 10)
            let seen = events.map { "\($0["dueAt"]?.stringValue ?? "") \($0["occurrence"]?["local"]?.stringValue ?? "") \($0["minutesBefore"]?.integerValue ?? -1)" }
            #expect(seen == [
                "2027-05-09T10:00:00.000Z 2027-05-10T10:00 1440",
                "2027-05-10T10:00:00.000Z 2027-05-10T10:00 0", "2027-05-10T10:00:00.000Z 2027-05-11T10:00 1440",
                "2027-05-11T10:00:00.000Z 2027-05-11T10:00 0", "2027-05-11T10:00:00.000Z 2027-05-12T10:00 1440",
                "2027-05-12T10:00:00.000Z 2027-05-12T10:00 0",
            ], "\(seen)")
        }
    }

    @Test("a snoozed alert comes back while its occurrence stands, and not once an edit moved the reminder away from it")
    func snoozeAfterEdit() async throws {
        try await Self.withDatabase { pool in
            let key = try await Self.insert(
                pool, try Self.content(start: "2027-05-10T10:00", zone: "UTC", rule: nil, alerts: [0]), at: Self.instant("2027-05-01T00:00:00Z"))
            let fired = try await Self.run(pool, reminder: key, firings: 1)
            let alertID = try #require(fired.first?["alertId"]?.stringValue)
            let snooze: @Sendable (Double) -> FiredTimer = { minutes in
                let at = Self.instant("2027-05-10T10:00:00Z").addingTimeInterval(minutes * 60)
                return FiredTimer(id: 0, kind: ReminderScheduler.snoozeKind, key: alertID, dueAt: at, firedAt: at)
            }
            let count = { try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_event WHERE type = 'reminders.due'") } }
            try await pool.write { db in try ReminderScheduler.snoozeHandler.run(db, snooze(5)) }
            #expect(try await count() == 2)
            try await pool.write { db in
                var row = try #require(try ReminderRow.load(db, timerKey: key))
                row.content.timing = ReminderTiming(start: LocalText.dateTime("2027-05-20T10:00")!, allDay: false, zone: "UTC", rule: nil, exceptions: [])
                try row.save(db)
                try ReminderScheduler.snoozeHandler.run(db, snooze(10))
            }
            #expect(try await count() == 2)
        }
    }

    @Test("a greeting with a channel is queued for its address at each occurrence's alert, once; without one the user is only reminded")
    func greetingsAreSent() async throws {
        try await Self.withDatabase { pool in
            var content = try Self.content(start: "2027-05-10T09:00", zone: "UTC", rule: "FREQ=YEARLY", alerts: [0, 60])
            content.category = .congratulation
            content.greeting = Greeting(recipientName: "Anna", message: "С днём рождения!", channel: "sms", address: "+79991234567")
            let key = try await Self.insert(pool, content, at: Self.instant("2027-05-01T00:00:00Z"))
            var email = try Self.content(start: "2027-05-11T09:00", zone: "UTC", rule: nil, alerts: [0])
            email.greeting = Greeting(recipientName: "Bob", message: "Happy birthday!", channel: "email", address: "bob@example.com")
            let emailKey = try await Self.insert(pool, email, at: Self.instant("2027-05-01T00:00:00Z"))
            var plain = try Self.content(start: "2027-05-12T09:00", zone: "UTC", rule: nil, alerts: [0])
            plain.greeting = Greeting(recipientName: "Cy", message: "Call Cy", channel: nil, address: nil)
            let plainKey = try await Self.insert(pool, plain, at: Self.instant("2027-05-01T00:00:00Z"))
            // Two years of the yearly one: its lead an hour before sends nothing, its own time sends once a year.
            _ = try await Self.run(pool, reminder: key, firings: 4)
            _ = try await Self.run(pool, reminder: emailKey, firings: 1)
            _ = try await Self.run(pool, reminder: plainKey, firings: 1)
            let queued = try await pool.read { db in
                try Row.fetchAll(db, sql: "SELECT id, channel, destination, payload FROM platform_delivery WHERE id LIKE 'grt.%' ORDER BY created_at, id")
                    .map { ($0["channel"] as String, $0["destination"] as String, try JSONParser.parse(Data(($0["payload"] as String).utf8))) }
            }
            #expect(queued.count == 3, "\(queued)")
            #expect(queued.filter { $0.0 == "sms" }.count == 2 && queued.allSatisfy { $0.1 != "+79991234567" || $0.2["body"] == "С днём рождения!" })
            #expect(queued.contains { $0.0 == "email" && $0.1 == "bob@example.com" && $0.2["body"] == "Happy birthday!" && $0.2["subject"]?.stringValue?.contains("Bob") == true })
        }
    }

    @Test("greetings to addresses nobody confirmed are bounded: per address and per user a day, once a year per reminder; deletion takes back what is queued")
    func greetingsAreBounded() async throws {
        try await Self.withDatabase { pool in
            func greeting(_ start: String, to address: String, user: String = "user-ann") async throws -> String {
                var content = try Self.content(start: start, zone: "UTC", rule: nil, alerts: [0])
                content.greeting = Greeting(recipientName: "V", message: "hi", channel: "email", address: address)
                return try await Self.insert(pool, content, user: user, at: Self.instant("2027-05-01T00:00:00Z"))
            }
            let sent = { try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE id LIKE 'grt.%'") ?? 0 } }
            // Five greetings to one address within minutes, its case varied: three go (the address's day), two do not.
            for minute in 0..<5 {
                let address = ["victim@example.com", "VICTIM@example.com", "Victim@Example.com"][minute % 3]
                _ = try await Self.run(pool, reminder: try await greeting("2027-05-10T09:0\(minute)", to: address), firings: 1)
            }
            #expect(try await sent() == 3)
            // Another user, the same address, the same day: nothing more.
            _ = try await Self.run(pool, reminder: try await greeting("2027-05-10T10:00", to: "victim@example.com", user: "user-bob"), firings: 1)
            #expect(try await sent() == 3)
            // Ten more to other addresses: the user's day stops at ten in all.
            for number in 0..<10 { _ = try await Self.run(pool, reminder: try await greeting("2027-05-10T11:\(10 + number)", to: "f\(number)@example.com"), firings: 1) }
            #expect(try await sent() == 10)
            // What is still queued goes with the account; what was sent still counts for its address that day.
            try await pool.write { db in try GreetingDelivery.forget(db, user: "user-ann") }
            let pending = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE id LIKE 'grt.%' AND status = 'pending'") }
            #expect(pending == 0)
            let before = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE id LIKE 'grt.%'") ?? 0 }
            _ = try await Self.run(pool, reminder: try await greeting("2027-05-10T12:00", to: "victim@example.com", user: "user-cy"), firings: 1)
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE id LIKE 'grt.%'") ?? 0 } == before)
            // A reminder sends once a year, whatever its time or zone is moved to after it sent.
            let moved = try await greeting("2027-05-10T13:00", to: "once@example.com", user: "user-dee")
            _ = try await Self.run(pool, reminder: moved, firings: 1)
            try await pool.write { db in
                var row = try #require(try ReminderRow.load(db, timerKey: moved))
                row.content.timing = ReminderTiming(start: LocalText.dateTime("2027-05-10T01:30")!, allDay: false, zone: "Etc/GMT+12", rule: nil, exceptions: [])
                try ReminderStore.commit(db, &row, change: "updated", clock: try UserClock.load(db, user: "user-dee"), now: Self.instant("2027-05-10T13:01:00Z"))
            }
            _ = try await Self.run(pool, reminder: moved, firings: 1)
            let dee = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE destination = 'once@example.com'") }
            #expect(dee == 1)
            // A greeting sent by email repeats at most yearly and keeps its alert at 0.
            var daily = try Self.content(start: "2027-05-10T09:00", zone: "UTC", rule: "FREQ=DAILY", alerts: [0])
            daily.greeting = Greeting(recipientName: "V", message: "hi", channel: "sms", address: "+79990000000")
            #expect(GreetingDelivery.problem(of: daily)?.field == "rrule")
            daily.timing.rule = try RecurrenceRule.parse("FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU")
            #expect(GreetingDelivery.problem(of: daily)?.field == "rrule")
            daily.timing.rule = try RecurrenceRule.parse("FREQ=YEARLY")
            daily.alerts = AlertPlan(leadMinutes: [1_440])
            #expect(GreetingDelivery.problem(of: daily)?.field == "alerts")
        }
    }

    @Test("alerts missed while the service was down fire once, marked late; older than a day are skipped")
    func missedAlerts() async throws {
        try await Self.withDatabase { pool in
            let id = try await Self.insert(
                pool, try Self.content(start: "2027-06-01T08:00", zone: "UTC", rule: "FREQ=DAILY", alerts: [0]), at: Self.instant("2027-05-31T00:00:00Z"))
            // The first timer fires three days late: only the last day's alert is sent, late.
            let found = try await pool.read { db in
                try Row.fetchOne(db, sql: "SELECT id, due_ms FROM platform_timer WHERE key = ?", arguments: [id]).map { ($0["id"] as Int64, $0["due_ms"] as Int64) }
            }
            let (timerID, dueMs) = try #require(found)
            try await pool.write { db in
                try db.execute(sql: "DELETE FROM platform_timer WHERE id = ?", arguments: [timerID])
                try ReminderScheduler.handler.run(
                    db, FiredTimer(id: timerID, kind: ReminderScheduler.timerKind, key: id, dueAt: Instant.date(milliseconds: dueMs),
                        firedAt: Self.instant("2027-06-03T09:00:00Z"), late: true))
            }
            let events = try await Self.run(pool, reminder: id, firings: 0)
            #expect(events.count == 1 && events.first?["late"] == true)
            // The next timer is the one after the missed window, not the old ones again.
            let next = try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT due_ms FROM platform_timer WHERE key = ?", arguments: [id]) }
            #expect(next.map { Instant.date(milliseconds: $0) } ?? .distantPast >= Self.instant("2027-06-02T08:00:00Z"))
        }
    }
}

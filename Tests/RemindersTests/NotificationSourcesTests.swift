import Foundation
import GRDB
@testable import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// What each source makes, on a real reminders database without sockets: events applied
/// as the subscriber applies them (in a transaction), timers fired as the timer worker
/// fires them; then the outbox rows and history read back.
@Suite("Notification sources")
struct NotificationSourcesTests {
    final class Fixture: Sendable {
        let directory: TemporaryDirectory
        let pool: DatabasePool

        init() throws {
            directory = try TemporaryDirectory(prefix: "push-sources")
            pool = try ServiceDatabase.open(directory: directory.url, name: "reminders", durability: .normal, migrations: { RemindersMigrations.register(in: &$0) })
        }

        func device(_ token: String, user: String, app: PushApp, locale: String = "en") throws {
            try pool.write { db in
                try db.execute(
                    sql: "INSERT INTO push_device (token, user_id, app_id, platform, locale, registered_at) VALUES (?, ?, ?, 'ios', ?, '2026-11-23T00:00:00Z')",
                    arguments: [token, user, app.rawValue, locale])
            }
        }

        func apply(_ subscription: EventSubscription, _ seq: Int64, _ type: String, _ data: JSONValue) throws {
            try pool.write { db in try subscription.apply(db, Event(source: subscription.source, seq: seq, type: type, at: Instant.format(Date()), data: data)) }
        }

        /// The queued pushes: token, kind, priority, due time.
        func pushes() throws -> [(token: String, kind: String, priority: Int, dueMs: Int64, payload: JSONValue)] {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT destination, payload, priority, next_attempt_at FROM platform_delivery ORDER BY created_at, id").map { row in
                    let payload = try JSONParser.parse(Data((row[1] as String).utf8))
                    return (row[0], payload["kind"]?.stringValue ?? "", row[2], row[3], payload)
                }
            }
        }

        func timers(_ kind: String) throws -> [(key: String, dueMs: Int64, payload: String)] {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT key, due_ms, payload FROM platform_timer WHERE kind = ?", arguments: [kind]).map { ($0[0], $0[1], $0[2]) }
            }
        }

        deinit { directory.remove() }
    }

    static func bookingData(_ id: String, start: Date) -> JSONValue {
        [
            "bookingId": .string(id), "userId": "rider", "cable": "reverse-1", "start": .string(Instant.format(start)),
            "end": .string(Instant.format(start.addingTimeInterval(1_800))), "date": "2026-11-24", "localStart": "18:30", "status": "booked",
        ]
    }

    @Test("a booking made: a push now and a notice two hours before on a durable timer; cancelling removes the notice")
    func bookingNotice() throws {
        let fixture = try Fixture()
        try fixture.device("rider-park-token-000001", user: "rider", app: .wakepark)
        let start = Date().addingTimeInterval(3 * 3_600)
        try fixture.apply(NotificationSources.booking, 1, "booking.created", Self.bookingData("bkg_1", start: start))
        #expect(try fixture.pushes().map(\.kind) == ["booking.created"])
        let timer = try #require(try fixture.timers(NotificationSources.bookingSoonKind).first)
        #expect(timer.key == "bkg_1" && abs(Double(timer.dueMs) / 1_000 - start.addingTimeInterval(-7_200).timeIntervalSince1970) < 1)
        // The timer fires: the notice, urgent, with the slot's time.
        try fixture.pool.write { db in
            try NotificationSources.bookingSoonHandler.run(
                db, FiredTimer(id: 1, kind: NotificationSources.bookingSoonKind, key: "bkg_1", dueAt: Date(), firedAt: Date(), payload: Data(timer.payload.utf8)))
        }
        let soon = try #require(try fixture.pushes().first { $0.kind == "booking.soon" })
        #expect(soon.priority == DeliveryPriority.urgent.rawValue && soon.payload["body"] == "reverse-1 at 18:30.")
        // Another booking, cancelled in time: its notice goes; one less than two hours away gets none.
        try fixture.apply(NotificationSources.booking, 2, "booking.created", Self.bookingData("bkg_2", start: start))
        try fixture.apply(NotificationSources.booking, 3, "booking.cancelled", Self.bookingData("bkg_2", start: start))
        try fixture.apply(NotificationSources.booking, 4, "booking.created", Self.bookingData("bkg_3", start: Date().addingTimeInterval(3_600)))
        #expect(try fixture.timers(NotificationSources.bookingSoonKind).map(\.key) == ["bkg_1"])
    }

    @Test("the same event applied twice makes one notification; a user's other app hears nothing of it")
    func exactlyOnce() throws {
        let fixture = try Fixture()
        try fixture.device("rita-goals-token-000001", user: "rita", app: .goals)
        try fixture.device("rita-park-token-0000001", user: "rita", app: .wakepark)
        let accepted: JSONValue = [
            "goalId": "g1", "sponsorshipId": "s1", "recipientId": "rita", "sponsorId": "sam", "typeId": "marathon", "state": "accepted",
            "reward": ["money": ["minor": 5_000, "currency": "EUR"]],
        ]
        try fixture.apply(NotificationSources.goals, 7, "goals.accepted", accepted)
        try fixture.apply(NotificationSources.goals, 7, "goals.accepted", accepted)
        let pushes = try fixture.pushes()
        #expect(pushes.count == 1 && pushes[0].token == "rita-goals-token-000001" && pushes[0].payload["body"] == "A sponsor accepted your goal with a reward of 50.00 EUR.")
        #expect(try fixture.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notification") } == 1)
    }

    @Test("progress tells sponsors of each quarter passed once; 100 % is the completion")
    func milestones() throws {
        let fixture = try Fixture()
        try fixture.device("sam-goals-token-0000001", user: "sam", app: .goals)
        var seq: Int64 = 0
        for percent in [10, 30, 40, 55, 52, 100] {
            seq += 1
            try fixture.apply(
                NotificationSources.goals, seq, "goals.progress.changed",
                ["goalId": "g1", "recipientId": "rita", "typeId": "marathon", "state": "active", "progress": .integer(Int64(percent)), "sponsorIds": ["sam"]])
        }
        // Straight from 52 to 100: no 75 % notice, the completion says it.
        #expect(try fixture.pushes().map { $0.payload["title"]?.stringValue ?? "" } == ["Goal progress: 25%", "Goal progress: 50%"])
    }

    @Test("a like or a check toggled back and forth tells once; a blank broadcast reaches nobody")
    func togglesAndBlanks() throws {
        let fixture = try Fixture()
        try fixture.device("sam-goals-token-0000001", user: "sam", app: .goals)
        var seq: Int64 = 0
        for _ in 0..<3 {
            seq += 1
            try fixture.apply(NotificationSources.goals, seq, "goals.comment.liked", ["entryId": 5, "goalId": "g1", "authorId": "sam", "byId": "rita"])
            seq += 1
            try fixture.apply(
                NotificationSources.goals, seq, "goals.item.checked",
                ["goalId": "g1", "itemId": "i1", "recipientId": "rita", "sponsorIds": ["sam"], "kind": "workout", "text": "Run", "done": true])
            seq += 1
            try fixture.apply(
                NotificationSources.goals, seq, "goals.item.unchecked",
                ["goalId": "g1", "itemId": "i1", "recipientId": "rita", "sponsorIds": ["sam"], "kind": "workout", "text": "Run", "done": false])
        }
        // Made in the same millisecond, the three may list in any order (ids are random).
        #expect(try fixture.pushes().map(\.kind).sorted() == ["goals.comment.liked", "goals.item.checked", "goals.item.unchecked"])
        for (title, text) in [("\u{3000}", "text"), ("Title", "\u{200B}\n\t")] {
            seq += 1
            try fixture.apply(
                NotificationSources.goals, seq, "goals.broadcast",
                ["broadcastId": .string("bcs_\(seq)"), "title": .string(title), "text": .string(text), "audience": "everyone", "kind": "news"])
        }
        #expect(try fixture.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM push_broadcast") } == 0)
    }

    @Test("a category switched off makes nothing; quiet hours hold a push until they end; account notices always go")
    func preferences() throws {
        let fixture = try Fixture()
        try fixture.device("ann-savings-token-00001", user: "ann", app: .buckstash, locale: "ru-RU")
        let due: JSONValue = [
            "planId": "p1", "userId": "ann", "name": "Отпуск", "date": "2026-11-24", "amount": ["minor": 150_000, "currency": "RUB"],
            "cumulative": ["minor": 300_000, "currency": "RUB"], "saved": ["minor": 150_000, "currency": "RUB"], "target": ["minor": 1_000_000, "currency": "RUB"],
            "timeZone": "UTC",
        ]
        // Quiet all day but the next minute: the push waits for the end.
        let now = ZoneClock.utc.local(Date())
        let end = LocalTime(secondOfDay: (now.time.secondOfDay / 60 * 60 + 120) % 86_400)!
        let start = LocalTime(secondOfDay: (end.secondOfDay + 3_600) % 86_400)!
        try fixture.pool.write { db in
            try db.execute(
                sql: "INSERT INTO push_preference (user_id, app_id, disabled, vibration, alert_style, quiet_start, quiet_end, updated_at) VALUES ('ann', 'buckstash', '', 1, 'banner', ?, ?, 'now')",
                arguments: [start.description, end.description])
        }
        try fixture.apply(NotificationSources.savings, 1, "savings.installment.due", due)
        let held = try #require(try fixture.pushes().first)
        #expect(held.payload["body"] == "Отложите сегодня 1500.00 RUB на «Отпуск».", "\(held.payload)")
        #expect(Double(held.dueMs) / 1_000 > Date().timeIntervalSince1970 + 30)
        // Savings switched off: the next one makes nothing, a sign-in still goes.
        try fixture.pool.write { db in try db.execute(sql: "UPDATE push_preference SET disabled = 'savings', quiet_start = NULL, quiet_end = NULL") }
        try fixture.apply(NotificationSources.savings, 2, "savings.installment.due", due)
        try fixture.apply(NotificationSources.account, 1, "auth.user.signed_in", ["userId": "ann", "method": "phone"])
        #expect(try fixture.pushes().map(\.kind) == ["savings.installment.due", "account.signed_in"])
    }

    @Test("a due push is read before a broadcast's bulk, whatever their order in the queue")
    func priorities() throws {
        let fixture = try Fixture()
        try fixture.pool.write { db in
            for index in 0..<5 {
                try Notifier.outbox.enqueue(db, id: "bulk-\(index)", channel: Notifier.channel, to: "t\(index)", payload: ["kind": "announcement"], priority: .bulk)
            }
            try Notifier.outbox.enqueue(db, id: "normal", channel: Notifier.channel, to: "tn", payload: ["kind": "goals.accepted"])
            try Notifier.outbox.enqueue(db, id: "urgent", channel: Notifier.channel, to: "tu", payload: ["kind": "reminder.due"], priority: .urgent)
            try Notifier.outbox.enqueue(db, id: "later", channel: Notifier.channel, to: "tl", payload: ["kind": "reminder.due"], priority: .urgent,
                notBefore: Date().addingTimeInterval(3_600))
        }
        let due = try fixture.pool.read { db in try DeliveryQueue.due(db, nowMs: Instant.milliseconds(Date()) + 10, limit: 3) }
        #expect(due.map(\.id) == ["urgent", "normal", "bulk-0"])
    }

    @Test("history older than 90 days is pruned daily; newer stays; the timer is set again")
    func pruning() throws {
        let fixture = try Fixture()
        let now = Date()
        try fixture.pool.write { db in
            for (id, age) in [("old", 91.0), ("new", 89.0)] {
                try db.execute(
                    sql: """
                        INSERT INTO notification (id, user_id, app_id, kind, title, body, data, urgent, devices, created_ms, deliver_ms)
                        VALUES (?, 'ann', 'goals', 'goals.accepted', 't', 'b', '{}', 0, 1, ?, ?)
                        """, arguments: [id, Instant.milliseconds(now.addingTimeInterval(-age * 86_400)), 0])
            }
        }
        try NotificationHistoryPruning.arm(fixture.pool)
        try NotificationHistoryPruning.arm(fixture.pool)
        #expect(try fixture.timers(NotificationHistoryPruning.timerKind).count == 1)
        try fixture.pool.write { db in
            try db.execute(sql: "DELETE FROM platform_timer")
            try NotificationHistoryPruning.handler.run(db, FiredTimer(id: 1, kind: NotificationHistoryPruning.timerKind, key: "daily", dueAt: now, firedAt: now))
        }
        #expect(try fixture.pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM notification") } == ["new"])
        let next = try #require(try fixture.timers(NotificationHistoryPruning.timerKind).first)
        #expect(abs(Double(next.dueMs) / 1_000 - now.addingTimeInterval(86_400).timeIntervalSince1970) < 1)
    }
}

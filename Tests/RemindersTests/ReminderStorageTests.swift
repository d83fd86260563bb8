import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// How reminders are stored and read back: the wire view written from a loaded reminder
/// and from its stored columns (lists) is the same and is what the contract shows; the
/// search index holds each user's own terms; the migration to those terms indexes what
/// was there before.
@Suite("Reminder storage")
struct ReminderStorageTests {
    static func database(upTo migration: String? = nil) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        RemindersMigrations.register(in: &migrator)
        if let migration { try migrator.migrate(queue, upTo: migration) } else { try migrator.migrate(queue) }
        return queue
    }

    /// A service database as the service opens it (the platform's timers included: arming
    /// sets them), in a folder removed afterwards.
    static func withServiceDatabase(_ body: (DatabasePool) throws -> Void) throws {
        let directory = try TemporaryDirectory(prefix: "reminder-storage")
        let pool = try ServiceDatabase.open(directory: directory.url, name: "reminders", durability: .normal) { RemindersMigrations.register(in: &$0) }
        try body(pool)
        try pool.close()
    }

    static let moscow = UserClock(zone: ZoneClock(identifier: "Europe/Moscow")!, zoneName: "Europe/Moscow", allDayTime: UserClock.defaultAllDayTime, language: "ru")

    static func row(_ id: String, user: String = "user-ann", title: String, description: String? = nil, allDay: Bool = false, zone: String? = "Europe/Berlin")
        -> ReminderRow
    {
        let content = ReminderContent(
            title: title, description: description, location: "Дом \"у реки\"", notes: nil, category: .personal, importance: .high, special: true,
            imageID: nil, notificationKind: .both, sound: "bell",
            timing: ReminderTiming(
                start: LocalText.dateTime("2027-03-28T02:30")!, allDay: allDay, zone: zone, rule: try? RecurrenceRule.parse("FREQ=DAILY;COUNT=5"),
                exceptions: [LocalText.dateTime("2027-03-29T02:30")!]),
            alerts: AlertPlan(leadMinutes: [15, 0], repeatEveryMinutes: 10, repeatTimes: 3),
            greeting: allDay ? Greeting(recipientName: "Оля", message: "С днём рождения!", channel: nil, address: nil) : nil)
        return ReminderRow(
            rowID: 0, id: id, userID: user, content: content, status: .active, source: "user", sourceKey: nil, doneThrough: nil, nextAtMs: nil,
            alertCursorMs: 0, version: 1, changeVersion: 1, fieldClocks: FieldClocks.all(at: Date(timeIntervalSince1970: 1_800_000_000)),
            createdAt: "2026-11-23T10:00:00Z", updatedAt: "2026-11-23T10:00:00Z", closedAt: nil)
    }

    /// The view as the contract describes it, built field by field as a tree: the
    /// oracle the written bytes are compared with.
    static func expected(_ row: ReminderRow, nextLocal: String?) -> JSONValue {
        let c = row.content
        func text(_ local: LocalDateTime) -> JSONValue { .string(c.timing.allDay ? local.date.description : LocalText.format(local)) }
        func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return [
            "id": .string(row.id), "title": .string(c.title), "description": optional(c.description), "location": optional(c.location),
            "notes": optional(c.notes), "category": .string(c.category.rawValue), "importance": .string(c.importance.rawValue), "special": .bool(c.special),
            "imageId": optional(c.imageID), "notification": ["kind": .string(c.notificationKind.rawValue), "sound": optional(c.sound)],
            "start": text(c.timing.start), "allDay": .bool(c.timing.allDay), "zone": optional(c.timing.zone), "floating": .bool(c.timing.zone == nil),
            "rrule": optional(c.timing.rule?.text), "exdates": .array(c.timing.exceptions.map(text)),
            "alerts": .array(c.alerts.leadMinutes.map { .integer(Int64($0)) }),
            "repeatAlert": c.alerts.repeatEveryMinutes.map { ["everyMinutes": .integer(Int64($0)), "times": .integer(Int64(c.alerts.repeatTimes))] } ?? .null,
            "greeting": c.greeting.map {
                ["recipientName": .string($0.recipientName), "message": .string($0.message), "channel": optional($0.channel), "address": optional($0.address)]
            } ?? .null,
            "status": .string(row.status.rawValue), "source": .string(row.source),
            "next": row.nextAtMs.map { ["utc": .string(Instant.format(Instant.date(milliseconds: $0))), "local": optional(nextLocal)] } ?? .null,
            "doneThrough": row.doneThrough.map(text) ?? .null, "version": .integer(Int64(row.version)), "createdAt": .string(row.createdAt),
            "updatedAt": .string(row.updatedAt), "closedAt": optional(row.closedAt),
        ]
    }

    @Test("a reminder's view, written from its stored columns, is what the contract shows, keys sorted")
    func viewsAgree() throws {
        try Self.withServiceDatabase { pool in try pool.write { db in
            for (index, allDay) in [false, true].enumerated() {
                for zone in ["Europe/Berlin", nil] {
                    var row = Self.row("r-\(index)-\(zone ?? "floating")", title: "Купить \"молоко\"\n", description: "в магазине", allDay: allDay, zone: zone)
                    // Armed as the service does: the next occurrence and its local text.
                    try ReminderScheduler.arm(db, &row, clock: Self.moscow, after: Date(timeIntervalSince1970: 1_800_000_000))
                    row.doneThrough = LocalText.dateTime("2027-03-28T02:30")
                    try row.save(db)
                    let loaded = try #require(try ReminderRow.find(db, id: row.id, user: row.userID))
                    var fromRow: [UInt8] = []
                    try ReminderView(db, loaded, clock: Self.moscow).writeJSON(to: &fromRow)
                    let tree = try JSONParser.parse(Data(fromRow))
                    #expect(tree == Self.expected(loaded, nextLocal: loaded.nextLocal))
                    // Keys sorted: the bytes are what the tree serializes to.
                    #expect(tree.serialized == Data(fromRow))
                    // 2027-03-28 02:30 does not exist in Berlin (the clocks go forward): the
                    // next occurrence shows the wall clock it fires at.
                    if zone != nil && !allDay { #expect(loaded.nextLocal == "2027-03-28T03:30") }
                    if allDay { #expect(tree["start"] == "2027-03-28" && tree["exdates"] == ["2027-03-29"] && tree["doneThrough"] == "2027-03-28") }
                }
            }
        } }
    }

    @Test("rows stored before next_local was kept show their next occurrence on the reminder's zone, or the user's")
    func nextLocalFallback() throws {
        try Self.withServiceDatabase { pool in try pool.write { db in
            var row = Self.row("r-old", title: "Старая", zone: nil)
            try ReminderScheduler.arm(db, &row, clock: Self.moscow, after: Date(timeIntervalSince1970: 1_800_000_000))
            let armed = try #require(row.nextLocal)
            row.nextLocal = nil
            try row.save(db)
            let views = try ReminderView.fetch(db, sql: "SELECT \(ReminderRow.columns) FROM reminder", arguments: [], clock: Self.moscow)
            #expect(try views.first.map { try JSONParser.parse(Data($0.json)) }?["next"]?["local"]?.stringValue == armed)
        } }
    }

    @Test("the index keeps each user's own words: a search reads only its user's terms, by prefix, folded, Ё as Е, and nothing typed is FTS syntax")
    func searchTerms() throws {
        #expect(SearchTerms.key(user: "user-ann").count == SearchTerms.keyLength)
        #expect(SearchTerms.key(user: "user-ann") == SearchTerms.key(user: "user-ann"))
        #expect(SearchTerms.key(user: "user-ann") != SearchTerms.key(user: "user-bob"))
        #expect(SearchTerms.words("Купить ЁЛКУ, 2 шт.; e-mail café") == ["купить", "елку", "2", "шт", "e", "mail", "café"])
        #expect(SearchTerms.match("  ,; ", user: "u") == nil)
        #expect(SearchTerms.match("\" OR x NEAR(", user: "u") == "\"\(SearchTerms.key(user: "u"))or\"* AND \"\(SearchTerms.key(user: "u"))x\"* AND \"\(SearchTerms.key(user: "u"))near\"*")

        let queue = try Self.database()
        try queue.write { db in
            try Self.row("a1", user: "user-ann", title: "Купить ёлку", description: "на рынке").save(db)
            try Self.row("a2", user: "user-ann", title: "Позвонить маме").save(db)
            try Self.row("b1", user: "user-bob", title: "Купить елку и молоко").save(db)
            func found(_ query: String, as user: String) throws -> [String] {
                // The index alone, without the join on the user id the service also makes.
                try String.fetchAll(
                    db, sql: "SELECT reminder.id FROM reminder_fts JOIN reminder ON reminder.rowid = reminder_fts.rowid WHERE reminder_fts MATCH ? ORDER BY reminder.id",
                    arguments: [try #require(SearchTerms.match(query, user: user))])
            }
            #expect(try found("КУП", as: "user-ann") == ["a1"])
            #expect(try found("елк", as: "user-ann") == ["a1"])
            #expect(try found("купить рын", as: "user-ann") == ["a1"])
            #expect(try found("молоко", as: "user-ann") == [])
            #expect(try found("молоко", as: "user-bob") == ["b1"])
            #expect(try found("мам", as: "user-bob") == [])
            // An edit re-indexes; a delete removes.
            var call = try #require(try ReminderRow.find(db, id: "a2", user: "user-ann"))
            call.content.title = "Написать папе"
            try call.save(db)
            #expect(try found("мам", as: "user-ann") == [])
            #expect(try found("пап", as: "user-ann") == ["a2"])
            try db.execute(sql: "DELETE FROM reminder WHERE id = 'a1'")
            #expect(try found("куп", as: "user-ann") == [])
            try db.execute(sql: "INSERT INTO reminder_fts (reminder_fts) VALUES ('integrity-check')")
        }
    }

    @Test("search: every word in the title first, then the other matches, newest first within each; pages cut after the title matches")
    func searchOrder() throws {
        try Self.withServiceDatabase { pool in try pool.write { db in
            try Self.row("d1", title: "Отчёт", description: "купить бумагу").save(db)
            try Self.row("t1", title: "Купить хлеб").save(db)
            try Self.row("d2", title: "Бумага", description: "Купить").save(db)
            try Self.row("t2", title: "купить молоко").save(db)
            try Self.row("other", user: "user-bob", title: "купить всё").save(db)
            func ids(_ query: String, limit: Int = 50, status: ReminderStatus? = nil) throws -> [String] {
                try ReminderQueries.search(db, query: query, user: "user-ann", status: status, limit: limit, clock: Self.moscow)
                    .map { try JSONParser.parse(Data($0.json))["id"]?.stringValue ?? "" }
            }
            #expect(try ids("куп") == ["t2", "t1", "d2", "d1"])
            #expect(try ids("куп", limit: 2) == ["t2", "t1"])
            #expect(try ids("куп", limit: 3) == ["t2", "t1", "d2"])
            #expect(try ids("бумаг купить") == ["d2", "d1"])
            #expect(try ids("куп", status: .archived) == [])
            #expect(try ids(" ;; ") == [])
        } }
    }

    @Test("words are unicode61's: marks alone make no word (no query matches everything), spacing marks separate, nothing is indexed without its owner's key")
    func marksAreNotWords() throws {
        #expect(SearchTerms.words("❤️ ☀️ \u{0301} \u{20DD}") == [])
        #expect(SearchTerms.match("❤️", user: "user-ann") == nil)
        #expect(SearchTerms.words("xः1sedhgebhqmilk") == ["x", "1sedhgebhqmilk"])
        let indexed = SearchTerms.indexed("xः1sedhgebhqmilk нора́", user: "user-ann")
        let key = SearchTerms.key(user: "user-ann")
        #expect(indexed == "\(key)x \(key)1sedhgebhqmilk \(key)нора")
        try Self.withServiceDatabase { pool in try pool.write { db in
            try Self.row("a", title: "xः1sedhgebhqmilk ❤️ café").save(db)
            // Every term in the index starts with its owner's key.
            try db.execute(sql: "CREATE VIRTUAL TABLE terms USING fts5vocab(reminder_fts, row)")
            let terms = try String.fetchAll(db, sql: "SELECT term FROM terms")
            #expect(!terms.isEmpty && terms.allSatisfy { $0.hasPrefix(key) })
        } }
    }

    @Test("purging a reminder removes its owner's alerts only, though another user's reminder has the same id")
    func purgeKeepsOtherUsersAlerts() throws {
        try Self.withServiceDatabase { pool in try pool.write { db in
            try Self.row("same", user: "user-ann", title: "A").save(db)
            try Self.row("same", user: "user-bob", title: "B").save(db)
            for user in ["user-ann", "user-bob"] {
                try db.execute(
                    sql: "INSERT INTO fired_alert (id, reminder_id, user_id, occurrence_local, occurrence_ms, fired_ms) VALUES (?, 'same', ?, '2027-01-01T09:00', 0, 0)",
                    arguments: ["alr-\(user)", user])
            }
            let ann = try #require(try ReminderRow.find(db, id: "same", user: "user-ann"))
            try ReminderStore.purge(db, ann, now: Date(), store: nil)
            #expect(try String.fetchAll(db, sql: "SELECT id FROM fired_alert") == ["alr-user-bob"])
            #expect(try ReminderRow.find(db, id: "same", user: "user-bob") != nil)
        } }
    }

    @Test("the migration to per-user terms indexes the reminders stored before it")
    func migrationIndexesOldRows() throws {
        let queue = try Self.database(upTo: "reminders-1")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO reminder (id, user_id, title, title_fold, description, category, importance, notification_kind, start_local, status,
                    next_sort, alert_cursor_ms, change_version, created_at, updated_at)
                VALUES ('old', 'user-ann', 'Оплатить интернет', 'оплатить интернет', 'до пятницы', 'personal', 'normal', 'sound', '2027-01-01T09:00',
                    'active', 0, 0, 1, '2026-11-23T00:00:00Z', '2026-11-23T00:00:00Z')
                """)
        }
        var migrator = DatabaseMigrator()
        RemindersMigrations.register(in: &migrator)
        try migrator.migrate(queue)
        try queue.write { db in try db.execute(sql: "INSERT INTO reminder_fts (reminder_fts) VALUES ('integrity-check')") }
        try queue.read { db in
            let match = try #require(SearchTerms.match("пятн", user: "user-ann"))
            #expect(try String.fetchAll(db, sql: "SELECT reminder.id FROM reminder_fts JOIN reminder ON reminder.rowid = reminder_fts.rowid WHERE reminder_fts MATCH ?", arguments: [match]) == ["old"])
            let row = try #require(try ReminderRow.find(db, id: "old", user: "user-ann"))
            #expect(row.content.title == "Оплатить интернет" && row.nextLocal == nil)
        }
    }
}

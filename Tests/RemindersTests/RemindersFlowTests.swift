import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// The reminders service in process: its real socket and SQLite file, called as users
/// with test tokens; every reply checked against its operation's schema. (The journey
/// through the gateway with real auth: ``RemindersGatewayTests``.)
@Suite("Reminders in process")
struct RemindersFlowTests {
    static let ann = TestCaller.user("user-ann", roles: [])
    static let bob = TestCaller.user("user-bob", roles: [])

    static func with<T>(_ body: (InProcessService) async throws -> T) async throws -> T {
        try await InProcessService.with(RemindersService.definition, body)
    }

    @discardableResult
    static func ok(
        _ service: InProcessService, _ op: String, _ data: JSONValue = [:], as caller: TestCaller = ann, idem: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let reply = try await service.call(op, data: data, as: caller, idem: idem)
        #expect(reply.ok, "\(op): \(reply.error?.code.rawValue ?? "") \(reply.error?.message ?? "") \(reply.error?.fields ?? [:])", sourceLocation: sourceLocation)
        return reply.data ?? .null
    }

    static func failure(
        _ service: InProcessService, _ op: String, _ data: JSONValue, as caller: TestCaller = ann, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (ErrorCode?, [String: String]) {
        let reply = try await service.call(op, data: data, as: caller)
        #expect(!reply.ok, "\(op) should fail", sourceLocation: sourceLocation)
        return (reply.error?.code, reply.error?.fields ?? [:])
    }

    static func count(_ service: InProcessService, _ sql: String, _ arguments: StatementArguments = []) async throws -> Int {
        try await service.runtime.pool.read { db in try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0 }
    }

    /// The first whole minute at least `margin` seconds ahead: reminders keep minutes, so
    /// the soonest one can fire is there. The margin covers what happens before the
    /// reminder is created (an alert already past at its creation is not fired, and on a
    /// loaded machine starting a service takes seconds).
    static func nextMinute(margin: TimeInterval = 2) -> Date {
        Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + margin) / 60).rounded(.up) * 60)
    }

    @Test("create with the app's id, replay, conflict, read, update, other users' ids, bad input")
    func lifecycle() async throws {
        try await Self.with { service in
            let data: JSONValue = [
                "id": "A1B2C3D4-reminder-1", "title": "Позвонить маме", "description": "В воскресенье", "start": "2027-03-10T09:00", "zone": "Europe/Moscow",
                "rrule": "FREQ=WEEKLY;BYDAY=SU", "alerts": [15, 0], "category": "personal", "importance": "high", "special": true,
                "notification": ["kind": "both", "sound": "bell"],
            ]
            let made = try await Self.ok(service, "reminders.create", data)
            #expect(made["id"] == "A1B2C3D4-reminder-1" && made["alerts"] == [0, 15] && made["rrule"] == "FREQ=WEEKLY;BYDAY=SU" && made["floating"] == false)
            #expect(made["next"]?["local"]?.stringValue?.hasSuffix("T09:00") == true)
            // The same create again (a lost reply, an offline queue) is the same reminder.
            let again = try await Self.ok(service, "reminders.create", data)
            #expect(again["id"] == made["id"] && again["version"] == 1)
            // Lead times are a set: another order, or one twice, is the same create.
            var reordered = data.objectValue ?? [:]
            reordered["alerts"] = [0, 15, 0]
            #expect(try await Self.ok(service, "reminders.create", .object(reordered))["version"] == 1)
            // A digest stored before that (of the alerts as sent) still knows its create.
            let legacy: JSONValue = ["id": "legacy-digest-1", "title": "T", "start": "2027-03-10T09:00", "alerts": [15, 0, 60]]
            try await Self.ok(service, "reminders.create", legacy)
            try await service.runtime.pool.write { db in
                try db.execute(
                    sql: "UPDATE reminder SET create_hash = ? WHERE id = 'legacy-digest-1'",
                    arguments: [Digest.sha256Hex(legacy.serialized)])
            }
            #expect(try await Self.ok(service, "reminders.create", legacy)["id"] == "legacy-digest-1")
            try await Self.ok(service, "reminders.purge", ["id": "legacy-digest-1"])
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder") == 1)
            // The same id with other content: conflict, never a second row.
            var other = data.objectValue ?? [:]
            other["title"] = "Something else"
            #expect(try await Self.failure(service, "reminders.create", .object(other)).0 == .conflict)
            // Ids are the user's own: another user's app may make the same one (it learns nothing, takes nothing).
            let bobs = try await Self.ok(service, "reminders.create", .object(other), as: Self.bob)
            #expect(bobs["title"] == "Something else")
            #expect(try await Self.ok(service, "reminders.get", ["id": "A1B2C3D4-reminder-1"])["title"] == "Позвонить маме")
            try await Self.ok(service, "reminders.purge", ["id": "A1B2C3D4-reminder-1"], as: Self.bob)
            // Another user's reminder does not exist for them.
            let server = try await Self.ok(service, "reminders.create", ["title": "Mine", "start": "2027-03-10T09:00"])
            for op in ["reminders.get", "reminders.update", "reminders.delete", "reminders.done", "reminders.purge"] {
                #expect(try await Self.failure(service, op, ["id": try #require(server["id"])], as: Self.bob).0 == .notFound, "\(op)")
            }
            let updated = try await Self.ok(service, "reminders.update", ["id": "A1B2C3D4-reminder-1", "title": "Позвонить маме и папе", "description": .null])
            #expect(updated["title"] == "Позвонить маме и папе" && updated["description"] == .null && updated["version"] == 2 && updated["special"] == true)
            // The first create sent again after another device's edit (its reply lost
            // offline; sent with its device's zone and clock of now): still the same
            // reminder, as it is now, never id_taken.
            var resent = data.objectValue ?? [:]
            resent["deviceZone"] = "Asia/Tokyo"
            resent["editedAt"] = "2026-11-01T08:00:00Z"
            let replayed = try await Self.ok(service, "reminders.create", .object(resent))
            #expect(replayed["title"] == "Позвонить маме и папе" && replayed["version"] == 2)
            // Other content under the id is still a conflict after the edit.
            #expect(try await Self.failure(service, "reminders.create", .object(other)).0 == .conflict)

            // Bad input: each a validation_failed naming the field, nothing written.
            let bad: [(JSONValue, String)] = [
                (["title": "x", "start": "2027-02-30T09:00"], "start"),
                (["title": "x", "start": "2027-03-10 09:00"], "start"),
                (["title": "x", "start": "2027-03-10T09:00", "zone": "Mars/Olympus"], "zone"),
                (["title": "x", "start": "2027-03-10T09:00", "rrule": "FREQ=HOURLY"], "rrule"),
                (["title": "x", "start": "2027-03-10T09:00", "rrule": "FREQ=MONTHLY;BYMONTHDAY=32"], "rrule"),
                (["title": "x", "start": "2027-03-10T09:00", "rrule": "FREQ=DAILY;UNTIL=20270101T000000Z"], "rrule"),
                (["title": "x", "start": "2027-03-10T09:00", "alerts": [-5]], "alerts[0]"),
                (["title": "   ", "start": "2027-03-10T09:00"], "title"),
                (["title": "x", "start": "2027-03-10T09:00", "imageId": "nope"], "imageId"),
                (["title": "x", "start": "2027-03-10T09:00", "id": "short"], "id"),
            ]
            for (input, field) in bad {
                let (code, fields) = try await Self.failure(service, "reminders.create", input)
                #expect(code == .validationFailed && fields[field] != nil, "\(input): \(fields)")
            }
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder") == 2)
        }
    }

    @Test("offline edits of one reminder from two devices merge per field; the latest edit of a field wins")
    func offlineConflict() async throws {
        try await Self.with { service in
            try await Self.ok(service, "reminders.create", ["id": "offline-reminder-1", "title": "Dentist", "start": "2027-04-01T10:00", "editedAt": "2026-11-01T08:00:00Z"])
            // Phone, offline at 10:00, renames it and moves it; tablet, offline at 09:00 (earlier), renames it and adds a location.
            try await Self.ok(service, "reminders.update", ["id": "offline-reminder-1", "title": "Dentist (phone)", "start": "2027-04-02T11:00", "editedAt": "2026-11-02T10:00:00Z"])
            let merged = try await Self.ok(service, "reminders.update", ["id": "offline-reminder-1", "title": "Dentist (tablet)", "location": "Clinic", "editedAt": "2026-11-02T09:00:00Z"])
            #expect(merged["title"] == "Dentist (phone)" && merged["location"] == "Clinic" && merged["start"] == "2027-04-02T11:00")
            // A later delete wins over an earlier edit; the edit arriving after it does not bring it back.
            try await Self.ok(service, "reminders.delete", ["id": "offline-reminder-1", "editedAt": "2026-11-02T12:00:00Z"])
            let after = try await Self.ok(service, "reminders.restore", ["id": "offline-reminder-1", "editedAt": "2026-11-02T11:00:00Z"])
            #expect(after["status"] == "archived")
            // An edit claiming the future counts as made now.
            let future = try await Self.ok(service, "reminders.update", ["id": "offline-reminder-1", "notes": "n", "editedAt": "2099-01-01T00:00:00Z"])
            #expect(future["notes"] == "n")
        }
    }

    @Test("changes: creates, updates, settings and purges reach other devices in order, with deletions; a purged reminder's create sent again stays purged")
    func changes() async throws {
        try await Self.with { service in
            try await Self.ok(service, "reminders.create", ["id": "sync-reminder-1", "title": "One", "start": "2027-01-01T10:00"])
            let first = try await Self.ok(service, "reminders.changes", ["since": "0"])
            #expect(first["items"]?.arrayValue?.count == 1)
            let cursor = try #require(first["next"]?.stringValue)
            try await Self.ok(service, "reminders.create", ["id": "sync-reminder-2", "title": "Two", "start": "2027-01-02T10:00"])
            try await Self.ok(service, "reminders.settings.set", ["theme": "dark"])
            try await Self.ok(service, "reminders.purge", ["id": "sync-reminder-1"])
            try await Self.ok(service, "reminders.create", ["id": "bob-reminder-1", "title": "Bob's", "start": "2027-01-02T10:00"], as: Self.bob)
            let page = try await Self.ok(service, "reminders.changes", ["since": .string(cursor)])
            let items = page["items"]?.arrayValue ?? []
            let seen = items.map { "\($0["entity"]?.stringValue ?? "")/\($0["id"]?.stringValue ?? "")/\($0["deleted"] == true)" }
            #expect(seen == ["reminder/sync-reminder-2/false", "settings/me/false", "reminder/sync-reminder-1/true"])
            #expect(items[1]["data"]?["theme"] == "dark")
            // The purged one's create sent again from an offline queue does not bring it back;
            // another user's app may still use the id.
            let replayed = try await service.call("reminders.create", data: ["id": "sync-reminder-1", "title": "One", "start": "2027-01-01T10:00"], as: Self.ann)
            #expect(replayed.error?.code == .conflict && replayed.error?.details["reason"] == "purged")
            try await Self.ok(service, "reminders.create", ["id": "sync-reminder-1", "title": "Bob's one", "start": "2027-01-01T10:00"], as: Self.bob)
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder WHERE id = 'sync-reminder-1'") == 1)
        }
    }

    @Test("list by next occurrence, filters and pages; search folds Cyrillic case and matches prefixes; history; upcoming; suggestions")
    func listsAndSearch() async throws {
        try await Self.with { service in
            let titles = ["Купить молоко", "купить хлеб", "Позвонить врачу", "Оплатить интернет", "Купить подарок маме"]
            for (index, title) in titles.enumerated() {
                try await Self.ok(
                    service, "reminders.create",
                    ["title": .string(title), "start": .string("2030-0\(5 - index)-01T10:00"), "zone": "UTC", "category": index == 2 ? "health" : "personal"])
            }
            let list = try await Self.ok(service, "reminders.list", ["limit": 2])
            #expect(list["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } == ["Купить подарок маме", "Оплатить интернет"])
            let second = try await Self.ok(service, "reminders.list", ["limit": 2, "cursor": try #require(list["next"])])
            #expect(second["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } == ["Позвонить врачу", "купить хлеб"])
            let descending = try await Self.ok(service, "reminders.list", ["order": "desc", "limit": 1])
            #expect(descending["items"]?[0]?["title"] == "Купить молоко")
            let health = try await Self.ok(service, "reminders.list", ["category": "health"])
            #expect(health["items"]?.arrayValue?.count == 1)
            let ranged = try await Self.ok(service, "reminders.list", ["from": "2030-02-01", "to": "2030-03-31"])
            #expect(ranged["items"]?.arrayValue?.count == 2)

            let search = try await Self.ok(service, "reminders.search", ["query": "КУП"])
            #expect(Set(search["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []) == ["Купить молоко", "купить хлеб", "Купить подарок маме"])
            #expect(search["next"] == .null)
            try await Self.ok(service, "reminders.create", ["title": "Ёжик в тумане", "start": "2031-01-01T10:00"])
            #expect(try await Self.ok(service, "reminders.search", ["query": "ежик"])["items"]?.arrayValue?.count == 1)
            let two = try await Self.ok(service, "reminders.search", ["query": "купить мам"])
            #expect(two["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } == ["Купить подарок маме"])
            // Search syntax is text, not FTS operators; another user's reminders are not found.
            #expect(try await Self.ok(service, "reminders.search", ["query": "\" OR owner:* NEAR("])["items"] == [])
            #expect(try await Self.ok(service, "reminders.search", ["query": "купить"], as: Self.bob)["items"] == [])

            let suggestions = try await Self.ok(service, "reminders.suggest", ["prefix": "куп"])
            #expect(Set(suggestions["titles"]?.arrayValue?.compactMap(\.stringValue) ?? []) == ["Купить молоко", "купить хлеб", "Купить подарок маме"])

            let upcoming = try await Self.ok(service, "reminders.upcoming", ["limit": 2])
            #expect(upcoming["items"]?.arrayValue?.count == 2)

            // Deleting archives; the history lists it, searchable; purge removes it.
            let milk = try #require(search["items"]?.arrayValue?.first { $0["title"] == "Купить молоко" }?["id"])
            let bread = try #require(search["items"]?.arrayValue?.first { $0["title"] == "купить хлеб" }?["id"])
            try await Self.ok(service, "reminders.delete", ["id": milk])
            try await Self.ok(service, "reminders.done", ["id": bread])
            let history = try await Self.ok(service, "reminders.history")
            #expect(history["items"]?.arrayValue?.compactMap { $0["status"]?.stringValue } == ["archived", "completed"])
            let found = try await Self.ok(service, "reminders.history", ["query": "молоко"])
            #expect(found["items"]?.arrayValue?.count == 1)
            // A searched history pages in the order asked: the last closed first with desc.
            let newest = try await Self.ok(service, "reminders.history", ["query": "купить", "order": "desc", "limit": 1])
            #expect(newest["items"]?.arrayValue?.first?["id"] == bread)
            let older = try await Self.ok(
                service, "reminders.history", ["query": "купить", "order": "desc", "limit": 1, "cursor": try #require(newest["next"])])
            #expect(older["items"]?.arrayValue?.first?["id"] == milk && older["next"] == .null)
            #expect(try await Self.ok(service, "reminders.purge", ["archived": true])["purged"] == 1)
            #expect(try await Self.ok(service, "reminders.list", ["status": "archived"])["items"] == [])
            let milkTerms = try #require(SearchTerms.match("молоко", user: "user-ann"))
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder_fts WHERE reminder_fts MATCH ?", [milkTerms]) == 0)
            let breadTerms = try #require(SearchTerms.match("хлеб", user: "user-ann"))
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder_fts WHERE reminder_fts MATCH ?", [breadTerms]) == 1)
            // A date range lists only reminders with an occurrence in it, none with nothing ahead.
            try await Self.ok(service, "reminders.create", ["id": "past-one-1", "title": "Прошлое", "start": "2020-01-01T09:00", "zone": "UTC"])
            let ahead = try await Self.ok(service, "reminders.list", ["from": "2027-01-01"])
            let aheadIDs = ahead["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(!aheadIDs.contains("past-one-1"))
            #expect(try await Self.ok(service, "reminders.list", ["from": "9999-12-31"])["items"] == [])
        }
    }

    @Test("the scheduler fires a due reminder once as reminders.due; snooze brings it back; done stops a recurring one's occurrence")
    func firingSnoozeDone() async throws {
        try await Self.with { service in
            let soon = LocalText.format(ZoneClock.utc.local(Self.nextMinute(margin: 8)))
            let made = try await Self.ok(service, "reminders.create", ["title": "Stretch", "start": .string(soon), "zone": "UTC", "rrule": "FREQ=DAILY", "alerts": [0]])
            let id = try #require(made["id"]?.stringValue)
            let published = {
                try await service.runtime.pool.read { db in
                    try String.fetchAll(db, sql: "SELECT data FROM platform_event WHERE type = 'reminders.due'").map { try JSONParser.parse(Data($0.utf8)) }
                }
            }
            // Lists asked for again and again before it fires (each read thread remembers them).
            for _ in 0..<8 { #expect(try await Self.ok(service, "reminders.list")["items"]?[0]?["next"]?["local"] == .string(soon)) }
            #expect(try await Poll.until(timeout: .seconds(80), interval: .milliseconds(100)) { try await !published().isEmpty })
            // Firing moved the next occurrence on: every list says so, none from memory.
            for _ in 0..<8 {
                let next = try await Self.ok(service, "reminders.list")["items"]?[0]?["next"]?["local"]?.stringValue
                #expect(next != nil && next != soon)
            }
            let event = try #require(try await published().first)
            #expect(event["reminderId"] == .string(id) && event["kind"] == "alert" && event["minutesBefore"] == 0 && event["late"] == false)
            let alert = try #require(event["alertId"])
            // Another user cannot snooze it.
            #expect(try await Self.failure(service, "reminders.snooze", ["alert": alert, "minutes": 5], as: Self.bob).0 == .notFound)
            let snoozed = try await Self.ok(service, "reminders.snooze", ["alert": alert, "minutes": 5])
            #expect(snoozed["alertId"] == alert)
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM platform_timer WHERE kind = 'reminders.snooze'") == 1)
            // Done: this occurrence; the snooze for it does not come back.
            let done = try await Self.ok(service, "reminders.done", ["id": .string(id), "occurrence": .string(soon)])
            #expect(done["doneThrough"] == .string(soon) && done["status"] == "active")
            #expect(try await Self.failure(service, "reminders.done", ["id": .string(id), "occurrence": "2020-01-01T00:00"]).0 == .validationFailed)
        }
    }

    @Test("done names at most the next occurrence not done: a later one would mark those in between unseen")
    func doneInOrder() async throws {
        try await Self.with { service in
            // A daily reminder at 09:00 UTC from the day after tomorrow: nothing is due yet.
            let first = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 / 86_400).rounded(.down) + 2) * 86_400 + 9 * 3_600)
            let day = { (offset: Int) in LocalText.format(ZoneClock.utc.local(first.addingTimeInterval(Double(offset) * 86_400))) }
            let made = try await Self.ok(service, "reminders.create", ["title": "Vitamins", "start": .string(day(0)), "zone": "UTC", "rrule": "FREQ=DAILY"])
            let id = try #require(made["id"])
            let (code, fields) = try await Self.failure(service, "reminders.done", ["id": id, "occurrence": .string(day(30))])
            #expect(code == .validationFailed && fields["occurrence"] != nil)
            #expect(try await Self.failure(service, "reminders.done", ["id": id, "occurrence": .string(day(1))]).0 == .validationFailed)
            // In order, one at a time: each is the next not done when it is named.
            let early = try await Self.ok(service, "reminders.done", ["id": id, "occurrence": .string(day(0))])
            #expect(early["doneThrough"] == .string(day(0)))
            // Marked done ahead of its time, it is no longer the next: the list and the widget show the one after.
            #expect(early["next"]?["local"] == .string(day(1)), "\(early["next"] ?? .null)")
            #expect(try await Self.ok(service, "reminders.done", ["id": id, "occurrence": .string(day(1))])["doneThrough"] == .string(day(1)))
            #expect(try await Self.failure(service, "reminders.done", ["id": id, "occurrence": .string(day(3))]).0 == .validationFailed)
            // Without `occurrence`, the next not done.
            #expect(try await Self.ok(service, "reminders.done", ["id": id])["doneThrough"] == .string(day(2)))
        }
    }

    @Test("alerts are published exactly once across a restart; those due while it was down fire at start-up, marked late")
    func restart() async throws {
        let directory = try TemporaryDirectory(prefix: "reminders-restart")
        defer { directory.remove() }
        let configuration = PlatformConfiguration.forTests(directory: directory)
        // Alerts a minute before and at a start about two minutes ahead: the first alert
        // is still ahead once the service has started and the reminder is made.
        let due = Self.nextMinute(margin: 30).addingTimeInterval(60)
        let start = LocalText.format(ZoneClock.utc.local(due))
        let first = try await InProcessService(RemindersService.definition, configuration: configuration)
        do {
            try await Self.ok(first, "reminders.create", ["title": "Pills", "start": .string(start), "zone": "UTC", "alerts": [0, 1]])
        } catch {
            await first.stop()
            throw error
        }
        await first.stop()
        // Down past both alerts.
        try await Task.sleep(for: .seconds(max(0, due.timeIntervalSinceNow + 1)))
        try await InProcessService.with(RemindersService.definition, configuration: configuration) { second in
            let events = {
                try await second.runtime.pool.read { db in
                    try String.fetchAll(db, sql: "SELECT data FROM platform_event WHERE type = 'reminders.due'").map { try JSONParser.parse(Data($0.utf8)) }
                }
            }
            #expect(try await Poll.until(timeout: .seconds(10)) { try await events().count == 2 })
            try await Task.sleep(for: .milliseconds(500))
            let all = try await events()
            #expect(all.count == 2 && all.allSatisfy { $0["late"] == true })
            #expect(all.compactMap { $0["minutesBefore"]?.integerValue } == [1, 0])
        }
    }

    @Test("preview: wall-clock time across DST, gaps forward, shape of the contract; bad rules refused")
    func preview() async throws {
        try await Self.with { service in
            let preview = try await Self.ok(
                service, "reminders.preview", ["start": "2027-03-26T02:30", "zone": "Europe/Berlin", "rrule": "FREQ=DAILY;COUNT=4", "limit": 10])
            let occurrences = preview["occurrences"]?.arrayValue ?? []
            #expect(occurrences.compactMap { $0["local"]?.stringValue } == ["2027-03-26T02:30", "2027-03-27T02:30", "2027-03-28T03:30", "2027-03-29T02:30"])
            #expect(occurrences.compactMap { $0["utc"]?.stringValue.flatMap(Instant.parse) } == [
                "2027-03-26T01:30:00Z", "2027-03-27T01:30:00Z", "2027-03-28T01:30:00Z", "2027-03-29T00:30:00Z",
            ].compactMap(Instant.parse))
            #expect(occurrences.allSatisfy { $0["utc"]?.stringValue?.hasSuffix("Z") == true })
            let lastFriday = try await Self.ok(service, "reminders.preview", ["start": "2027-01-29T18:00", "zone": "UTC", "rrule": "FREQ=MONTHLY;BYDAY=-1FR", "limit": 3])
            #expect(lastFriday["occurrences"]?.arrayValue?.compactMap { $0["local"]?.stringValue } == ["2027-01-29T18:00", "2027-02-26T18:00", "2027-03-26T18:00"])
            let skip = try await Self.ok(service, "reminders.preview", ["start": "2027-01-31T09:00", "zone": "UTC", "rrule": "FREQ=MONTHLY;SKIP=BACKWARD", "limit": 3])
            #expect(skip["occurrences"]?.arrayValue?.compactMap { $0["local"]?.stringValue } == ["2027-01-31T09:00", "2027-02-28T09:00", "2027-03-31T09:00"])
            #expect(try await Self.failure(service, "reminders.preview", ["start": "2027-01-31T09:00", "zone": "UTC", "rrule": "FREQ=SOMETIMES"]).1["rrule"] != nil)
            #expect(try await Self.failure(service, "reminders.preview", ["start": "2027-01-31T09:00", "zone": "Nowhere/City"]).0 == .validationFailed)
            // A start no instant on the wire can name is the start's fault, not the rule's.
            #expect(try await Self.failure(service, "reminders.preview", ["start": "0000-01-05T09:00", "zone": "UTC"]).1.keys.sorted() == ["start"])
            #expect(try await Self.failure(service, "reminders.preview", ["start": "9999-12-31T23:59", "zone": "Etc/GMT+12"]).1.keys.sorted() == ["start"])
            #expect(try await Self.ok(service, "reminders.preview", ["start": "9999-12-31T09:00", "zone": "Etc/GMT+12"])["occurrences"]?[0]?["utc"] == "9999-12-31T21:00:00.000Z")
        }
    }

    @Test("beautiful dates: the spec's examples found; a subscription makes reminders for the coming matches, once")
    func beautifulDates() async throws {
        try await Self.with { service in
            let found = try await Self.ok(service, "reminders.beautiful.find", ["from": "2022-01-01", "to": "2025-12-31"], as: .anonymous)
            let dates = Dictionary((found["dates"]?.arrayValue ?? []).compactMap { item -> (String, [String])? in
                guard let date = item["date"]?.stringValue else { return nil }
                return (date, item["patterns"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            }, uniquingKeysWith: { first, _ in first })
            #expect(dates["2025-05-25"]?.contains("day_equals_year_suffix") == true)
            #expect(dates["2022-02-22"]?.contains("palindrome_ddmmyyyy") == true)
            #expect(dates["2023-11-11"]?.contains("day_equals_month") == true)
            #expect(dates["2022-02-02"]?.contains("day_equals_month") == true)
            let custom = try await Self.ok(service, "reminders.beautiful.find", ["from": "2025-01-01", "to": "2025-12-31", "custom": [["name": "mine", "pattern": "AA.??.2025"]]])
            #expect((custom["dates"]?.arrayValue ?? []).allSatisfy { $0["patterns"] == ["mine"] } && custom["dates"]?.arrayValue?.isEmpty == false)
            #expect(try await Self.failure(service, "reminders.beautiful.find", ["from": "2025-01-01", "to": "2025-12-31", "custom": [["name": "bad", "pattern": "AA.AA.AAA!"]]]).0 == .validationFailed)

            let subscription = try await Self.ok(service, "reminders.beautiful.subscribe", ["patterns": ["day_equals_month"], "personalDates": [["label": "our wedding", "date": "2000-06-15"]]])
            let made = try #require(subscription["made"]?.integerValue)
            #expect(made >= 12)
            let listed = try await Self.ok(service, "reminders.list", ["category": "beautiful_date", "limit": 200])
            #expect(listed["items"]?.arrayValue?.count ?? 0 >= 12 && listed["items"]?[0]?["allDay"] == true)
            // Topping up again makes nothing twice.
            let id = try #require(subscription["id"]?.stringValue)
            let before = try await Self.count(service, "SELECT COUNT(*) FROM reminder")
            try await service.runtime.pool.write { db in
                let params = try JSONDecoder().decode(SubscriptionOperations.Params.self, from: Data(try String.fetchOne(db, sql: "SELECT params FROM subscription")!.utf8))
                try SubscriptionOperations.topUp(db, id: id, user: "user-ann", kind: "beautiful", params: params, now: Date())
            }
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder") == before)
            // The same subscription again (a second tap, its lists in another order) makes nothing twice either.
            let again = try await service.call(
                "reminders.beautiful.subscribe", data: ["personalDates": [["label": "our wedding", "date": "2000-06-15"]], "patterns": ["day_equals_month"]], as: Self.ann)
            #expect(again.error?.code == .conflict && again.error?.details["reason"] == "already_subscribed" && again.error?.details["subscriptionId"] == .string(id))
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder") == before)
            #expect(try await Self.ok(service, "reminders.subscriptions.list")["items"]?.arrayValue?.count == 1)
            let removed = try await Self.ok(service, "reminders.subscriptions.delete", ["id": .string(id), "removeReminders": true])
            #expect(removed["removed"]?.integerValue == Int64(before))
        }
    }

    @Test("a subscription whose patterns match every day still makes the personal dates' milestones")
    func milestonesBeforeCrowdingPatterns() async throws {
        try await Self.with { service in
            let today = ZoneClock.utc.localDate(of: Date())
            // 10,000 days since it falls in ten days' time.
            let personal = today.adding(days: -9_990)
            let expected = Milestones.between(today, today.adding(days: SubscriptionOperations.horizonDays), since: personal)
            try #require(!expected.isEmpty)
            let subscription = try await Self.ok(
                service, "reminders.beautiful.subscribe",
                ["custom": [["name": "every", "pattern": "??.??.????"]], "personalDates": [["label": "wedding", "date": .string(personal.description)]]])
            #expect(subscription["made"]?.integerValue == Int64(SubscriptionOperations.maximumPerTopUp))
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder WHERE category = 'anniversary'") == expected.count)
        }
    }

    @Test("holidays: Easter is `easter` in RU (Orthodox) and DE (Western); a subscription makes holiday reminders")
    func holidays() async throws {
        try await Self.with { service in
            let ru = try await Self.ok(service, "reminders.holidays.list", ["country": "RU", "year": 2027], as: .anonymous)
            let de = try await Self.ok(service, "reminders.holidays.list", ["country": "DE", "year": 2027], as: .anonymous)
            func date(_ list: JSONValue, _ key: String) -> String? { list["holidays"]?.arrayValue?.first { $0["key"]?.stringValue == key }?["date"]?.stringValue }
            #expect(date(ru, "easter") == "2027-05-02" && date(de, "easter") == "2027-03-28")
            #expect(date(ru, "apple_feast_of_the_saviour") == "2027-08-19" && date(ru, "trinity") == "2027-06-20")
            #expect(try await Self.failure(service, "reminders.holidays.list", ["country": "XX", "year": 2027]).0 == .validationFailed)

            let subscription = try await Self.ok(service, "reminders.holidays.subscribe", ["country": "RU", "keys": ["easter", "apple_feast_of_the_saviour"]])
            #expect(subscription["made"]?.integerValue ?? 0 >= 2)
            let list = try await Self.ok(service, "reminders.list", ["category": "holiday"])
            let items = list["items"]?.arrayValue ?? []
            #expect(items.allSatisfy { $0["allDay"] == true && $0["source"] == "holiday" } && items.count >= 2)
            #expect(try await Self.failure(service, "reminders.holidays.subscribe", ["country": "RU", "keys": ["no_such_day"]]).0 == .validationFailed)
            // One subscription per country: another one for RU would make its reminders twice.
            let made = items.count
            let again = try await service.call("reminders.holidays.subscribe", data: ["country": "RU"], as: Self.ann)
            #expect(again.error?.code == .conflict && again.error?.details["reason"] == "already_subscribed")
            #expect(again.error?.details["subscriptionId"] == subscription["id"])
            #expect(try await Self.ok(service, "reminders.list", ["category": "holiday"])["items"]?.arrayValue?.count == made)
            // Another country is another subscription.
            #expect(try await Self.ok(service, "reminders.holidays.subscribe", ["country": "DE", "keys": ["easter"]])["made"]?.integerValue ?? 0 >= 1)
        }
    }

    @Test("lists, searches and the history answered again from memory follow each change of the user's: an edit, the zone, done, delete; another user's lists stay theirs")
    func rememberedReadsFollowChanges() async throws {
        try await Self.with { service in
            // Eight of each call: every read thread answers (and remembers) some of them.
            func each(_ op: String, _ data: JSONValue = [:], as caller: TestCaller = Self.ann, where check: (JSONValue) -> Bool, _ location: SourceLocation = #_sourceLocation) async throws {
                for _ in 0..<8 {
                    let reply = try await Self.ok(service, op, data, as: caller, sourceLocation: location)
                    #expect(check(reply), "\(op) \(data)", sourceLocation: location)
                }
            }
            let titles = { (page: JSONValue) in page["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? [] }
            let utc = { (page: JSONValue) in page["items"]?[0]?["next"]?["utc"]?.stringValue.flatMap(Instant.parse) }
            try await Self.ok(service, "reminders.settings.set", ["timeZone": "Asia/Tokyo"])
            let made = try await Self.ok(service, "reminders.create", ["title": "Water plants", "start": "2030-06-01T08:00"])
            let id = try #require(made["id"])
            try await Self.ok(service, "reminders.create", ["title": "Water plants too", "start": "2030-06-02T08:00"], as: Self.bob)
            try await each("reminders.list", where: { titles($0) == ["Water plants"] && utc($0) == Instant.parse("2030-05-31T23:00:00Z") })
            try await each("reminders.search", ["query": "water"], where: { titles($0) == ["Water plants"] })
            try await each("reminders.history", where: { titles($0) == [] })
            try await each("reminders.list", as: Self.bob, where: { titles($0) == ["Water plants too"] })

            try await Self.ok(service, "reminders.update", ["id": id, "title": "Feed the cat"])
            try await each("reminders.list", where: { titles($0) == ["Feed the cat"] })
            try await each("reminders.search", ["query": "water"], where: { titles($0) == [] })
            try await each("reminders.search", ["query": "cat"], where: { titles($0) == ["Feed the cat"] })
            try await each("reminders.list", as: Self.bob, where: { titles($0) == ["Water plants too"] })

            // The zone the device reports moves a floating reminder's instant.
            try await Self.ok(service, "reminders.settings.set", ["timeZone": "Europe/Berlin"])
            try await each("reminders.list", where: { utc($0) == Instant.parse("2030-06-01T06:00:00Z") })

            try await Self.ok(service, "reminders.done", ["id": id])
            try await each("reminders.list", where: { titles($0) == [] })
            try await each("reminders.history", where: { titles($0) == ["Feed the cat"] && $0["items"]?[0]?["status"] == "completed" })
            try await each("reminders.search", ["query": "cat", "status": "completed"], where: { titles($0) == ["Feed the cat"] })
            try await Self.ok(service, "reminders.delete", ["id": id])
            try await each("reminders.history", where: { $0["items"]?[0]?["status"] == "archived" })
            try await each("reminders.list", as: Self.bob, where: { titles($0) == ["Water plants too"] })
        }
    }

    @Test("a search typed with a combining mark and the same search precomposed are different requests, each answered as if asked first")
    func rememberedSearchesByTheirBytes() async throws {
        try await Self.with { service in
            try await Self.ok(service, "reminders.create", ["title": "йогурт", "start": "2027-03-10T09:00", "zone": "UTC"])
            let titles = { (page: JSONValue) in page["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? [] }
            let precomposed = "\u{0439}ог", decomposed = "\u{0438}\u{0306}ог"
            // What each gives asked alone, with nothing remembered of the other (its own limit).
            let alone = (
                titles(try await Self.ok(service, "reminders.search", ["query": .string(precomposed), "limit": 49])),
                titles(try await Self.ok(service, "reminders.search", ["query": .string(decomposed), "limit": 48])))
            #expect(alone.0 == ["йогурт"])
            for _ in 0..<8 { #expect(titles(try await Self.ok(service, "reminders.search", ["query": .string(decomposed)])) == alone.1) }
            for _ in 0..<8 { #expect(titles(try await Self.ok(service, "reminders.search", ["query": .string(precomposed)])) == alone.0) }
        }
    }

    @Test("lists racing creates: every list answered after the last create's reply has them all, on every read thread")
    func rememberedReadsRacingWrites() async throws {
        try await Self.with { service in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<20 {
                    group.addTask {
                        try await Self.ok(service, "reminders.create", ["title": .string("Race \(number)"), "start": .string("2030-01-\(10 + number)T09:00"), "zone": "UTC"])
                    }
                    group.addTask {
                        for _ in 0..<2 { _ = try await Self.ok(service, "reminders.list", ["limit": 50]) }
                    }
                }
                try await group.waitForAll()
            }
            for _ in 0..<12 {
                let titles = try await Self.ok(service, "reminders.list", ["limit": 50])["items"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
                #expect(titles == (0..<20).map { "Race \($0)" })
            }
        }
    }

    @Test("settings shared by devices: defaults, set, reset; floating reminders follow the reported zone")
    func settingsAndFloating() async throws {
        try await Self.with { service in
            let defaults = try await Self.ok(service, "reminders.settings.get")
            #expect(defaults["theme"] == "system" && defaults["defaultAlerts"] == [0] && defaults["allDayTime"] == "09:00")
            let set = try await Self.ok(service, "reminders.settings.set", ["language": "en", "theme": "dark", "defaultAlerts": [10], "timeZone": "Asia/Tokyo"])
            #expect(set["language"] == "en" && set["theme"] == "dark" && set["timeZone"] == "Asia/Tokyo")
            let floating = try await Self.ok(service, "reminders.create", ["title": "Water plants", "start": "2030-06-01T08:00"])
            #expect(floating["floating"] == true && floating["alerts"] == [10])
            #expect(floating["next"]?["utc"]?.stringValue.flatMap(Instant.parse) == Instant.parse("2030-05-31T23:00:00Z"))
            // Travelling: the device reports Berlin; the same 08:00 is now Berlin's.
            let moved = try await Self.ok(service, "reminders.get", ["id": try #require(floating["id"])])
            _ = moved
            try await Self.ok(service, "reminders.settings.set", ["timeZone": "Europe/Berlin"])
            let after = try await Self.ok(service, "reminders.get", ["id": try #require(floating["id"])])
            #expect(after["next"]?["utc"]?.stringValue.flatMap(Instant.parse) == Instant.parse("2030-06-01T06:00:00Z"))
            #expect(after["next"]?["local"] == "2030-06-01T08:00")
            let reset = try await Self.ok(service, "reminders.settings.reset")
            #expect(reset["theme"] == "system" && reset["timeZone"] == "Europe/Berlin" && reset["defaultAlerts"] == [0])
        }
    }

    @Test("training schedule: weekdays at a time in a zone become one recurring workout reminder, replaced and removed")
    func schedule() async throws {
        try await Self.with { service in
            let set = try await Self.ok(service, "reminders.schedule.set", ["days": ["mon", "wed", "fri"], "time": "07:30", "zone": "Europe/Moscow"])
            #expect(set["enabled"] == true && set["days"] == ["mon", "wed", "fri"] && set["reminder"]?["rrule"] == "FREQ=WEEKLY;BYDAY=MO,WE,FR")
            #expect(set["reminder"]?["category"] == "workout" && set["reminder"]?["next"]?["local"]?.stringValue?.hasSuffix("T07:30") == true)
            let daily = try await Self.ok(service, "reminders.schedule.set", ["days": "daily", "time": "06:00", "zone": "Europe/Moscow"])
            #expect(daily["daily"] == true && daily["reminder"]?["id"] == set["reminder"]?["id"])
            #expect(try await Self.failure(service, "reminders.schedule.set", ["days": ["someday"], "time": "06:00"]).0 == .validationFailed)
            let off = try await Self.ok(service, "reminders.schedule.set", ["enabled": false])
            let remaining = try await Self.count(service, "SELECT COUNT(*) FROM reminder")
            #expect(off["enabled"] == false && remaining == 0)
        }
    }

    @Test("congratulations for someone else carry the greeting; bad channels refused")
    func greetings() async throws {
        try await Self.with { service in
            let made = try await Self.ok(
                service, "reminders.greetings.schedule",
                ["recipientName": "Ольга", "message": "С днём рождения!", "date": "2027-05-20", "time": "10:00", "zone": "Europe/Moscow", "yearly": true, "channel": "email",
                 "address": "olga@example.com"])
            #expect(made["category"] == "congratulation" && made["greeting"]?["recipientName"] == "Ольга" && made["rrule"] == "FREQ=YEARLY;SKIP=BACKWARD")
            #expect(try await Self.failure(service, "reminders.greetings.schedule", ["recipientName": "A", "message": "m", "date": "2027-05-20", "channel": "sms", "address": "nope"]).0 == .validationFailed)
            // A one-off greeting for a day gone would never be sent; a yearly one comes round again.
            // Today, at a time already gone (00:00 UTC has always passed unless this runs at that very minute).
            let today = ZoneClock.utc.localDate(of: Date())
            let gone = try await Self.failure(
                service, "reminders.greetings.schedule", ["recipientName": "A", "message": "m", "date": .string(today.description), "time": "00:00", "zone": "UTC"])
            #expect(gone.0 == .validationFailed && gone.1["time"] != nil)
            let past = try await Self.failure(service, "reminders.greetings.schedule", ["recipientName": "A", "message": "m", "date": "2020-01-01"])
            #expect(past.0 == .validationFailed && past.1["date"] != nil)
            let yearly = try await Self.ok(service, "reminders.greetings.schedule", ["recipientName": "A", "message": "m", "date": "2020-01-01", "yearly": true])
            #expect(yearly["next"] != .null)
            // A greeting sent by SMS stays yearly with its alert at 0, by an update or an import alike.
            let sent = try await Self.ok(
                service, "reminders.greetings.schedule",
                ["recipientName": "B", "message": "m", "date": "2027-05-20", "yearly": true, "channel": "sms", "address": "+79990000001"])
            let sentID = try #require(sent["id"]?.stringValue)
            #expect(try await Self.failure(service, "reminders.update", ["id": .string(sentID), "rrule": "FREQ=DAILY"]).1["rrule"] != nil)
            #expect(try await Self.failure(service, "reminders.update", ["id": .string(sentID), "alerts": [1_440]]).1["alerts"] != nil)
            let daily = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:\(sentID)@reminders\r\nDTSTAMP:20270101T000000Z\r\n"
                + "DTSTART:20270520T090000\r\nRRULE:FREQ=DAILY\r\nSUMMARY:B\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            #expect(try await Self.failure(service, "reminders.ics.import", ["content": .string(daily)]).0 == .validationFailed)
            // Purging one reminder and the whole archive at once is not a request that can be read one way.
            let id = try #require(yearly["id"]?.stringValue)
            #expect(try await Self.failure(service, "reminders.purge", ["id": .string(id), "archived": true]).1["archived"] != nil)
            #expect(try await Self.ok(service, "reminders.get", ["id": .string(id)])["id"]?.stringValue == id)
        }
    }

    @Test("iCalendar: an export imported back changes nothing and duplicates nothing; its rules are RFC 5545's (UNTIL as DTSTART's type, SKIP with RSCALE)")
    func iCalendarRoundTrip() async throws {
        try await Self.with { service in
            for data: JSONValue in [
                ["id": "zoned-until-1", "title": "Dentist", "start": "2027-01-01T09:00", "zone": "Europe/Berlin", "rrule": "FREQ=DAILY;UNTIL=20270110T090000",
                 "repeatAlert": ["everyMinutes": 5, "times": 2]],
                ["id": "zoned-date-1", "title": "Gym", "start": "2027-01-01T18:00", "zone": "Europe/Berlin", "rrule": "FREQ=WEEKLY;UNTIL=20270301"],
                ["id": "floating-utc-1", "title": "Water", "start": "2027-01-01T08:00", "rrule": "FREQ=DAILY;UNTIL=20270105T080000Z"],
                ["id": "all-day-1", "title": "Rent", "start": "2027-01-31", "allDay": true, "rrule": "FREQ=MONTHLY;SKIP=BACKWARD;UNTIL=20271231T090000"],
            ] {
                try await Self.ok(service, "reminders.create", data)
            }
            let before = try await Self.ok(service, "reminders.list", ["limit": 50])
            let export = try #require(try await Self.ok(service, "reminders.ics.export")["content"]?.stringValue)
            let rules = export.components(separatedBy: "\r\n").filter { $0.hasPrefix("RRULE:") }
            #expect(rules.contains("RRULE:FREQ=DAILY;UNTIL=20270110T080000Z"), "\(rules)")
            #expect(rules.contains("RRULE:FREQ=WEEKLY;UNTIL=20270301T225959Z"), "\(rules)")
            #expect(rules.contains("RRULE:FREQ=DAILY;UNTIL=20270105T080000"), "\(rules)")
            #expect(rules.contains("RRULE:RSCALE=GREGORIAN;FREQ=MONTHLY;SKIP=BACKWARD;UNTIL=20271231"), "\(rules)")
            let back = try await Self.ok(service, "reminders.ics.import", ["content": .string(export)])
            #expect(back["created"] == 0 && back["updated"] == 0, "\(back)")
            let after = try await Self.ok(service, "reminders.list", ["limit": 50])
            #expect(after["items"]?.arrayValue?.count == before["items"]?.arrayValue?.count)
            #expect(after["items"]?.arrayValue?.map { $0["next"] } == before["items"]?.arrayValue?.map { $0["next"] })
            // The next export is the same file's events, and imports again.
            let second = try #require(try await Self.ok(service, "reminders.ics.export")["content"]?.stringValue)
            #expect(second.components(separatedBy: "\r\n").filter { $0.hasPrefix("UID:") } == export.components(separatedBy: "\r\n").filter { $0.hasPrefix("UID:") })
            #expect(try await Self.ok(service, "reminders.ics.import", ["content": .string(second)])["created"] == 0)
            #expect(try await Self.ok(service, "reminders.get", ["id": "zoned-until-1"])["repeatAlert"] == ["everyMinutes": 5, "times": 2])
        }
    }

    @Test("iCalendar: import keeps every event, re-import duplicates nothing, export round-trips; a malformed file imports nothing")
    func iCalendar() async throws {
        try await Self.with { service in
            let file = """
                BEGIN:VCALENDAR\r
                VERSION:2.0\r
                PRODID:-//Test//EN\r
                BEGIN:VEVENT\r
                UID:weekly-1@example.com\r
                DTSTAMP:20261101T000000Z\r
                DTSTART;TZID=Europe/Moscow:20270104T090000\r
                RRULE:FREQ=WEEKLY;BYDAY=MO,TH\r
                EXDATE;TZID=Europe/Moscow:20270107T090000\r
                SUMMARY:Планёрка\\, команда\r
                BEGIN:VALARM\r
                ACTION:DISPLAY\r
                TRIGGER:-PT15M\r
                DESCRIPTION:Reminder\r
                END:VALARM\r
                END:VEVENT\r
                BEGIN:VEVENT\r
                UID:birthday-1@example.com\r
                DTSTAMP:20261101T000000Z\r
                DTSTART;VALUE=DATE:19900315\r
                RRULE:FREQ=YEARLY\r
                SUMMARY:Birthday\r
                END:VEVENT\r
                BEGIN:VEVENT\r
                UID:utc-1@example.com\r
                DTSTAMP:20261101T000000Z\r
                DTSTART:20270301T120000Z\r
                SUMMARY:Call\r
                END:VEVENT\r
                END:VCALENDAR\r

                """
            let imported = try await Self.ok(service, "reminders.ics.import", ["content": .string(file)])
            #expect(imported["created"] == 3 && imported["updated"] == 0)
            let again = try await Self.ok(service, "reminders.ics.import", ["content": .string(file)])
            #expect(again["created"] == 0 && again["unchanged"] == 3)
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder") == 3)
            let weekly = try await Self.ok(service, "reminders.get", ["id": try #require(imported["ids"]?[0])])
            #expect(weekly["title"] == "Планёрка, команда" && weekly["zone"] == "Europe/Moscow" && weekly["exdates"] == ["2027-01-07T09:00"] && weekly["alerts"] == [15])

            // Export, then import into another account: the same events.
            let exported = try await Self.ok(service, "reminders.ics.export")
            #expect(exported["count"] == 3)
            let text = try #require(exported["content"]?.stringValue)
            #expect(text.contains("UID:weekly-1@example.com") && text.contains("\r\n"))
            let intoBob = try await Self.ok(service, "reminders.ics.import", ["content": .string(text)], as: Self.bob)
            #expect(intoBob["created"] == 3)
            let bobs = try await Self.ok(service, "reminders.list", ["limit": 10], as: Self.bob)
            let anns = try await Self.ok(service, "reminders.list", ["limit": 10])
            func shape(_ list: JSONValue) -> Set<String> {
                Set((list["items"]?.arrayValue ?? []).map { "\($0["title"]!)|\($0["start"]!)|\($0["zone"]!)|\($0["rrule"]!)|\($0["exdates"]!)|\($0["alerts"]!)|\($0["allDay"]!)" })
            }
            #expect(shape(bobs) == shape(anns))

            // Malformed: nothing half-imported.
            let broken = file.replacingOccurrences(of: "RRULE:FREQ=YEARLY", with: "RRULE:FREQ=YEARLY;BYMONTHDAY=40")
            #expect(try await Self.failure(service, "reminders.ics.import", ["content": .string(broken)], as: TestCaller.user("user-cid", roles: [])).0 == .validationFailed)
            #expect(try await Self.failure(service, "reminders.ics.import", ["content": "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n"], as: TestCaller.user("user-cid", roles: [])).0 == .validationFailed)
            #expect(try await Self.failure(service, "reminders.ics.import", ["content": "\u{89}PNG fake"], as: TestCaller.user("user-cid", roles: [])).0 == .validationFailed)
            #expect(try await Self.count(service, "SELECT COUNT(*) FROM reminder WHERE user_id = 'user-cid'") == 0)
        }
    }
}

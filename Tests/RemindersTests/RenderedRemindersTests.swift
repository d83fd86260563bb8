import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// The rendered reminders lists and searches copy (``RenderedReminders``): what they show
/// is always the reminder as it stands.
@Suite("Rendered reminders")
struct RenderedRemindersTests {
    static let ann = RemindersFlowTests.ann

    static func titles(_ page: JSONValue) -> [String] {
        (page["items"]?.arrayValue ?? []).compactMap { $0["title"]?.stringValue }
    }

    @Test("lists show edits at once, the next occurrence as firing moves it, and never a write that was rolled back")
    func followsTheRows() async throws {
        try await RemindersFlowTests.with { service in
            let made = try await RemindersFlowTests.ok(
                service, "reminders.create", ["title": "First", "start": "2030-01-10T09:00", "zone": "UTC", "rrule": "FREQ=DAILY", "alerts": [0]])
            let id = try #require(made["id"]?.stringValue)
            // Shown once (and kept), then edited: the new text, not the kept one.
            #expect(Self.titles(try await RemindersFlowTests.ok(service, "reminders.list")) == ["First"])
            #expect(Self.titles(try await RemindersFlowTests.ok(service, "reminders.search", ["query": "first"])) == ["First"])
            // Kept: the service's cache holds it under its row and change version.
            let (rendered, key) = try await service.runtime.pool.read { db in
                let row = try #require(try Row.fetchOne(db, sql: "SELECT rowid, change_version FROM reminder WHERE id = ?", arguments: [id]))
                return (RenderedReminders.of(db), RenderedReminders.Key(rowID: row[0], changeVersion: row[1]))
            }
            var text: [UInt8] = []
            #expect(rendered?.write(key, to: &text, next: { $0.append(contentsOf: "null".utf8) }) == true)
            #expect(String(decoding: text, as: UTF8.self).contains(#""next":null"#))
            #expect((rendered?.bytes ?? 0) > 0)
            try await RemindersFlowTests.ok(service, "reminders.update", ["id": .string(id), "title": "Second"])
            #expect(Self.titles(try await RemindersFlowTests.ok(service, "reminders.list")) == ["Second"])

            // Firing moves the next occurrence without a new change version.
            try await service.runtime.pool.write { db in
                try db.execute(
                    sql: "UPDATE reminder SET next_at_ms = ?, next_local = ? WHERE id = ?",
                    arguments: [Instant.milliseconds(Instant.parse("2030-01-11T09:00:00Z")!), "2030-01-11T09:00", id])
            }
            let moved = try await RemindersFlowTests.ok(service, "reminders.list")
            #expect(moved["items"]?[0]?["next"] == ["local": "2030-01-11T09:00", "utc": "2030-01-11T09:00:00.000Z"])
            #expect(moved["items"]?[0]?["title"] == "Second")

            // A write rendered in the writer's transaction, then rolled back: its change
            // version is given again to the next write, which must not show its text.
            struct RolledBack: Error {}
            await #expect(throws: RolledBack.self) {
                try await service.runtime.pool.write { db in
                    var row = try #require(try ReminderRow.find(db, id: id, user: "user-ann"))
                    row.content.title = "Rolled back"
                    let clock = try UserClock.load(db, user: "user-ann")
                    try ReminderStore.commit(db, &row, change: "updated", clock: clock, now: Date())
                    let view = try ReminderView(db, row, clock: clock)
                    #expect(String(decoding: view.json, as: UTF8.self).contains("Rolled back"))
                    throw RolledBack()
                }
            }
            let third = try await RemindersFlowTests.ok(service, "reminders.update", ["id": .string(id), "title": "Third"])
            #expect(third["title"] == "Third")
            #expect(Self.titles(try await RemindersFlowTests.ok(service, "reminders.list")) == ["Third"])
            #expect(Self.titles(try await RemindersFlowTests.ok(service, "reminders.search", ["query": "third"])) == ["Third"])
        }
    }

    @Test("the kept text is bounded: two generations a shard, the older dropped when the newer fills, an entry found in the older moved up")
    func bounded() {
        // Entries of 165 bytes as counted (100 + 1 + 64); 64 shards of 10,000 bytes a
        // generation: a shard's newer generation turns over at its 61st entry.
        let cache = RenderedReminders(generationBytes: 64 * 10_000)
        let shards = RenderedReminders.shardCount
        func keep(_ rows: some Sequence<Int>) {
            for row in rows { cache.keep(.init(rowID: Int64(row), changeVersion: 1), .init(head: Array(repeating: 0x61, count: 100), tail: [0x7D])) }
        }
        func kept(_ row: Int, version: Int64 = 1) -> Bool {
            var text: [UInt8] = []
            let found = cache.write(.init(rowID: Int64(row), changeVersion: version), to: &text) { $0.append(0x3A) }
            // What was kept, with `next` between its head and tail; nothing when not kept.
            #expect(text == (found ? Array(repeating: 0x61, count: 100) + [0x3A, 0x7D] : []))
            return found
        }
        keep(0..<64_000)
        #expect(cache.bytes <= shards * (2 * 10_000 + 165))
        // One shard's rows (every 64th: ids are spread by their low bits), 1,000 of them,
        // turned over after its 61st, 122nd, ... 976th: the newer holds the last 24, the
        // older the 61 before.
        let rows = (0..<1_000).map { $0 * shards }
        #expect(kept(rows[999]) && !kept(rows[0]) && !kept(rows[914]) && !kept(rows[999], version: 2))
        #expect(kept(rows[915]))  // found in the older: moved to the newer
        keep((1_000..<1_040).map { $0 * shards })  // that shard's newer turns over once more
        #expect(kept(rows[915]) && !kept(rows[916]) && kept(1_039 * shards))
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// The changes feed over a real SQLite file, with a small notes table standing in for a
/// service's rows: each user sees their own notes; a shared board is seen by everyone.
@Suite("Changes feed")
struct ChangeFeedTests {
    struct Notes {
        let pool: DatabasePool
        let directory: TemporaryDirectory

        init() throws {
            directory = try TemporaryDirectory(prefix: "changes")
            pool = try ServiceDatabase.open(directory: directory.url, name: "notes", durability: .normal) { migrator in
                migrator.registerMigration("notes-1") { db in
                    try db.execute(sql: "CREATE TABLE note (id TEXT PRIMARY KEY, owner TEXT NOT NULL, body TEXT NOT NULL, change_version INTEGER NOT NULL)")
                }
            }
        }

        static let source = ChangeSource(entity: "note") { db, query in
            try Row.fetchAll(
                db, sql: "SELECT * FROM note WHERE owner = ? AND change_version > ? ORDER BY change_version LIMIT ?",
                arguments: [query.viewer.userID, query.since, query.limit]
            ).map { Change(entity: "note", id: $0["id"], version: $0["change_version"], data: ["body": .string($0["body"])]) }
        }

        func put(_ id: String, owner: String, body: String) throws {
            try pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO note (id, owner, body, change_version) VALUES (?, ?, ?, ?)
                        ON CONFLICT(id) DO UPDATE SET body = excluded.body, change_version = excluded.change_version
                        """, arguments: [id, owner, body, try ChangeFeed.stamp(db)])
            }
        }

        func delete(_ id: String, at now: Date = Date()) throws {
            try pool.write { db in
                guard let owner = try String.fetchOne(db, sql: "SELECT owner FROM note WHERE id = ?", arguments: [id]) else { return }
                try db.execute(sql: "DELETE FROM note WHERE id = ?", arguments: [id])
                try ChangeFeed.recordDeletion(db, entity: "note", id: id, scope: ChangeViewer.user(owner), at: now)
            }
        }

        func page(_ user: String, roles: Set<String> = [], since: ChangeCursor, limit: Int = 100) throws -> ChangePage {
            try pool.read { db in
                try ChangeFeed.page(db, sources: [Self.source], viewer: ChangeViewer(userID: user, roles: roles), since: since, limit: limit)
            }
        }

        /// What `user` should hold: their notes' bodies by id.
        func truth(_ user: String) throws -> [String: String] {
            try pool.read { db in
                Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, body FROM note WHERE owner = ?", arguments: [user]).map {
                    ($0["id"] as String, $0["body"] as String)
                })
            }
        }
    }

    /// A device applying pages in order.
    struct Device {
        var user: String
        var rows: [String: String] = [:]
        var since = ChangeCursor.start
        var resyncs = 0

        mutating func sync(_ notes: Notes, limit: Int) throws {
            for _ in 0..<10_000 {
                let page = try notes.page(user, since: since, limit: limit)
                if page.resync {
                    rows = [:]
                    since = .start
                    resyncs += 1
                    continue
                }
                #expect(page.items.count <= limit)
                for item in page.items {
                    #expect(item.version > since.position)
                    if item.deleted { rows[item.id] = nil } else { rows[item.id] = item.data?["body"]?.stringValue }
                }
                since = try #require(ChangeCursor(page.next))
                if !page.more { return }
            }
            Issue.record("the feed did not end")
        }
    }

    @Test("versions are unique and growing, survive a reopen, and a rolled-back write leaves only a gap")
    func versions() throws {
        let notes = try Notes()
        let first = try notes.pool.write { db in (try ChangeFeed.stamp(db), try ChangeFeed.stamp(db)) }
        #expect(first == (1, 2))
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try notes.pool.write { db in
                _ = try ChangeFeed.stamp(db)
                throw Refused()
            }
        }
        #expect(try notes.pool.write { db in try ChangeFeed.stamp(db) } == 3, "the rolled-back stamp is undone with its write")
        try notes.put("a", owner: "u1", body: "x")
        try notes.pool.close()
        let reopened = try ServiceDatabase.open(directory: notes.directory.url, name: "notes", durability: .normal) { migrator in
            migrator.registerMigration("notes-1") { _ in }
        }
        #expect(try reopened.write { db in try ChangeFeed.stamp(db) } == 5)
    }

    @Test("a first sync pages through live rows only; later ones see updates and the user's own deletions")
    func paging() throws {
        let notes = try Notes()
        for index in 0..<7 { try notes.put("n\(index)", owner: "u1", body: "v1") }
        try notes.put("other", owner: "u2", body: "secret")
        try notes.delete("n6")
        var phone = Device(user: "u1")
        try phone.sync(notes, limit: 3)
        #expect(phone.rows.count == 6 && phone.rows["other"] == nil)
        let first = try notes.page("u1", since: .start, limit: 100)
        #expect(first.items.allSatisfy { !$0.deleted }, "nothing to delete on a first sync")
        #expect(ChangeCursor(first.next)?.position == first.items.last?.version, "the last item's version, not the service's counter")

        try notes.put("n1", owner: "u1", body: "v2")
        try notes.delete("n2")
        try notes.delete("other")
        // n6, deleted before the first sync, may come again as a deletion: cursors do not
        // say exactly where the service's counter was.
        let later = try notes.page("u1", since: phone.since).items.filter { $0.id != "n6" }
        #expect(later.map(\.id) == ["n1", "n2"])
        #expect(later.map(\.deleted) == [false, true])
        #expect(later[1].data == nil)
        try phone.sync(notes, limit: 1)
        #expect(phone.rows == (try notes.truth("u1")))
        // Nothing new: the same `next`, no items.
        let idle = try notes.page("u1", since: phone.since)
        #expect(idle.items.isEmpty && idle.next == phone.since.text && !idle.more)
    }

    @Test("resync: a version older than the deletions kept, or one this database never gave out")
    func resync() throws {
        let notes = try Notes()
        try notes.put("a", owner: "u1", body: "1")
        try notes.put("b", owner: "u1", body: "1")
        var away = Device(user: "u1")
        try away.sync(notes, limit: 10)
        let old = Date().addingTimeInterval(-50 * 86_400)
        try notes.delete("a", at: old)
        try notes.delete("b", at: Date().addingTimeInterval(-40 * 86_400))
        #expect(try notes.pool.write { db in try ChangeFeed.prune(db) } == 1, "only markers older than 45 days go")
        #expect(try notes.page("u1", since: away.since).resync)
        #expect(try !notes.page("u1", since: .start).resync)
        #expect(try notes.page("u1", since: ChangeCursor(position: 10_000, safePoint: 10_000, viewer: ChangeViewer(userID: "u1", roles: []).fingerprint)).resync)
        #expect(try notes.page("u1", since: ChangeCursor(position: -1, safePoint: -1, viewer: nil)).resync)
        try away.sync(notes, limit: 10)
        #expect(away.resyncs == 1 && away.rows.isEmpty)
        // A device that had synced after the pruned deletion is fine.
        let current = try #require(ChangeCursor(try notes.page("u1", since: .start).next))
        try notes.put("c", owner: "u1", body: "1")
        #expect(try !notes.page("u1", since: current).resync)
        #expect(try notes.page("u1", since: current).items.filter { !$0.deleted }.map(\.id) == ["c"])
    }

    @Test("random edits between syncs with random page sizes: every device ends holding exactly what it should")
    func randomHistories() throws {
        var generator = SplitMix64(seed: 21)
        for _ in 0..<10 {
            let notes = try Notes()
            let users = ["u1", "u2", "u3"]
            var devices = users.map { Device(user: $0) } + users.map { Device(user: $0) }
            for step in 0..<300 {
                let id = "n\(Int.random(in: 0..<40, using: &generator))"
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<5:
                    let owner = try notes.pool.read { db in try String.fetchOne(db, sql: "SELECT owner FROM note WHERE id = ?", arguments: [id]) }
                    try notes.put(id, owner: owner ?? users.randomElement(using: &generator)!, body: "s\(step)")
                case 5..<8:
                    try notes.delete(id)
                default:
                    let index = Int.random(in: 0..<devices.count, using: &generator)
                    try devices[index].sync(notes, limit: Int.random(in: 1...5, using: &generator))
                }
            }
            for index in devices.indices {
                try devices[index].sync(notes, limit: Int.random(in: 1...5, using: &generator))
                #expect(devices[index].rows == (try notes.truth(devices[index].user)))
            }
        }
    }

    @Test("a first sync of rows older than the pruned deletions pages to the end; deletions during it still arrive")
    func firstSyncBelowHorizon() throws {
        let notes = try Notes()
        for index in 0..<6 { try notes.put("old\(index)", owner: "u1", body: "1") }
        try notes.put("gone", owner: "u1", body: "1")
        try notes.delete("gone", at: Date().addingTimeInterval(-60 * 86_400))
        #expect(try notes.pool.write { db in try ChangeFeed.prune(db) } == 1)
        var phone = Device(user: "u1")
        let first = try notes.page("u1", since: .start, limit: 2)
        #expect(first.more && first.next.contains("-"), "a first sync's cursor carries where it began")
        phone.rows = Dictionary(uniqueKeysWithValues: first.items.map { ($0.id, $0.data?["body"]?.stringValue ?? "") })
        phone.since = try #require(ChangeCursor(first.next))
        // Mid-sync, a row already sent is deleted and one not yet sent is changed.
        try notes.delete(first.items[0].id)
        try notes.put("old5", owner: "u1", body: "2")
        try phone.sync(notes, limit: 2)
        #expect(phone.resyncs == 0)
        #expect(phone.rows == (try notes.truth("u1")))
        #expect(ChangeCursor("12-30") == ChangeCursor(position: 12, safePoint: 30, viewer: nil))
        #expect(ChangeCursor("12-30.0a1b2c3d") == ChangeCursor(position: 12, safePoint: 30, viewer: "0a1b2c3d"))
        for bad in ["", "-", "1-", "-1", "5-3", "5-5", "1-2-3", "a", "+1", "99999999999999999999", " 1", "1.", "1.0A1B2C3D", "1.0a1b", "1..0a1b2c3d", "1.0a1b2c3d.0a1b2c3d"] {
            #expect(ChangeCursor(bad) == nil, "\(bad)")
        }
    }

    @Test("a cursor is the viewer's: another user's or one made before a change of roles means resync")
    func cursorsBelongToTheirViewer() throws {
        let notes = try Notes()
        try notes.put("a", owner: "u1", body: "1")
        let mine = try #require(ChangeCursor(try notes.page("u1", since: .start).next))
        #expect(try !notes.page("u1", since: mine).resync)
        #expect(try notes.page("u2", since: mine).resync, "another user's cursor")
        #expect(try notes.page("u1", roles: ["staff"], since: mine).resync, "roles changed")
        let unsigned = ChangeCursor(position: mine.position, safePoint: mine.safePoint, viewer: nil)
        #expect(try notes.page("u1", since: unsigned).resync, "a cursor without its viewer")
    }

    @Test("next does not count the service's writes: with nothing new, it moves by multiples of 1,024")
    func nextIsCoarse() throws {
        let notes = try Notes()
        try notes.put("mine", owner: "u1", body: "1")
        let start = try #require(ChangeCursor(try notes.page("u1", since: .start).next))
        for index in 0..<5 { try notes.put("other\(index)", owner: "u2", body: "x") }
        #expect(try notes.page("u1", since: start).next == start.text, "five writes of others: no visible move")
        for index in 0..<1_030 { try notes.pool.write { db in _ = try ChangeFeed.stamp(db); _ = index } }
        let moved = try #require(ChangeCursor(try notes.page("u1", since: start).next))
        #expect(moved.position % 1_024 == 0 && moved.position > start.position)
    }

    @Test("deletions reach only their scope: a user's own, a role's, everyone's")
    func scopes() throws {
        let notes = try Notes()
        try notes.put("kept", owner: "u1", body: "1")
        try notes.put("theirs", owner: "u2", body: "1")
        let viewers: [(String, Set<String>)] = [("u1", []), ("u2", ["staff"]), ("u2", ["recipient"])]
        var cursors: [ChangeCursor] = []
        for (user, roles) in viewers { cursors.append(try #require(ChangeCursor(try notes.page(user, roles: roles, since: .start).next))) }
        try notes.pool.write { db in
            try ChangeFeed.recordDeletion(db, entity: "note", id: "mine", scope: ChangeViewer.user("u1"))
            try ChangeFeed.recordDeletion(db, entity: "note", id: "staff-only", scope: ChangeViewer.role("staff"))
            try ChangeFeed.recordDeletion(db, entity: "note", id: "all", scope: ChangeViewer.everyone)
        }
        func deletions(_ index: Int) throws -> [String] {
            try notes.page(viewers[index].0, roles: viewers[index].1, since: cursors[index]).items.map(\.id)
        }
        #expect(try deletions(0) == ["mine", "all"])
        #expect(try deletions(1) == ["staff-only", "all"])
        #expect(try deletions(2) == ["all"])
        #expect(try notes.page("u1", since: .start).items.map(\.id) == ["kept"], "a first sync lists no deletions")
    }
}

@Suite("Client-generated ids")
struct ClientGeneratedIDTests {
    @Test("UUIDs and short tokens pass; anything to escape or out of length is refused with its field")
    func ids() throws {
        for good in ["4F9D1C2A-7E3B-4A5C-9D8E-0F1A2B3C4D5E", "4f9d1c2a7e3b4a5c9d8e0f1a2b3c4d5e", "note_0001", "a-b_c-d1"] {
            #expect(ClientGeneratedID.isValid(good), "\(good)")
        }
        for bad in ["", "short", String(repeating: "a", count: 65), "has space1", "slash/slash", "dot.dot.dot", "ünïcödé1", "semi;colon"] {
            #expect(!ClientGeneratedID.isValid(bad), "\(bad)")
        }
        #expect(throws: ServiceError.self) { try ClientGeneratedID.check("bad id!", field: "clientId") }
        #expect(try ClientGeneratedID.check("abcdefgh") == "abcdefgh")
    }
}

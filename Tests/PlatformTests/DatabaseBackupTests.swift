import Foundation
import GRDB
import Platform
import SharedTesting
import Synchronization
import Testing

/// Online backups: taken while writes go on, a backup holds every write acknowledged
/// before it began and is a sound database; restoring puts it in place and keeps the old file.
@Suite("Database backups")
struct DatabaseBackupTests {
    @Test("a backup taken under load holds every acknowledged write before it, and restores")
    func backupUnderLoad() async throws {
        let service = try await InProcessService(TestService.definition(name: "backed"))
        let database = service.configuration.dataDirectoryURL.appendingPathComponent("backed.sqlite")
        // The service's folder goes when it stops: backups and the restore go to one of the test's own.
        let own = try TemporaryDirectory(prefix: "backups")
        defer { own.remove() }
        let folder = own.url
        for index in 0..<100 {
            #expect(try await service.call("backed.put", data: ["key": .string("before-\(index)"), "value": 1]).ok)
        }
        // Writers keep going while the backup is taken (four at once); each key goes into
        // `acknowledged` when its reply has come.
        let acknowledged = AcknowledgedKeys()
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        var index = 0
                        while !acknowledged.stopped {
                            let key = "during-\(writer)-\(index)"
                            index += 1
                            if (try? await service.call("backed.put", data: ["key": .string(key), "value": 2]))?.ok == true {
                                acknowledged.add(key)
                            }
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        // Every write acknowledged before the backup starts must be in it.
        let acknowledgedBefore = acknowledged.all
        let target = folder.appendingPathComponent(DatabaseBackup.fileName(service: "backed"))
        let written = try await SocketThread.value(name: "test-backup") { try DatabaseBackup.backup(database, to: target) }
        acknowledged.stop()
        await load.value
        #expect(!acknowledgedBefore.isEmpty, "writes went on")
        #expect(written.bytes > 0 && FileManager.default.fileExists(atPath: target.path))
        #expect(!FileManager.default.fileExists(atPath: target.path + "-wal"))
        let keys = try await DatabaseQueue(path: target.path).read { db in try Set(String.fetchAll(db, sql: "SELECT key FROM item")) }
        #expect((0..<100).allSatisfy { keys.contains("before-\($0)") })
        let missing = acknowledgedBefore.filter { !keys.contains($0) }
        #expect(missing.isEmpty, "acknowledged before the backup began, missing from it: \(missing.prefix(5))")
        let total = try await service.call("backed.put", data: ["key": "after", "value": 3]).data?["count"]?.integerValue ?? 0
        #expect(keys.count < total, "the backup is a state from before the last writes")
        // The latest state, as the database a restore replaces.
        let latest = folder.appendingPathComponent("backed.sqlite")
        _ = try await SocketThread.value(name: "test-backup") { try DatabaseBackup.backup(database, to: latest) }
        await service.stop()

        // Restored while the service is stopped: the backup's rows, the replaced file kept.
        let kept = try #require(try DatabaseBackup.restore(target, into: latest))
        let replaced = try await DatabaseQueue(path: kept.path).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") }
        #expect(replaced == Int(total))
        #expect(FileManager.default.fileExists(atPath: kept.path))
        let restored = try await DatabaseQueue(path: latest.path).read { db in try Set(String.fetchAll(db, sql: "SELECT key FROM item")) }
        #expect(restored == keys)
        #expect(!restored.contains("after"))

        // A file that is not a database is refused, and nothing is replaced.
        let junk = folder.appendingPathComponent("junk.sqlite")
        try Data("not a database".utf8).write(to: junk)
        #expect(throws: (any Error).self) { try DatabaseBackup.restore(junk, into: latest) }
        let still = try await DatabaseQueue(path: latest.path).read { db in try Set(String.fetchAll(db, sql: "SELECT key FROM item")) }
        #expect(still == keys)
    }
}

/// Event seqs across a restore: subscribers have applied what the replaced database
/// published, so a restored source must not give the same seqs to new events.
@Suite("Restore and event seqs")
struct RestoreSequenceTests {
    @Test("after a restore, new events continue after the highest seq the replaced database gave out, not after the backup's")
    func seqsNeverGoBack() async throws {
        let directory = try TemporaryDirectory(prefix: "restore-seq")
        defer { directory.remove() }
        let data = directory.url.appendingPathComponent("data")
        let database = data.appendingPathComponent("flood.sqlite")
        func append(_ count: Int) throws -> [Int64] {
            let pool = try ServiceDatabase.open(directory: data, name: "flood", durability: .normal) { _ in }
            defer { try? pool.close() }
            return try pool.write { db in try (0..<count).map { _ in try Outbox.append(db, type: "flood.item", data: ["x": 1] as JSONValue) } }
        }
        #expect(try append(5) == [1, 2, 3, 4, 5])
        let backup = directory.url.appendingPathComponent("flood-backup.sqlite")
        _ = try DatabaseBackup.backup(database, to: backup)
        #expect(try append(5) == [6, 7, 8, 9, 10])
        let now = Date()
        _ = try DatabaseBackup.restore(backup, into: database, now: now)
        // What events.replay answers as `last` is past the highest seq given out (10, not
        // the backup's 5): subscribers at 10 are not behind. Past the clock too: a copy
        // of the database restored earlier (another history of it) gave seqs up to then.
        let floor = RestoreHistory.clockFloor(now)
        let last = try await DatabaseQueue(path: database.path).read { db in try Outbox.lastSeq(db) }
        #expect(last == floor)
        // Events 6–10 went with the replaced file; the next is past them, never a second 6.
        #expect(try append(2) == [floor + 1, floor + 2])
        let history = try await DatabaseQueue(path: database.path).read { db in try RestoreHistory.restores(db) }
        #expect(history.map(\.restoredAt) == [5])
        #expect(history.map(\.resumedAfter) == [floor])

        // Restored again from the same backup, the replaced file gone: seqs still never
        // repeat (the clock has moved on), and both restores are on record.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        let later = now.addingTimeInterval(1)
        _ = try DatabaseBackup.restore(backup, into: database, now: later)
        #expect(try append(1) == [RestoreHistory.clockFloor(later) + 1])
        let again = try await DatabaseQueue(path: database.path).read { db in try RestoreHistory.restores(db) }
        #expect(again.map(\.restoredAt) == [5])  // the replaced file's history went with it
        #expect(again.last?.resumedAfter == RestoreHistory.clockFloor(later))

        // A clock behind that restore's (set back, or another machine's) is refused where
        // the history shows it, and nothing is replaced.
        let copy = directory.url.appendingPathComponent("flood-later.sqlite")
        _ = try DatabaseBackup.backup(database, to: copy)
        #expect(throws: DatabaseBackup.Failure.self) { try DatabaseBackup.restore(copy, into: database, now: now) }
        #expect(try append(1) == [RestoreHistory.clockFloor(later) + 2])
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent(".flood.sqlite.restoring").path))
    }

    @Test("a damaged restore history in a backup is not carried on; replay answers only sane records")
    func damagedHistory() async throws {
        let directory = try TemporaryDirectory(prefix: "restore-damaged")
        defer { directory.remove() }
        let data = directory.url.appendingPathComponent("data")
        // The test service's own file, so that it can serve the restored database below.
        let database = data.appendingPathComponent("test.sqlite")
        let pool = try ServiceDatabase.open(directory: data, name: "test", durability: .normal) { _ in }
        try await pool.write { db in
            for _ in 0..<3 { _ = try Outbox.append(db, type: "test.item.put", data: ["x": 1] as JSONValue) }
            try db.execute(
                sql: "INSERT INTO platform_meta (key, value) VALUES ('outbox.restores', ?)",
                arguments: [#"[{"id":"neg","restoredAt":-5,"resumedAfter":-5},{"id":"far","restoredAt":1,"resumedAfter":1000000000000},{"id":"ok","restoredAt":1,"resumedAfter":2}]"#])
        }
        try pool.close()
        let backup = directory.url.appendingPathComponent("test-backup.sqlite")
        _ = try DatabaseBackup.backup(database, to: backup)
        _ = try DatabaseBackup.restore(backup, into: database)
        let history = try await DatabaseQueue(path: database.path).read { db in try RestoreHistory.restores(db) }
        #expect(history.count == 2)
        #expect(history.first?.id == "ok")

        // Served again, the source's replay names the sane records only, however the
        // stored history was damaged (here again, after the restore).
        try await DatabaseQueue(path: database.path).write { db in
            let stored = try String.fetchOne(db, sql: "SELECT value FROM platform_meta WHERE key = 'outbox.restores'") ?? "[]"
            // Past `last`, which a restore moved to the clock's microseconds.
            let damaged = #"[{"id":"neg","restoredAt":-5,"resumedAfter":-5},{"id":"far","restoredAt":1,"resumedAfter":9000000000000000000},"#
                + stored.dropFirst()
            try db.execute(sql: "UPDATE platform_meta SET value = ? WHERE key = 'outbox.restores'", arguments: [damaged])
        }
        var configuration = PlatformConfiguration.forTests(directory: directory)
        configuration.dataDirectory = data.path
        let source = try await InProcessService(TestService.definition(), configuration: configuration)
        let replay = try await RawClient.request(Data(#"{"id":"r","op":"test.events.replay","data":{"after":0}}"#.utf8), endpoint: source.endpoint)
        await source.stop()
        let restores = replay?.data?["restores"]?.arrayValue ?? []
        #expect(restores.compactMap { $0["id"]?.stringValue } == history.map(\.id))
        #expect(restores.allSatisfy { ($0["resumedAfter"]?.integerValue ?? -1) <= (replay?.data?["last"]?.integerValue ?? -1) })
    }
}

/// Keys whose writes were acknowledged, from several writers, and when they stop.
private final class AcknowledgedKeys: Sendable {
    private let keys = Mutex<[String]>([])
    private let stopping = Atomic<Bool>(false)
    var stopped: Bool { stopping.load(ordering: .relaxed) }
    func stop() { stopping.store(true, ordering: .relaxed) }
    func add(_ key: String) { keys.withLock { $0.append(key) } }
    var all: [String] { keys.withLock { $0 } }
}

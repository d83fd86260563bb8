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

/// Keys whose writes were acknowledged, from several writers, and when they stop.
private final class AcknowledgedKeys: Sendable {
    private let keys = Mutex<[String]>([])
    private let stopping = Atomic<Bool>(false)
    var stopped: Bool { stopping.load(ordering: .relaxed) }
    func stop() { stopping.store(true, ordering: .relaxed) }
    func add(_ key: String) { keys.withLock { $0.append(key) } }
    var all: [String] { keys.withLock { $0 } }
}

import Foundation
import GRDB

/// Online backups of a service's SQLite file and putting one back (`ctl backup`,
/// `ctl restore`; README, "Backups").
///
/// A backup is taken with SQLite's backup API from a read transaction of its own
/// connection: under WAL it sees one committed state (every write acknowledged before it
/// began, nothing half-written) while the service goes on writing. It is written to a
/// temporary file, checked (`PRAGMA integrity_check`), fsynced and renamed into place,
/// so a crash leaves the whole backup or none.
public enum DatabaseBackup {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// What a backup wrote.
    public struct Written: Sendable {
        public var file: URL
        public var bytes: Int64
        public var pages: Int
    }

    /// Backs up `database` (a service's `<name>.sqlite`) into `file`.
    public static func backup(_ database: URL, to file: URL) throws -> Written {
        guard FileManager.default.fileExists(atPath: database.path) else { throw Failure("no database at \(database.path)") }
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).partial")
        try? FileManager.default.removeItem(at: temporary)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // The service's own pool keeps the WAL; this connection only reads.
        let source = try DatabaseQueue(path: database.path, configuration: configuration)
        var pages = 0
        do {
            let destination = try DatabaseQueue(path: temporary.path)
            try source.backup(to: destination) { progress in pages = progress.totalPageCount }
            try destination.writeWithoutTransaction { db in
                // One file, no WAL beside it: what is copied is all there is.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard check == ["ok"] else { throw Failure("the backup failed its integrity check: \(check.prefix(3))") }
            }
            try destination.close()
            try source.close()
            try fsync(temporary)
            try? FileManager.default.removeItem(at: file)
            try FileManager.default.moveItem(at: temporary, to: file)
            try fsync(file.deletingLastPathComponent())
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        return Written(file: file, bytes: bytes, pages: pages)
    }

    /// Puts `backup` in place of `database` while its service is stopped: checks the
    /// backup, keeps the current file (and its WAL) beside it as
    /// `<name>.sqlite.replaced-<time>`, and renames a checked copy into place. Returns the
    /// kept file's path, if there was one.
    @discardableResult
    public static func restore(_ backup: URL, into database: URL, now: Date = Date()) throws -> URL? {
        let check = try DatabaseQueue(path: backup.path).read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        guard check == ["ok"] else { throw Failure("\(backup.path) is not a sound SQLite database: \(check.prefix(3))") }
        let folder = database.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let incoming = folder.appendingPathComponent(".\(database.lastPathComponent).restoring")
        try? FileManager.default.removeItem(at: incoming)
        try FileManager.default.copyItem(at: backup, to: incoming)
        try fsync(incoming)
        var kept: URL?
        let stamp = Instant.format(now).replacingOccurrences(of: ":", with: "-")
        for suffix in ["", "-wal", "-shm"] {
            let current = URL(fileURLWithPath: database.path + suffix)
            guard FileManager.default.fileExists(atPath: current.path) else { continue }
            let aside = URL(fileURLWithPath: database.path + ".replaced-\(stamp)" + suffix)
            try FileManager.default.moveItem(at: current, to: aside)
            if suffix.isEmpty { kept = aside }
        }
        try FileManager.default.moveItem(at: incoming, to: database)
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: database.path)
        try fsync(folder)
        return kept
    }

    /// The name a backup gets: `<service>-<UTC time>.sqlite`.
    public static func fileName(service: String, at date: Date = Date()) -> String {
        "\(service)-\(Instant.format(date).replacingOccurrences(of: ":", with: "-")).sqlite"
    }

    static func fsync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw Failure("cannot open \(url.path) to sync it") }
        defer { close(descriptor) }
        guard Foundation.fsync(descriptor) == 0 else { throw Failure("fsync of \(url.path) failed") }
    }
}

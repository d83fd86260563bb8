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
///
/// With a recipient key the backup is sealed (``BackupSeal``) to the operators' backup key:
/// the plain copy is made beside the database (the service's own 0700 folder), sealed
/// into `<name>.sqlite.sealed` in the backup folder and removed. Only the holder of
/// `backup.secret` can restore it.
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

    /// Backs up `database` (a service's `<name>.sqlite`) into `file`, sealed to
    /// `recipient` (a 32-byte X25519 public key) when one is given.
    public static func backup(_ database: URL, to file: URL, sealedFor recipient: [UInt8]? = nil) throws -> Written {
        guard let recipient else { return try plainBackup(database, to: file) }
        let plain = database.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).plain")
        defer { try? FileManager.default.removeItem(at: plain) }
        let copied = try plainBackup(database, to: plain)
        let sealed = try BackupSeal.seal(Array(try Data(contentsOf: plain)), to: recipient)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).partial")
        guard FileManager.default.createFile(atPath: temporary.path, contents: Data(sealed), attributes: [.posixPermissions: 0o600]) else {
            throw Failure("cannot write \(temporary.path)")
        }
        do {
            try putInPlace(temporary, as: file)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        return Written(file: file, bytes: Int64(sealed.count), pages: copied.pages)
    }

    /// Syncs `temporary` and renames it to `file`, then syncs the folder: a crash leaves
    /// the old file or the whole new one.
    private static func putInPlace(_ temporary: URL, as file: URL) throws {
        try fsync(temporary)
        try? FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: temporary, to: file)
        try fsync(file.deletingLastPathComponent())
    }

    private static func plainBackup(_ database: URL, to file: URL) throws -> Written {
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
            try putInPlace(temporary, as: file)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        return Written(file: file, bytes: bytes, pages: pages)
    }

    /// Whether `file` is a sealed backup (it needs the backup secret key to restore).
    public static func isSealed(_ file: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return false }
        defer { try? handle.close() }
        return BackupSeal.isSealed(Array((try? handle.read(upToCount: 64)) ?? Data()))
    }

    /// Puts `backup` in place of `database` while its service is stopped: opens it with
    /// `secretKey` if it is sealed, checks it, keeps the current file (and its WAL) beside it
    /// as `<name>.sqlite.replaced-<time>`, and renames the checked copy into place. Returns
    /// the kept file's path, if there was one.
    @discardableResult
    public static func restore(_ backup: URL, into database: URL, secretKey: [UInt8]? = nil, now: Date = Date()) throws -> URL? {
        let folder = database.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let incoming = folder.appendingPathComponent(".\(database.lastPathComponent).restoring")
        try? FileManager.default.removeItem(at: incoming)
        if isSealed(backup) {
            guard let secretKey else { throw Failure("\(backup.path) is sealed: it needs the operators' backup.secret") }
            let plain = try BackupSeal.open(Array(try Data(contentsOf: backup)), secretKey: secretKey)
            guard FileManager.default.createFile(atPath: incoming.path, contents: Data(plain), attributes: [.posixPermissions: 0o600]) else {
                throw Failure("cannot write \(incoming.path)")
            }
        } else {
            try FileManager.default.copyItem(at: backup, to: incoming)
        }
        do {
            let check = try DatabaseQueue(path: incoming.path).read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            guard check == ["ok"] else { throw Failure("\(backup.path) is not a sound SQLite database: \(check.prefix(3))") }
        } catch {
            try? FileManager.default.removeItem(at: incoming)
            throw error is Failure ? error : Failure("\(backup.path) is not a SQLite database")
        }
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

    /// The name a backup gets: `<service>-<UTC time>.sqlite`, `.sqlite.sealed` when sealed.
    public static func fileName(service: String, at date: Date = Date(), sealed: Bool = false) -> String {
        "\(service)-\(Instant.format(date).replacingOccurrences(of: ":", with: "-")).sqlite" + (sealed ? ".sealed" : "")
    }

    /// Removes what an interrupted backup or restore left in `folder` (a `.<name>.plain`
    /// copy beside the database, a `.<name>.partial` file, a `.<name>.restoring` copy) once
    /// it is older than `age`, so a backup in progress elsewhere keeps its files.
    public static func removeLeftovers(in folder: URL, olderThan age: TimeInterval = 3_600, now: Date = Date()) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
        where name.hasPrefix(".") && (name.hasSuffix(".plain") || name.hasSuffix(".partial") || name.hasSuffix(".restoring")) {
            let file = folder.appendingPathComponent(name)
            guard let modified = (try? manager.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date,
                now.timeIntervalSince(modified) > age
            else { continue }
            try? manager.removeItem(at: file)
        }
    }

    /// Deletes all but the newest `keep` backups of `service` in `folder` (their names sort
    /// by time).
    public static func prune(folder: URL, service: String, keep: Int) {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix("\(service)-") && ($0.hasSuffix(".sqlite") || $0.hasSuffix(".sqlite.sealed")) }.sorted()
        for file in files.dropLast(max(1, keep)) { try? FileManager.default.removeItem(at: folder.appendingPathComponent(file)) }
    }

    static func fsync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw Failure("cannot open \(url.path) to sync it") }
        defer { close(descriptor) }
        guard Foundation.fsync(descriptor) == 0 else { throw Failure("fsync of \(url.path) failed") }
    }
}

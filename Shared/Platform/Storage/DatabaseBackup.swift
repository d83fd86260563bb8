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

    /// Backs up `database` (a service's `<name>.sqlite`) into `file`, sealed (``BackupSeal``)
    /// when `sealing` is given.
    public static func backup(_ database: URL, to file: URL, sealing: BackupSealing? = nil) throws -> Written {
        guard let sealing else { return try plainBackup(database, to: file) }
        let plain = database.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).plain")
        defer { try? FileManager.default.removeItem(at: plain) }
        let copied = try plainBackup(database, to: plain)
        let sealed = try BackupSeal.seal(Array(try Data(contentsOf: plain)), to: sealing.recipient, from: sealing.sender)
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

    /// Puts `backup` in place of `database` while its service is stopped: opens it with
    /// `secretKey` if it is sealed, checks it, keeps the current file (and its WAL) beside it
    /// as `<name>.sqlite.replaced-<time>`, and renames the checked copy into place. Returns
    /// the kept file's path, if there was one.
    @discardableResult
    ///
    /// A sealed backup is accepted only when sealed by one of `senders` (name → public
    /// key: the service's own and the operator's, ``CurveKeyring/backupSenders(of:)``).
    ///
    /// The file is read once, as a regular file (not a pipe or a device), and every check
    /// is made on those bytes: a file swapped while the restore runs changes nothing.
    /// `requireSealed` refuses an unsealed one (a deployment that seals its backups).
    public static func restore(
        _ backup: URL, into database: URL, secretKey: [UInt8]? = nil, senders: [String: [UInt8]] = [:], requireSealed: Bool = false,
        now: Date = Date()
    ) throws -> URL? {
        let bytes = try readRegularFile(backup)
        // A service with the database open (even one stopped with SIGSTOP) would go on
        // writing to the file set aside: refuse while any other process has it open.
        if let holder = openedBy(database) {
            throw Failure("\(database.lastPathComponent) is open in process \(holder) (its service is running, or stopped but not ended): end it before restoring")
        }
        let folder = database.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let incoming = folder.appendingPathComponent(".\(database.lastPathComponent).restoring")
        try? FileManager.default.removeItem(at: incoming)
        if BackupSeal.isSealed(bytes) {
            guard let secretKey else { throw Failure("\(backup.path) is sealed: it needs the operators' backup.secret") }
            let opened = try BackupSeal.open(bytes, secretKey: secretKey)
            guard senders.values.contains(opened.sender) else {
                throw Failure(
                    "\(backup.path) was not sealed by \(senders.keys.sorted().joined(separator: " or ")): a backup made elsewhere is not put back")
            }
            guard FileManager.default.createFile(atPath: incoming.path, contents: Data(opened.plaintext), attributes: [.posixPermissions: 0o600]) else {
                throw Failure("cannot write \(incoming.path)")
            }
        } else {
            guard !requireSealed else {
                throw Failure("\(backup.path) is not sealed, and this deployment seals its backups: anyone could have written it")
            }
            guard FileManager.default.createFile(atPath: incoming.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
                throw Failure("cannot write \(incoming.path)")
            }
        }
        do {
            let service = database.deletingPathExtension().lastPathComponent
            let (check, owner) = try DatabaseQueue(path: incoming.path).read { db in
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard try db.tableExists("platform_meta") else { throw Failure("\(backup.path) is not a database of this system (no platform tables)") }
                return (check, try String.fetchOne(db, sql: "SELECT value FROM platform_meta WHERE key = 'service'"))
            }
            guard check == ["ok"] else { throw Failure("\(backup.path) is not a sound SQLite database: \(check.prefix(3))") }
            // Backups made before databases were marked carry no name.
            if let owner, owner != service { throw Failure("\(backup.path) is a backup of \(owner), not of \(service)") }
        } catch {
            try? FileManager.default.removeItem(at: incoming)
            throw error is Failure ? error : Failure("\(backup.path) is not a SQLite database")
        }
        // Event seqs never go back and are never given twice (CONTRACT.md): subscribers
        // have applied what the replaced database published, so a reused seq would be
        // taken for one already applied. New events continue after every seq any copy of
        // the database can have given out. The events after the backup are lost with the
        // rest of its writes. The restore goes on the source's restore history
        // (`events.replay` answers it; `RestoreHistory`).
        let replaced = try? history(of: database)
        let queue = try DatabaseQueue(path: incoming.path)
        do {
            try queue.write { db in
                guard try db.tableExists("platform_event") else { return }
                let backupLast = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM platform_event") ?? 0
                let restored = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'platform_event'") ?? 0
                // Past every seq any copy of this database can have given out: the replaced
                // file's (when it is there), and the clock's microseconds since 1970 (when it
                // is gone, or when it is not the copy that went furthest, after earlier
                // restores). No history of the source gives a million events a second, so a
                // seq is never given twice, whatever was restored over what.
                let earlier = (
                    replaced: replaced.map { RestoreHistory.sane($0.restores, last: $0.given) } ?? [],
                    backup: RestoreHistory.sane(try RestoreHistory.restores(db), last: max(backupLast, restored))
                )
                // The clock must be past every earlier restore's: one set back could give seqs
                // that an earlier restore's history gave. Where the histories show it, refuse.
                let floor = RestoreHistory.clockFloor(now)
                if let latest = (earlier.replaced + earlier.backup).filter({ !$0.gaveSeqsAgain }).map(\.resumedAfter).max(), latest >= floor {
                    throw Failure(
                        "this machine's clock (\(Instant.format(now))) is behind an earlier restore of this database "
                            + "(seqs from \(latest)): set the clock right (NTP) and restore again")
                }
                let resumedAfter = max(backupLast + 1, restored, replaced?.given ?? 0, floor)
                let restore = RestoreRecord(id: UUID().uuidString, restoredAt: backupLast, resumedAfter: resumedAfter)
                try RestoreHistory.store(db, RestoreHistory.appending(restore, replaced: earlier.replaced, backup: earlier.backup))
                guard resumedAfter > restored else { return }
                try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'platform_event'")
                try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('platform_event', ?)", arguments: [resumedAfter])
            }
        } catch {
            // Nothing is replaced: the working copy goes.
            try? queue.close()
            try? FileManager.default.removeItem(at: incoming)
            throw error
        }
        try queue.close()
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

    /// The highest event seq `database` has given out and its restore history (`nil`
    /// when it does not exist or has no outbox).
    static func history(of database: URL) throws -> (given: Int64, restores: [RestoreRecord])? {
        guard FileManager.default.fileExists(atPath: database.path) else { return nil }
        let queue = try DatabaseQueue(path: database.path)
        defer { try? queue.close() }
        return try queue.read { db in
            guard try db.tableExists("platform_event") else { return nil }
            return (try Outbox.lastSeq(db), try db.tableExists("platform_meta") ? RestoreHistory.restores(db) : [])
        }
    }

    /// The whole of a regular file, read through one descriptor (a pipe, a device or a
    /// folder is refused; a symbolic link is followed once, at open).
    static func readRegularFile(_ url: URL) throws -> [UInt8] {
        let descriptor = Glibc.open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure("cannot open \(url.path): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { throw Failure("\(url.path) is not a regular file") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var read = 0
        while read < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + read, $0.count - read) }
            guard count > 0 else { throw Failure("cannot read \(url.path)") }
            read += count
        }
        return bytes
    }

    /// The process id of another process that has `database` open, if one has: SQLite
    /// connections in WAL mode hold a shared lock on byte 128 of the `-shm` file (the
    /// "DMS" lock) as long as they are open, which `F_GETLK` reports for other processes.
    public static func openedBy(_ database: URL) -> Int32? {
        let shm = database.path + "-shm"
        let descriptor = Glibc.open(shm, O_RDWR)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 128
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid
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
        // Only the backups this system names (`<service>-<UTC time>.sqlite[.sealed]`): a file an
        // operator put there by another name is neither counted nor removed.
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { isBackupName($0, service: service) }.sorted()
        for file in files.dropLast(max(1, keep)) { try? FileManager.default.removeItem(at: folder.appendingPathComponent(file)) }
    }

    /// Whether `name` is one of ``fileName(service:at:sealed:)``'s names for `service`.
    static func isBackupName(_ name: String, service: String) -> Bool {
        let prefix = "\(service)-"
        guard name.hasPrefix(prefix) else { return false }
        var stamp = name.dropFirst(prefix.count)
        if stamp.hasSuffix(".sqlite.sealed") { stamp = stamp.dropLast(".sqlite.sealed".count) } else if stamp.hasSuffix(".sqlite") { stamp = stamp.dropLast(".sqlite".count) } else { return false }
        guard let date = reparse(String(stamp)) else { return false }
        // Not in the future (beyond clock skew): files dated ahead would outrank, and
        // get pruned instead of, every real backup.
        return date <= Date().addingTimeInterval(300)
    }

    /// `2026-11-27T01-57-02.060Z` (the file name's form) as an instant.
    private static func reparse(_ stamp: String) -> Date? {
        guard let t = stamp.firstIndex(of: "T") else { return nil }
        return Instant.parse(String(stamp[..<t]) + stamp[t...].replacingOccurrences(of: "-", with: ":"))
    }

    static func fsync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw Failure("cannot open \(url.path) to sync it") }
        defer { close(descriptor) }
        guard Foundation.fsync(descriptor) == 0 else { throw Failure("fsync of \(url.path) failed") }
    }
}

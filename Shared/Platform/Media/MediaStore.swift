import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One service's image files, stored once per content:
/// `<data>/media/<service>/<first two hex digits of the SHA-256>/<SHA-256>`.
///
/// A file is written to `tmp/` beside them, flushed to disk (`fsync`), renamed into place
/// and its folder flushed, so a crash leaves either the whole file or none (a leftover
/// temporary is swept later). Which files are still wanted is the database's business
/// (``MediaCatalog``); the store only writes, reads, lists and removes.
///
/// Every method blocks on the disk: call them from ``MediaStore/files`` threads, or on
/// the database's writer or reader (as SQLite's own reads and writes are), never on the
/// cooperative pool.
public struct MediaStore: Sendable {
    /// The service's media folder, `<data>/media/<service>`.
    public let directory: URL

    /// Dedicated threads for the blocking work of uploads (decoding, hashing, writing
    /// and flushing files) and the sweep's listing.
    public static let files = WorkerThreads(name: "media-files", count: 2)

    /// The store of `service` under the data folder `dataDirectory`.
    public init(service: String, dataDirectory: URL) {
        directory = dataDirectory.appendingPathComponent("media").appendingPathComponent(service)
    }

    /// The store of `service` beside its database file (the data folder holds both).
    public init(service: String, databasePath: String) {
        self.init(service: service, dataDirectory: URL(fileURLWithPath: databasePath).deletingLastPathComponent())
    }

    /// Whether `text` is a SHA-256 as the store names files: 64 lowercase hex digits.
    public static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The path of the file holding the content with this hash.
    public func path(of sha256: String) throws -> String {
        guard Self.isHash(sha256) else { throw MediaStoreError("not a SHA-256: \(sha256.prefix(80))") }
        return directory.appendingPathComponent(String(sha256.prefix(2))).appendingPathComponent(sha256).path
    }

    /// Whether the file of `sha256` is there with `bytes` bytes.
    public func contains(_ sha256: String, bytes: Int) -> Bool {
        guard let path = try? path(of: sha256) else { return false }
        var info = stat()
        return stat(path, &info) == 0 && Int(info.st_size) == bytes
    }

    /// Stores `content` under its hash unless it is already there: temporary file, fsync,
    /// rename, fsync of the folder.
    public func write(_ content: Data, sha256: String) throws {
        let target = try path(of: sha256)
        if contains(sha256, bytes: content.count) { return }
        let temporaryFolder = directory.appendingPathComponent("tmp")
        let folder = URL(fileURLWithPath: target).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: temporaryFolder, withIntermediateDirectories: true)
        let createdFolder = !FileManager.default.fileExists(atPath: folder.path)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = temporaryFolder.appendingPathComponent("\(sha256).\(Digest.hex(Digest.randomBytes(6)))").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw MediaStoreError("cannot create \(temporary)", errno: errno) }
        do {
            try Self.writeAll(descriptor, content)
            guard fsync(descriptor) == 0 else { throw MediaStoreError("cannot flush \(temporary)", errno: errno) }
            close(descriptor)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, target) == 0 else {
            let code = errno
            unlink(temporary)
            throw MediaStoreError("cannot rename into \(target)", errno: code)
        }
        try Self.flushFolder(folder.path)
        // A new prefix folder (and, the first time, `media/<service>` and `media/`) is an
        // entry of its parent, flushed too, or a power loss could lose the folder.
        if createdFolder {
            for ancestor in [directory, directory.deletingLastPathComponent(), directory.deletingLastPathComponent().deletingLastPathComponent()] {
                try Self.flushFolder(ancestor.path)
            }
        }
    }

    /// The content stored under `sha256`, or `nil` when there is no such file. A file of
    /// another size than `bytes` (when given) is damaged: an error, never served.
    public func read(_ sha256: String, bytes: Int? = nil) throws -> Data? {
        let path = try path(of: sha256)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw MediaStoreError("cannot open \(path)", errno: errno)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw MediaStoreError("cannot stat \(path)", errno: errno) }
        if let bytes, Int(info.st_size) != bytes {
            throw MediaStoreError("\(path) has \(info.st_size) bytes, its row says \(bytes)")
        }
        var content = Data(count: Int(info.st_size))
        var offset = 0
        try content.withUnsafeMutableBytes { raw in
            while offset < raw.count, let base = raw.baseAddress {
                let count = Glibc.read(descriptor, base + offset, raw.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw MediaStoreError("cannot read \(path)", errno: count == 0 ? EIO : errno) }
                offset += count
            }
        }
        return content
    }

    /// Removes the file of `sha256`, if it is there.
    public func remove(_ sha256: String) {
        guard let path = try? path(of: sha256) else { return }
        unlink(path)
    }

    /// The hashes of stored files last written before `date` (the sweep's candidates:
    /// a file written since may belong to an upload whose row is not committed yet).
    public func hashes(writtenBefore date: Date) -> [String] {
        var hashes: [String] = []
        let manager = FileManager.default
        for prefix in (try? manager.contentsOfDirectory(atPath: directory.path)) ?? [] where prefix.utf8.count == 2 {
            let folder = directory.appendingPathComponent(prefix)
            for name in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
            where Self.isHash(name) && name.hasPrefix(prefix) && Self.modified(folder.appendingPathComponent(name).path).map({ $0 < date }) == true {
                hashes.append(name)
            }
        }
        return hashes
    }

    /// Removes temporary files left by uploads that died before their rename (a crash),
    /// those older than `date`; returns how many.
    @discardableResult
    public func removeTemporaries(writtenBefore date: Date) -> Int {
        let folder = directory.appendingPathComponent("tmp")
        var removed = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
            let path = folder.appendingPathComponent(name).path
            if Self.modified(path).map({ $0 < date }) == true, unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    private static func modified(_ path: String) -> Date? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
    }

    private static func writeAll(_ descriptor: Int32, _ content: Data) throws {
        try content.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, let base = raw.baseAddress {
                let count = Glibc.write(descriptor, base + offset, raw.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw MediaStoreError("cannot write a media file", errno: errno) }
                offset += count
            }
        }
    }

    /// Flushes a folder's entries, so a rename or a new entry survives a power loss.
    private static func flushFolder(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw MediaStoreError("cannot open \(path)", errno: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw MediaStoreError("cannot flush \(path)", errno: errno) }
    }
}

/// A file operation of the media store failed (the disk, permissions); the request is
/// answered `internal` and the cause logged.
public struct MediaStoreError: Error, CustomStringConvertible {
    /// What failed, with the errno's name when there is one.
    public let description: String

    init(_ what: String, errno code: Int32? = nil) {
        description = code.map { "\(what): \(String(cString: strerror($0)))" } ?? what
    }
}

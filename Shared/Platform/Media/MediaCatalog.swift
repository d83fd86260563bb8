import Foundation
import GRDB

/// One stored image as its row holds it.
public struct MediaRecord: Sendable, Equatable {
    /// The image's id (`med_...`): random, so it tells nothing of the content or of other
    /// uploads of the same content.
    public var id: String
    /// SHA-256 of the content: the name of its file, shared by every upload of it.
    public var sha256: String
    /// Format and size, read from the content.
    public var header: ImageHeader
    /// The content's length.
    public var bytes: Int
    /// When it was uploaded.
    public var createdAt: String
    /// Who uploaded it (`nil` once the account was deleted).
    public var createdBy: String?

    /// Creates a record.
    public init(id: String, sha256: String, header: ImageHeader, bytes: Int, createdAt: String, createdBy: String?) {
        self.id = id
        self.sha256 = sha256
        self.header = header
        self.bytes = bytes
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}

/// The media rows of a service's database and who refers to them.
///
/// `platform_media` has one row per upload; files are per content (``MediaStore``), so
/// two uploads of the same bytes are two ids and one file. A domain row that shows an
/// image holds its id and registers a reference (`owner`, e.g. `cable:reverse-1`) in
/// `platform_media_reference`, in the same transaction. When the last reference goes, the
/// upload's row goes with it, and its file after the commit once no other row names that
/// content. An upload nothing ever referred to goes after a day (``MediaSweep``).
public enum MediaCatalog {
    /// The platform's media tables (migration `platform-media-1`).
    static func createTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE platform_media (
                id TEXT PRIMARY KEY,
                sha256 TEXT NOT NULL,
                content_type TEXT NOT NULL,
                width INTEGER NOT NULL CHECK (width > 0),
                height INTEGER NOT NULL CHECK (height > 0),
                bytes INTEGER NOT NULL CHECK (bytes > 0),
                created_at TEXT NOT NULL,
                created_by TEXT
            );
            CREATE INDEX platform_media_sha256 ON platform_media(sha256);
            CREATE TABLE platform_media_reference (
                owner TEXT NOT NULL,
                media_id TEXT NOT NULL REFERENCES platform_media(id),
                PRIMARY KEY (owner, media_id)
            ) WITHOUT ROWID;
            CREATE INDEX platform_media_reference_media ON platform_media_reference(media_id);
            """)
    }

    /// Adds an upload's row.
    static func insert(_ db: Database, _ record: MediaRecord) throws {
        try db.execute(
            sql: """
                INSERT INTO platform_media (id, sha256, content_type, width, height, bytes, created_at, created_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                record.id, record.sha256, record.header.contentType, record.header.width, record.header.height, record.bytes,
                record.createdAt, record.createdBy,
            ])
    }

    /// The upload `id`, if it exists.
    public static func record(_ db: Database, id: String) throws -> MediaRecord? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM platform_media WHERE id = ?", arguments: [id]),
            let format = ImageHeader.Format(rawValue: row["content_type"])
        else { return nil }
        return MediaRecord(
            id: row["id"], sha256: row["sha256"], header: ImageHeader(format: format, width: row["width"], height: row["height"]),
            bytes: row["bytes"], createdAt: row["created_at"], createdBy: row["created_by"])
    }

    /// How many references `id` has.
    public static func referenceCount(_ db: Database, id: String) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_media_reference WHERE media_id = ?", arguments: [id]) ?? 0
    }

    /// Refuses an id that names no upload with `validation_failed` on `field` (`nil` passes):
    /// call it before writing the domain row that will name the image.
    ///
    /// `uploadedBy` is for a user's own rows (a reminder, a sponsor's avatar): only what that
    /// user uploaded. Ids are random, but an id is not a secret once it is shown (a push's
    /// image URL): without this, someone who learned another user's fresh upload could
    /// attach it and drop it again, and the last reference gone would remove the upload
    /// before its uploader used it. Another's upload is answered as unknown, like a
    /// missing one. Staff's catalogs leave it `nil`: one admin uses another's upload.
    public static func requireUpload(_ db: Database, _ id: String?, field: String, uploadedBy uploader: String? = nil) throws {
        guard let id else { return }
        let found =
            if let uploader {
                try Bool.fetchOne(db, sql: "SELECT 1 FROM platform_media WHERE id = ? AND created_by = ?", arguments: [id, uploader])
            } else {
                try Bool.fetchOne(db, sql: "SELECT 1 FROM platform_media WHERE id = ?", arguments: [id])
            }
        guard found == true else {
            throw ServiceError.invalid(
                field, uploader == nil ? "no such image (upload it first; an image nothing uses is kept a day)" : "no such image of yours (upload it first; an image nothing uses is kept a day)")
        }
    }

    /// Makes `owner` show the image `old` no more and `new` instead (either may be `nil`:
    /// a first image, or one cleared). An unknown `new` is `validation_failed` on `field`,
    /// before anything is written. Releasing the last reference of `old` removes it (see
    /// ``release(_:_:by:store:)``). Call it after the domain row stops naming `old`.
    /// `uploadedBy`: as for ``requireUpload(_:_:field:uploadedBy:)``.
    public static func replace(
        _ db: Database, owner: String, _ old: String?, with new: String?, field: String, store: MediaStore, uploadedBy uploader: String? = nil
    ) throws {
        guard old != new else { return }
        if let new {
            try requireUpload(db, new, field: field, uploadedBy: uploader)
            try reference(db, new, by: owner)
        }
        if let old { try release(db, old, by: owner, store: store) }
    }

    /// Makes `owner` show the upload `id` (known to exist): while any owner does, nobody
    /// else's release removes it, and the sweep leaves it.
    public static func reference(_ db: Database, _ id: String, by owner: String) throws {
        try db.execute(sql: "INSERT OR IGNORE INTO platform_media_reference (owner, media_id) VALUES (?, ?)", arguments: [owner, id])
    }

    /// Drops `owner`'s reference to `id`. When nothing refers to `id` any more its row is
    /// deleted now, and its file after the commit unless another upload has the same
    /// content.
    public static func release(_ db: Database, _ id: String, by owner: String, store: MediaStore) throws {
        try db.execute(sql: "DELETE FROM platform_media_reference WHERE owner = ? AND media_id = ?", arguments: [owner, id])
        guard try referenceCount(db, id: id) == 0,
            let sha256 = try String.fetchOne(db, sql: "DELETE FROM platform_media WHERE id = ? RETURNING sha256", arguments: [id])
        else { return }
        removeFilesAfterCommit(db, [sha256], store: store)
    }

    /// Forgets who uploaded what for a deleted account.
    public static func forget(_ db: Database, user: String) throws {
        try db.execute(sql: "UPDATE platform_media SET created_by = NULL WHERE created_by = ?", arguments: [user])
    }

    /// After the transaction commits, removes the file of each hash that no row names.
    ///
    /// The check is made again after the commit, on the writer: a request whose savepoint
    /// was rolled back inside a committed group commit may have asked for a removal that
    /// did not happen, and an upload of the same content may have committed meanwhile.
    /// Nothing writes between the commit and this check (both run on the writer), and an
    /// upload checks its file again in its own transaction (``MediaOperations``), so a
    /// file is never removed under a row that names it.
    static func removeFilesAfterCommit(_ db: Database, _ hashes: Set<String>, store: MediaStore) {
        guard !hashes.isEmpty else { return }
        db.afterNextTransaction(onCommit: { db in
            for sha256 in hashes {
                do {
                    if try Bool.fetchOne(db, sql: "SELECT 1 FROM platform_media WHERE sha256 = ?", arguments: [sha256]) != true {
                        store.remove(sha256)
                    }
                } catch {
                    // Kept; the sweep removes it later.
                }
            }
        })
    }
}

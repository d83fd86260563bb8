import Foundation
import GRDB

/// The media block a service adds to its definition: `<service>.media.put` and
/// `<service>.media.get`, with the service's own auth rules.
///
/// ```swift
/// operations: ... + MediaOperations.operations(service: "booking", putAuth: .anyRole(["staff", "admin"]), getAuth: .public)
/// ```
///
/// An upload is decoded, read (``ImageHeader``), hashed and written to its file on
/// ``MediaStore/files`` threads; the transaction only inserts its row (and, should a
/// concurrent removal have taken the file meanwhile, writes it again). A read loads the
/// row and the file on the database's reader.
public enum MediaOperations {
    /// Who may read an image by its id.
    public enum Visibility: Sendable {
        /// Anyone the `get` rule admits who has the id (ids are random: they are the
        /// capability). For pictures shown to everyone (cables, packages, goal types).
        case anyoneWithTheID
        /// Only its uploader; anyone else gets `not_found`. For private images. A `.public`
        /// get rule becomes `.authenticated` (public operations do not read tokens).
        case uploader
    }

    /// `<service>.media.put` and `<service>.media.get`.
    public static func operations(
        service: String, putAuth: AuthRule, getAuth: AuthRule, visibility: Visibility = .anyoneWithTheID, limits: MediaLimits = MediaLimits()
    ) -> [ServiceOperation] {
        [put(service: service, auth: putAuth, limits: limits), get(service: service, auth: getAuth, visibility: visibility, limits: limits)]
    }

    struct PutRequest: Codable, Sendable {
        var content: String
    }

    struct PutReply: Codable, Sendable {
        var id: String
        var contentType: String
        var width: Int
        var height: Int
    }

    /// What an upload's preparation hands to its transaction.
    struct Upload: Sendable {
        var record: MediaRecord
        var content: Data
    }

    static func put(service: String, auth: AuthRule, limits: MediaLimits) -> ServiceOperation {
        .write(
            "\(service).media.put",
            summary: """
                Uploads an image: `content` is base64 (RFC 4648, padded); PNG, JPEG (baseline or progressive) or WebP, told by its \
                bytes, whole (not truncated, nothing appended); \(limits.summary). Answers its id, type and size. The same content \
                is stored once; each upload gets its own random id. Set the id on what shows the image; an image nothing uses \
                is removed a day after its upload, and at once when the last thing using it lets it go. Over the size: \
                `payload_too_large`; anything else: `validation_failed` on `content`. Send `idem`.
                """,
            auth: auth,
            request: .object(
                [
                    // The schema admits whatever a request can carry, so an image over the media
                    // limit is told `payload_too_large` with the limit, not a schema error.
                    "content": .string(minLength: 1, maxLength: RequestLimits().maxRequestBytes)
                        .described("the image, base64 with padding: at most \(limits.maxBase64Length) characters (\(limits.maxBytes) bytes)")
                ], required: ["content"]),
            response: .object(
                [
                    "id": .string(maxLength: 100), "contentType": .oneOf(ImageHeader.Format.allCases.map(\.rawValue)),
                    "width": .integer(minimum: 1, maximum: Int64(limits.maxSide)), "height": .integer(minimum: 1, maximum: Int64(limits.maxSide)),
                ], required: ["id", "contentType", "width", "height"]),
            prepare: { (context, input: PutRequest) -> Upload in
                guard input.content.utf8.count <= limits.maxBase64Length else { throw limits.tooLarge }
                let store = try context.mediaStore()
                let uploader = context.principal?.userID
                let id = RecordID.make(prefix: "med", at: context.receivedAt)
                let createdAt = Instant.format(context.receivedAt)
                return try await MediaStore.files.run {
                    // Foundation's decoder also takes extra padding ("aGVsbG8===", "===="):
                    // only whole groups of four, with at most two `=`, are base64 here.
                    guard input.content.utf8.count % 4 == 0, !input.content.hasSuffix("==="),
                        let content = Data(base64Encoded: input.content)
                    else {
                        throw ServiceError.invalid("content", "not base64 (RFC 4648 alphabet, with padding, no line breaks)")
                    }
                    guard content.count <= limits.maxBytes else { throw limits.tooLarge }
                    let header: ImageHeader
                    do throws(ImageHeader.Problem) {
                        header = try ImageHeader.read(content, limits: limits)
                    } catch {
                        throw ServiceError.invalid("content", error.description)
                    }
                    let sha256 = Digest.sha256Hex(content)
                    try store.write(content, sha256: sha256)
                    let record = MediaRecord(
                        id: id, sha256: sha256, header: header, bytes: content.count, createdAt: createdAt, createdBy: uploader)
                    return Upload(record: record, content: content)
                }
            }
        ) { (context, upload: Upload, db: Database) in
            try MediaCatalog.insert(db, upload.record)
            // A removal committed since the file was written (the last user of the same
            // content let it go) may have taken the file: the writer runs removals, so
            // checked here the file stays until this row goes.
            let store = try context.mediaStore()
            if !store.contains(upload.record.sha256, bytes: upload.record.bytes) {
                try store.write(upload.content, sha256: upload.record.sha256)
            }
            let header = upload.record.header
            return PutReply(id: upload.record.id, contentType: header.contentType, width: header.width, height: header.height)
        }
    }

    struct GetRequest: Codable, Sendable {
        var id: String
    }

    struct GetReply: Codable, Sendable {
        var content: String
        var contentType: String
        /// The content's SHA-256 (hex): what the HTTP edge sends as the image's `ETag`.
        var sha256: String
    }

    static func get(service: String, auth: AuthRule, visibility: Visibility, limits: MediaLimits) -> ServiceOperation {
        let who =
            switch visibility {
            case .anyoneWithTheID: "anyone with its id"
            case .uploader: "its uploader only (anyone else gets `not_found`)"
            }
        let auth = visibility == .uploader && auth == .public ? AuthRule.authenticated : auth
        return .read(
            "\(service).media.get",
            summary: """
                An image by its id, for \(who): `content` base64, `contentType` image/png, image/jpeg or image/webp, `sha256` \
                of the content (hex). Unknown or removed: `not_found`.
                """,
            auth: auth,
            request: .object(["id": .string(minLength: 1, maxLength: 100)], required: ["id"]),
            response: .object(
                [
                    "content": .string(minLength: 1, maxLength: limits.maxBase64Length).described("base64 with padding"),
                    "contentType": .oneOf(ImageHeader.Format.allCases.map(\.rawValue)),
                    "sha256": .string(minLength: 64, maxLength: 64),
                ], required: ["content", "contentType", "sha256"])
        ) { (context, input: GetRequest, db: Database) in
            guard let record = try MediaCatalog.record(db, id: input.id) else { throw ServiceError.notFound("no such image") }
            if case .uploader = visibility, record.createdBy == nil || record.createdBy != context.principal?.userID {
                throw ServiceError.notFound("no such image")
            }
            // The file is read here, on the reader (as SQLite reads a blob); it is gone only
            // when the image was removed after this row was read.
            guard let content = try context.mediaStore().read(record.sha256, bytes: record.bytes) else {
                throw ServiceError.notFound("no such image")
            }
            return GetReply(content: content.base64EncodedString(), contentType: record.header.contentType, sha256: record.sha256)
        }
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// A service with the media block and one domain table whose rows show an image, as a
/// service adopting it would have.
enum AlbumService {
    static let staff = TestCaller.user("staff-1", roles: ["staff"])

    struct Show: Codable, Sendable {
        var owner: String
        var image: String?
    }

    static func definition(visibility: MediaOperations.Visibility = .anyoneWithTheID) -> ServiceDefinition {
        ServiceDefinition(
            name: "album", summary: "Pictures on pages.", durability: .full,
            operations: MediaOperations.operations(service: "album", putAuth: .anyRole(["staff"]), getAuth: .public, visibility: visibility) + [
                .write(
                    "album.show", summary: "Shows an image on a page, or none.", auth: .anyRole(["staff"]),
                    request: .object(["owner": .string(minLength: 1), "image": .string(minLength: 1).nullable()], required: ["owner"]),
                    response: .empty
                ) { (context, input: Show, db: Database) in
                    let current = try String.fetchOne(db, sql: "SELECT image_id FROM page WHERE owner = ?", arguments: [input.owner])
                    try MediaCatalog.requireUpload(db, input.image, field: "image")
                    try db.execute(
                        sql: "INSERT INTO page (owner, image_id) VALUES (?, ?) ON CONFLICT(owner) DO UPDATE SET image_id = excluded.image_id",
                        arguments: [input.owner, input.image])
                    try MediaCatalog.replace(db, owner: "page:\(input.owner)", current, with: input.image, field: "image", store: try context.mediaStore())
                    return Empty()
                }
            ],
            migrations: { migrator in
                migrator.registerMigration("album-1") { db in
                    try db.execute(sql: "CREATE TABLE page (owner TEXT PRIMARY KEY, image_id TEXT REFERENCES platform_media(id))")
                }
            })
    }

    static func put(_ service: InProcessService, _ content: Data, as caller: TestCaller = staff, idem: String? = nil) async throws -> Reply.Parsed {
        try await service.call("album.media.put", data: ["content": .string(content.base64EncodedString())], as: caller, idem: idem)
    }

    static func store(_ service: InProcessService) -> MediaStore {
        MediaStore(service: "album", dataDirectory: service.dataDirectory)
    }

    /// Every stored file's hash.
    static func files(_ service: InProcessService) -> [String] {
        store(service).hashes(writtenBefore: .distantFuture).sorted()
    }
}

@Suite("Media store")
struct MediaStoreTests {
    @Test("content is stored once under its hash, read back whole, and written again only when missing")
    func storeOnce() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let store = MediaStore(service: "album", dataDirectory: directory.url)
        let content = TestImages.png(width: 20, height: 20)
        let hash = Digest.sha256Hex(content)
        try store.write(content, sha256: hash)
        let path = try store.path(of: hash)
        #expect(path == directory.url.path + "/media/album/\(hash.prefix(2))/\(hash)")
        let first = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        try store.write(content, sha256: hash)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == first)
        #expect(try store.read(hash) == content)
        #expect(store.hashes(writtenBefore: .distantFuture) == [hash])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path + "/media/album/tmp").isEmpty)
        // A file cut short (a disk error, a hand edit) is not taken for the content: written again.
        try Data(content.prefix(10)).write(to: URL(fileURLWithPath: path))
        #expect(!store.contains(hash, bytes: content.count))
        try store.write(content, sha256: hash)
        #expect(try store.read(hash) == content)
        // A file of another size than its row says is damaged: never served.
        #expect(throws: MediaStoreError.self) { try store.read(hash, bytes: content.count + 1) }
        store.remove(hash)
        #expect(try store.read(hash) == nil)
        #expect(throws: MediaStoreError.self) { try store.path(of: "../../etc/passwd") }
    }

    @Test("a crash mid-write leaves only a temporary, never a partial file under the hash; the sweep removes old temporaries")
    func crashLeftovers() async throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let store = MediaStore(service: "album", dataDirectory: directory.url)
        let content = TestImages.png(width: 20, height: 20)
        let hash = Digest.sha256Hex(content)
        // What a process killed between write and rename leaves: half a file in tmp/.
        let temporaries = directory.url.appendingPathComponent("media/album/tmp")
        try FileManager.default.createDirectory(at: temporaries, withIntermediateDirectories: true)
        let leftover = temporaries.appendingPathComponent("\(hash).0123456789ab")
        try Data(content.prefix(content.count / 2)).write(to: leftover)
        let fresh = temporaries.appendingPathComponent("\(hash).ba9876543210")
        try Data(content.prefix(5)).write(to: fresh)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7_200)], ofItemAtPath: leftover.path)
        #expect(try store.read(hash) == nil)
        #expect(store.hashes(writtenBefore: .distantFuture).isEmpty)
        // An upload of the same content afterwards is whole.
        try store.write(content, sha256: hash)
        #expect(try store.read(hash) == content)
        // The sweep removes the old temporary and keeps the fresh one (an upload in progress).
        #expect(store.removeTemporaries(writtenBefore: Date().addingTimeInterval(-3_600)) == 1)
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        #expect(FileManager.default.fileExists(atPath: fresh.path))
    }
}

@Suite("Media operations")
struct MediaOperationTests {
    @Test("staff upload an image; anyone reads it back whole with its type; others may not upload")
    func putAndGet() async throws {
        try await InProcessService.with(AlbumService.definition()) { album in
            for (content, type, width, height) in [
                (TestImages.png(width: 30, height: 20), "image/png", 30, 20), (TestImages.jpeg, "image/jpeg", 3, 2),
                (TestImages.webpLossless, "image/webp", 3, 2),
            ] {
                let put = try await AlbumService.put(album, content)
                #expect(put.ok, "\(put.error?.message ?? "") \(put.error?.fields ?? [:])")
                let id = try #require(put.data?["id"]?.stringValue)
                #expect(id.hasPrefix("med_"))
                #expect(put.data?["contentType"]?.stringValue == type)
                #expect(put.data?["width"] == .integer(Int64(width)) && put.data?["height"] == .integer(Int64(height)))
                let got = try await album.call("album.media.get", data: ["id": .string(id)])
                #expect(got.data?["contentType"]?.stringValue == type)
                #expect(got.data?["content"]?.stringValue.flatMap { Data(base64Encoded: $0) } == content)
            }
            let png = TestImages.png(width: 2, height: 2)
            #expect(try await AlbumService.put(album, png, as: .anonymous).error?.code == .unauthenticated)
            #expect(try await AlbumService.put(album, png, as: .user("rider", roles: ["recipient"])).error?.code == .forbidden)
            #expect(try await album.call("album.media.get", data: ["id": "med_nope"]).error?.code == .notFound)
            #expect(try await album.call("album.media.get", data: ["id": ""]).error?.fields["id"] != nil)
        }
    }

    @Test("bad content: not base64, not an image, a text file, too many pixels, truncated: validation_failed on content; over 512 KiB: payload_too_large")
    func badContent() async throws {
        try await InProcessService.with(AlbumService.definition()) { album in
            let staff = AlbumService.staff
            let png = TestImages.png(width: 2, height: 2).base64EncodedString()
            for text in ["not base64!", "iVBORw0KGgo", "aGVsbG8=\n", "aGVsbG8", "====", png + "====", png + "=", String(png.dropLast(4)) + "ab-_"] {
                let reply = try await album.call("album.media.put", data: ["content": .string(text)], as: staff)
                #expect(reply.error?.code == .validationFailed && reply.error?.fields["content"] != nil, "\(text): \(reply.error?.message ?? "ok")")
            }
            for content in [
                Data("just text named photo.png".utf8), TestImages.png(width: 9_000, height: 1), TestImages.png(width: 3, height: 2).prefix(40),
                TestImages.jpeg.prefix(TestImages.jpeg.count - 2), TestImages.jpeg + Data("<?php".utf8),
            ] {
                let reply = try await AlbumService.put(album, content)
                #expect(reply.error?.code == .validationFailed, "\(reply.error?.message ?? "ok")")
                #expect(reply.error?.fields["content"] != nil)
            }
            #expect(try await album.call("album.media.put", data: ["content": ""], as: staff).error?.fields["content"] != nil)
            #expect(try await album.call("album.media.put", data: [:], as: staff).error?.fields["content"] != nil)
            // 512 KiB is accepted; one byte more is too large, and so is the largest request.
            let limit = MediaLimits().maxBytes
            let atLimit = TestImages.png(width: 300, height: 581)
            #expect(atLimit.count <= limit && atLimit.count > limit - 1_000)
            #expect(try await AlbumService.put(album, atLimit).ok)
            let over = TestImages.png(width: 300, height: 582)
            #expect(over.count > limit)
            let tooLarge = try await AlbumService.put(album, over)
            #expect(tooLarge.error?.code == .payloadTooLarge && tooLarge.error?.details["limitBytes"] == .integer(Int64(limit)))
            let huge = String(repeating: "A", count: 900_000)
            #expect(try await album.call("album.media.put", data: ["content": .string(huge)], as: staff).error?.code == .payloadTooLarge)
            // Nothing of the refused uploads stayed: one file, of the accepted image.
            #expect(AlbumService.files(album).count == 1)
        }
    }

    @Test("the same content uploaded twice is two ids and one file; the file goes when the last upload of it goes")
    func deduplication() async throws {
        try await InProcessService.with(AlbumService.definition()) { album in
            let content = TestImages.png(width: 10, height: 10)
            let first = try #require(try await AlbumService.put(album, content).data?["id"]?.stringValue)
            let second = try #require(try await AlbumService.put(album, content, as: .user("staff-2", roles: ["staff"])).data?["id"]?.stringValue)
            #expect(first != second)
            #expect(AlbumService.files(album) == [Digest.sha256Hex(content)])
            for (owner, id) in [("a", first), ("b", second)] {
                #expect(try await album.call("album.show", data: ["owner": .string(owner), "image": .string(id)], as: AlbumService.staff).ok)
            }
            #expect(try await album.call("album.show", data: ["owner": "a", "image": nil], as: AlbumService.staff).ok)
            #expect(try await album.call("album.media.get", data: ["id": .string(first)]).error?.code == .notFound)
            #expect(try await album.call("album.media.get", data: ["id": .string(second)]).ok)
            #expect(AlbumService.files(album).count == 1)
            #expect(try await album.call("album.show", data: ["owner": "b", "image": nil], as: AlbumService.staff).ok)
            #expect(try await album.call("album.media.get", data: ["id": .string(second)]).error?.code == .notFound)
            #expect(AlbumService.files(album).isEmpty)
            #expect(try await album.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_media") } == 0)
        }
    }

    @Test("references are counted: an image shown on two pages stays until neither shows it; replacing releases the old one")
    func references() async throws {
        try await InProcessService.with(AlbumService.definition()) { album in
            let staff = AlbumService.staff
            let old = try #require(try await AlbumService.put(album, TestImages.png(width: 4, height: 4, seed: 1)).data?["id"]?.stringValue)
            let new = try #require(try await AlbumService.put(album, TestImages.png(width: 4, height: 4, seed: 2)).data?["id"]?.stringValue)
            #expect(try await album.call("album.show", data: ["owner": "a", "image": .string(old)], as: staff).ok)
            #expect(try await album.call("album.show", data: ["owner": "b", "image": .string(old)], as: staff).ok)
            // Shown again on the same page: still one reference from it.
            #expect(try await album.call("album.show", data: ["owner": "a", "image": .string(old)], as: staff).ok)
            #expect(try await album.runtime.pool.read { db in try MediaCatalog.referenceCount(db, id: old) } == 2)
            #expect(try await album.call("album.show", data: ["owner": "a", "image": .string(new)], as: staff).ok)
            #expect(try await album.call("album.media.get", data: ["id": .string(old)]).ok)
            #expect(try await album.call("album.show", data: ["owner": "b", "image": .string(new)], as: staff).ok)
            #expect(try await album.call("album.media.get", data: ["id": .string(old)]).error?.code == .notFound)
            #expect(AlbumService.files(album).count == 1)
            // An unknown image is refused before anything changes.
            let unknown = try await album.call("album.show", data: ["owner": "a", "image": "med_0_0"], as: staff)
            #expect(unknown.error?.fields["image"] != nil)
            #expect(try await album.runtime.pool.read { db in try MediaCatalog.referenceCount(db, id: new) } == 2)
        }
    }

    @Test("an upload retried with its idem key answers the same id; the sweep removes uploads nothing used for a day and files no row names")
    func idempotencyAndSweep() async throws {
        try await InProcessService.with(AlbumService.definition()) { album in
            let content = TestImages.png(width: 6, height: 6)
            let first = try await AlbumService.put(album, content, idem: "up-1")
            let again = try await AlbumService.put(album, content, idem: "up-1")
            #expect(first.data?["id"] != nil && first.data == again.data)
            let kept = try #require(try await AlbumService.put(album, TestImages.png(width: 7, height: 7)).data?["id"]?.stringValue)
            #expect(try await album.call("album.show", data: ["owner": "a", "image": .string(kept)], as: AlbumService.staff).ok)
            // An orphan file (its row vanished in a crash before the removal ran).
            let store = AlbumService.store(album)
            let orphan = TestImages.png(width: 8, height: 8)
            try store.write(orphan, sha256: Digest.sha256Hex(orphan))
            #expect(AlbumService.files(album).count == 3)

            // Now: nothing is old enough.
            let now = try await MediaSweep.run(pool: album.runtime.pool, store: store)
            #expect(now == MediaSweep.Outcome())
            // A day and a bit later: the unused upload and the orphan go, the shown image stays.
            let later = try await MediaSweep.run(pool: album.runtime.pool, store: store, now: Date().addingTimeInterval(90_000))
            #expect(later.uploads == 1 && later.files == 1)
            #expect(AlbumService.files(album) == [Digest.sha256Hex(TestImages.png(width: 7, height: 7))])
            #expect(try await album.call("album.media.get", data: ["id": .string(kept)]).ok)
            #expect(try await album.call("album.media.get", data: ["id": first.data?["id"] ?? .null]).error?.code == .notFound)
        }
    }

    @Test("private images: only the uploader reads them; another user is told not_found, an anonymous caller unauthenticated")
    func uploaderOnly() async throws {
        try await InProcessService.with(AlbumService.definition(visibility: .uploader)) { album in
            let id = try #require(try await AlbumService.put(album, TestImages.jpeg).data?["id"])
            #expect(try await album.call("album.media.get", data: ["id": id], as: AlbumService.staff).ok)
            #expect(try await album.call("album.media.get", data: ["id": id], as: .user("someone-else")).error?.code == .notFound)
            #expect(try await album.call("album.media.get", data: ["id": id]).error?.code == .unauthenticated)
        }
    }

    @Test("uploads and releases of the same content racing each other never leave a row without its file")
    func racingPutAndRelease() async throws {
        try await InProcessService.with(AlbumService.definition()) { album in
            let content = TestImages.png(width: 16, height: 16)
            let staff = AlbumService.staff
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for round in 0..<6 {
                            // Upload, show, then clear: each clear may remove the last row of the content
                            // while another worker's upload of it is between its file and its commit.
                            let put = try await AlbumService.put(album, content)
                            let id = try #require(put.data?["id"], "\(put.error?.message ?? "")")
                            let owner = JSONValue.string("w\(worker)")
                            #expect(try await album.call("album.show", data: ["owner": owner, "image": id], as: staff).ok)
                            if round < 5 { #expect(try await album.call("album.show", data: ["owner": owner, "image": nil], as: staff).ok) }
                            let got = try await album.call("album.media.get", data: ["id": id])
                            if round == 5 { #expect(got.data?["content"]?.stringValue.flatMap { Data(base64Encoded: $0) } == content) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let rows = try await album.runtime.pool.read { db in try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM platform_media") }
            #expect(rows == [Digest.sha256Hex(content)])
            #expect(AlbumService.files(album) == rows)
        }
    }
}

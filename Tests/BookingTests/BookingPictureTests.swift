import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import BookingService

/// Pictures of cables and packages in process: staff upload and set them, the park shows
/// their ids, anyone reads them, and a picture nothing shows any more is removed.
@Suite("Booking pictures")
struct BookingPictureTests {
    static let staff = BookingOperationTests.staff

    static func upload(_ booking: InProcessService, _ content: Data, as caller: TestCaller = staff) async throws -> String {
        let reply = try await booking.call("booking.media.put", data: ["content": .string(content.base64EncodedString())], as: caller)
        return try #require(reply.data?["id"]?.stringValue, "\(reply.error?.message ?? "") \(reply.error?.fields ?? [:])")
    }

    static func park(_ booking: InProcessService) async throws -> JSONValue {
        try #require(try await booking.call("booking.park.get", idempotent: true).data)
    }

    static func files(_ booking: InProcessService) -> Int {
        MediaStore(service: "booking", dataDirectory: booking.dataDirectory).hashes(writtenBefore: .distantFuture).count
    }

    @Test("staff set a cable's picture; the park shows its id; anyone reads it; replacing and clearing release the old one")
    func cablePicture() async throws {
        try await InProcessService.with(BookingService.definition(auth: nil, settings: .dev)) { booking in
            let first = try await Self.upload(booking, TestImages.jpeg)
            let second = try await Self.upload(booking, TestImages.webpLossy)
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-1", "name": "Reverse 1", "image": .string(first)], as: BookingOperationTests.admin).ok)
            var cables = try await Self.park(booking)["cables"]?.arrayValue ?? []
            #expect(cables.first { $0["id"] == "reverse-1" }?["image"]?.stringValue == first)
            #expect(cables.first { $0["id"] == "reverse-2" }?["image"] == nil)
            let picture = try await booking.call("booking.media.get", data: ["id": .string(first)])
            #expect(picture.data?["contentType"] == "image/jpeg")
            #expect(picture.data?["content"]?.stringValue.flatMap { Data(base64Encoded: $0) } == TestImages.jpeg)

            // Renaming without `image` keeps the picture.
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-1", "name": "Big reverse"], as: BookingOperationTests.admin).ok)
            cables = try await Self.park(booking)["cables"]?.arrayValue ?? []
            #expect(cables.first { $0["id"] == "reverse-1" }?["image"]?.stringValue == first)

            // Replaced: the first picture is removed (nothing else shows it), with its file.
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-1", "name": "Big reverse", "image": .string(second)], as: BookingOperationTests.admin).ok)
            #expect(try await booking.call("booking.media.get", data: ["id": .string(first)]).error?.code == .notFound)
            #expect(Self.files(booking) == 1)
            // Cleared with null.
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-1", "name": "Big reverse", "image": nil], as: BookingOperationTests.admin).ok)
            cables = try await Self.park(booking)["cables"]?.arrayValue ?? []
            #expect(cables.first { $0["id"] == "reverse-1" }?["image"] == nil)
            #expect(try await booking.call("booking.media.get", data: ["id": .string(second)]).error?.code == .notFound)
            #expect(Self.files(booking) == 0)
        }
    }

    @Test("a package's picture is set and shown; one picture on a cable and a package stays until both let it go")
    func packagePicture() async throws {
        try await InProcessService.with(BookingService.definition(auth: nil, settings: .dev)) { booking in
            let shared = try await Self.upload(booking, TestImages.png(width: 64, height: 48))
            let package: JSONValue = ["id": "five", "name": "5 sessions", "sessions": 5, "credit": 0, "price": 11_500, "image": .string(shared)]
            #expect(try await booking.call("booking.admin.packages.set", data: package, as: BookingOperationTests.admin).ok)
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-2", "name": "Reverse 2", "image": .string(shared)], as: BookingOperationTests.admin).ok)
            let packages = try await Self.park(booking)["packages"]?.arrayValue ?? []
            #expect(packages.first { $0["id"] == "five" }?["image"]?.stringValue == shared)
            #expect(try await booking.call("booking.admin.cables.set", data: ["id": "reverse-2", "name": "Reverse 2", "image": nil], as: BookingOperationTests.admin).ok)
            #expect(try await booking.call("booking.media.get", data: ["id": .string(shared)]).ok)
            var cleared = package
            if case .object(var members) = cleared {
                members["image"] = .null
                cleared = .object(members)
            }
            #expect(try await booking.call("booking.admin.packages.set", data: cleared, as: BookingOperationTests.admin).ok)
            #expect(try await booking.call("booking.media.get", data: ["id": .string(shared)]).error?.code == .notFound)
        }
    }

    @Test("riders cannot upload; an unknown or removed picture id is refused on the cable; bad content is refused")
    func refusals() async throws {
        try await InProcessService.with(BookingService.definition(auth: nil, settings: .dev)) { booking in
            let png = TestImages.png(width: 2, height: 2).base64EncodedString()
            #expect(
                try await booking.call("booking.media.put", data: ["content": .string(png)], as: BookingOperationTests.rider("r1")).error?.code
                    == .forbidden)
            #expect(try await booking.call("booking.media.put", data: ["content": .string(png)]).error?.code == .unauthenticated)
            let unknown = try await booking.call(
                "booking.admin.cables.set", data: ["id": "reverse-1", "name": "Reverse 1", "image": "med_0193a4f2c1e8_5f0c2d9a8b7e6f10"], as: BookingOperationTests.admin)
            #expect(unknown.error?.code == .validationFailed && unknown.error?.fields["image"] != nil)
            // The refused change changed nothing, not even the name.
            let cables = try await Self.park(booking)["cables"]?.arrayValue ?? []
            #expect(cables.first { $0["id"] == "reverse-1" }?["name"] == "Reverse 1")
            let text = try await booking.call(
                "booking.media.put", data: ["content": .string(Data("a text file named cable.png".utf8).base64EncodedString())], as: Self.staff)
            #expect(text.error?.code == .validationFailed && text.error?.fields["content"] == "not a PNG, JPEG or WebP image")
            // Riders and staff see the picture of the park; anyone may ask for one.
            let id = try await Self.upload(booking, TestImages.jpeg, as: .user("admin-1", roles: ["admin"]))
            #expect(try await booking.call("booking.media.get", data: ["id": .string(id)], as: BookingOperationTests.rider("r1")).ok)
        }
    }

    @Test("on auth.user.deleted, the account's uploads keep no link to it")
    func uploaderForgotten() async throws {
        try await InProcessService.with(BookingService.definition(auth: nil, settings: .dev)) { booking in
            let id = try await Self.upload(booking, TestImages.jpeg)
            let deleted = Event(source: "auth", seq: 1, type: "auth.user.deleted", at: Instant.format(Date()), data: ["userId": "staff-1"])
            let subscription = BookingService.userDeleted(BookingState())
            try await booking.runtime.pool.write { db in try subscription.apply(db, deleted) }
            let record = try await booking.runtime.pool.read { db in try MediaCatalog.record(db, id: id) }
            #expect(record != nil && record?.createdBy == nil)
        }
    }
}

import Foundation
import GRDB
import SharedTesting
import Testing

@testable import Platform
@testable import RemindersService

/// The notification operations in process, against a real database: what moves with a
/// token and what does not, dead letters gone with a device, per-app unread counts,
/// template and broadcast validation. (Found by an attack over the wire.)
@Suite("Notification operations")
struct NotificationOperationsTests {
    static let ann = TestCaller.user("user-ann", roles: [])
    static let bob = TestCaller.user("user-bob", roles: [])
    static let admin = TestCaller.user("user-admin", roles: ["admin"])

    static func with<T>(_ body: (InProcessService) async throws -> T) async throws -> T {
        let folder = try TemporaryDirectory(prefix: "push-ops")
        defer { folder.remove() }
        let push = try PushSettings(environment: [:], dataDirectory: folder.url)
        return try await InProcessService.with(RemindersService.definition(push: push), body)
    }

    @discardableResult
    static func ok(_ service: InProcessService, _ op: String, _ data: JSONValue = [:], as caller: TestCaller = ann, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> JSONValue
    {
        let reply = try await service.call(op, data: data, as: caller)
        #expect(reply.ok, "\(op): \(reply.error?.code.rawValue ?? "") \(reply.error?.message ?? "")", sourceLocation: sourceLocation)
        return reply.data ?? .null
    }

    static func queued(_ service: InProcessService, to token: String) async throws -> Int {
        try await service.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM platform_delivery WHERE destination = ?", arguments: [token]) ?? 0 }
    }

    @Test("a token that moves to another user or app takes nothing queued for it along; unregistering drops its dead letters")
    func movingToken() async throws {
        try await Self.with { service in
            let token = "ABCDEF0123456789ABCDEF0123456789"
            try await Self.ok(service, "reminders.devices.register", ["platform": "ios", "token": .string(token), "locale": "en", "appId": "goals"])
            // The same phone in the other case is the same device.
            let again = try await Self.ok(service, "reminders.devices.register", ["platform": "ios", "token": .string(token.lowercased()), "locale": "en", "appId": "goals"])
            #expect(try await Self.ok(service, "reminders.devices.list")["items"]?.arrayValue?.count == 1)
            #expect(again["token"] == "…6789")
            // Ann's push held back by quiet hours, and one given up.
            try await service.runtime.pool.write { db in
                try Notifier.outbox.enqueue(db, id: "held", channel: Notifier.channel, to: token.lowercased(), payload: ["app": "goals"], notBefore: Date().addingTimeInterval(3_600))
                try Notifier.outbox.enqueue(db, id: "dead", channel: Notifier.channel, to: token.lowercased(), payload: ["app": "goals"], notBefore: Date().addingTimeInterval(3_600))
                try db.execute(sql: "UPDATE platform_delivery SET status = 'dead' WHERE id = 'dead'")
            }
            // Ann registering it again changes nothing queued; Bob taking it over drops it all.
            try await Self.ok(service, "reminders.devices.register", ["platform": "ios", "token": .string(token), "locale": "ru", "appId": "goals"])
            #expect(try await Self.queued(service, to: token.lowercased()) == 2)
            try await Self.ok(service, "reminders.devices.register", ["platform": "ios", "token": .string(token), "locale": "en", "appId": "wakepark"], as: Self.bob)
            #expect(try await Self.queued(service, to: token.lowercased()) == 0)
            #expect(try await Self.ok(service, "reminders.devices.list")["items"]?.arrayValue?.isEmpty == true)
            // Unregistering takes its dead letters too: no admin retry can send them.
            try await service.runtime.pool.write { db in
                try Notifier.outbox.enqueue(db, id: "dead-2", channel: Notifier.channel, to: token.lowercased(), payload: ["app": "wakepark"])
                try db.execute(sql: "UPDATE platform_delivery SET status = 'dead' WHERE id = 'dead-2'")
            }
            try await Self.ok(service, "reminders.devices.unregister", ["token": .string(token)], as: Self.bob)
            #expect(try await Self.queued(service, to: token.lowercased()) == 0)
            let retry = try await service.call("reminders.delivery.retry", data: ["id": "dead-2"], as: Self.admin)
            #expect(retry.error?.code == .notFound)
        }
    }

    @Test("read answers the unread count of the app it was given")
    func unreadPerApp() async throws {
        try await Self.with { service in
            try await service.runtime.pool.write { db in
                for (index, app) in ["goals", "goals", "wakepark"].enumerated() {
                    try db.execute(
                        sql: """
                            INSERT INTO notification (id, user_id, app_id, kind, title, body, data, urgent, devices, created_ms, deliver_ms)
                            VALUES (?, 'user-ann', ?, 'goals.accepted', 't', 'b', '{}', 0, 1, ?, ?)
                            """, arguments: ["n\(index)", app, index, index])
                }
            }
            let read = try await Self.ok(service, "reminders.notifications.read", ["all": true, "appId": "goals"])
            #expect(read["marked"] == 2 && read["unread"] == 0)
            #expect(try await Self.ok(service, "reminders.notifications.list")["unread"] == 1)
            let neither = try await service.call("reminders.notifications.read", data: [:], as: Self.ann)
            #expect(neither.error?.code == .validationFailed)
        }
    }

    @Test("templates: only the kind's placeholders, however the braces nest; never blank; reset")
    func templates() async throws {
        try await Self.with { service in
            for (title, text) in [("Hi {x{field}", "b"), ("Hi", "{reward}"), ("   ", "text"), ("Hi", " \n")] {
                let refused = try await service.call(
                    "reminders.admin.templates.set", data: ["kind": "account.signed_in", "language": "en", "title": .string(title), "text": .string(text)], as: Self.admin)
                #expect(refused.error?.code == .validationFailed, "\(title) / \(text)")
            }
            let set = try await Self.ok(
                service, "reminders.admin.templates.set", ["kind": "account.signed_in", "language": "en", "title": "Signed in {}", "text": "by {method}"], as: Self.admin)
            #expect(set["edited"] == true)
            let rendered = try await service.runtime.pool.read { db in try Notifier.render(db, .signedIn, language: "en", values: ["method": "phone"]) }
            #expect(rendered.title == "Signed in {}" && rendered.body == "by phone")
            let reset = try await Self.ok(service, "reminders.admin.templates.set", ["kind": "account.signed_in", "language": "en", "reset": true], as: Self.admin)
            #expect(reset["edited"] == false && reset["title"] == "New sign-in")
            #expect(try await service.call("reminders.admin.templates.list", data: [:], as: Self.ann).error?.code == .forbidden)
        }
    }

    @Test("a broadcast names an uploaded image or none, and has words")
    func broadcastInput() async throws {
        try await Self.with { service in
            for bad: JSONValue in [
                ["appId": "goals", "title": "News", "text": "Hello", "imageId": "../../auth/evil"],
                ["appId": "goals", "title": " ", "text": "Hello"],
                ["appId": "goals", "title": "News", "text": "Hello", "role": "superuser"],
            ] {
                #expect(try await service.call("reminders.admin.broadcast", data: bad, as: Self.admin).error?.code == .validationFailed, "\(bad)")
            }
            let sent = try await Self.ok(service, "reminders.admin.broadcast", ["appId": "goals", "title": "News", "text": "Hello", "kind": "offers"], as: Self.admin)
            #expect(sent["broadcastId"]?.stringValue?.hasPrefix("bcs_") == true)
        }
    }

    @Test("a reminder shows only its user's own uploads: a broadcast's image or another user's fresh upload is refused, so nobody else can release it")
    func remindersShowOwnUploads() async throws {
        try await Self.with { service in
            let content = try TestImages.png(width: 32, height: 32, seed: 3).base64EncodedString()
            let broadcastImage = try #require(try await Self.ok(service, "reminders.media.put", ["content": .string(content)], as: Self.admin)["id"]?.stringValue)
            try await Self.ok(service, "reminders.admin.broadcast", ["appId": "reminder", "title": "News", "text": "Hello", "imageId": .string(broadcastImage)], as: Self.admin)
            let annsImage = try #require(try await Self.ok(service, "reminders.media.put", ["content": .string(content)])["id"]?.stringValue)
            // Bob learned both ids (the push's URL, a shared screen): neither goes on his reminders.
            for image in [broadcastImage, annsImage] {
                let created = try await service.call(
                    "reminders.create", data: ["id": "bob-reminder-1", "title": "x", "start": "2027-03-10T09:00", "imageId": .string(image)], as: Self.bob)
                #expect(created.error?.code == .validationFailed && created.error?.fields["imageId"] != nil)
            }
            try await Self.ok(service, "reminders.create", ["id": "bob-reminder-1", "title": "x", "start": "2027-03-10T09:00"], as: Self.bob)
            let updated = try await service.call("reminders.update", data: ["id": "bob-reminder-1", "imageId": .string(annsImage)], as: Self.bob)
            #expect(updated.error?.code == .validationFailed && updated.error?.fields["imageId"] != nil)
            // Ann's own upload goes on her reminder; the broadcast keeps its image.
            try await Self.ok(service, "reminders.create", ["id": "ann-reminder-1", "title": "x", "start": "2027-03-10T09:00", "imageId": .string(annsImage)])
            let references = try await service.runtime.pool.read { db in
                (try MediaCatalog.referenceCount(db, id: broadcastImage), try MediaCatalog.referenceCount(db, id: annsImage))
            }
            #expect(references == (1, 1))
            #expect(try await service.call("reminders.media.get", data: ["id": .string(broadcastImage)], as: Self.ann).ok)
        }
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// Push notifications end to end, with auth, goals, booking and reminders as real
/// processes behind the gateway: events and due alerts become exactly one push for the
/// right device of the right app (the `file` transport), the `http` transport speaks
/// Gorush's format to a local fake gateway (a refused token ends disabled and in the
/// dead letters), and a restart in the middle of a broadcast sends nothing twice.
@Suite("Notifications through the gateway", .serialized)
struct NotificationsGatewayTests {
    static let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4"]

    /// The pushes the `file` transport wrote, by token.
    static func pushFiles(_ stack: TestStack) -> [(token: String, kind: String, app: String, payload: JSONValue)] {
        let folder = stack.configuration.dataDirectoryURL.appendingPathComponent("push")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path), let file = try? JSONParser.parse(data),
                let token = file["token"]?.stringValue, let payload = file["payload"]
            else { return nil }
            return (token, payload["kind"]?.stringValue ?? "", payload["app"]?.stringValue ?? "", payload)
        }
    }

    static func register(_ stack: TestStack, _ token: String, app: String, platform: String = "ios", locale: String = "en-GB", user: String) async throws {
        try await stack.client.ok("reminders.devices.register", ["platform": .string(platform), "token": .string(token), "locale": .string(locale), "appId": .string(app)], token: user)
    }

    @Test("a sponsor's acceptance, a checked item, a booking made and a due reminder each end as exactly one push for the right device")
    func fileTransport() async throws {
        try await TestStack.with(services: ["auth", "goals", "booking", "reminders"], extraEnvironment: Self.environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@push.example")
            let rita = try await AuthFixtures.signUp(stack.client, email: "rita@push.example")
            let sam = try await AuthFixtures.signUp(stack.client, email: "sam@push.example")
            let rider = try await AuthFixtures.signUp(stack.client, email: "rider@push.example")
            let samID = try #require(try await stack.client.ok("auth.profile.get", token: sam)["id"]?.stringValue)

            let ritaGoals = "rita-goals-ios-token-0001", ritaReminder = "rita-reminder-ios-token-01"
            let samGoals = "sam-goals-android-token-01", samPark = "sam-wakepark-ios-token-001"
            let riderPark = "rider-wakepark-token-00001"
            try await Self.register(stack, ritaGoals, app: "goals", user: rita)
            try await Self.register(stack, ritaReminder, app: "reminder", locale: "ru-RU", user: rita)
            try await Self.register(stack, samGoals, app: "goals", platform: "android", user: sam)
            try await Self.register(stack, samPark, app: "wakepark", user: sam)
            try await Self.register(stack, riderPark, app: "wakepark", user: rider)

            // A reminder due at the next minute (alerts are to the minute).
            let next = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + 2) / 60).rounded(.up) * 60)
            try await stack.client.ok(
                "reminders.create", ["title": "Позвонить маме", "start": .string(LocalText.format(ZoneClock.utc.local(next))), "zone": "UTC", "alerts": [0]],
                token: rita, idem: "push-reminder")

            // Goals: an offer, the sponsor's acceptance, a checked item.
            try await stack.client.ok("goals.sponsor.profile.save", ["name": "Acme Insurance", "kind": "insurer", "group": "insurers"], token: sam)
            let goal = try await stack.client.ok("goals.create", ["type": "muscle_mass", "settings": ["equipment": "dumbbells"]], token: rita)
            let goalID = try #require(goal["id"])
            let offer = try await stack.client.ok(
                "goals.propose", ["goalId": goalID, "sponsor": .string(samID), "reward": ["money": ["minor": 20_000, "currency": "USD"]]], token: rita)
            try await stack.client.ok("goals.accept", ["sponsorshipId": try #require(offer["id"])], token: sam)
            let items = try await stack.client.ok(
                "goals.admin.items.add", ["goalId": goalID, "items": [["kind": "recommendation", "text": "Stretch after every run", "checkable": true]]],
                token: admin)
            try await stack.client.ok("goals.items.check", ["itemId": try #require(items["items"]?[0]?["id"]), "done": true], token: rita)

            // Booking: the park open all day, a pass, a slot tomorrow.
            for weekday in 1...7 {
                try await stack.client.ok("booking.admin.hours.set", ["weekday": .integer(Int64(weekday)), "open": "00:00", "close": "00:00"], token: admin)
            }
            try await stack.client.ok("booking.pass.topup", ["package": "five"], token: rider, idem: "push-topup")
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Europe/Minsk")!
            let day = calendar.dateComponents([.year, .month, .day], from: Date().addingTimeInterval(86_400))
            let slots = try await stack.client.ok(
                "booking.slots", ["date": .string(String(format: "%04d-%02d-%02d", day.year!, day.month!, day.day!)), "cable": "reverse-1"], token: rider)
            let later = Date().addingTimeInterval(4 * 3_600)
            let open = try #require(
                (slots["items"]?.arrayValue ?? []).first { $0["bookable"]?[0] == true && (Instant.parse($0["start"]?.stringValue ?? "") ?? .distantPast) > later })
            try await stack.client.ok("booking.create", ["cable": "reverse-1", "start": open["start"] ?? .null], token: rider, idem: "push-book")

            func pushes(_ token: String, _ kind: String) -> [JSONValue] { Self.pushFiles(stack).filter { $0.token == token && $0.kind == kind }.map(\.payload) }
            let arrived = try await Poll.until(timeout: .seconds(90), interval: .milliseconds(250)) {
                !pushes(ritaGoals, "goals.accepted").isEmpty && !pushes(samGoals, "goals.item.checked").isEmpty
                    && !pushes(riderPark, "booking.created").isEmpty && !pushes(ritaReminder, "reminder.due").isEmpty
            }
            #expect(arrived, "\(Self.pushFiles(stack).map { "\($0.token) \($0.kind)" })")
            // Anything late or doubled would show by now.
            try await Task.sleep(for: .seconds(1))
            #expect(pushes(ritaGoals, "goals.accepted").count == 1)
            #expect(pushes(samGoals, "goals.proposed").count == 1)
            #expect(pushes(samGoals, "goals.item.checked").count == 1)
            #expect(pushes(riderPark, "booking.created").count == 1)
            #expect(pushes(ritaReminder, "reminder.due").count == 1)
            // The right device of the right app only: nothing of goals reaches a park device,
            // nothing of the park a goals device; the reminder went to the Reminder app.
            for file in Self.pushFiles(stack) {
                #expect(!(file.token == samPark && file.kind.hasPrefix("goals.")), "\(file.kind) reached the park app")
                #expect(!(file.token == ritaGoals && file.kind == "reminder.due"))
            }
            // Words in the device's language, ids to open the app at, the snooze action.
            let due = try #require(pushes(ritaReminder, "reminder.due").first)
            #expect(due["title"] == "Позвонить маме" && due["body"]?.stringValue?.hasPrefix("Напоминание на ") == true)
            #expect(due["actions"] == ["snooze", "done"] && due["data"]?["alertId"]?.stringValue?.isEmpty == false)
            let accepted = try #require(pushes(ritaGoals, "goals.accepted").first)
            #expect(accepted["title"] == "Your goal was accepted" && accepted["body"]?.stringValue?.contains("200.00 USD") == true)
            let booked = try #require(pushes(riderPark, "booking.created").first)
            #expect(booked["body"]?.stringValue?.hasPrefix("reverse-1") == true, "\(booked)")

            // History: her own only, unread until read.
            let history = try await stack.client.ok("reminders.notifications.list", token: rita)
            let kinds = Set((history["items"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue })
            #expect(kinds.isSuperset(of: ["goals.accepted", "reminder.due"]), "\(history)")
            #expect(history["unread"]?.integerValue ?? 0 >= 2)
            let first = try #require(history["items"]?[0]?["id"])
            let read = try await stack.client.ok("reminders.notifications.read", ["ids": [first, "someone-elses-id"]], token: rita)
            #expect(read["marked"] == 1)
            let samHistory = try await stack.client.ok("reminders.notifications.list", token: sam)
            #expect(!(samHistory["items"]?.arrayValue ?? []).contains { $0["id"] == first })

            // Someone else's token cannot be unregistered (nor seen); bad input is refused.
            let stolen = try await stack.client.call("reminders.devices.unregister", data: ["token": .string(ritaGoals)], token: sam)
            #expect(stolen.error?.code == .notFound)
            let samDevices = try await stack.client.ok("reminders.devices.list", token: sam)
            #expect(samDevices["items"]?.arrayValue?.count == 2)
            for bad: JSONValue in [
                ["platform": "windows", "token": "aaaaaaaaaaaaaaaaaaaa", "locale": "en", "appId": "goals"],
                ["platform": "ios", "token": .string(String(repeating: "a", count: 5_000)), "locale": "en", "appId": "goals"],
                ["platform": "ios", "token": "aaaaaaaaaaaaaaaaaaaa", "locale": "not a locale", "appId": "goals"],
                ["platform": "ios", "token": "aaaaaaaaaaaaaaaaaaaa", "locale": "en", "appId": "other-app"],
            ] {
                let refused = try await stack.client.call("reminders.devices.register", data: bad, token: sam)
                #expect(refused.error?.code == .validationFailed, "\(bad)")
            }

            // Registering a token again moves it: Rita's reminder device now belongs to Sam.
            try await Self.register(stack, ritaReminder, app: "reminder", user: sam)
            let ritaDevices = try await stack.client.ok("reminders.devices.list", token: rita)
            #expect(ritaDevices["items"]?.arrayValue?.count == 1)
        }
    }

    @Test("the http transport delivers to a Gorush gateway; a token it refuses is disabled and listed in the dead letters")
    func gorushTransport() async throws {
        let gorush = try await FakeGorush.start()
        defer { gorush.stop() }
        let environment = Self.environment.merging([
            "BACKEND_REMINDERS_PUSH_TRANSPORT": "http", "BACKEND_REMINDERS_PUSH_URL": gorush.url, "BACKEND_REMINDERS_PUSH_BACKOFF_MS": "200",
        ]) { _, new in new }
        try await TestStack.with(services: ["auth", "goals", "reminders"], extraEnvironment: environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@gorush.example")
            let ann = try await AuthFixtures.signUp(stack.client, email: "ann@gorush.example")
            let bob = try await AuthFixtures.signUp(stack.client, email: "bob@gorush.example")
            let good = "good-goals-token-000000001", flaky = "flaky-goals-token-00000001", rejected = "rejected-goals-token-00001"
            let park = "good-wakepark-token-000001"
            try await Self.register(stack, good, app: "goals", user: ann)
            try await Self.register(stack, flaky, app: "goals", platform: "android", user: ann)
            try await Self.register(stack, rejected, app: "goals", user: bob)
            try await Self.register(stack, park, app: "wakepark", user: bob)

            // An announcement to the goals app, from the goals admin (through goals' event).
            let sent = try await stack.client.ok(
                "goals.admin.broadcast", ["title": "New season", "text": "Goals for spring are open", "audience": "everyone", "kind": "updates"],
                token: admin, idem: "broadcast-1")
            #expect(sent["broadcastId"]?.stringValue?.isEmpty == false)
            #expect(
                try await Poll.until(timeout: .seconds(30), interval: .milliseconds(200)) {
                    let tokens = gorush.delivered.compactMap { $0["token"]?.stringValue }
                    return tokens.contains(good) && tokens.contains(flaky)
                }, "\(gorush.delivered)")
            // The refused token: disabled, its push a dead letter naming the gateway's answer.
            let deadLetters = try await Poll.until(timeout: .seconds(20), interval: .milliseconds(200)) {
                let dead = try await stack.client.ok("reminders.delivery.dead.list", token: admin)
                return (dead["items"]?.arrayValue ?? []).contains { $0["lastError"]?.stringValue?.contains("BadDeviceToken") == true }
            }
            #expect(deadLetters)
            let bobDevices = try await stack.client.ok("reminders.devices.list", ["appId": "goals"], token: bob)
            #expect(bobDevices["items"]?[0]?["enabled"] == false && bobDevices["items"]?[0]?["disabledReason"]?.stringValue?.contains("BadDeviceToken") == true)
            // Only the goals app's devices, each once, with its topic; the failed-once one retried.
            let delivered = gorush.delivered
            #expect(!delivered.contains { $0["token"]?.stringValue == park || $0["token"]?.stringValue == rejected })
            #expect(delivered.filter { $0["token"]?.stringValue == good }.count == 1)
            #expect(delivered.filter { $0["token"]?.stringValue == flaky }.count == 1)
            #expect(delivered.first { $0["token"]?.stringValue == good }?["topic"] == "com.sponsoredgoals.app")
            #expect(delivered.first { $0["token"]?.stringValue == good }?["title"] == "New season")

            // A refused device gets nothing more; the counts show the day's deliveries.
            try await stack.client.ok("reminders.admin.broadcast", ["appId": "goals", "title": "Second", "text": "Again"], token: admin, idem: "broadcast-2")
            #expect(
                try await Poll.until(timeout: .seconds(20)) { gorush.delivered.filter { $0["title"] == "Second" }.count == 2 })
            // The sender records a batch once Gorush has answered: on a busy machine, a moment after Gorush saw it.
            var stats: JSONValue = .null
            let counted = try await Poll.until(timeout: .seconds(20)) {
                stats = try await stack.client.ok("reminders.admin.notifications.stats", token: admin)
                return (stats["items"]?.arrayValue ?? []).first { $0["kind"] == "announcement" }?["sent"]?.integerValue == 4
            }
            let announcement = (stats["items"]?.arrayValue ?? []).first { $0["kind"] == "announcement" }
            #expect(counted && announcement?["failed"]?.integerValue == 1, "\(stats)")
            // Admins only.
            #expect(try await stack.client.call("reminders.delivery.dead.list", data: [:], token: ann).error?.code == .forbidden)
            #expect(try await stack.client.call("reminders.admin.broadcast", data: ["appId": "goals", "title": "x", "text": "y"], token: ann).error?.code == .forbidden)
        }
    }

    @Test("a restart in the middle of a broadcast to 3,000 devices sends nothing twice and loses nothing")
    func restartMidBroadcast() async throws {
        let gorush = try await FakeGorush.start(delayMs: 40)
        defer { gorush.stop() }
        let environment = Self.environment.merging([
            "BACKEND_REMINDERS_PUSH_TRANSPORT": "http", "BACKEND_REMINDERS_PUSH_URL": gorush.url, "BACKEND_REMINDERS_PUSH_BATCH": "100",
        ]) { _, new in new }
        try await TestStack.with(services: ["auth", "reminders"], extraEnvironment: environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@restart.example")
            // 3,000 devices of 150 users, written straight into the stopped service's database.
            let reminders = try #require(stack.process("reminders"))
            reminders.kill(signal: SIGTERM)
            _ = await reminders.waitForExit(timeout: .seconds(10))
            let database = try DatabaseQueue(path: stack.configuration.dataDirectoryURL.appendingPathComponent("reminders.sqlite").path)
            try await database.write { db in
                for index in 0..<3_000 {
                    try db.execute(
                        sql: "INSERT INTO push_device (token, user_id, app_id, platform, locale, registered_at) VALUES (?, ?, 'goals', 'ios', 'en', '2026-11-23T00:00:00Z')",
                        arguments: [String(format: "bulk-token-%06d", index), "usr_bulk_\(index / 20)"])
                }
            }
            try await database.close()
            try stack.start("reminders")
            try await stack.waitUntilHealthy(["reminders"])
            try await stack.client.ok("reminders.admin.broadcast", ["appId": "goals", "title": "Big news", "text": "For everyone"], token: admin, idem: "big")
            // Stopped and started again while it is going out.
            #expect(try await Poll.until(timeout: .seconds(30), interval: .milliseconds(20)) { gorush.delivered.count >= 500 })
            let running = try #require(stack.process("reminders"))
            running.kill(signal: SIGTERM)
            _ = await running.waitForExit(timeout: .seconds(15))
            let before = gorush.delivered.count
            #expect(before < 3_000, "the broadcast ended before the restart")
            try stack.start("reminders")
            #expect(try await Poll.until(timeout: .seconds(60), interval: .milliseconds(200)) { gorush.delivered.count >= 3_000 })
            try await Task.sleep(for: .seconds(1))
            let tokens = gorush.delivered.compactMap { $0["token"]?.stringValue }
            #expect(tokens.count == 3_000, "\(tokens.count) pushes for 3,000 devices")
            #expect(Set(tokens).count == 3_000)
        }
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import RemindersService

/// The Reminder app's journey through the gateway, with auth and reminders as real
/// processes and real tokens: a birthday greeting from the profile, a recurring reminder
/// that fires as reminders.due, a beautiful-date and a holiday subscription, an .ics
/// round trip, and the account's deletion taking everything.
@Suite("Reminders through the gateway", .serialized)
struct RemindersGatewayTests {
    static let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4"]

    @Test("sign in, birthday greeting, a reminder firing, subscriptions, .ics round trip, deletion")
    func journey() async throws {
        try await TestStack.with(services: ["auth", "reminders"], extraEnvironment: Self.environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@reminders.example")
            let lena = try await AuthFixtures.signUp(stack.client, email: "lena@reminders.example")
            let lenaID = try #require(try await stack.client.ok("auth.profile.get", token: lena)["id"]?.stringValue)

            // Her profile's birth date becomes a yearly all-day greeting.
            try await stack.client.ok("auth.profile.update", ["birthDate": "1992-02-29", "timeZone": "Europe/Moscow"], token: lena)
            #expect(
                try await Poll.until {
                    let list = try await stack.client.ok("reminders.list", ["category": "birthday"], token: lena)
                    return list["items"]?[0]?["rrule"] == "FREQ=YEARLY;SKIP=BACKWARD" && list["items"]?[0]?["special"] == true
                })

            // A reminder due in a minute fires as reminders.due (read from the service's events).
            let next = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + 2) / 60).rounded(.up) * 60)
            let due = LocalText.format(ZoneClock(identifier: "Europe/Moscow")!.local(next))
            let made = try await stack.client.ok(
                "reminders.create", ["title": "Тренировка", "start": .string(due), "zone": "Europe/Moscow", "rrule": "FREQ=DAILY;COUNT=3", "alerts": [0]],
                token: lena, idem: "create-1")
            let reminderID = try #require(made["id"]?.stringValue)
            let direct = try stack.directClient("reminders")
            #expect(
                try await Poll.until(timeout: .seconds(70), interval: .milliseconds(200)) {
                    let events = try await direct.ok("reminders.events.replay", ["after": 0, "limit": 500])
                    return (events["events"]?.arrayValue ?? []).contains { $0["type"] == "reminders.due" && $0["data"]?["reminderId"] == .string(reminderID) }
                })

            // Subscriptions.
            let beautiful = try await stack.client.ok("reminders.beautiful.subscribe", ["patterns": ["day_equals_month"]], token: lena)
            #expect(beautiful["made"]?.integerValue ?? 0 >= 12)
            let holidays = try await stack.client.ok("reminders.holidays.subscribe", ["country": "RU", "keys": ["easter"]], token: lena)
            #expect(holidays["made"]?.integerValue ?? 0 >= 1)

            // .ics round trip.
            let exported = try await stack.client.ok("reminders.ics.export", token: lena)
            let count = try #require(exported["count"]?.integerValue)
            let other = try await AuthFixtures.signUp(stack.client, email: "olga@reminders.example")
            let imported = try await stack.client.ok("reminders.ics.import", ["content": try #require(exported["content"])], token: other, idem: "import-1")
            #expect(imported["created"]?.integerValue == count)

            // Every operation and event is documented.
            let describe = try await stack.client.call("reminders.describe", data: [:], idempotent: true)
            let documented = Set((describe.data?["operations"]?.arrayValue ?? []).compactMap { $0["op"]?.stringValue })
            #expect(Set(RemindersService.definition.operations.map(\.name)).isSubset(of: documented))

            // Remembered lists stay behind the token check: Olga's two sessions list the
            // same reminders (each answered again from memory), and once she signs out of one,
            // its token gets `unauthenticated` however often that list was asked for.
            let secondLogin = try await AuthFixtures.signIn(stack.client, email: "olga@reminders.example", password: "secret-pass-1")
            let olgaAgain = try #require(secondLogin.data?["accessToken"]?.stringValue)
            let olgaFirstPage = try await stack.client.ok("reminders.list", ["limit": 5], token: other)
            #expect(olgaFirstPage["items"]?.arrayValue?.count == 5)
            for _ in 0..<8 {
                #expect(try await stack.client.ok("reminders.list", ["limit": 5], token: other) == olgaFirstPage)
                #expect(try await stack.client.ok("reminders.list", ["limit": 5], token: olgaAgain) == olgaFirstPage)
            }
            _ = try await stack.client.ok("auth.logout", token: other)
            #expect(
                try await Poll.until {
                    try await stack.client.call("reminders.list", data: ["limit": 5], token: other).error?.code == .unauthenticated
                })
            for _ in 0..<8 {
                #expect(try await stack.client.call("reminders.list", data: ["limit": 5], token: other).error?.code == .unauthenticated)
                #expect(try await stack.client.ok("reminders.list", ["limit": 5], token: olgaAgain) == olgaFirstPage)
            }

            // A deleted account's reminders go with it.
            try await stack.client.ok("auth.admin.users.delete", ["userId": .string(lenaID)], token: admin)
            let file = URL(fileURLWithPath: stack.configuration.dataDirectory).appendingPathComponent("reminders.sqlite")
            #expect(
                try await Poll.until {
                    let reader = try DatabaseQueue(path: file.path)
                    defer { try? reader.close() }
                    return try await reader.read { db in
                        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM reminder WHERE user_id = ?", arguments: [lenaID]) == 0
                            && Int.fetchOne(db, sql: "SELECT COUNT(*) FROM subscription WHERE user_id = ?", arguments: [lenaID]) == 0
                    }
                })
            #expect(try await stack.client.call("reminders.list", data: [:], token: lena).error?.code == .unauthenticated)
        }
    }
}

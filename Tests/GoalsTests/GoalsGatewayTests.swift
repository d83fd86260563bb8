import Foundation
import Platform
import SharedTesting
import Testing

@testable import GoalsService

/// The sponsored-goals journey through the gateway, with auth and goals as real processes
/// and real tokens: from a recipient's proposal through a counter-proposal, a revision and
/// acceptance, checked items, comments and likes, to 100 %.
@Suite("Goals through the gateway", .serialized)
struct GoalsGatewayTests {
    static let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4"]

    @Test("a recipient's proposal, a counter-proposal, a revision, acceptance, checked items, comments and likes, then 100 %")
    func journey() async throws {
        try await TestStack.with(services: ["auth", "goals"], extraEnvironment: Self.environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@goals.example")
            let rita = try await AuthFixtures.signUp(stack.client, email: "rita@goals.example")
            let sam = try await AuthFixtures.signUp(stack.client, email: "sam@goals.example")
            let samID = try #require(try await stack.client.ok("auth.profile.get", token: sam)["id"]?.stringValue)
            let ritaID = try #require(try await stack.client.ok("auth.profile.get", token: rita)["id"]?.stringValue)

            try await stack.client.ok("goals.sponsor.profile.save", ["name": "Acme Insurance", "kind": "insurer", "group": "insurers"], token: sam)
            let goal = try await stack.client.ok("goals.create", ["type": "muscle_mass", "settings": ["equipment": "dumbbells"]], token: rita)
            let goalID = try #require(goal["id"])
            let sponsors = try await stack.client.ok("goals.sponsors", ["group": "insurers"], token: rita)
            #expect(sponsors["sponsors"]?[0]?["name"] == "Acme Insurance")
            let offer = try await stack.client.ok("goals.propose", ["goalId": goalID, "sponsor": .string(samID), "reward": ["money": ["minor": 20_000, "currency": "USD"]]], token: rita)
            let sponsorship = try #require(offer["id"])
            try await stack.client.ok("goals.reject", ["sponsorshipId": sponsorship, "kind": "counter_goal", "type": "marathon", "comment": "We sponsor runners"],
                token: sam)
            try await stack.client.ok("goals.revise", ["sponsorshipId": sponsorship, "type": "marathon", "comment": "Deal"], token: rita)
            let accepted = try await stack.client.ok("goals.accept", ["sponsorshipId": sponsorship], token: sam)
            #expect(accepted["state"] == "accepted" && accepted["reward"]?["money"]?["minor"] == 20_000)

            let today = ZoneClock.utc.localDate(of: Date())
            let items = try await stack.client.ok("goals.admin.items.add",
                [
                    "goalId": goalID,
                    "items": [
                        ["kind": "workout", "date": .string(today.description), "text": "Easy 5 km", "requirement": "keep talking pace"],
                        ["kind": "recommendation", "text": "Stretch after every run", "checkable": true],
                    ],
                ], token: admin)
            for item in items["items"]?.arrayValue ?? [] {
                try await stack.client.ok("goals.items.check", ["itemId": item["id"]!, "done": true], token: rita)
            }
            let comment = try await stack.client.ok("goals.comments.add", ["with": .string(ritaID), "text": "Proud of you"], token: sam)
            let liked = try await stack.client.ok("goals.comments.like", ["entryId": comment["id"]!, "liked": true], token: rita)
            #expect(liked["likes"] == 1)
            try await stack.client.ok("goals.admin.progress.set", ["goalId": goalID, "percent": 60], token: admin)
            let finished = try await stack.client.ok("goals.admin.progress.set", ["goalId": goalID, "percent": 100], token: admin)
            #expect(finished["state"] == "completed" && finished["plan"]?["sharePercent"] == 100)

            let feed = try await stack.client.ok("goals.feed", ["with": .string(samID)], token: rita)
            var kinds: [String] = []
            for entry in feed["entries"]?.arrayValue ?? [] { kinds.append(entry["kind"]?.stringValue ?? "?") }
            #expect(kinds == ["completed", "progress", "progress", "comment", "checked", "checked", "accepted", "revised", "rejected", "proposed", "created"])
            let overview = try await stack.client.ok("goals.sponsor.recipients", token: sam)
            #expect(overview["recipients"]?[0]?["goals"]?[0]?["progress"] == 100)
            // Auth's profile reaches goals: the sponsor sees the recipient's first name.
            #expect(
                try await Poll.until {
                    try await stack.client.ok("goals.sponsor.recipients", token: sam)["recipients"]?[0]?["recipient"]?["name"] == "Test"
                })

            // Every operation and event is documented.
            let describe = try await stack.client.call("goals.describe", data: [:], idempotent: true)
            let documented = Set((describe.data?["operations"]?.arrayValue ?? []).compactMap { $0["op"]?.stringValue })
            #expect(Set(GoalsService.definition.operations.map(\.name)).isSubset(of: documented))
            let events = Set((describe.data?["events"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue })
            #expect(events.isSuperset(of: ["goals.proposed", "goals.accepted", "goals.rejected", "goals.revised", "goals.item.checked", "goals.item.unchecked",
                                           "goals.progress.changed", "goals.comment.added", "goals.broadcast"]))

            // A deleted account's goals go with it.
            try await stack.client.ok("auth.admin.users.delete", ["userId": .string(ritaID)], token: admin)
            #expect(
                try await Poll.until {
                    try await stack.client.call("goals.get", data: ["goalId": goalID], token: sam).error?.code == .notFound
                })
        }
    }
}

import Foundation
import LoadKit
import Platform
import Synchronization

/// One virtual user: a device account, and what the mix needs of its data.
struct VirtualUser: Sendable {
    var userID: String
    var savingsPlan: String?
    var goalItems: [String] = []
}

/// A bookable place: a cable at a start.
struct BookingSlot: Sendable {
    var cable: String
    var start: String
}

/// Current tokens of the virtual users: access tokens last 5 minutes and refresh tokens
/// are single-use, so both are replaced while a run lasts.
final class TokenBook: Sendable {
    private let tokens: Mutex<[(access: String, refresh: String)]>
    init(_ tokens: [(access: String, refresh: String)]) { self.tokens = Mutex(tokens) }
    subscript(user: Int) -> String { tokens.withLock { $0[user % $0.count].access } }
    var refreshTokens: [String] { tokens.withLock { $0.map(\.refresh) } }
    func set(access: String, refresh: String, for user: Int) { tokens.withLock { $0[user] = (access, refresh) } }
}

/// The accounts and data a load run works with, made once through the operations of
/// the stack (never straight into a database): an admin, a sponsor and `count` device
/// accounts, each with a savings plan, a sponsored goal with plan items and a few
/// reminders; a park open around the clock with free bookings.
struct Population: Sendable {
    /// The run's own accounts' password (admin, sponsor): random, never shown.
    var password: String
    var runID: String
    var users: [VirtualUser]
    var tokens: TokenBook
    var slots: [BookingSlot]
    var exercises: [String]
    /// Each exercise's base repetitions for a beginner (the virtual users' level): the
    /// recommendation an offline workout reports, which stats checks is one it could give.
    var exerciseBases: [Int] = []
    /// Services whose operations the mix may send (those that were prepared).
    var services: Set<String>
    var adminToken: String

    /// Words the seeded reminders' titles use, and the searches look for.
    static let words = ["купить", "позвонить", "тренировка", "dentist", "birthday", "anniversary", "оплатить", "wakeboard"]

    /// Makes the population. `auth` reaches auth directly (the operator's link: sign-ups
    /// are not limited per client address there); everything else goes through `gateway`.
    static func make(
        count: Int, services wanted: Set<String>, gateway: ServiceClient, auth: ServiceClient, say: @Sendable (String) -> Void
    ) async throws -> Population {
        let runID = String(UInt64.random(in: 0..<UInt64(1) << 40), radix: 36)
        say("setting up run \(runID): \(count) device accounts, services \(wanted.sorted().joined(separator: ", "))")
        // A new admin per run, with a random password no one sees (`.example` mail goes
        // nowhere, so no reset either); its session ends with the run (``close(auth:)``).
        let password = Digest.randomBytes(24).map { String(format: "%02x", $0) }.joined()
        let adminToken = try await account(email: "loadgen-admin-\(runID)@loadgen.example", password: password, auth: auth, admin: true)
        var users: [VirtualUser] = []
        var accessTokens: [(access: String, refresh: String)] = []
        for start in stride(from: 0, to: count, by: 16) {
            let made = try await withThrowingTaskGroup(of: (Int, VirtualUser, String, String).self) { group in
                for index in start..<min(count, start + 16) {
                    group.addTask {
                        let challenge = try await solvedChallenge(auth)
                        let reply = try await auth.call("auth.device.register", data: ["challenge": challenge, "timeZone": "Europe/Minsk"], timeout: .seconds(20), attempts: 1)
                        guard let access = reply.data?["accessToken"]?.stringValue, let refresh = reply.data?["refreshToken"]?.stringValue,
                            let id = reply.data?["user"]?["id"]?.stringValue
                        else { throw LoadError("auth.device.register failed: \(reply.error?.message ?? "no tokens")") }
                        return (index, VirtualUser(userID: id), access, refresh)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }
            }
            users += made.map(\.1)
            accessTokens += made.map { ($0.2, $0.3) }
        }
        var population = Population(
            password: password, runID: runID, users: users, tokens: TokenBook(accessTokens), slots: [], exercises: [], services: [], adminToken: adminToken)
        for service in wanted.sorted() {
            do {
                try await population.prepare(service, gateway: gateway, auth: auth)
                population.services.insert(service)
            } catch {
                say("\(service): not prepared (\(error)); its operations are left out")
            }
        }
        say("set up: \(users.count) users, \(population.slots.count) bookable slots, services \(population.services.sorted().joined(separator: ", "))")
        return population
    }

    /// Prepares what `service`'s operations need.
    private mutating func prepare(_ service: String, gateway: ServiceClient, auth: ServiceClient) async throws {
        let today = ZoneClock.utc.localDate(of: Date())
        let tokens = self.tokens
        switch service {
        case "booking":
            let admin = adminToken
            try check(
                try await gateway.call(
                    "booking.admin.park.update",
                    data: [
                        "minimumNoticeMinutes": 0, "capacity": 100, "horizonDays": 365, "maxBookingsPerDay": 100, "slotMinutes": 10,
                        "price": ["minor": 0, "currency": "BYN"],
                    ], token: admin), "booking.admin.park.update")
            for weekday in 1...7 {
                try check(
                    try await gateway.call("booking.admin.hours.set", data: ["weekday": .integer(Int64(weekday)), "open": "00:00", "close": "00:00"], token: admin),
                    "booking.admin.hours.set")
            }
            // Slots of 60 days from the day after tomorrow, interleaved by day: a user's
            // bookings in a row fall on different days (the per-day limit).
            var byDay: [[BookingSlot]] = []
            for day in 2..<62 {
                let reply = try await gateway.call("booking.slots", data: ["date": .string(today.adding(days: day).description)], token: tokens[0], idempotent: true)
                let cables = (reply.data?["cables"]?.arrayValue ?? []).compactMap(\.stringValue)
                var slots: [BookingSlot] = []
                // One cable per start: a rider cannot be on two cables at once.
                for item in reply.data?["items"]?.arrayValue ?? [] {
                    if let index = cables.indices.first(where: { item["bookable"]?.arrayValue?[$0] == true }), let start = item["start"]?.stringValue {
                        slots.append(BookingSlot(cable: cables[index], start: start))
                    }
                }
                byDay.append(slots)
            }
            let longest = byDay.map(\.count).max() ?? 0
            slots = (0..<longest).flatMap { position in byDay.compactMap { position < $0.count ? $0[position] : nil } }
            guard !slots.isEmpty else { throw LoadError("no bookable slots") }
        case "savings":
            let terms: JSONValue = [
                "method": "equal", "target": ["minor": 100_000_000, "currency": "RUB"], "startDate": .string(today.description),
                "deadline": .string(today.adding(years: 1).description), "interval": "week", "timeZone": "UTC",
            ]
            let plans = try await forEachUser { user in
                let reply = try await gateway.call("savings.plans.start", data: terms, token: tokens[user])
                return try check(reply, "savings.plans.start")["id"]?.stringValue
            }
            for (user, plan) in plans.enumerated() { users[user].savingsPlan = plan }
        case "goals":
            let sponsor = try await Self.account(email: "loadgen-sponsor-\(runID)@loadgen.example", password: password, auth: auth, admin: false)
            try check(
                try await gateway.call("goals.sponsor.profile.save", data: ["name": "Loadgen sponsor", "kind": "employer", "group": "employers"], token: sponsor),
                "goals.sponsor.profile.save")
            let sponsorID = try check(try await gateway.call("auth.profile.get", token: sponsor), "auth.profile.get")["id"] ?? .null
            let admin = adminToken
            let plan: [JSONValue] =
                // The last four weeks: an item can be checked from its day on.
                (1...28).map { day in ["kind": "workout", "date": .string(today.adding(days: -day).description), "text": "Run 5 km", "requirement": "30 min"] }
                + (0..<4).map { index in ["kind": "recommendation", "text": .string("Recommendation \(index)"), "checkable": true] }
            let items = try await forEachUser { user in
                let goal = try check(try await gateway.call("goals.create", data: ["type": "marathon"], token: tokens[user]), "goals.create")["id"] ?? .null
                let offer = try check(
                    try await gateway.call(
                        "goals.propose", data: ["goalId": goal, "sponsor": sponsorID, "reward": ["money": ["minor": 10_000, "currency": "EUR"]]], token: tokens[user]),
                    "goals.propose")
                try check(try await gateway.call("goals.accept", data: ["sponsorshipId": offer["id"] ?? .null], token: sponsor), "goals.accept")
                let added = try check(try await gateway.call("goals.admin.items.add", data: ["goalId": goal, "items": .array(plan)], token: admin), "goals.admin.items.add")
                return (added["items"]?.arrayValue ?? []).filter { $0["checkable"] == true }.compactMap { $0["id"]?.stringValue }
            }
            for (user, list) in items.enumerated() { users[user].goalItems = list ?? [] }
        case "reminders":
            let runID = self.runID
            _ = try await forEachUser { user in
                for index in 0..<10 {
                    let title = "\(Self.words[(user + index) % Self.words.count]) \(index)"
                    try check(
                        try await gateway.call(
                            "reminders.create",
                            data: [
                                "id": .string("lg-\(runID)-\(user)-seed-\(index)"), "title": .string(title),
                                "start": .string("\(today.adding(days: 1 + index))T09:00"), "zone": "Europe/Minsk",
                            ], token: tokens[user]), "reminders.create")
                }
                return nil as String?
            }
        case "stats":
            let list = try check(try await gateway.call("stats.exercises.list", token: tokens[0], idempotent: true), "stats.exercises.list")
            let items = (list["items"]?.arrayValue ?? []).filter { $0["id"]?.stringValue != nil }
            exercises = items.compactMap { $0["id"]?.stringValue }
            exerciseBases = items.map { Int($0["baseRepetitions"]?["beginner"]?.integerValue ?? 10) }
            guard !exercises.isEmpty else { throw LoadError("the exercise catalog is empty") }
        default:
            break
        }
    }

    /// Runs `body` for every user, 16 at a time; results in user order.
    private func forEachUser<T: Sendable>(_ body: @escaping @Sendable (Int) async throws -> T?) async throws -> [T?] {
        var results = [T?](repeating: nil, count: users.count)
        for start in stride(from: 0, to: users.count, by: 16) {
            try await withThrowingTaskGroup(of: (Int, T?).self) { group in
                for user in start..<min(users.count, start + 16) { group.addTask { (user, try await body(user)) } }
                for try await (user, value) in group { results[user] = value }
            }
        }
        return results
    }

    /// Signs in `email` (registering it first when new; made an admin when asked) and
    /// returns an access token.
    static func account(email: String, password: String, auth: ServiceClient, admin: Bool) async throws -> String {
        var login = try await auth.call("auth.login", data: ["email": .string(email), "password": .string(password)], timeout: .seconds(20), attempts: 1)
        if !login.ok {
            let registered = try await auth.call(
                "auth.register",
                data: [
                    "email": .string(email), "password": .string(password), "firstName": "Load", "lastName": "Generator", "birthDate": "1990-01-01",
                    "acceptTerms": true, "challenge": try await solvedChallenge(auth),
                ], timeout: .seconds(20), attempts: 1)
            guard registered.ok else { throw LoadError("cannot register \(email): \(registered.error?.message ?? "")") }
        }
        if admin {
            let granted = try await auth.call("auth.internal.admin.grant", data: ["email": .string(email)])
            guard granted.ok else { throw LoadError("cannot make \(email) an admin: \(granted.error?.message ?? "")") }
        }
        login = try await auth.call("auth.login", data: ["email": .string(email), "password": .string(password)], timeout: .seconds(20), attempts: 1)
        guard let token = login.data?["accessToken"]?.stringValue else { throw LoadError("cannot sign in \(email): \(login.error?.message ?? "")") }
        return token
    }

    /// A solved `auth.challenge`, as an app computes it.
    static func solvedChallenge(_ auth: ServiceClient) async throws -> JSONValue {
        let reply = try await auth.call("auth.challenge", timeout: .seconds(10), attempts: 1)
        guard let answer = ProofOfWork.answer(toChallenge: reply.data) else {
            throw LoadError("auth.challenge failed: \(reply.error?.message ?? "no nonce")")
        }
        return answer
    }

    /// Ends the admin's session (its password was never shown: the account cannot be used again).
    func close(auth: ServiceClient) async {
        _ = try? await auth.call("auth.logout", token: adminToken, attempts: 1)
    }

    /// Refreshes every user's tokens through auth; returns how many were refreshed.
    func refreshTokens(auth: ServiceClient) async -> Int {
        var refreshed = 0
        for (user, refresh) in tokens.refreshTokens.enumerated() {
            guard let reply = try? await auth.call("auth.refresh", data: ["refreshToken": .string(refresh)], attempts: 1),
                let access = reply.data?["accessToken"]?.stringValue, let next = reply.data?["refreshToken"]?.stringValue
            else { continue }
            tokens.set(access: access, refresh: next, for: user)
            refreshed += 1
        }
        return refreshed
    }
}

/// The data of a successful reply, or an error naming the operation.
@discardableResult
func check(_ reply: Reply.Parsed, _ op: String) throws -> JSONValue {
    guard reply.ok else {
        let fields = (reply.error?.fields ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        throw LoadError("\(op): \(reply.error?.code.rawValue ?? "error") \(reply.error?.message ?? "")\(fields.isEmpty ? "" : " (\(fields))")")
    }
    return reply.data ?? .null
}

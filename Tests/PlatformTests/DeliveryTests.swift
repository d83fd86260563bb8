import Foundation
import GRDB
import Logging
import Platform
import SharedTesting
import Synchronization
import Testing

@testable import Platform

/// The pure rules of the delivery outbox: backoff, rate limits, masks, settings.
@Suite("Delivery rules")
struct DeliveryRuleTests {
    @Test("backoff doubles from the first wait up to the cap; jitter only shortens")
    func backoffDoubles() {
        let policy = BackoffPolicy(initial: .seconds(5), cap: .seconds(3_600), jitter: 0.2, maxAttempts: 12)
        let exact = (1...12).map { policy.delayMs(afterFailure: $0, random: 0) }
        #expect(exact == [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000, 3_600_000, 3_600_000])
        #expect(policy.delayMs(afterFailure: 1, random: 0.999_999) == 4_000)
        #expect(policy.delayMs(afterFailure: 3, random: 0.5) == 18_000)
        // No overflow, however many failures.
        #expect(policy.delayMs(afterFailure: 10_000, random: 0) == 3_600_000)
        for random in stride(from: 0.0, to: 1.0, by: 0.1) {
            let delay = policy.delayMs(afterFailure: 2, random: random)
            #expect(delay >= 8_000 && delay <= 10_000)
        }
    }

    @Test("retried until the last attempt; a permanent refusal is dead at once")
    func backoffDecisions() {
        let policy = BackoffPolicy(initial: .milliseconds(100), cap: .seconds(1), jitter: 0, maxAttempts: 3)
        #expect(policy.decide(attempts: 1, permanent: false, random: 0) == .retry(afterMs: 100))
        #expect(policy.decide(attempts: 2, permanent: false, random: 0) == .retry(afterMs: 200))
        #expect(policy.decide(attempts: 3, permanent: false, random: 0) == .dead)
        #expect(policy.decide(attempts: 1, permanent: true, random: 0) == .dead)
        // Settings out of range are brought back into it.
        let odd = BackoffPolicy(initial: .seconds(10), cap: .seconds(1), jitter: 7, maxAttempts: 0)
        #expect(odd.cap == .seconds(10) && odd.jitter == 1 && odd.maxAttempts == 1)
    }

    @Test("at most K attempts per destination per window; the excess gets the time it may go")
    func rateLimit() {
        var limiter = DeliveryRateLimiter(limits: ["sms": DeliveryRateLimit(limit: 2, window: .seconds(10))], fallback: nil)
        #expect(limiter.reserve("sms", "+1", nowMs: 1_000) == nil)
        #expect(limiter.reserve("sms", "+1", nowMs: 2_000) == nil)
        #expect(limiter.reserve("sms", "+1", nowMs: 3_000) == 11_000)
        // Another destination, and a channel without a limit, are not held back.
        #expect(limiter.reserve("sms", "+2", nowMs: 3_000) == nil)
        for _ in 0..<50 { #expect(limiter.reserve("email", "a@example.com", nowMs: 3_000) == nil) }
        // Refusals are not counted: the first slot frees at 11 s, the second at 12 s.
        #expect(limiter.reserve("sms", "+1", nowMs: 10_999) == 11_000)
        #expect(limiter.reserve("sms", "+1", nowMs: 11_000) == nil)
        #expect(limiter.reserve("sms", "+1", nowMs: 11_500) == 12_000)
    }

    @Test("the limiter forgets destinations idle for a window")
    func rateLimitMemory() {
        var limiter = DeliveryRateLimiter(fallback: DeliveryRateLimit(limit: 1, window: .seconds(1)))
        for index in 0..<1_000 { _ = limiter.reserve("push", "device-\(index)", nowMs: 0) }
        #expect(limiter.trackedDestinations == 1_000)
        for index in 0..<24 { _ = limiter.reserve("push", "late-\(index)", nowMs: 5_000) }
        #expect(limiter.trackedDestinations == 24)
    }

    @Test("admins see destinations masked", arguments: [
        ("anna@example.com", "a***@example.com"), ("+79161234567", "+7916***67"), ("short", "*****"), ("device-token-1234567890", "devic***90"),
    ])
    func masks(destination: String, masked: String) {
        #expect(DestinationMask.apply(destination) == masked)
    }

    @Test("settings from the environment")
    func settings() throws {
        let defaults = try DeliverySettings.fromEnvironment([:], prefix: "X")
        #expect(defaults == DeliverySettings())
        #expect(defaults.backoff.initial == .seconds(5) && defaults.backoff.cap == .seconds(3_600) && defaults.backoff.maxAttempts == 10)
        let custom = try DeliverySettings.fromEnvironment(
            ["X_BACKOFF_MS": "200", "X_BACKOFF_MAX_MS": "1000", "X_MAX_ATTEMPTS": "3", "X_RATE_LIMIT": "5/2"], prefix: "X")
        #expect(custom.backoff.initial == .milliseconds(200) && custom.backoff.cap == .seconds(1) && custom.backoff.maxAttempts == 3)
        #expect(custom.rateLimit == DeliveryRateLimit(limit: 5, window: .seconds(2)))
        #expect(try DeliverySettings.fromEnvironment(["X_RATE_LIMIT": "off"], prefix: "X").rateLimit == nil)
        for bad in [["X_BACKOFF_MS": "0"], ["X_MAX_ATTEMPTS": "x"], ["X_RATE_LIMIT": "5"], ["X_RATE_LIMIT": "0/10"]] {
            #expect(throws: ConfigurationError.self) { try DeliverySettings.fromEnvironment(bad, prefix: "X") }
        }
    }
}

/// A transport for tests: answers from a script (then delivers), recording each attempt's time.
final class ScriptedTransport: DeliveryTransport {
    let channel: DeliveryChannel
    private let script: Mutex<[DeliveryOutcome]>
    let attempts = Mutex<[(id: String, at: ContinuousClock.Instant)]>([])

    init(channel: DeliveryChannel = "sms", failing script: [DeliveryOutcome] = []) {
        self.channel = channel
        self.script = Mutex(script)
    }

    func send(_ message: DeliveryMessage) throws -> DeliveryOutcome {
        attempts.withLock { $0.append((message.id, .now)) }
        return script.withLock { $0.isEmpty ? .delivered : $0.removeFirst() }
    }

    /// Makes the next attempts answer `outcomes`.
    func fail(_ outcomes: [DeliveryOutcome]) { script.withLock { $0 = outcomes } }

    var delivered: [String] {
        // Every attempt after the script ran out delivered; good enough for counting ids.
        attempts.withLock { $0.map(\.id) }
    }
}

/// The outbox, worker and admin operations over a real SQLite file and socket.
@Suite("Delivery outbox")
struct DeliveryOutboxTests {
    /// A service that queues a message per `mailer.send` and has the dead-letter operations.
    static func mailer(_ transport: ScriptedTransport, settings: DeliverySettings) -> ServiceDefinition {
        let outbox = DeliveryOutbox(service: "mailer")
        struct Send: Codable, Sendable {
            var id: String?
            var to: String
        }
        let send = ServiceOperation.write(
            "mailer.send", summary: "Queues a message.", auth: .public,
            request: .object(["id": .string(), "to": .string()], required: ["to"]), response: .object(["id": .string()], required: ["id"])
        ) { (_, input: Send, db: Database) in
            ["id": .string(try outbox.enqueue(db, id: input.id, channel: transport.channel, to: input.to, payload: ["body": "code 123456"]))] as JSONValue
        }
        return ServiceDefinition(
            name: "mailer", summary: "Sends messages.", durability: .full, operations: [send] + DeliveryOperations.operations(outbox: outbox),
            workers: { pool, logger in [DeliveryWorker(pool: pool, outbox: outbox, transports: [transport], settings: settings, logger: logger)] })
    }

    static let fast = DeliverySettings(
        backoff: BackoffPolicy(initial: .milliseconds(200), cap: .seconds(2), jitter: 0, maxAttempts: 3), rateLimit: nil)
    static let admin = TestCaller.user("root", roles: ["admin"])

    /// A queued message as stored.
    struct Stored: Equatable {
        var status: String
        var attempts: Int
        var payload: String
        var destination: String
        var lastError: String?
    }

    static func row(_ service: InProcessService, _ id: String) throws -> Stored? {
        try service.runtime.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM platform_delivery WHERE id = ?", arguments: [id]).map { row in
                Stored(status: row["status"], attempts: row["attempts"], payload: row["payload"], destination: row["destination"], lastError: row["last_error"])
            }
        }
    }

    static func waitFor(_ what: String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw TestStackError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("fails twice, then is delivered once, after waits that double; the payload is erased")
    func retriesWithBackoff() async throws {
        let transport = ScriptedTransport(failing: [.retry(reason: "HTTP 503"), .retry(reason: "HTTP 503")])
        try await InProcessService.with(Self.mailer(transport, settings: Self.fast)) { service in
            let queued = try await service.call("mailer.send", data: ["id": "m-1", "to": "+79161234567"])
            #expect(queued.data?["id"] == "m-1")
            try await Self.waitFor("delivery") { try Self.row(service, "m-1")?.status == "sent" }
            let attempts = transport.attempts.withLock { $0 }
            #expect(attempts.map(\.id) == ["m-1", "m-1", "m-1"])
            let first = attempts[1].at - attempts[0].at, second = attempts[2].at - attempts[1].at
            #expect(first >= .milliseconds(190) && first < .milliseconds(1_000), "\(first)")
            #expect(second >= .milliseconds(390) && second < .milliseconds(1_500), "\(second)")
            #expect(try Self.row(service, "m-1") == Stored(status: "sent", attempts: 3, payload: "{}", destination: "+79161234567", lastError: "HTTP 503"))
        }
    }

    @Test("the same id queued twice is one message")
    func deduplicated() async throws {
        let transport = ScriptedTransport()
        try await InProcessService.with(Self.mailer(transport, settings: Self.fast)) { service in
            try await service.call("mailer.send", data: ["id": "same", "to": "a@example.com"])
            try await service.call("mailer.send", data: ["id": "same", "to": "b@example.com"])
            let generated = try await service.call("mailer.send", data: ["to": "c@example.com"])
            #expect(generated.data?["id"]?.stringValue?.hasPrefix("msg_") == true)
            try await Self.waitFor("two deliveries") { transport.delivered.count == 2 }
            try await Task.sleep(for: .milliseconds(300))
            #expect(transport.delivered.filter { $0 == "same" }.count == 1)
            #expect(try Self.row(service, "same")?.destination == "a@example.com")
        }
    }

    @Test("dead letters: listed masked to admins only, retried once, conflicts for sent, not_found for unknown")
    func deadLetters() async throws {
        let transport = ScriptedTransport(failing: [.permanent(reason: "550 no such mailbox")] + Array(repeating: .retry(reason: "timeout"), count: 3))
        try await InProcessService.with(Self.mailer(transport, settings: Self.fast)) { service in
            try await service.call("mailer.send", data: ["id": "refused", "to": "anna@example.com"])
            try await Self.waitFor("the refusal") { try Self.row(service, "refused")?.status == "dead" }
            try await service.call("mailer.send", data: ["id": "flaky", "to": "+79161234567"])
            try await Self.waitFor("three attempts") { try Self.row(service, "flaky")?.status == "dead" }
            #expect(try Self.row(service, "flaky")?.attempts == 3)

            #expect(try await service.call("mailer.delivery.dead.list").error?.code == .unauthenticated)
            #expect(try await service.call("mailer.delivery.dead.list", as: .user("u1", roles: ["staff"])).error?.code == .forbidden)
            #expect(try await service.call("mailer.delivery.retry", data: ["id": "flaky"], as: .user("u1")).error?.code == .forbidden)

            let first = try await service.call("mailer.delivery.dead.list", data: ["limit": 1], as: Self.admin)
            #expect(first.data?["items"]?[0]?["id"] == "flaky" && first.data?["items"]?[0]?["destination"] == "+7916***67")
            #expect(first.data?["items"]?[0]?["lastError"] == "timeout" && first.data?["items"]?[0]?["attempts"] == 3)
            let cursor = try #require(first.data?["next"]?.stringValue)
            let second = try await service.call("mailer.delivery.dead.list", data: ["limit": 1, "cursor": .string(cursor)], as: Self.admin)
            #expect(second.data?["items"]?[0]?["id"] == "refused" && second.data?["items"]?[0]?["destination"] == "a***@example.com")
            #expect(second.data?["next"] == .null || second.data?["next"] == nil)
            // Nothing of the text reaches the list.
            #expect(!String(decoding: (first.data ?? .null).serialized + (second.data ?? .null).serialized, as: UTF8.self).contains("123456"))
            #expect(try await service.call("mailer.delivery.dead.list", data: ["cursor": "nonsense"], as: Self.admin).error?.code == .validationFailed)

            // Two admins retry at once: one message, sent once, with a fresh round of attempts.
            async let retryA = service.call("mailer.delivery.retry", data: ["id": "flaky"], as: Self.admin)
            async let retryB = service.call("mailer.delivery.retry", data: ["id": "flaky"], as: Self.admin)
            let (a, b) = try await (retryA, retryB)
            #expect([a, b].allSatisfy { $0.ok || $0.error?.details["reason"] == "already_sent" }, "\(a) \(b)")
            try await Self.waitFor("the retried message") { try Self.row(service, "flaky")?.status == "sent" }
            #expect(transport.delivered.filter { $0 == "flaky" }.count == 4)

            let sent = try await service.call("mailer.delivery.retry", data: ["id": "flaky"], as: Self.admin)
            #expect(sent.error?.code == .conflict && sent.error?.details["reason"] == "already_sent")
            #expect(try await service.call("mailer.delivery.retry", data: ["id": "nope"], as: Self.admin).error?.code == .notFound)
            let remaining = try await service.call("mailer.delivery.dead.list", as: Self.admin)
            #expect(remaining.data?["items"]?.arrayValue?.count == 1)
        }
    }

    @Test("messages over a destination's rate limit wait for the window, none dropped")
    func rateLimited() async throws {
        let transport = ScriptedTransport()
        var settings = Self.fast
        settings.rateLimit = DeliveryRateLimit(limit: 2, window: .milliseconds(1_000))
        try await InProcessService.with(Self.mailer(transport, settings: settings)) { service in
            for index in 0..<5 { try await service.call("mailer.send", data: ["id": .string("r\(index)"), "to": "+79160000000"]) }
            let otherQueued = ContinuousClock.now
            try await service.call("mailer.send", data: ["id": "other", "to": "+79160000001"])
            try await Self.waitFor("six deliveries") { transport.delivered.count == 6 }
            let attempts = transport.attempts.withLock { $0 }
            let sends = attempts.filter { $0.id.hasPrefix("r") }
            #expect(sends.count == 5)
            // Two go at once, two a second after the first, the fifth two seconds after it.
            let times = sends.map { $0.at - sends[0].at }
            #expect(times[2] >= .milliseconds(990) && times[4] >= .milliseconds(1_990), "\(times)")
            // Another number is not held back.
            let other = try #require(attempts.first { $0.id == "other" })
            #expect(other.at - otherQueued < .milliseconds(900))
            // Waiting for the limit is not an attempt.
            try await Self.waitFor("the outcome recorded") { try Self.row(service, "r4")?.status == "sent" }
            #expect(try Self.row(service, "r4")?.attempts == 1)
        }
    }

    @Test("a message whose send was not recorded is sent again with the same id, never lost")
    func atLeastOnce() async throws {
        let directory = try TemporaryDirectory()
        let outbox = DeliveryOutbox(service: "mailer")
        let pool = try ServiceDatabase.open(directory: directory.url, name: "mailer", durability: .full, migrations: { _ in })
        try await pool.write { db in
            try outbox.enqueue(db, id: "a", channel: "sms", to: "+1", payload: ["body": "x"])
            try outbox.enqueue(db, id: "b", channel: "sms", to: "+2", payload: ["body": "y"])
        }
        var logger = Logger(label: "delivery")
        logger.logLevel = .critical
        // A worker that sends but whose outcomes never reach the database (as if killed).
        let transport = ScriptedTransport()
        let lost = try DatabasePool(path: directory.url.appendingPathComponent("mailer.sqlite").path, configuration: {
            var configuration = Configuration()
            configuration.readonly = true
            return configuration
        }())
        var limiter = DeliveryRateLimiter(fallback: nil)
        DeliveryWorker(pool: lost, outbox: outbox, transports: [transport], settings: Self.fast, logger: logger).drain(limiter: &limiter)
        #expect(transport.delivered == ["a", "b"])
        // The next worker sends both again, with their ids, and records them.
        DeliveryWorker(pool: pool, outbox: outbox, transports: [transport], settings: Self.fast, logger: logger).drain(limiter: &limiter)
        #expect(transport.delivered == ["a", "b", "a", "b"])
        DeliveryWorker(pool: pool, outbox: outbox, transports: [transport], settings: Self.fast, logger: logger).drain(limiter: &limiter)
        #expect(transport.delivered.count == 4)
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_delivery WHERE status = 'sent'") } == 2)
        // A deleted account's messages go, whatever their state.
        try await pool.write { db in try DeliveryOutbox.forget(db, destination: "+1") }
        #expect(try await pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM platform_delivery") } == ["b"])
    }
}

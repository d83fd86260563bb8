import Foundation
import GRDB
import Logging
import Platform
import SharedTesting
import Synchronization
import Testing

@testable import AuthService
@testable import Platform

/// The fake SMTP relay, SMS webhook and Graph API of `Fixtures/fake_providers.py`, on
/// loopback ports of their own.
final class FakeProviders: Sendable {
    let smtpPort = TestEnvironment.freePort()
    let httpPort = TestEnvironment.freePort()
    let folder: TemporaryDirectory
    let process: ChildProcess

    init() async throws {
        folder = try TemporaryDirectory(prefix: "providers")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/fake_providers.py")
        process = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: ["python3", script.path, String(smtpPort), String(httpPort), folder.path], environment: [:],
            logFile: folder.url.appendingPathComponent("providers.log"))
        let deadline = ContinuousClock.now + .seconds(10)
        while !process.output.contains("ready") {
            guard ContinuousClock.now < deadline, process.isRunning else { throw TestStackError("fake providers did not start: \(process.output)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    var environment: [String: String] {
        [
            "BACKEND_AUTH_EMAIL_TRANSPORT": "smtp", "BACKEND_AUTH_SMTP_URL": "smtp://127.0.0.1:\(smtpPort)",
            "BACKEND_AUTH_SMTP_FROM": "no-reply@goals.example", "BACKEND_AUTH_SMS_TRANSPORT": "http",
            "BACKEND_AUTH_SMS_URL": "http://127.0.0.1:\(httpPort)/sms", "BACKEND_AUTH_SMS_TOKEN": "sms-secret",
            "BACKEND_AUTH_FACEBOOK_GRAPH_URL": "http://127.0.0.1:\(httpPort)/v19.0", "BACKEND_AUTH_FACEBOOK_APP_ID": "test-app",
            "BACKEND_AUTH_FACEBOOK_APP_SECRET": "test-secret",
        ]
    }

    /// The files the fake wrote whose name starts with `prefix`, oldest first.
    func files(_ prefix: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasPrefix(prefix) && !$0.hasSuffix(".tmp") }
            .sorted { (Int($0.split(separator: "-")[1].split(separator: ".")[0]) ?? 0) < (Int($1.split(separator: "-")[1].split(separator: ".")[0]) ?? 0) }
            .compactMap { try? String(contentsOfFile: folder.url.appendingPathComponent($0).path, encoding: .utf8) }
    }

    /// The files the fake wrote whose name starts with `prefix`, parsed as JSON, oldest first.
    func records(_ prefix: String) -> [JSONValue] {
        files(prefix).compactMap { try? JSONParser.parse(Data($0.utf8)) }
    }

    /// Waits until the fake wrote at least `count` files starting with `prefix`, and returns them.
    func waitForRecords(_ prefix: String, count: Int, timeout: Duration = .seconds(15)) async throws -> [JSONValue] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = records(prefix)
            if found.count >= count { return found }
            guard ContinuousClock.now < deadline else { throw TestStackError("the fake providers got \(found.count) \(prefix) of \(count)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Makes the fakes misbehave (see `fake_providers.py`): `["refuseSms": 2]`, `["refuseMail": 1, "mailCode": 550]`, ...
    func control(_ settings: JSONValue) async throws {
        let response = try await Curl.send(
            HTTPRequest(
                method: "POST", url: "http://127.0.0.1:\(httpPort)/control", headers: ["Content-Type": "application/json"],
                body: settings.serialized))
        guard response.status == 200 else { throw TestStackError("the fake providers refused their control: HTTP \(response.status)") }
    }

    func stop() async {
        await process.stop(grace: .seconds(3))
        folder.remove()
    }
}

/// Reads codes from what auth sent.
enum Messages {
    /// The messages the `file` transport wrote, oldest first.
    static func outbox(_ stack: TestStack) -> [OutgoingMessage] {
        let folder = stack.configuration.dataDirectoryURL.appendingPathComponent("outbox")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }
            .compactMap { try? WireJSON.decode(OutgoingMessage.self, from: Data(contentsOf: folder.appendingPathComponent($0))) }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// Waits for the `count`-th message to `recipient` and returns its 6-digit code.
    static func code(to recipient: String, number count: Int = 1, in stack: TestStack) async throws -> String {
        try await AuthFixtures.code(to: recipient, number: count, dataDirectory: stack.configuration.dataDirectoryURL)
    }

    static func sixDigits(in text: String) -> String? {
        AuthFixtures.sixDigits(in: text)
    }
}

@Suite("Auth by phone, recovery and account deletion")
struct AuthMessagingTests {
    static let environment = AuthFlowTests.environment.merging([
        "BACKEND_AUTH_SMS_CODE_TTL_S": "2", "BACKEND_AUTH_CODE_RESEND_S": "0",
    ]) { _, new in new }

    static func startPhone(_ stack: TestStack, _ phone: String) async throws -> Reply.Parsed {
        try await stack.client.call(
            "auth.phone.start", data: ["phone": .string(phone), "challenge": try await AuthFlowTests.solvedChallenge(stack)])
    }

    @Test("phone sign-in: code by SMS, registration on first use, wrong codes, expiry")
    func phoneSignIn() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment) { stack in
            let phone = "+79161234567"
            let started = try await Self.startPhone(stack, phone)
            #expect(started.data == ["resendAfterMs": 0, "expiresInMs": 2000])
            let code = try await Messages.code(to: phone, in: stack)

            let noProfile = try await stack.client.call("auth.phone.verify", data: ["phone": .string(phone), "code": .string(code)])
            #expect(noProfile.error?.fields["profile"] != nil)
            let profile: JSONValue = ["firstName": "Ivan", "lastName": "Rider", "birthDate": "1995-07-01"]
            let signedUp = try await stack.client.call(
                "auth.phone.verify", data: ["phone": .string(phone), "code": .string(code), "profile": profile])
            #expect(signedUp.ok)
            let token = try #require(signedUp.data?["accessToken"]?.stringValue)
            #expect(try await stack.client.call("auth.profile.get", token: token, idempotent: true).data?["phone"] == .string(phone))
            // Single use.
            let reused = try await stack.client.call("auth.phone.verify", data: ["phone": .string(phone), "code": .string(code)])
            #expect(reused.error?.code == .validationFailed)

            // Wrong five times: the code is void even when the right one comes next (in the
            // same words as a wrong code: nothing tells a guesser a code was sent).
            _ = try await Self.startPhone(stack, phone)
            let second = try await Messages.code(to: phone, number: 2, in: stack)
            let wrong = second == "000000" ? "111111" : "000000"
            for attempt in 1...5 {
                let reply = try await stack.client.call("auth.phone.verify", data: ["phone": .string(phone), "code": .string(wrong)])
                #expect(reply.error?.code == .validationFailed && reply.error?.message == reused.error?.message, "attempt \(attempt)")
            }
            let afterFive = try await stack.client.call("auth.phone.verify", data: ["phone": .string(phone), "code": .string(second)])
            #expect(afterFive.error?.code == .validationFailed && afterFive.error?.message == reused.error?.message)

            // Expired (the test stack's codes live 2 s).
            _ = try await Self.startPhone(stack, phone)
            let third = try await Messages.code(to: phone, number: 3, in: stack)
            try await Task.sleep(for: .milliseconds(2_200))
            let expired = try await stack.client.call("auth.phone.verify", data: ["phone": .string(phone), "code": .string(third)])
            #expect(expired.error?.code == .validationFailed)

            // A known number signs in without a profile.
            _ = try await Self.startPhone(stack, phone)
            let fourth = try await Messages.code(to: phone, number: 4, in: stack)
            let again = try await stack.client.call("auth.phone.verify", data: ["phone": .string(phone), "code": .string(fourth)])
            #expect(again.data?["user"]?["id"] == signedUp.data?["user"]?["id"])
        }
    }

    @Test("codes are capped per number and per client; resends wait a minute by default")
    func phoneCaps() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment) { stack in
            for _ in 0..<5 { #expect(try await Self.startPhone(stack, "+79160000001").ok) }
            let capped = try await Self.startPhone(stack, "+79160000001")
            #expect(capped.error?.code == .rateLimited && capped.error?.details["retryAfterMs"] != nil)
            // Ten numbers per client per hour: this client already asked five times.
            for index in 2...6 { #expect(try await Self.startPhone(stack, "+7916000000\(index)").ok) }
            #expect(try await Self.startPhone(stack, "+79160000007").error?.code == .rateLimited)
        }
        try await TestStack.with(services: ["auth"], extraEnvironment: AuthFlowTests.environment) { stack in
            #expect(try await Self.startPhone(stack, "+79160000009").ok)
            let early = try await Self.startPhone(stack, "+79160000009")
            #expect(early.error?.code == .rateLimited)
            #expect((early.error?.details["retryAfterMs"]?.integerValue ?? 0) > 55_000)
        }
    }

    @Test("forgotten password: a code by email, reset revokes every session; unknown emails get the same answer")
    func passwordReset() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment) { stack in
            let tokens = try await AuthFlowTests.register(stack, "forgetful@example.com")
            #expect(try await stack.client.call("auth.password.forgot", data: ["email": "nobody@example.com"]).ok)
            #expect(try await stack.client.call("auth.password.forgot", data: ["email": "Forgetful@example.com"]).ok)
            // Not an address (a list, a display name): refused like a registration's, nothing queued for it.
            for notAnAddress in ["a@example.com, b@example.com", "\"x\" <c@example.com>", "not-an-email"] {
                let refused = try await stack.client.call("auth.password.forgot", data: ["email": .string(notAnAddress)])
                #expect(refused.error?.code == .validationFailed && refused.error?.fields["email"] != nil, "\(notAnAddress)")
            }
            let code = try await Messages.code(to: "forgetful@example.com", in: stack)
            // An address without an account is told so, with no code in it.
            let toNobody = Messages.outbox(stack).filter { $0.recipient == "nobody@example.com" }
            #expect(toNobody.allSatisfy { AuthFixtures.sixDigits(in: $0.body) == nil })

            let wrongCode = code == "999999" ? "999998" : "999999"
            let wrong = try await stack.client.call(
                "auth.password.reset", data: ["email": "forgetful@example.com", "code": .string(wrongCode), "newPassword": "brand-new-pass"])
            let unknown = try await stack.client.call(
                "auth.password.reset", data: ["email": "nobody@example.com", "code": .string(wrongCode), "newPassword": "brand-new-pass"])
            // The same answer for a wrong code and an unknown account.
            #expect(wrong.error?.code == .validationFailed && wrong.error == unknown.error)
            let reset = try await stack.client.call(
                "auth.password.reset", data: ["email": "forgetful@example.com", "code": .string(code), "newPassword": "brand-new-pass"])
            #expect(reset.ok)
            #expect(try await stack.client.call("auth.profile.get", token: try AuthFlowTests.token(tokens), idempotent: true).error?.code == .unauthenticated)
            #expect(try await stack.client.call("auth.login", data: ["email": "forgetful@example.com", "password": "brand-new-pass"]).ok)
            #expect(try await stack.client.call("auth.login", data: ["email": "forgetful@example.com", "password": "secret-pass-1"]).error?.code == .unauthenticated)
        }
    }

    @Test("email change with a code; account deletion publishes auth.user.deleted")
    func emailChangeAndDeletion() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment) { stack in
            let tokens = try await AuthFlowTests.register(stack, "old@example.com")
            let token = try AuthFlowTests.token(tokens)
            // The current password is needed: a stolen access token alone cannot move the account.
            let withoutPassword = try await stack.client.call("auth.email.change.start", data: ["newEmail": "new@example.com"], token: token)
            #expect(withoutPassword.error?.fields["currentPassword"] != nil)
            #expect(try await stack.client.call(
                "auth.email.change.start", data: ["newEmail": "new@example.com", "currentPassword": "secret-pass-1"], token: token).ok)
            let code = try await Messages.code(to: "new@example.com", in: stack)
            let changed = try await stack.client.call("auth.email.change.confirm", data: ["code": .string(code)], token: token)
            #expect(changed.data?["email"] == "new@example.com")
            // The old address is told.
            try await Task.sleep(for: .milliseconds(300))
            #expect(Messages.outbox(stack).contains { $0.recipient == "old@example.com" && $0.subject == "Your email was changed" })

            // A taken address answers the same, and gets a notice instead of a code.
            _ = try await AuthFlowTests.register(stack, "taken@example.com")
            #expect(try await stack.client.call(
                "auth.email.change.start", data: ["newEmail": "taken@example.com", "currentPassword": "secret-pass-1"], token: token).ok)
            try await Task.sleep(for: .milliseconds(300))
            let toTaken = Messages.outbox(stack).filter { $0.recipient == "taken@example.com" }
            #expect(toTaken.count == 1 && AuthFixtures.sixDigits(in: toTaken[0].body) == nil)

            let refused = try await stack.client.call("auth.account.delete", data: ["password": "not-my-password"], token: token)
            #expect(refused.error?.fields["password"] != nil)
            #expect(try await stack.client.call("auth.account.delete", data: ["password": "secret-pass-1"], token: token).ok)
            #expect(try await stack.client.call("auth.login", data: ["email": "new@example.com", "password": "secret-pass-1"]).error?.code == .unauthenticated)

            let auth = try stack.directClient("auth")
            let events = try await auth.call("auth.events.replay", data: ["after": 0, "limit": 100], idempotent: true)
            await auth.close()
            guard case .array(let list)? = events.data?["events"] else {
                Issue.record("no events")
                return
            }
            let deleted = list.filter { $0["type"] == "auth.user.deleted" }
            #expect(deleted.count == 1 && deleted.first?["data"]?["userId"] == tokens["user"]?["id"])
            #expect(list.contains { $0["type"] == "auth.session.revoked" && $0["data"]?["reason"] == "account_deleted" })
        }
    }

    @Test("SMTP relay, SMS webhook and the Graph API, against fake providers on loopback")
    func realProviders() async throws {
        let providers = try await FakeProviders()
        do {
            try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment.merging(providers.environment) { _, new in new }) { stack in
                // Email through SMTP.
                _ = try await AuthFlowTests.register(stack, "mail@example.com")
                #expect(try await stack.client.call("auth.password.forgot", data: ["email": "mail@example.com"]).ok)
                var mails: [String] = []
                for _ in 0..<200 where mails.isEmpty {
                    mails = providers.files("mail-")
                    try await Task.sleep(for: .milliseconds(25))
                }
                let mail = try #require(mails.first)
                #expect(mail.contains("X-Envelope-To: <mail@example.com>") && mail.contains("Message-ID: <msg_"))
                let code = try #require(Messages.sixDigits(in: mail))
                #expect(
                    try await stack.client.call(
                        "auth.password.reset", data: ["email": "mail@example.com", "code": .string(code), "newPassword": "via-smtp-123"]
                    ).ok)

                // SMS through the webhook.
                #expect(try await Self.startPhone(stack, "+79169999999").ok)
                var calls: [String] = []
                for _ in 0..<200 where calls.isEmpty {
                    calls = providers.files("sms-")
                    try await Task.sleep(for: .milliseconds(25))
                }
                let call = try JSONParser.parse(Data(try #require(calls.first).utf8))
                #expect(call["authorization"] == "Bearer sms-secret")
                #expect(call["idempotencyKey"]?.stringValue?.hasPrefix("msg_") == true)
                #expect(call["body"]?["to"] == "+79169999999")

                // Facebook: a new account, the same account again, links by email, refusals.
                let anna = try await stack.client.call("auth.facebook.login", data: ["accessToken": "valid-anna"])
                #expect(anna.ok)
                let profile = try await stack.client.call("auth.profile.get", token: anna.data?["accessToken"]?.stringValue, idempotent: true)
                #expect(profile.data?["email"] == "anna@example.com" && profile.data?["firstName"] == "Anna" && profile.data?["lastName"] == "Ivanova")
                let again = try await stack.client.call("auth.facebook.login", data: ["accessToken": "valid-anna"])
                #expect(again.data?["user"]?["id"] == anna.data?["user"]?["id"])
                #expect(try await stack.client.call("auth.facebook.login", data: ["accessToken": "valid-noemail"]).ok)
                #expect(try await stack.client.call("auth.facebook.login", data: ["accessToken": "forged"]).error?.code == .unauthenticated)
                #expect(try await stack.client.call("auth.facebook.login", data: ["accessToken": "other-app"]).error?.code == .unauthenticated)
            }
            try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment.merging(providers.environment) { _, new in new }) { stack in
                // Someone registered Anna's address without proving it: when Anna signs in with
                // Facebook, the account is hers, and the squatter's password and session end.
                let squatter = try await AuthFlowTests.register(stack, "anna@example.com", password: "squatter-pass-1")
                let linked = try await stack.client.call("auth.facebook.login", data: ["accessToken": "valid-anna"])
                #expect(linked.data?["user"]?["id"] == squatter["user"]?["id"])
                #expect(try await stack.client.call("auth.login", data: ["email": "anna@example.com", "password": "squatter-pass-1"]).error?.code == .unauthenticated)
                #expect(try await stack.client.call("auth.profile.get", token: try AuthFlowTests.token(squatter), idempotent: true).error?.code == .unauthenticated)
                // A proven address (via a reset code) is simply linked, its password kept.
                _ = try await AuthFlowTests.register(stack, "mail@example.com")
                let reset = try await stack.client.call("auth.password.forgot", data: ["email": "mail@example.com"])
                #expect(reset.ok)
            }
            await providers.stop()
        } catch {
            await providers.stop()
            throw error
        }
    }
}

/// Auth's messages on the platform's delivery outbox (its retries and dead letters are
/// tested in PlatformTests' DeliveryTests; the relay and webhook in AuthMessagingTests).
@Suite("Message delivery")
struct MessageDeliveryTests {
    @Test("unsent messages of auth's old table move to the platform outbox with their ids; sent ones and the table go")
    func migration() throws {
        let directory = try TemporaryDirectory()
        let definition = AuthService.definition(settings: AuthSettings(), dataDirectory: directory.url)
        var migrator = DatabaseMigrator()
        PlatformMigrations.register(in: &migrator)
        definition.migrations(&migrator)
        let path = directory.url.appendingPathComponent("auth.sqlite").path
        do {
            let queue = try DatabaseQueue(path: path)
            try migrator.migrate(queue, upTo: "auth-5-email-verified")
            try queue.write { db in
                let insert = """
                    INSERT INTO message (id, channel, recipient, subject, body, created_at, next_attempt_at, attempts, sent_at, last_error)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
                try db.execute(sql: insert, arguments: ["msg_due", "email", "a@example.com", "Reset", "code 111111", "2026-11-22T10:00:00.000Z", 1_795_000_000.5, 2, nil, "timeout"])
                try db.execute(sql: insert, arguments: ["msg_sent", "sms", "+79160000000", "", "", "2026-11-22T10:00:00.000Z", 1_795_000_000.0, 1, "2026-11-22T10:00:01.000Z", nil])
                try db.execute(sql: insert, arguments: ["msg_given_up", "sms", "+79160000001", "", "code 222222", "2026-11-22T10:00:00.000Z", Double.greatestFiniteMagnitude, 10, nil, "HTTP 500"])
            }
        }
        let pool = try ServiceDatabase.open(directory: directory.url, name: "auth", durability: .full, migrations: definition.migrations)
        let rows = try pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM platform_delivery ORDER BY id") }
        #expect(rows.map { $0["id"] as String } == ["msg_due", "msg_given_up"])
        let due = rows[0], dead = rows[1]
        #expect(due["status"] as String == "pending" && due["next_attempt_at"] as Int64 == 1_795_000_000_500 && due["attempts"] as Int == 2)
        #expect(try JSONParser.parse(Data((due["payload"] as String).utf8)) == ["subject": "Reset", "body": "code 111111"])
        #expect(due["channel"] as String == "email" && due["destination"] as String == "a@example.com" && due["last_error"] as String? == "timeout")
        #expect(dead["status"] as String == "dead" && dead["attempts"] as Int == 10)
        #expect(try JSONParser.parse(Data((dead["payload"] as String).utf8)) == ["body": "code 222222"])
        #expect(try pool.read { db in try db.tableExists("message") } == false)
    }

    @Test("the file transport writes one file per message id, whatever the retries")
    func fileTransport() throws {
        let directory = try TemporaryDirectory()
        let transport = FileTransport(channel: .sms, directory: directory.url)
        let message = DeliveryMessage(id: "msg_1", channel: .sms, destination: "+7", payload: ["body": "code 123456"], createdAt: "t")
        #expect(try transport.send(message) == .delivered)
        #expect(try transport.send(message) == .delivered)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files == ["msg_1.json"])
        let written = try WireJSON.decode(OutgoingMessage.self, from: Data(contentsOf: directory.url.appendingPathComponent("msg_1.json")))
        #expect(written == OutgoingMessage(id: "msg_1", channel: .sms, recipient: "+7", subject: "", body: "code 123456", createdAt: "t"))
    }
}

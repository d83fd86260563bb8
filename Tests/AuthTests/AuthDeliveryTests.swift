import Foundation
import Platform
import SharedTesting
import Testing

/// Auth's emails and SMS on the platform's delivery outbox, over real processes: the auth
/// executable, the gateway, and the fake SMTP relay and SMS webhook on loopback.
@Suite("Auth delivery over real processes")
struct AuthDeliveryTests {
    /// First retry after about a second (0.8 to 1 s with the jitter), the second after about
    /// two; codes live their default 5 minutes.
    static func environment(_ providers: FakeProviders) -> [String: String] {
        AuthFlowTests.environment.merging(providers.environment) { _, new in new }
            .merging(["BACKEND_AUTH_DELIVERY_BACKOFF_MS": "1000"]) { _, new in new }
    }

    static func withProviders(_ body: (FakeProviders) async throws -> Void) async throws {
        let providers = try await FakeProviders()
        do {
            try await body(providers)
            await providers.stop()
        } catch {
            await providers.stop()
            throw error
        }
    }

    static func seconds(_ record: JSONValue) -> Double {
        switch record["at"] {
        case .number(let value)?: value
        case .integer(let value)?: Double(value)
        default: 0
        }
    }

    @Test("an SMS refused twice (HTTP 503), then delivered once with the same id, after waits of about 1 s and 2 s")
    func failsTwiceThenDelivered() async throws {
        try await Self.withProviders { providers in
            try await providers.control(["refuseSms": 2, "smsStatus": 503])
            try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment(providers)) { stack in
                let phone = "+79165550001"
                #expect(try await AuthMessagingTests.startPhone(stack, phone).ok)
                let delivered = try await providers.waitForRecords("sms-", count: 1)
                // Nothing more comes once it is delivered.
                try await Task.sleep(for: .milliseconds(1_500))
                let refused = providers.records("smsrefused-")
                #expect(refused.count == 2 && providers.records("sms-").count == 1)
                let attempts = refused + delivered
                let ids = Set(attempts.compactMap { $0["idempotencyKey"]?.stringValue })
                #expect(ids.count == 1 && ids.first?.hasPrefix("msg_") == true && delivered[0]["body"]?["id"]?.stringValue == ids.first)
                let times = attempts.map(Self.seconds)
                let first = times[1] - times[0], second = times[2] - times[1]
                #expect(first >= 0.75 && first < 1.8, "first wait \(first) s")
                #expect(second >= 1.55 && second < 3.2 && second > first, "second wait \(second) s")
                // The one delivered message holds a working code.
                let code = try #require(Messages.sixDigits(in: delivered[0]["body"]?["text"]?.stringValue ?? ""))
                let signedIn = try await stack.client.call(
                    "auth.phone.verify",
                    data: ["phone": .string(phone), "code": .string(code), "profile": ["firstName": "Ivan", "lastName": "Rider"]])
                #expect(signedIn.ok)
            }
        }
    }

    @Test("an email the relay refuses for good is a dead letter: admins list it masked and retry it, others are refused")
    func deadLetterRetriedByAdmin() async throws {
        try await Self.withProviders { providers in
            try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment(providers)) { stack in
                _ = try await AuthFlowTests.register(stack, "root@example.com")
                let direct = try stack.directClient("auth")
                #expect(try await direct.call("auth.internal.admin.grant", data: ["email": "root@example.com"]).ok)
                let login = try await stack.client.call("auth.login", data: ["email": "root@example.com", "password": "secret-pass-1"])
                let admin = try AuthFlowTests.token(login.data ?? [:])
                let user = try AuthFlowTests.token(try await AuthFlowTests.register(stack, "mail@example.com"))

                try await providers.control(["refuseMail": 1, "mailCode": 550])
                #expect(try await stack.client.call("auth.password.forgot", data: ["email": "mail@example.com"]).ok)
                var items: [JSONValue] = []
                for _ in 0..<300 where items.isEmpty {
                    try await Task.sleep(for: .milliseconds(20))
                    items = try await stack.client.call("auth.delivery.dead.list", token: admin, idempotent: true).data?["items"]?.arrayValue ?? []
                }
                let dead = try #require(items.first)
                #expect(dead["destination"] == "m***@example.com" && dead["channel"] == "email" && dead["attempts"] == 1)
                #expect(dead["lastError"]?.stringValue?.contains("550") == true)
                #expect(providers.records("mailrefused-").count == 1 && providers.files("mail-").isEmpty)

                // Not for users, nor anonymous callers.
                #expect(try await stack.client.call("auth.delivery.dead.list", token: user, idempotent: true).error?.code == .forbidden)
                #expect(try await stack.client.call("auth.delivery.retry", data: ["id": dead["id"] ?? ""], token: user).error?.code == .forbidden)
                #expect(try await stack.client.call("auth.delivery.dead.list", idempotent: true).error?.code == .unauthenticated)

                let retried = try await stack.client.call("auth.delivery.retry", data: ["id": dead["id"] ?? ""], token: admin)
                #expect(retried.data?["status"] == "pending" && retried.data?["attempts"] == 0)
                var mails: [String] = []
                for _ in 0..<300 where mails.isEmpty {
                    try await Task.sleep(for: .milliseconds(20))
                    mails = providers.files("mail-")
                }
                let mail = try #require(mails.first)
                let code = try #require(Messages.sixDigits(in: mail))
                #expect(
                    try await stack.client.call(
                        "auth.password.reset", data: ["email": "mail@example.com", "code": .string(code), "newPassword": "after-retry-1"]
                    ).ok)
                let again = try await stack.client.call("auth.delivery.retry", data: ["id": dead["id"] ?? ""], token: admin)
                #expect(again.error?.code == .conflict && again.error?.details["reason"] == "already_sent")
                #expect(try await stack.client.call("auth.delivery.retry", data: ["id": "msg_unknown"], token: admin).error?.code == .notFound)
                #expect(try await stack.client.call("auth.delivery.dead.list", token: admin, idempotent: true).data?["items"] == [])
            }
        }
    }

    @Test("auth killed while an SMS is in flight: after a restart it is delivered, any duplicate under the same id")
    func killedMidDelivery() async throws {
        try await Self.withProviders { providers in
            try await providers.control(["smsDelayMs": 1_500])
            try await TestStack.with(services: ["auth"], extraEnvironment: Self.environment(providers)) { stack in
                let phone = "+79165550002"
                #expect(try await AuthMessagingTests.startPhone(stack, phone).ok)
                // The worker sends at once; the fake holds the answer for 1.5 s.
                try await Task.sleep(for: .milliseconds(500))
                let auth = try #require(stack.process("auth"))
                auth.kill(signal: SIGKILL)
                _ = await auth.waitForExit(timeout: .seconds(5))
                try await providers.control(["smsDelayMs": 0])
                try stack.start("auth")
                try await stack.waitUntilHealthy(["auth"], timeout: .seconds(20))

                let calls = try await providers.waitForRecords("sms-", count: 2)
                try await Task.sleep(for: .milliseconds(500))
                let all = providers.records("sms-")
                // The call cut short by the kill reached the provider; the restarted worker
                // did not know and sent it again, with the same id.
                #expect(all.count == 2 && Set(all.compactMap { $0["idempotencyKey"]?.stringValue }).count == 1, "\(all)")
                let code = try #require(Messages.sixDigits(in: calls[1]["body"]?["text"]?.stringValue ?? ""))
                let signedIn = try await stack.client.call(
                    "auth.phone.verify",
                    data: ["phone": .string(phone), "code": .string(code), "profile": ["firstName": "Ivan", "lastName": "Rider"]])
                #expect(signedIn.ok)
            }
        }
    }
}

import Foundation
import Platform
import SharedTesting
import Testing

@testable import BookingService

/// Pass top-ups through an HTTP payment provider that settles on its callback.
@Suite("Payments")
struct PaymentTests {
    /// The fake provider on loopback, and booking's environment pointing at it.
    struct Provider {
        let folder: TemporaryDirectory
        let process: ChildProcess
        let providerPort: Int
        let callbackPort: Int
        let environment: [String: String]

        var callbackURL: String { "http://127.0.0.1:\(callbackPort)/payments/callback" }

        /// Starts it; `silent` never calls back, `slow` answers a charge after a second.
        /// Extra settings override the defaults.
        static func start(silent: Bool = false, slow: Bool = false, settings: [String: String] = [:]) async throws -> Provider {
            let folder = try TemporaryDirectory(prefix: "payments")
            let providerPort = TestEnvironment.freePort(), callbackPort = TestEnvironment.freePort()
            let process = try launch(port: providerPort, folder: folder, silent: silent, slow: slow)
            while !process.output.contains("ready") { try await Task.sleep(for: .milliseconds(20)) }
            let environment = BookingFlowTests.environment.merging([
                "BACKEND_BOOKING_PAYMENT_PROVIDER": "http", "BACKEND_BOOKING_PAYMENT_URL": "http://127.0.0.1:\(providerPort)", "BACKEND_BOOKING_PAYMENT_TOKEN": "provider-token",
                "BACKEND_BOOKING_CALLBACK_SECRET": "s3cret", "BACKEND_BOOKING_CALLBACK_BIND": "127.0.0.1:\(callbackPort)",
                "BACKEND_BOOKING_CALLBACK_URL": "http://127.0.0.1:\(callbackPort)/payments/callback",
                // A call out to the provider under a loaded test machine: generous deadlines.
                "BACKEND_REQUEST_DEADLINE_MS": "8000", "BACKEND_GATEWAY_DEADLINE_MS": "10000",
            ].merging(settings) { _, new in new }) { _, new in new }
            return Provider(
                folder: folder, process: process, providerPort: providerPort, callbackPort: callbackPort, environment: environment)
        }

        static func launch(port: Int, folder: TemporaryDirectory, silent: Bool = false, slow: Bool = false) throws -> ChildProcess {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/fake_payments.py")
            return try ChildProcess(
                executable: URL(fileURLWithPath: "/usr/bin/env"),
                arguments: ["python3", script.path, String(port), "s3cret", folder.path] + (silent ? ["silent"] : []) + (slow ? ["slow"] : []),
                environment: [:], logFile: folder.url.appendingPathComponent("provider.log"))
        }

        /// The charges the provider was asked for, in order.
        var charges: [JSONValue] {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasPrefix("payment-") && $0.hasSuffix(".json") }
                .sorted { Int($0.dropFirst(8).dropLast(5)) ?? 0 < Int($1.dropFirst(8).dropLast(5)) ?? 0 }
            return names.compactMap { try? JSONParser.parse(Data(contentsOf: folder.url.appendingPathComponent($0))) }
        }

        func stop() {
            process.kill(signal: SIGKILL)
            folder.remove()
        }
    }

    @Test("a top-up retried after the provider was down is charged at the price it was recorded at, even if the package's price changed meanwhile")
    func retryKeepsRecordedPrice() async throws {
        let provider = try await Provider.start()
        var restarted: ChildProcess?
        defer {
            restarted?.kill(signal: SIGKILL)
            provider.stop()
        }
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: provider.environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "price-admin@example.com")
            let rider = try await BookingFlowTests.signUp(stack, "price-rider@example.com")
            // The provider is down: nothing is charged, the payment stays on record, pending.
            provider.process.kill(signal: SIGKILL)
            _ = await provider.process.waitForExit(timeout: .seconds(5))
            let first = try await stack.client.call("booking.pass.topup", data: ["package": "five"], token: rider, idem: "down-1", timeout: .seconds(12), attempts: 1)
            #expect(first.error?.code == .unavailable, "\(String(describing: first.data))")
            // The park raises the price of the package before the rider tries again.
            #expect(try await stack.client.call(
                "booking.admin.packages.set", data: ["id": "five", "name": "5 sessions", "sessions": 5, "credit": 0, "price": 99900],
                token: admin, idem: "raise").ok)
            restarted = try Provider.launch(port: provider.providerPort, folder: provider.folder)
            while restarted?.output.contains("ready") != true { try await Task.sleep(for: .milliseconds(20)) }
            let retry = try await stack.client.call("booking.pass.topup", data: ["package": "five"], token: rider, idem: "down-1", timeout: .seconds(12), attempts: 1)
            #expect(retry.ok, "\(retry.error?.message ?? "")")
            // Asked for what was recorded (115.00), and recorded and credited as that.
            let charges = provider.charges
            #expect(charges.last?["body"]?["amount"] == ["minor": 11500, "currency": "BYN"])
            #expect(charges.last?["body"]?["id"] == retry.data?["payment"])
            let listed = try await stack.client.call("booking.admin.payments.list", data: [:], token: admin, idempotent: true)
            let payment = listed.data?["items"]?.arrayValue?.first { $0["id"] == retry.data?["payment"] }
            #expect(payment?["amount"]?["minor"] == 11500, "\(String(describing: listed.data))")
            // A new top-up is charged at the new price.
            #expect(try await stack.client.call("booking.pass.topup", data: ["package": "five"], token: rider, idem: "after-raise", timeout: .seconds(12), attempts: 1).ok)
            #expect(provider.charges.last?["body"]?["amount"] == ["minor": 99900, "currency": "BYN"])
        }
    }

    @Test("retries of a top-up that arrive while the first is still with the provider wait for it: the provider is asked once")
    func concurrentRetriesChargeOnce() async throws {
        let provider = try await Provider.start(slow: true)
        defer { provider.stop() }
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: provider.environment) { stack in
            let rider = try await BookingFlowTests.signUp(stack, "eager-rider@example.com")
            let replies = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await stack.client.call("booking.pass.topup", data: ["package": "one"], token: rider, idem: "eager", timeout: .seconds(12), attempts: 1)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { !$0.ok }.isEmpty, "\(replies.compactMap { $0.error?.message })")
            #expect(Set(replies.compactMap { $0.data?["payment"]?.stringValue }).count == 1)
            #expect(provider.charges.count == 1)
        }
    }

    @Test("a top-up is pending until the provider's signed callback; forged and repeated callbacks change nothing")
    func httpProvider() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let (folder, providerPort, callbackPort, environment) = (provider.folder, provider.providerPort, provider.callbackPort, provider.environment)
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: environment) { stack in
            let rider = try await BookingFlowTests.signUp(stack, "payer@example.com")
            let topup = try await stack.client.call(
                "booking.pass.topup", data: ["package": "five"], token: rider, idem: "pay-1", timeout: .seconds(12), attempts: 1)
            // Pending, unless the provider's callback (sent 0.2 s after the charge) won the
            // race against the reply on a loaded machine; either way it is consistent.
            let status = topup.data?["status"]?.stringValue
            #expect(status == "pending" || status == "settled", "\(topup.error?.code.rawValue ?? "") \(topup.error?.message ?? "")")
            #expect(topup.data?["pass"]?["sessions"] == (status == "pending" ? 0 : 5))
            #expect(topup.data?["confirmationUrl"]?.stringValue?.hasPrefix("http://127.0.0.1:\(providerPort)/confirm/") == true)
            // A retry is answered from the first reply: the provider is not called again.
            let retry = try await stack.client.call(
                "booking.pass.topup", data: ["package": "five"], token: rider, idem: "pay-1", timeout: .seconds(12), attempts: 1)
            #expect(retry.data?["payment"] == topup.data?["payment"])

            var sessions: Int64 = 0
            for _ in 0..<200 where sessions == 0 {
                sessions = try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"]?.integerValue ?? 0
                if sessions == 0 { try await Task.sleep(for: .milliseconds(25)) }
            }
            #expect(sessions == 5)
            let calls = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("payment-") && $0.hasSuffix(".json") }
            #expect(calls.count == 1)
            let call = try JSONParser.parse(Data(contentsOf: folder.url.appendingPathComponent(try #require(calls.first))))
            #expect(call["authorization"] == "Bearer provider-token")
            #expect(call["body"]?["amount"] == ["minor": 11500, "currency": "BYN"])

            // Forged and repeated callbacks.
            let payment = try #require(topup.data?["payment"]?.stringValue)
            let body = Data(#"{"id":"prov-x","paymentId":"\#(payment)","status":"succeeded"}"#.utf8)
            let url = "http://127.0.0.1:\(callbackPort)/payments/callback"
            let forged = try Curl.perform(HTTPRequest(method: "POST", url: url, headers: ["X-Signature": "00ff"], body: body))
            #expect(forged.status == 401)
            let repeated = try Curl.perform(
                HTTPRequest(method: "POST", url: url, headers: ["X-Signature": PaymentCallbacks.signature(of: body, secret: "s3cret")], body: body))
            #expect(repeated.status == 200)
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 5)
        }
    }

    @Test("the callback listener holds at most 32 connections from one address: more are closed at once and the listener stays up")
    func callbackConnectionsBounded() async throws {
        let provider = try await Provider.start(silent: true)
        defer { provider.stop() }
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: provider.environment) { stack in
            // Idle connections once took every descriptor of the process, which then died.
            let closed = try await HTTPTestClient.idleConnections(host: "127.0.0.1", port: provider.callbackPort, count: 40, within: .milliseconds(1_500))
            #expect(closed.filter { $0 }.count == 8, "\(closed.filter { $0 }.count) closed")
            // Places come back: a callback is answered (unsigned: 401), and booking is the same process.
            let pid = stack.process("booking")?.pid
            let answer = try await HTTPTestClient.send("POST", provider.callbackURL, body: Data(#"{"paymentId":"x","status":"succeeded"}"#.utf8))
            #expect(answer.status == 401)
            #expect(stack.process("booking")?.pid == pid && stack.process("booking")?.isRunning == true)
        }
    }

    @Test("a top-up the provider never settles expires on its durable timer, also when booking was killed and restarted meanwhile")
    func pendingPaymentExpiresAcrossRestart() async throws {
        let provider = try await Provider.start(silent: true, settings: ["BACKEND_BOOKING_PAYMENT_EXPIRY_SECONDS": "3"])
        defer { provider.stop() }
        let (callbackPort, environment) = (provider.callbackPort, provider.environment)
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: environment) { stack in
            let rider = try await BookingFlowTests.signUp(stack, "expiring@example.com")
            let topup = try await stack.client.call(
                "booking.pass.topup", data: ["package": "five"], token: rider, idem: "pay-x", timeout: .seconds(12), attempts: 1)
            #expect(topup.data?["status"] == "pending")
            let payment = try #require(topup.data?["payment"]?.stringValue)

            // Killed before the payment is due to expire; down until after it is due.
            let booking = try #require(stack.process("booking"))
            booking.kill(signal: SIGKILL)
            await booking.waitForExit(timeout: .seconds(5))
            try await Task.sleep(for: .seconds(4))
            try stack.start("booking")
            try await stack.waitUntilHealthy(["booking"], timeout: .seconds(20))

            let direct = try stack.directClient("booking")
            var expired: [JSONValue] = []
            for _ in 0..<100 where expired.isEmpty {
                let replay = try await direct.call("booking.events.replay", data: ["after": 0], idempotent: true)
                if case .array(let events)? = replay.data?["events"] {
                    expired = events.filter { $0["type"] == "booking.payment.expired" }
                }
                if expired.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(expired.count == 1)
            #expect(expired.first?["data"]?["payment"]?.stringValue == payment)
            #expect(expired.first?["data"]?["late"] == true)
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 0)

            // A late failure changes nothing; a late success still credits what was paid, once.
            let url = "http://127.0.0.1:\(callbackPort)/payments/callback"
            for status in ["failed", "succeeded", "succeeded"] {
                let body = Data(#"{"id":"prov-1","paymentId":"\#(payment)","status":"\#(status)"}"#.utf8)
                let answer = try Curl.perform(
                    HTTPRequest(method: "POST", url: url, headers: ["X-Signature": PaymentCallbacks.signature(of: body, secret: "s3cret")], body: body))
                #expect(answer.status == 200)
            }
            #expect(try await stack.client.call("booking.pass.get", token: rider, idempotent: true).data?["sessions"] == 5)
        }
    }
}

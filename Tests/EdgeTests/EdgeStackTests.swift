import Foundation
import Platform
import SharedTesting
import Testing

/// The edge in whole stacks: an app's journey against `deploy/start.sh`, the OpenAPI
/// document checked by a validator and a fuzzer, and HTTPS.
@Suite("Edge in the stack", .serialized)
struct EdgeStackTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a command to its end (bounded by `timeout`); returns its status and output.
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: TemporaryDirectory, timeout: Duration) async throws -> (status: Int32?, output: String) {
        let process = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: arguments, environment: environment,
            logFile: directory.url.appendingPathComponent("run-\(UUID().uuidString.prefix(8)).log"))
        let status = await process.waitForExit(timeout: timeout)
        if status == nil { await process.stop(grace: .seconds(2)) }
        return (status, process.output)
    }

    @Test("an app's booking journey and a savings preview over HTTP against the stack deploy/start.sh starts")
    func journeyAgainstStartScript() async throws {
        let stack = try TestStack()
        let configuration = stack.configuration
        var arguments = [
            "bash", Self.root.appendingPathComponent("deploy/start.sh").path, "--data-dir", configuration.dataDirectory,
            "--gateway-endpoint", configuration.gatewayEndpoint, "--bus-in", configuration.busInEndpoint, "--bus-out", configuration.busOutEndpoint,
            "--gateway-edge-endpoint", configuration.gatewayEdgeEndpoint, "--edge-bind", configuration.edgeBind,
        ]
        for (name, endpoint) in configuration.serviceEndpoints.sorted(by: { $0.key < $1.key }) { arguments += ["--service", "\(name)=\(endpoint)"] }
        var environment = EdgeFlowTests.fastAuth
        environment["BACKEND_SKIP_BUILD"] = "1"
        environment["BACKEND_EDGE_SECRET"] = nil
        let runner = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: arguments, environment: environment,
            logFile: stack.directory.url.appendingPathComponent("start.log"))
        do {
            let ready = try await Poll.until(timeout: .seconds(90), interval: .milliseconds(200)) {
                runner.output.contains("processes are healthy") || !runner.isRunning
            }
            let output = runner.output
            try #require(ready && output.contains("all 9 processes are healthy"), "\(output)")
            // The URL as the runner prints it on the edge's line.
            let line = try #require(output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("edge ") })
            let url = try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
            #expect(url == "http://\(configuration.edgeBind)")
            let app = EdgeHTTPClient(baseURL: url)

            // The park is set up by its admin (granted by an operator on auth's own socket,
            // with the operator's key from the keys the runner made on its first start).
            var runnerConfiguration = configuration
            runnerConfiguration.curveKeysDirectory = configuration.dataDirectoryURL.appendingPathComponent("keys").path
            #expect(output.contains("links      CURVE, keys in"), "\(output)")
            let operatorClient = ServiceClient(link: try runnerConfiguration.operatorLink(to: "auth"), name: "operator")
            try await Self.bookingJourney(app, operator: operatorClient, authData: configuration.dataDirectoryURL)
            await operatorClient.close()

            #expect(await runner.stop(grace: .seconds(20)) == 0)
            stack.directory.remove()
        } catch {
            await runner.stop(grace: .seconds(5))
            stack.directory.remove()
            throw error
        }
    }

    /// An app's journey over HTTP: an admin (granted by `operatorClient` on auth's own
    /// socket) opens the park, a rider signs in by phone (the code read from auth's data
    /// folder `authData`), tops up twice with one key, books and cancels a slot, and previews
    /// a savings plan.
    static func bookingJourney(_ app: EdgeHTTPClient, operator operatorClient: ServiceClient, authData: URL) async throws {
        let admin = try await AuthFixtures.signUpAdmin(app, direct: operatorClient, email: "admin@park.example")
        try await app.ok("booking.admin.park.update", ["minimumNoticeMinutes": 0, "capacity": 1, "slotMinutes": 30, "timeZone": "Europe/Minsk"], token: admin)
        for weekday in 1...7 {
            try await app.ok("booking.admin.hours.set", ["weekday": .integer(Int64(weekday)), "open": "00:00", "close": "00:00"], token: admin)
        }

        // Phone sign-in: a solved challenge, the SMS code, the profile.
        let phone = "+375291112233"
        try await app.ok("auth.phone.start", ["phone": .string(phone), "challenge": try await AuthFixtures.solvedChallenge(app)])
        let code = try await AuthFixtures.code(to: phone, dataDirectory: authData)
        let signedIn = try await app.ok("auth.phone.verify", ["phone": .string(phone), "code": .string(code), "profile": ["firstName": "Ivan", "lastName": "Rider"]])
        let rider = try #require(signedIn["accessToken"]?.stringValue)

        // Top-up, retried with the same Idempotency-Key: one payment.
        let topup = try await app.ok("booking.pass.topup", ["package": "five"], token: rider, idem: "journey-topup")
        let again = try await app.ok("booking.pass.topup", ["package": "five"], token: rider, idem: "journey-topup")
        #expect(topup["status"] == "settled" && again["payment"] == topup["payment"])
        #expect(try await app.ok("booking.pass.get", token: rider)["sessions"] == 5)

        // Booking a slot tomorrow (the park's day), then cancelling it in time: the session comes back.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Minsk")!
        let day = calendar.dateComponents([.year, .month, .day], from: Date().addingTimeInterval(86_400))
        let date = String(format: "%04d-%02d-%02d", day.year!, day.month!, day.day!)
        let slots = try await app.ok("booking.slots", ["date": .string(date), "cable": "reverse-1"], token: rider)
        let items = slots["items"]?.arrayValue ?? []
        // Well beyond the free-cancellation period (2 hours), whatever the hour now.
        let later = Date().addingTimeInterval(4 * 3_600)
        let open = try #require(
            items.first { $0["bookable"]?[0] == true && (Instant.parse($0["start"]?.stringValue ?? "") ?? .distantPast) > later }, "\(slots)")
        let booked = try await app.ok("booking.create", ["cable": "reverse-1", "start": open["start"] ?? .null], token: rider, idem: "journey-book")
        #expect(booked["status"] == "booked")
        #expect(try await app.ok("booking.pass.get", token: rider)["sessions"] == 4)
        let cancelled = try await app.ok("booking.cancel", ["booking": booked["id"] ?? .null], token: rider, idem: "journey-cancel")
        #expect(cancelled["status"] == "cancelled", "\(cancelled)")
        #expect(try await app.ok("booking.pass.get", token: rider)["sessions"] == 5)

        // BuckStash: a plan preview for the same person.
        let preview = try await app.ok(
            "savings.plans.preview",
            ["method": "equal", "target": ["minor": 120_000, "currency": "RUB"], "startDate": .string(date), "deadline": "2030-01-01", "interval": "month"],
            token: rider)
        let installments = preview["installments"]?.arrayValue ?? []
        #expect(!installments.isEmpty)
        #expect(installments.compactMap { $0["amount"]?["minor"]?.integerValue }.reduce(0, +) == 120_000)
    }

    @Test("the OpenAPI document validates as OpenAPI 3.1 and survives a bounded schemathesis fuzz without a 500")
    func openAPIDocument() async throws {
        try await EdgeFlowTests.with(services: PlatformConfiguration.serviceNames, edge: ["BACKEND_EDGE_RATE_PER_SECOND": "0"]) { stack, edge in
            // Every service described: the edge asks each once it is up.
            let complete = try await Poll.until(timeout: .seconds(30)) {
                let document = try? JSONParser.parse(try await HTTPTestClient.send("GET", "\(edge.baseURL)/v1/openapi.json").body)
                return PlatformConfiguration.serviceNames.allSatisfy { document?["paths"]?["/v1/\($0).health"] != nil }
            }
            #expect(complete)
            let url = "\(edge.baseURL)/v1/openapi.json"
            let validated = try await Self.run(
                ["python3", EdgeFlowTests.fixtures.appendingPathComponent("check_openapi.py").path, url,
                 "auth.register", "booking.create", "savings.plans.preview", "reminders.create", "stats.overview", "goals.health", "media.download"],
                in: stack.directory, timeout: .seconds(60))
            #expect(validated.status == 0, "\(validated.output)")

            // A signed-in user reaches past the token checks into each operation's validation.
            let user = try await AuthFixtures.signUp(edge, email: "fuzz@edge.example")
            let fuzz = try await Self.run(
                // The CLI through python3 itself: no need for pip's script folder on PATH.
                // Run in the test's temporary folder, where schemathesis keeps its cache.
                ["python3", "-c",
                 "import os, sys; os.chdir(os.environ['FUZZ_DIR']); from schemathesis.cli import schemathesis; sys.argv[0] = 'schemathesis'; schemathesis()",
                 "run", url, "--checks", "no_internal_error,error_object", "--max-examples", "4", "--max-time", "60",
                 "--workers", "2", "--phases", "examples,fuzzing", "--generation-deterministic", "--no-shrink",
                 // A loaded CI machine is slow to generate and to answer: no health check
                 // fails the run for that, and a dropped connection is tried again (the
                 // edge's connection handling is EdgeFlowTests' business).
                 "--suppress-health-check", "all", "--request-timeout", "30", "--request-retries", "2",
                 "-H", "Authorization: Bearer \(user)", "--exclude-operation-id", "auth.account.delete", "--exclude-operation-id", "auth.logout"],
                environment: [
                    "SCHEMATHESIS_HOOKS": "fuzz_checks", "PYTHONPATH": EdgeFlowTests.fixtures.path, "NO_COLOR": "1",
                    "FUZZ_DIR": stack.directory.url.path,
                ],
                in: stack.directory, timeout: .seconds(150))
            // Schemathesis prints failures and errors first, then pages of advice: keep the first.
            let failures = fuzz.output.range(of: "WARNINGS").map { String(fuzz.output[..<$0.lowerBound]) } ?? fuzz.output
            #expect(fuzz.status == 0, "\(failures.suffix(8_000))")
            #expect(fuzz.output.contains("API Operations"), "\(fuzz.output.suffix(2_000))")
        }
    }

    @Test("with a certificate and key the edge speaks HTTPS only, with HSTS and modern cipher suites")
    func https() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: EdgeFlowTests.fastAuth) { stack in
            let certificate = stack.directory.url.appendingPathComponent("edge.crt").path
            let key = stack.directory.url.appendingPathComponent("edge.key").path
            let made = try await Self.run(
                ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
                 "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                in: stack.directory, timeout: .seconds(30))
            try #require(made.status == 0, "\(made.output)")
            try stack.start("edge", environment: ["BACKEND_EDGE_TLS_CERT": certificate, "BACKEND_EDGE_TLS_KEY": key])
            let url = "https://\(stack.configuration.edgeBind)/v1/auth.health"
            var answer = ""
            let up = try await Poll.until(timeout: .seconds(30), interval: .milliseconds(200)) {
                let result = try await Self.run(["curl", "-s", "-i", "-X", "POST", "--cacert", certificate, url], in: stack.directory, timeout: .seconds(10))
                answer = result.output
                return result.status == 0
            }
            #expect(up, "\(answer)\n\(stack.process("edge")?.output ?? "")")
            #expect(answer.hasPrefix("HTTP/1.1 200") && answer.contains("\"status\":\"ok\""), "\(answer)")
            #expect(answer.lowercased().contains("strict-transport-security: max-age="))
            // TLS 1.2 offers forward secrecy and AEAD only; TLS 1.1 is refused.
            let host = stack.configuration.edgeBind
            for (arguments, accepted) in [
                (["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"], true), (["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"], false),
                (["-tls1_2", "-cipher", "AES128-SHA"], false), (["-tls1_1", "-cipher", "ALL:@SECLEVEL=0"], false),
            ] {
                let handshake = try await Self.run(
                    ["sh", "-c", "openssl s_client -connect \(host) \(arguments.joined(separator: " ")) -CAfile \(certificate) < /dev/null"],
                    in: stack.directory, timeout: .seconds(10))
                #expect((handshake.status == 0 && handshake.output.contains("Cipher is ECDHE")) == accepted, "\(arguments): \(handshake.output.suffix(600))")
            }
            // Plain HTTP on the TLS port gets no answer.
            let plain = try? await HTTPTestClient.send("POST", "http://\(stack.configuration.edgeBind)/v1/auth.health", timeout: .seconds(3))
            #expect(plain == nil || plain?.status != 200)
        }
    }
}

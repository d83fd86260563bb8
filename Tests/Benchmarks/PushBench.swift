import ArgumentParser
import Foundation
import GRDB
import Platform
import SharedTesting

/// Notifications' figures (Notifications issue, "Performance"): an announcement to
/// 100,000 devices through the `http` transport to a local fake Gorush gateway, in
/// notifications per second, and, during it, how long reminders falling due take to
/// reach the gateway (from the instant they are due to the gateway's receipt).
struct PushBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push", abstract: "A broadcast to 100,000 devices through a fake Gorush; reminders due during it, due-to-gateway latency.")

    @Option(help: "Devices of the broadcast's app.")
    var devices = 100_000
    @Option(help: "Reminders falling due during the broadcast (4 users' devices of the Reminder app).")
    var reminders = 200
    @Option(help: "Log level of the measured processes.")
    var serviceLogLevel: String = "notice"
    @Flag(help: "Keep the data folder and logs (printed at the end).")
    var keep = false

    func run() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-push")
        defer {
            if keep {
                let copy = FileManager.default.temporaryDirectory.appendingPathComponent("bench-push-kept")
                try? FileManager.default.removeItem(at: copy)
                try? FileManager.default.copyItem(at: directory.url, to: copy)
                print("kept: \(copy.path)")
            }
            directory.remove()
        }
        let gorushPort = TestEnvironment.freePort()
        let log = directory.url.appendingPathComponent("delivered.jsonl")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Shared/SharedTesting/Fixtures/fake_gorush.py")
        let gorush = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", script.path, String(gorushPort), log.path], environment: [:],
            logFile: directory.url.appendingPathComponent("gorush.log"))
        defer { gorush.kill(signal: SIGKILL) }
        while !gorush.output.contains("ready") { try await Task.sleep(for: .milliseconds(20)) }

        let configuration = try BenchStack.configuration(in: directory.url, logLevel: serviceLogLevel)
        let environment = configuration.environment.merging([
            "BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0", "BACKEND_REMINDERS_PUSH_TRANSPORT": "http",
            "BACKEND_REMINDERS_PUSH_URL": "http://127.0.0.1:\(gorushPort)/api/push",
            // Fifty reminders per device fall due at once: the per-device pace would hold them back.
            "BACKEND_REMINDERS_PUSH_RATE_LIMIT": "off",
        ]) { _, new in new }
        let processes = try BenchStack.start(["auth", "reminders", "gateway"], environment: environment, in: directory.url)
        defer { for process in processes { process.kill(signal: SIGKILL) } }
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "bench")
        try await BenchStack.waitUntilHealthy(["auth", "reminders"], client: client)
        let direct = ServiceClient(link: try configuration.operatorLink(to: "auth"))
        let admin = try await AuthFixtures.signUpAdmin(client, direct: direct, email: "admin@push.bench", password: "bench-password")
        var users: [String] = []
        for index in 0..<4 { users.append(try await AuthFixtures.signUp(direct, email: "due\(index)@push.bench", password: "bench-password")) }
        await direct.close()

        // The reminders, due at a minute at least 25 s ahead; each user's one device.
        let due = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + 25) / 60).rounded(.up) * 60)
        let dueText = String(Instant.format(due).prefix(16))
        for (index, user) in users.enumerated() {
            _ = try await client.call(
                "reminders.devices.register",
                data: ["platform": "ios", "token": .string("due-device-token-\(index)"), "locale": "en", "appId": "reminder"], token: user)
        }
        for number in 0..<reminders {
            let made = try await client.call(
                "reminders.create", data: ["title": .string("Due \(number)"), "start": .string(dueText), "zone": "UTC", "alerts": [0]],
                token: users[number % users.count], idem: "due-\(number)")
            guard made.ok else { throw ValidationError("reminders.create failed: \(made.error?.message ?? "")") }
        }

        // The broadcast's devices, written straight into the database.
        let database = try DatabaseQueue(path: URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent("reminders.sqlite").path)
        try await database.write { [devices] db in
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
                    INSERT INTO push_device (token, user_id, app_id, platform, locale, registered_at)
                    SELECT printf('bulk-token-%08d', i), 'usr_bulk_' || i, 'goals', CASE i % 3 WHEN 0 THEN 'android' ELSE 'ios' END,
                        CASE i % 2 WHEN 0 THEN 'en' ELSE 'ru-RU' END, '2026-11-23T00:00:00Z' FROM n
                    """, arguments: [devices])
        }
        try await database.close()

        // The broadcast starts 5 s before the reminders fall due.
        let start = due.addingTimeInterval(-5)
        if start > Date() { try await Task.sleep(for: .seconds(start.timeIntervalSinceNow)) }
        let broadcastAt = Date()
        let sent = try await client.call("reminders.admin.broadcast", data: ["appId": "goals", "title": "Season opens", "text": "Goals for spring are here"], token: admin)
        guard sent.ok else { throw ValidationError("reminders.admin.broadcast failed: \(sent.error?.message ?? "")") }
        print("broadcast to \(devices) devices started; \(reminders) reminders fall due \(String(format: "%.1f", due.timeIntervalSince(broadcastAt))) s later")

        var lines: [JSONValue] = []
        let deadline = Date().addingTimeInterval(300)
        while Date() < deadline {
            try await Task.sleep(for: .milliseconds(500))
            lines = (FileManager.default.contents(atPath: log.path).map { String(decoding: $0, as: UTF8.self) } ?? "").split(separator: "\n")
                .compactMap { try? JSONParser.parse(Data($0.utf8)) }
            if lines.count >= devices + reminders { break }
        }
        let announcements = lines.filter { $0["token"]?.stringValue?.hasPrefix("bulk-") == true }.compactMap { $0["at"].flatMap(Self.seconds) }
        let dueTimes = lines.filter { $0["token"]?.stringValue?.hasPrefix("due-") == true }.compactMap { $0["at"].flatMap(Self.seconds) }
        guard let last = announcements.max() else { throw ValidationError("nothing reached the gateway") }
        let elapsed = last - broadcastAt.timeIntervalSince1970
        print(String(format: "broadcast: %d of %d devices in %.2f s: %.0f notifications/s (target >= 5,000)", announcements.count, devices, elapsed,
            Double(announcements.count) / elapsed))
        let latencies = dueTimes.map { ($0 - due.timeIntervalSince1970) * 1_000 }.sorted()
        func percentile(_ p: Double) -> Double { latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        let during = dueTimes.filter { $0 < last }.count
        print(String(format: "reminders due during it: %d of %d reached the gateway (%d before the broadcast ended); due -> gateway p50 %.0f ms, p99 %.0f ms, max %.0f ms (target p99 <= 1,000 ms)",
            latencies.count, reminders, during, percentile(0.5), percentile(0.99), latencies.last ?? .nan))
        await client.close()
    }

    static func seconds(_ value: JSONValue) -> Double? {
        switch value {
        case .number(let number): number
        case .integer(let number): Double(number)
        default: nil
        }
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// The `stack` executable brings all nine processes (the edge and the admin panel among them) to healthy, restarts a crashed one,
/// and stops them all.
@Suite("Stack runner")
struct StackRunnerTests {
    @Test("starts nine healthy processes (the edge and the admin panel among them), restarts a killed one, stops them all")
    func fullStack() async throws {
        let stack = try TestStack()
        let runner = try ChildProcess(
            executable: TestEnvironment.binary("stack"), environment: stack.configuration.environment,
            logFile: stack.directory.url.appendingPathComponent("stack.log"))
        do {
            let output = try await runner.waitForOutput("all 9 processes are healthy", timeout: .seconds(60))
            let health = try await stack.client.call("gateway.health", idempotent: true)
            #expect(health.data?["status"] == "ok")
            let services = try #require(health.data?["services"]?.objectValue)
            #expect(Set(services.keys) == Set(PlatformConfiguration.serviceNames))
            #expect(services.values.allSatisfy { $0["status"] == "ok" })
            // It takes no data, like any operation without members: an unknown one is refused.
            let stray = try await stack.client.call("gateway.health", data: ["x": 1], idempotent: true)
            #expect(stray.error?.code == .validationFailed && stray.error?.fields["x"] != nil, "\(String(describing: stray.error))")
            // The gateway describes itself as every service does, and its health answer keeps to
            // the schema it declares (every service's status included).
            let described = try await stack.client.call("gateway.describe", idempotent: true)
            let schemas = try ResponseSchemas(describe: try #require(described.data))
            #expect(schemas.operations == ["gateway.health", "gateway.describe"])
            #expect(described.data?["service"] == "gateway" && described.data?["events"] == .array([]))
            try schemas.check(health, of: "gateway.health")
            try schemas.check(described, of: "gateway.describe")
            #expect(try await stack.client.call("gateway.describe", data: ["x": 1], idempotent: true).error?.code == .validationFailed)
            // Their frames are not counted against a client's budget: one longer than they need is refused unparsed.
            let padded: JSONValue = ["x": .string(String(repeating: "a", count: 20_000))]
            #expect(try await stack.client.call("gateway.health", data: padded, idempotent: true).error?.code == .payloadTooLarge)

            let pids = Self.childPIDs(in: output)
            #expect(pids.count == 9)

            // A crashed child is restarted and served again.
            let bookingPID = try #require(pids["booking"])
            let killedAt = ContinuousClock.now
            kill(bookingPID, SIGKILL)
            let deadline = ContinuousClock.now + .seconds(30)
            var back = false
            while ContinuousClock.now < deadline {
                // Served by a new process: one started after the kill.
                if let reply = try? await stack.client.call("booking.health", idempotent: true, timeout: .milliseconds(500), attempts: 1),
                    reply.ok, let uptime = reply.data?["uptimeMs"]?.integerValue,
                    uptime < (ContinuousClock.now - killedAt).wholeMilliseconds,
                    let newPID = Self.childPIDs(in: runner.output)["booking"], newPID != bookingPID
                {
                    back = true
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(back, "booking was not restarted")

            let status = await runner.stop(grace: .seconds(20))
            #expect(status == 0)
            let livePIDs = Self.childPIDs(in: runner.output).values.filter { kill($0, 0) == 0 }
            #expect(livePIDs.isEmpty, "children still running: \(livePIDs)")
            await stack.stop()
        } catch {
            await runner.stop()
            await stack.stop()
            throw error
        }
    }

    @Test("with --backup-interval every service backs up its database periodically, sealed to the operators' key, keeping the newest")
    func periodicBackups() async throws {
        let stack = try TestStack()
        let folder = stack.directory.url.appendingPathComponent("backups")
        let logs = stack.configuration.dataDirectoryURL.appendingPathComponent("logs")
        try await stack.withRunner(arguments: ["--backup-interval", "1", "--backup-keep", "2", "--backup-dir", folder.path]) { runner, output in
            #expect(output.contains("backups    every 1 s into"))
            func files(_ service: String) -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasPrefix("\(service)-") }
            }
            func rounds(_ service: String) -> Int {
                let log = (try? String(contentsOf: logs.appendingPathComponent("\(service).log"), encoding: .utf8)) ?? ""
                return log.split(separator: "\n").filter { $0.contains("backed up") }.count
            }
            // Three rounds at least, so pruning has had something to delete.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, !PlatformConfiguration.serviceNames.allSatisfy({ rounds($0) >= 3 }) {
                try await Task.sleep(for: .milliseconds(200))
            }
            let backupKey = try CurveKeyring.backupSecretKey(in: URL(fileURLWithPath: try #require(stack.configuration.curveKeysDirectory)))
            for service in PlatformConfiguration.serviceNames {
                #expect(rounds(service) >= 3, "\(service) backed up \(rounds(service)) times")
                // Backups go on every second: a new one is written, then the oldest pruned, so
                // a listing may fall between the two. Pruned within a round: two kept.
                var kept = files(service)
                for _ in 0..<20 where kept.count > 2 {
                    try await Task.sleep(for: .milliseconds(100))
                    kept = files(service)
                }
                #expect((1...2).contains(kept.count), "\(service): \(kept)")
                #expect(kept.allSatisfy { $0.hasSuffix(".sqlite.sealed") }, "\(kept)")
                // Sealed: no SQLite header in the file; opened with the operators' key, a sound database.
                if let newest = kept.sorted().last {
                    let sealed = try Data(contentsOf: folder.appendingPathComponent(newest))
                    #expect(sealed.range(of: Data("SQLite format 3".utf8)) == nil)
                    let plain = stack.directory.url.appendingPathComponent("opened-\(service).sqlite")
                    try Data(try BackupSeal.open(Array(sealed), secretKey: backupKey).plaintext).write(to: plain)
                    let check = try await DatabaseQueue(path: plain.path).read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
                    #expect(check == ["ok"])
                }
            }
            let failures = PlatformConfiguration.serviceNames.filter {
                ((try? String(contentsOf: logs.appendingPathComponent("\($0).log"), encoding: .utf8)) ?? "").contains("backup failed")
            }
            #expect(failures.isEmpty)
            // Periodic backups stop with the services: SIGTERM ends every child in time.
            #expect(await runner.stop(grace: .seconds(20)) == 0)
            #expect(!runner.output.contains("did not stop in time"), "\(runner.output.suffix(2_000))")
        }
    }

    /// Every `child=<name> pid=<pid> ... started` line of the runner's log; later starts win.
    static func childPIDs(in output: String) -> [String: Int32] {
        var pids: [String: Int32] = [:]
        for line in output.split(separator: "\n") where line.contains("started") {
            let fields = line.split(separator: " ")
            guard let child = fields.first(where: { $0.hasPrefix("child=") })?.dropFirst(6),
                let pid = fields.first(where: { $0.hasPrefix("pid=") }).flatMap({ Int32($0.dropFirst(4)) })
            else { continue }
            pids[String(child)] = pid
        }
        return pids
    }
}

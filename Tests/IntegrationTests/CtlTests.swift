import Foundation
import Platform
import SharedTesting
import Testing

/// The operator CLI against a running gateway, and against nothing.
@Suite("ctl")
struct CtlTests {
    /// Runs `ctl` with the stack's configuration and returns its exit status and output.
    private func ctl(_ arguments: [String], configuration: PlatformConfiguration, directory: TemporaryDirectory) async throws
        -> (status: Int32, output: String)
    {
        let process = try ChildProcess(
            executable: TestEnvironment.binary("ctl"), arguments: arguments, environment: configuration.environment,
            logFile: directory.url.appendingPathComponent("ctl-\(UUID().uuidString.prefix(6)).log"))
        let status = await process.waitForExit(timeout: .seconds(20))
        return (status ?? -1, process.output)
    }

    @Test("health, call, describe and events against a running stack")
    func againstRunningStack() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let health = try await ctl(["health"], configuration: stack.configuration, directory: stack.directory)
            // Only auth runs, so the stack is degraded: exit 1, with one line per service.
            #expect(health.status == 1)
            #expect(health.output.contains("auth       ok"))
            #expect(health.output.contains("booking    unavailable"))

            let call = try await ctl(["call", "auth.health", "--json"], configuration: stack.configuration, directory: stack.directory)
            #expect(call.status == 0)
            let reply = try Reply.parse(Data(call.output.split(separator: "\n").last.map(String.init)?.utf8 ?? "".utf8))
            #expect(reply.ok && reply.data?["status"] == "ok")

            let unknown = try await ctl(["call", "auth.nope"], configuration: stack.configuration, directory: stack.directory)
            #expect(unknown.status == 1)
            #expect(unknown.output.contains("error unknown_op"))

            let invalid = try await ctl(["call", "auth.health", "{not json"], configuration: stack.configuration, directory: stack.directory)
            #expect(invalid.status != 0 && invalid.output.contains("not valid JSON"))

            let describe = try await ctl(["describe", "auth"], configuration: stack.configuration, directory: stack.directory)
            #expect(describe.status == 0)
            #expect(describe.output.contains("auth.events.replay") && describe.output.contains("[internal]"))

            let events = try await ctl(["events", "auth", "--after", "0", "--json"], configuration: stack.configuration, directory: stack.directory)
            #expect(events.status == 0)
        }
    }

    @Test("events --follow prints events as they are published")
    func followEvents() async throws {
        try await TestStack.with(services: ["auth"], extraEnvironment: ["BACKEND_AUTH_POW_DIFFICULTY": "0", "BACKEND_AUTH_SCRYPT_LOG_N": "10"]) { stack in
            let follower = try ChildProcess(
                executable: TestEnvironment.binary("ctl"), arguments: ["events", "--follow", "auth."], environment: stack.configuration.environment,
                logFile: stack.directory.url.appendingPathComponent("follow.log"))
            defer { follower.kill(signal: SIGKILL) }
            while !follower.output.contains("following") { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(300))  // the subscription reaches the bus
            // signUp: a registration answered `unavailable` on a loaded machine may still
            // have committed; it signs in then (the event is published either way).
            _ = try await AuthFixtures.signUp(stack.client, email: "events@example.com")
            var seen = false
            for _ in 0..<100 where !seen {
                seen = follower.output.contains("auth.user.registered")
                if !seen { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(seen, "ctl events --follow printed: \(follower.output)")
        }
    }

    @Test("keys generate and show; backup all seals every database, auth's too; restore needs the backup key; without keys auth is not backed up")
    func keysBackupAndRestore() async throws {
        let made = try TemporaryDirectory(prefix: "keys")
        defer { made.remove() }
        let folder = made.url.appendingPathComponent("deployment")
        let generate = try await ctl(["keys", "generate", folder.path], configuration: PlatformConfiguration(), directory: made)
        #expect(generate.status == 0, "\(generate.output)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(Set(names) == Set((CurveKeyring.components + [CurveKeyring.backupRecipient]).map { "\($0).secret" } + ["public-keys"]))
        let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("auth.secret").path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let again = try await ctl(["keys", "generate", folder.path], configuration: PlatformConfiguration(), directory: made)
        #expect(again.status != 0 && again.output.contains("already holds keys"))
        let show = try await ctl(["keys", "show", folder.path], configuration: PlatformConfiguration(), directory: made)
        #expect(show.status == 0 && show.output.contains("auth = ") && !show.output.contains("secret-key"))

        try await TestStack.with(services: ["auth", "savings"]) { stack in
            let backups = stack.directory.url.appendingPathComponent("ctl-backups")
            let backup = try await ctl(["backup", "all", backups.path], configuration: stack.configuration, directory: stack.directory)
            #expect(backup.status == 0, "\(backup.output)")
            let files = try FileManager.default.contentsOfDirectory(atPath: backups.path)
            let auth = try #require(files.first { $0.hasPrefix("auth-") })
            #expect(files.allSatisfy { $0.hasSuffix(".sqlite.sealed") }, "\(files)")
            let sealed = try Data(contentsOf: backups.appendingPathComponent(auth))
            #expect(sealed.range(of: Data("SQLite format 3".utf8)) == nil)
            #expect(sealed.range(of: Data("audit".utf8)) == nil)

            // Without the deployment's keys, auth (the audit log) is refused, not written in the clear.
            var keyless = stack.configuration
            keyless.curveKeysDirectory = nil
            keyless.dataDirectory = stack.configuration.dataDirectory
            let plainFolder = stack.directory.url.appendingPathComponent("plain-backups")
            let refused = try await ctl(["backup", "auth", plainFolder.path], configuration: keyless, directory: stack.directory)
            #expect(refused.status != 0 && refused.output.contains("audit log"), "\(refused.output)")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: plainFolder.path)) ?? []).isEmpty)

            // Restore refuses while auth runs; once it is stopped, the sealed backup goes back
            // with the operators' backup key (found in the key folder).
            let running = try await ctl(["restore", "auth", backups.appendingPathComponent(auth).path], configuration: stack.configuration, directory: stack.directory)
            #expect(running.status != 0 && running.output.contains("stop it before restoring"))
            await stack.process("auth")?.stop(grace: .seconds(10))
            let restored = try await ctl(["restore", "auth", backups.appendingPathComponent(auth).path], configuration: stack.configuration, directory: stack.directory)
            #expect(restored.status == 0, "\(restored.output)")
            #expect(restored.output.contains("restored"))
            // A wrong key is refused and nothing is replaced.
            let stranger = made.url.appendingPathComponent("deployment/auth.secret")
            let wrong = try await ctl(
                ["restore", "auth", backups.appendingPathComponent(auth).path, "--backup-key", stranger.path], configuration: stack.configuration,
                directory: stack.directory)
            #expect(wrong.status != 0 && wrong.output.contains("cannot be opened"), "\(wrong.output)")
        }
    }

    @Test("no stack: a clear message and exit status 3")
    func noStack() async throws {
        let directory = try TemporaryDirectory()
        var configuration = PlatformConfiguration()
        configuration.gatewayEndpoint = TestEnvironment.freeEndpoint()
        let result = try await ctl(["health", "--timeout", "1"], configuration: configuration, directory: directory)
        #expect(result.status == 3)
        #expect(result.output.contains("Is the stack running?"))
    }
}

import Foundation
import Platform

/// A fake Gorush push gateway on loopback (`Fixtures/fake_gorush.py`: Gorush's HTTP API
/// in sync mode), and the log of the pushes it delivered.
public struct FakeGorush: Sendable {
    let folder: TemporaryDirectory
    let process: ChildProcess
    /// Its port on 127.0.0.1.
    public let port: Int
    /// One JSON line per delivered push.
    public var log: URL { folder.url.appendingPathComponent("delivered.jsonl") }
    /// `BACKEND_REMINDERS_PUSH_URL` for it.
    public var url: String { "http://127.0.0.1:\(port)/api/push" }

    /// Starts one; `delayMs` slows each answer (a push gateway under load).
    public static func start(delayMs: Int = 0) async throws -> FakeGorush {
        let folder = try TemporaryDirectory(prefix: "gorush")
        let port = TestEnvironment.freePort()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/fake_gorush.py")
        let process = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: ["python3", script.path, String(port), folder.url.appendingPathComponent("delivered.jsonl").path, "--delay-ms", String(delayMs)],
            environment: [:], logFile: folder.url.appendingPathComponent("gorush.log"))
        let deadline = ContinuousClock.now + .seconds(20)
        while !process.output.contains("ready") {
            guard ContinuousClock.now < deadline else {
                process.kill(signal: SIGKILL)
                folder.remove()
                throw TestStackError("the fake Gorush did not start: \(process.output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return FakeGorush(folder: folder, process: process, port: port)
    }

    /// Every push it delivered, in order: `{token, notificationId, title, message, topic, platform, at}`.
    public var delivered: [JSONValue] {
        guard let data = FileManager.default.contents(atPath: log.path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? JSONParser.parse(Data($0.utf8)) }
    }

    /// Stops it and removes its folder.
    public func stop() {
        process.kill(signal: SIGKILL)
        folder.remove()
    }
}

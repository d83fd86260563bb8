import Foundation
import Platform
import SharedTesting
import Synchronization
import Testing

/// Child processes started with posix_spawn: environment, output, exit status, no
/// inherited descriptors or blocked signals.
@Suite("Spawned processes")
struct SpawnedProcessTests {
    static func waitForExit(_ process: SpawnedProcess) async throws -> Int32? {
        for _ in 0..<500 {
            if let status = process.terminationStatus { return status }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test("a child gets exactly its environment, writes to its file, and its exit code or killing signal is reported")
    func exitAndOutput() async throws {
        let directory = try TemporaryDirectory(prefix: "spawn")
        defer { directory.remove() }
        let log = directory.url.appendingPathComponent("child.log").path
        let child = try SpawnedProcess(
            executable: "/bin/sh", arguments: ["-c", "echo \"$GREETING\"; echo oops >&2; ls /proc/self/fd | wc -l; grep SigBlk /proc/self/status; exit 3"],
            environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"], output: log)
        let exited = Mutex<Int32?>(nil)
        child.onExit { status in exited.withLock { $0 = status } }
        #expect(try await Self.waitForExit(child) == 3)
        // The status is set before the handlers are called (outside the lock): give them a moment.
        for _ in 0..<200 where exited.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(5)) }
        #expect(exited.withLock { $0 } == 3)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        // 0, 1, 2 and the descriptor `ls` reads the folder with: nothing of the parent's.
        #expect(lines.prefix(3) == ["hello", "oops", "4"], "\(lines)")
        #expect(lines.last?.hasSuffix("0000000000000000") == true, "no signal blocked: \(lines)")

        let sleeper = try SpawnedProcess(executable: "/bin/sleep", arguments: ["30"], environment: [:], output: nil)
        #expect(sleeper.isRunning)
        sleeper.send(SIGKILL)
        #expect(try await Self.waitForExit(sleeper) == SIGKILL)
        #expect(!sleeper.isRunning)
        #expect(throws: SpawnedProcess.SpawnError.self) { try SpawnedProcess(executable: "/nonexistent/binary", environment: [:], output: nil) }
    }
}

import Foundation
import Platform

/// A process a test started. It is killed when the object goes away, and it exits by
/// itself if the test process dies (`BACKEND_STOP_WITH_PARENT=1`), so no test leaves
/// processes behind.
public final class ChildProcess: Sendable {
    /// The executable's name, for messages.
    public let name: String
    /// Where its standard output and error go.
    public let logFile: URL
    private let process: SpawnedProcess

    /// Starts `executable` with `arguments` and `environment` added to this process's own.
    public init(executable: URL, arguments: [String] = [], environment: [String: String], logFile: URL) throws {
        name = executable.lastPathComponent
        self.logFile = logFile
        var variables = SpawnedProcess.environment(adding: environment)
        variables["BACKEND_STOP_WITH_PARENT"] = "1"
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process = try SpawnedProcess(executable: executable.path, arguments: arguments, environment: variables, output: logFile.path)
    }

    deinit {
        kill(signal: SIGKILL)
    }

    /// The process id.
    public var pid: Int32 { process.pid }

    /// Whether the process is still running.
    public var isRunning: Bool { process.isRunning }

    /// Sends a signal if the process is running.
    public func kill(signal: Int32) {
        process.send(signal)
    }

    /// The process state letter from `/proc/<pid>/stat` (`R`, `S`, `T` for stopped, ...).
    public var state: Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// Sends SIGSTOP and waits until the kernel reports the process stopped.
    public func suspend() async {
        kill(signal: SIGSTOP)
        let deadline = ContinuousClock.now + .seconds(5)
        while state != "T", ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    }

    /// Waits for the process to exit, up to `timeout`; returns its status or `nil`.
    @discardableResult
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = process.terminationStatus { return status }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// SIGTERM, then SIGKILL if it has not exited after `grace`. Returns the exit status
    /// after SIGTERM, or `nil` if it had to be killed.
    @discardableResult
    public func stop(grace: Duration = .seconds(10)) async -> Int32? {
        kill(signal: SIGTERM)
        if let status = await waitForExit(timeout: grace) { return status }
        kill(signal: SIGKILL)
        await waitForExit(timeout: .seconds(5))
        return nil
    }

    /// The process's output so far.
    public var output: String {
        (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }
}

extension ChildProcess {
    /// Waits until the process's output contains `text` and returns the output; throws
    /// when the process exits first or `timeout` passes.
    @discardableResult
    public func waitForOutput(_ text: String, timeout: Duration) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let output = self.output
            if output.contains(text) { return output }
            guard isRunning else { throw TestStackError("\(name) exited:\n\(output)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestStackError("timed out waiting for '\(text)':\n\(output)")
    }
}

extension TestStack {
    /// Runs the stack runner (`stack`) on this stack's configuration with `arguments`, waits
    /// until all its processes are healthy, runs `body` with it and its start-up output,
    /// and stops the runner and the stack afterwards, also when `body` fails.
    public func withRunner<T>(
        arguments: [String] = [], environment extra: [String: String] = [:], _ body: (ChildProcess, String) async throws -> T
    ) async throws -> T {
        var environment = configuration.environment
        for (key, value) in extra { environment[key] = value }
        let runner = try ChildProcess(
            executable: TestEnvironment.binary("stack"), arguments: arguments, environment: environment,
            logFile: directory.url.appendingPathComponent("stack-\(UUID().uuidString.prefix(6)).log"))
        do {
            let output = try await runner.waitForOutput("processes are healthy", timeout: .seconds(90))
            let result = try await body(runner, output)
            _ = await runner.stop(grace: .seconds(20))
            await stop()
            return result
        } catch {
            await runner.stop()
            await stop()
            throw error
        }
    }
}

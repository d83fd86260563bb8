import Foundation
import Logging
import Platform

/// One child process of the stack.
struct Child: Sendable {
    let name: String
    let executable: URL
    let environment: [String: String]
    let log: URL?
    /// Variables of the runner's own environment the child must not inherit (secrets it
    /// has no use for).
    var removing: Set<String> = []
}

/// Starts children, restarts those that exit unexpectedly with exponential backoff, and
/// stops them all: SIGTERM first, SIGKILL after the grace period.
actor Supervisor {
    private struct Running {
        let process: SpawnedProcess
        let startedAt: ContinuousClock.Instant
    }

    private let logger: Logger
    private var children: [String: Child] = [:]
    private var order: [String] = []
    private var running: [String: Running] = [:]
    private var backoff: [String: Duration] = [:]
    private var stopping = false

    init(logger: Logger) {
        self.logger = logger
    }

    func add(_ child: Child) {
        children[child.name] = child
        order.append(child.name)
    }

    func startAll() {
        for name in order { start(name) }
    }

    func pids() -> [String: Int32] {
        running.mapValues { $0.process.pid }
    }

    private func start(_ name: String) {
        guard !stopping, let child = children[name] else { return }
        do {
            let process = try SpawnedProcess(
                executable: child.executable.path,
                environment: SpawnedProcess.environment(adding: child.environment).filter { !child.removing.contains($0.key) },
                output: child.log?.path)
            running[name] = Running(process: process, startedAt: .now)
            let pid = process.pid
            process.onExit { [weak self] status in
                Task { await self?.exited(name, status: status, pid: pid) }
            }
            logger.info("started", metadata: ["child": "\(name)", "pid": "\(pid)"])
        } catch {
            logger.error("cannot start", metadata: ["child": "\(name)", "error": "\(error)"])
            scheduleRestart(name)
        }
    }

    private func exited(_ name: String, status: Int32, pid: Int32) {
        guard let current = running[name], current.process.pid == pid else { return }
        running[name] = nil
        guard !stopping else { return }
        // A child that ran for a while before crashing starts again quickly.
        if ContinuousClock.now - current.startedAt > .seconds(30) { backoff[name] = nil }
        logger.warning("exited unexpectedly", metadata: ["child": "\(name)", "status": "\(status)"])
        scheduleRestart(name)
    }

    private func scheduleRestart(_ name: String) {
        let delay = backoff[name] ?? .milliseconds(200)
        backoff[name] = min(delay * 2, .seconds(10))
        logger.info("restarting", metadata: ["child": "\(name)", "inMs": "\(delay.wholeMilliseconds)"])
        Task {
            try? await Task.sleep(for: delay)
            self.start(name)
        }
    }

    /// Sends SIGTERM to every child, waits up to `grace`, then SIGKILLs the rest.
    func stopAll(grace: Duration) async {
        stopping = true
        for (_, child) in running { child.process.send(SIGTERM) }
        let deadline = ContinuousClock.now + grace
        while ContinuousClock.now < deadline, running.values.contains(where: { $0.process.isRunning }) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        for (name, child) in running where child.process.isRunning {
            logger.warning("did not stop in time, killing", metadata: ["child": "\(name)"])
            child.process.send(SIGKILL)
        }
        while running.values.contains(where: { $0.process.isRunning }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        running.removeAll()
    }
}

/// Turns SIGINT/SIGTERM into an awaitable event (the default action is disabled).
final class SignalWatcher {
    private let signal = AsyncSignal()
    private let sources: [any DispatchSourceSignal]

    init(signals: [Int32]) {
        let fired = signal
        sources = signals.map { number in
            Foundation.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { fired.fire() }
            source.resume()
            return source
        }
    }

    var received: Bool { signal.isFired }

    func wait() async { await signal.wait() }
}

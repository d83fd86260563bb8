import CBackendSystem
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`: the stack runner's services, and the
/// processes tests and benchmarks start.
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` past the end of
/// glibc's buffer and crashes now and then (swift-corelibs-foundation PR #5472), which is
/// more often the more processes a test suite starts. Here the child gets the default
/// signal dispositions and an empty signal mask (the parent may block signals it handles
/// through dispatch sources), `/dev/null` as input, its output appended to a file or
/// inherited, and no other file descriptor of the parent (closed from 3 up at exec).
/// One thread per child waits for it, so its exit status is known as soon as it exits.
public final class SpawnedProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    private let exit = Mutex<(status: Int32?, handlers: [@Sendable (Int32) -> Void])>((nil, []))

    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts `executable` with `arguments`, exactly `environment` as its environment, and
    /// its standard output and error appended to `output` (created if missing), or the
    /// parent's when `output` is `nil`.
    public init(executable: String, arguments: [String] = [], environment: [String: String], output: String?) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let output {
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        backend_spawn_close_from(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(result)))") }
        pid = child
        let waiter = Thread { [self, child] in
            Thread.nameForKernel("wait-\(child)")
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            // Exited: its code; killed: the signal's number (as Foundation's Process reports).
            let code = status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
            let handlers = self.exit.withLock { state -> [@Sendable (Int32) -> Void] in
                state.status = code
                return state.handlers
            }
            for handler in handlers { handler(code) }
        }
        waiter.name = "wait-\(child)"
        waiter.start()
    }

    /// The environment of this process with `extra` added (replacing same names).
    public static func environment(adding extra: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { exit.withLock { $0.status == nil } }

    /// Its exit code, or the signal that killed it; `nil` while it runs.
    public var terminationStatus: Int32? { exit.withLock { $0.status } }

    /// Calls `handler` with the exit status once the child exits (at once if it has).
    public func onExit(_ handler: @escaping @Sendable (Int32) -> Void) {
        let status = exit.withLock { state -> Int32? in
            if state.status == nil { state.handlers.append(handler) }
            return state.status
        }
        if let status { handler(status) }
    }

    /// Sends `signal` if the child is still running.
    public func send(_ signal: Int32) {
        guard isRunning else { return }
        _ = Glibc.kill(pid, signal)
    }
}

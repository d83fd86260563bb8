import CBackendSystem
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// What every executable does first: logging to standard error at the configured
/// level, and (when asked) exiting when its parent goes away.
public enum ProcessSetup {
    /// The configuration from the environment and `options`; on a bad setting, says so
    /// on standard error and exits with status 2.
    public static func configuration(_ options: PlatformOptions) -> PlatformConfiguration {
        do {
            return try options.resolve()
        } catch {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            exit(2)
        }
    }

    /// Sets up logging and the parent watch; returns the process's logger.
    public static func start(label: String, configuration: PlatformConfiguration) -> Logger {
        keepBuffersInHeap()
        // Secrets at rest: every file this process creates (databases, media, outbox
        // messages) is readable by its user only (0600, folders 0700).
        umask(0o077)
        let level = configuration.logLevel
        // Text lines by default; JSON lines for log shippers (children inherit the variable).
        LineLogHandler.json.store(ProcessInfo.processInfo.environment["BACKEND_LOG_FORMAT"] == "json", ordering: .relaxed)
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level) }
        RequestLog.directLines.store(true, ordering: .relaxed)
        RequestMetrics.bootstrapMetrics()
        var logger = Logger(label: label)
        logger.logLevel = level
        if configuration.stopWithParent { watchParent() }
        return logger
    }

    /// glibc's allocator, tuned as the process starts: blocks under 4 MiB (every
    /// request, reply and media body the limits allow) come from the heap, and up to 8 MiB
    /// freed at the top of a heap is kept for the next request instead of being handed
    /// back at once. With glibc's defaults a 50 KB reply, whose buffer doubles while it
    /// is written, crossed the 128 KiB mapping threshold and the heap top was trimmed
    /// past 256 KiB, so each request mapped, faulted in and unmapped memory again (an
    /// unmapping with several threads sends a TLB shootdown to the other core): under
    /// `bench savings`' previews savings and the gateway took 36,965 page faults in 3 s.
    /// Setting either value stops glibc's sliding threshold, so both are set. An
    /// operator's own malloc tunables (`GLIBC_TUNABLES` with `glibc.malloc.`, or the
    /// `MALLOC_*_` variables) win.
    static func keepBuffersInHeap() {
        let environment = ProcessInfo.processInfo.environment
        guard environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.") != true,
            !environment.keys.contains(where: { $0.hasPrefix("MALLOC_") && $0.hasSuffix("_") })
        else { return }
        _ = backend_malloc_keep_buffers(4 * 1024 * 1024, 8 * 1024 * 1024)
    }

    /// The links of the process that is `component`: CURVE with the keys of
    /// ``PlatformConfiguration/curveKeysDirectory``. Without a key folder it exits with
    /// status 2 and says how to make one, unless CURVE is explicitly off, which it logs
    /// as a warning at start.
    public static func links(_ configuration: PlatformConfiguration, as component: String, logger: Logger) -> Links {
        if configuration.curveOff {
            logger.warning(
                "CURVE is OFF (BACKEND_CURVE=off): internal links are plaintext and any process that reaches a port can call services and read events")
        } else if configuration.curveKeysDirectory == nil {
            logger.critical(
                "no CURVE keys: set BACKEND_CURVE_KEYS_DIR to a folder made by `ctl keys generate` (the stack runner makes one), or BACKEND_CURVE=off for plaintext links")
            exit(2)
        }
        if let folder = configuration.curveKeysDirectory, !configuration.curveOff {
            let secret = URL(fileURLWithPath: folder).appendingPathComponent("\(component).secret").path
            let attributes = try? FileManager.default.attributesOfItem(atPath: secret)
            if let mode = attributes?[.posixPermissions] as? Int, mode & 0o077 != 0, (attributes?[.ownerAccountID] as? NSNumber)?.intValue == Int(getuid()) {
                // Secrets mounted by an orchestrator (docker secrets are 0444, owned by root) are its business.
                logger.warning(
                    "the CURVE secret key file is readable by others: chmod 600 it", metadata: ["file": "\(secret)", "mode": "\(String(mode, radix: 8))"])
            }
        }
        do {
            return try configuration.links(as: component)
        } catch {
            logger.critical("cannot load the CURVE keys", metadata: ["component": "\(component)", "error": "\(error)"])
            exit(2)
        }
    }

    /// This executable's path (`/proc/self/exe`), to find the sibling binaries.
    public static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Sends SIGTERM to this process when its parent exits (it is then re-parented), so
    /// a crashed stack runner or test never leaves services behind.
    public static func watchParent() {
        let parent = getppid()
        let thread = Thread {
            Thread.nameForKernel("parent-watch")
            while getppid() == parent { usleep(200_000) }
            kill(getpid(), SIGTERM)
            // If graceful shutdown hangs, do not linger as an orphan.
            sleep(10)
            _exit(1)
        }
        thread.name = "parent-watch"
        thread.start()
    }
}

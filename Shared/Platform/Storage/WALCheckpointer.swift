import Foundation
import GRDB
import Logging
import ServiceLifecycle

/// Copies the write-ahead log back into the database file beside the writer, not in it.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold, so the
/// service's one writer thread would stop every few hundred writes to read and write a few
/// megabytes and fsync the database file. This checkpoints passively (never waiting for a
/// lock, never blocking a reader or the writer) from its own connection on its own thread,
/// a few times a second while writes come in. Under a steady stream of writes it never
/// finds the log complete, and SQLite starts the log over only then: the group commit's
/// writer runs the last, short checkpoint itself, between batches (``LogRestart``).
public struct WALCheckpointer: Service {
    let path: String
    let logger: Logger
    let interval: Duration

    /// Checkpoints the database at `path` every `interval`.
    public init(path: String, logger: Logger, interval: Duration = .milliseconds(250)) {
        self.path = path
        self.logger = logger
        self.interval = interval
    }

    public func run() async throws {
        var configuration = Configuration()
        configuration.label = "wal-checkpoint"
        configuration.busyMode = .immediateError
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        let worker = WorkerThreads(name: "wal-checkpoint", count: 1)
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await worker.run {
                        try connection.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
                    }
                } catch {
                    logger.debug("passive checkpoint skipped", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
        try? connection.close()
    }
}

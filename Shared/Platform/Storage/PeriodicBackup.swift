import Foundation
import Logging
import ServiceLifecycle

/// A service's own periodic backups (`BACKEND_BACKUP_INTERVAL_S`; README, "Backups"):
/// every interval, an online backup of its database (``DatabaseBackup``, as `ctl backup`)
/// into the backup folder, sealed to the operators' backup key when the deployment has one,
/// keeping the newest ones. The copy runs on a thread of its own, never on the cooperative
/// pool. Auth's database holds the audit log: without a backup key its backups are refused
/// (logged), never written in the clear.
public final class PeriodicBackup: Service, Sendable {
    private let service: String
    private let database: URL
    private let folder: URL
    private let interval: Duration
    private let keep: Int
    private let sealing: BackupSealing?
    private let logger: Logger

    /// The services whose backups must be sealed.
    public static let sealedOnly: Set<String> = ["auth"]

    /// Backs up `database` of `service` into `folder` every `interval`.
    public init(service: String, database: URL, folder: URL, interval: Duration, keep: Int, sealing: BackupSealing?, logger: Logger) {
        self.service = service
        self.database = database
        self.folder = folder
        self.interval = interval
        self.keep = keep
        self.sealing = sealing
        self.logger = logger
    }

    public func run() async throws {
        // Graceful shutdown cancels the wait (a backup under way finishes on its thread).
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                guard !Task.isCancelled else { return }
                do {
                    let written = try await backUpOnce()
                    logger.info("backed up", metadata: ["file": "\(written.file.path)", "bytes": "\(written.bytes)"])
                } catch {
                    logger.error("periodic backup failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Takes one backup now and prunes the old ones.
    public func backUpOnce() async throws -> DatabaseBackup.Written {
        try await Self.backUp(service: service, database: database, folder: folder, keep: keep, sealing: sealing)
    }

    /// One backup of `database` into `folder` (sealed when `sealing` is given), keeping the
    /// newest `keep`: what `ctl backup` and the periodic backups do.
    public static func backUp(service: String, database: URL, folder: URL, keep: Int?, sealing: BackupSealing?) async throws -> DatabaseBackup.Written {
        if sealing == nil, sealedOnly.contains(service) {
            throw DatabaseBackup.Failure(
                "\(service)'s backups hold the audit log and are sealed to the operators' backup key: make keys with `ctl keys generate`")
        }
        let target = folder.appendingPathComponent(DatabaseBackup.fileName(service: service, sealed: sealing != nil))
        let written = try await SocketThread.value(name: "backup") {
            // A backup killed half-way (a crash, kill -9) leaves its working copies: gone after an hour.
            DatabaseBackup.removeLeftovers(in: database.deletingLastPathComponent())
            DatabaseBackup.removeLeftovers(in: folder)
            return try DatabaseBackup.backup(database, to: target, sealing: sealing)
        }
        if let keep { DatabaseBackup.prune(folder: folder, service: service, keep: keep) }
        return written
    }
}

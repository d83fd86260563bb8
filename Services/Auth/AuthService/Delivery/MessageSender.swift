import Foundation
import GRDB
import Logging
import Platform
import ServiceLifecycle
import Synchronization

/// Sends an outgoing message: to a folder, an SMTP relay or an SMS webhook.
public protocol MessageTransport: Sendable {
    /// Delivers one message; throws to have it retried later. Blocking is fine: the
    /// sender calls transports on its own thread.
    func deliver(_ message: OutgoingMessage) throws
}

/// Writes each message as `<id>.json` into a folder (the default for local runs; tests
/// read the files). Writing the same id twice leaves one file: duplicates vanish.
public struct FileTransport: MessageTransport {
    let directory: URL

    /// Delivers into `directory`, creating it when needed.
    public init(directory: URL) {
        self.directory = directory
    }

    public func deliver(_ message: OutgoingMessage) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let data = try WireJSON.encode(message)
        // Write then rename, so a reader never sees half a message.
        let temporary = directory.appendingPathComponent(".\(message.id).tmp")
        try data.write(to: temporary)
        let target = directory.appendingPathComponent("\(message.id).json")
        guard rename(temporary.path, target.path) == 0 else {
            throw TransferError(description: "cannot write \(target.path): errno \(errno)")
        }
    }
}

/// Drains the message outbox on its own thread: sends what is due, marks it sent, and
/// retries failures with backoff (30 s doubling to 1 h; given up after 10 attempts).
final class MessageSender: Service, Sendable {
    /// Wakes the sender after a commit that queued a message.
    final class Wake: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func signal() { semaphore.signal() }
        func wait(seconds: Double) { _ = semaphore.wait(timeout: .now() + seconds) }
    }

    private let pool: DatabasePool
    private let transports: [OutgoingMessage.Channel: any MessageTransport]
    private let logger: Logger
    private let wake: Wake
    private let stopping = StopFlag()

    init(pool: DatabasePool, transports: [OutgoingMessage.Channel: any MessageTransport], wake: Wake, logger: Logger) {
        self.pool = pool
        self.transports = transports
        self.wake = wake
        self.logger = logger
    }

    func run() async throws {
        let thread = SocketThread(name: "message-sender") { [self] in
            while !stopping.isRaised {
                drainOnce()
                wake.wait(seconds: 1)
            }
        }
        await withTaskCancellationOrGracefulShutdownHandler {
            await thread.join()
        } onCancelOrGracefulShutdown: { [self] in
            stopping.raise()
            wake.signal()
        }
    }

    /// Sends every message due now.
    func drainOnce() {
        guard let due = try? pool.read({ db in try MessageOutbox.due(db, limit: 100) }) else { return }
        for message in due where !stopping.isRaised {
            do {
                guard let transport = transports[message.channel] else { throw CryptoError("no transport for \(message.channel)") }
                try transport.deliver(message)
                try pool.write { db in
                    // The text held a code: once sent, it is not kept.
                    try db.execute(
                        sql: "UPDATE message SET sent_at = ?, attempts = attempts + 1, subject = '', body = '' WHERE id = ?",
                        arguments: [Instant.format(Date()), message.id])
                }
                logger.info("message sent", metadata: ["id": "\(message.id)", "channel": "\(message.channel.rawValue)"])
            } catch {
                // The error text may name the relay, never the message's content.
                let reason = String(describing: error).prefix(300)
                try? pool.write { db in
                    let attempts = (try Int.fetchOne(db, sql: "SELECT attempts FROM message WHERE id = ?", arguments: [message.id]) ?? 0) + 1
                    let delay = min(3_600, 30 * pow(2, Double(attempts - 1)))
                    // After 10 attempts the message stays, unsent, with its last error.
                    let next = attempts >= 10 ? Double.greatestFiniteMagnitude : Date().timeIntervalSince1970 + delay
                    try db.execute(
                        sql: "UPDATE message SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?",
                        arguments: [attempts, next, String(reason), message.id])
                }
                logger.warning("message not sent, will retry", metadata: ["id": "\(message.id)", "error": "\(reason)"])
            }
        }
    }
}

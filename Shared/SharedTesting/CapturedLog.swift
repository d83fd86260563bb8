import Logging
import Synchronization

/// A logger whose lines the test can read: what a component tells operators is part of
/// its behaviour (a full queue must be reported, never silent).
public final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// A logger writing here, at `level` and above.
    public func logger(label: String = "test", level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: label) { _ in Handler(sink: self) }
        logger.logLevel = level
        return logger
    }

    /// Each line so far: `level message key=value ...`.
    public var messages: [String] { lines.withLock { $0 } }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let sink: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let fields = metadata.merging(event.metadata ?? [:]) { _, new in new }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            sink.append(([event.level.rawValue, "\(event.message)"] + fields).joined(separator: " "))
        }
    }
}

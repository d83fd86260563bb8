import Foundation
import Logging
import Synchronization

/// A swift-log handler writing one line per entry to standard error:
/// `2026-11-22T10:00:00.123Z info booking: request id=c-1 op=booking.create us=812 outcome=ok`.
///
/// Request lines are on the hot path, so lines go into a buffer that a background
/// thread writes every 50 ms (or at once when it grows past 256 KiB); warnings and worse
/// are written at once, so nothing that explains a crash waits in the buffer.
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String

    /// Creates a handler for `label` at `level`.
    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Whether lines are JSON objects (`BACKEND_LOG_FORMAT=json`, for log shippers) rather
    /// than text: `{"at", "level", "label", "message", <metadata>...}`.
    public static let json = Atomic<Bool>(false)

    public func log(event: LogEvent) {
        let entries = event.metadata.map { metadata.merging($0) { _, new in new } } ?? metadata
        if Self.json.load(ordering: .relaxed) {
            var object: [String: JSONValue] = [
                "at": .string(LogClock.shared.timestamp()), "level": .string(event.level.rawValue), "label": .string(label),
                "message": .string(event.message.description),
            ]
            for (key, value) in entries where object[key] == nil { object[key] = .string("\(value)") }
            var bytes: [UInt8] = []
            JSONValue.object(object).writeJSON(to: &bytes)
            bytes.append(0x0A)
            LogSink.shared.write(String(decoding: bytes, as: UTF8.self), immediately: event.level >= .warning)
            return
        }
        var line = LogClock.shared.timestamp()
        line += " "
        line += event.level.rawValue
        line += " "
        line += label
        line += ": "
        line += Self.escaped(event.message.description)
        for key in entries.keys.sorted() {
            line += " "
            line += key
            line += "="
            line += Self.escaped("\(entries[key]!)")
        }
        line += "\n"
        LogSink.shared.write(line, immediately: event.level >= .warning)
    }
}

extension LineLogHandler {
    /// Keeps an entry on one line: control characters (a newline in a client-chosen
    /// value, say) are written as `\u{..}`, so no input can forge a log line.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                output += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}

/// Formats the current time, recomputing the date part once per second.
final class LogClock: Sendable {
    static let shared = LogClock()
    private let cache = Mutex<(second: Int, prefix: String)>((-1, ""))

    func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = now.tv_sec
        let millis = now.tv_nsec / 1_000_000
        let prefix = cache.withLock { cache -> String in
            if cache.second != second {
                // "2026-11-22T10:00:00" from the formatter, without its ".000Z".
                cache = (second, String(Instant.format(epochMilliseconds: Int64(second) * 1000).dropLast(5)))
            }
            return cache.prefix
        }
        let digits = String(millis)
        return prefix + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// ``timestamp()`` appended as bytes.
    func writeTimestamp(to bytes: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = now.tv_sec
        let millis = Int(now.tv_nsec / 1_000_000)
        let prefix = cache.withLock { cache -> String in
            if cache.second != second {
                cache = (second, String(Instant.format(epochMilliseconds: Int64(second) * 1000).dropLast(5)))
            }
            return cache.prefix
        }
        bytes.append(contentsOf: prefix.utf8)
        bytes.append(contentsOf: [UInt8(ascii: "."), UInt8(48 + millis / 100), UInt8(48 + millis / 10 % 10), UInt8(48 + millis % 10), UInt8(ascii: "Z")])
    }
}

/// The process's buffered standard error.
final class LogSink: Sendable {
    static let shared = LogSink()
    private let buffer = Mutex<[UInt8]>([])

    private init() {
        let thread = Thread { [self] in
            Thread.nameForKernel("log-writer")
            while true {
                usleep(50_000)
                flush()
            }
        }
        thread.name = "log-writer"
        thread.start()
        // Lines written just before a normal exit are not lost.
        atexit { LogSink.shared.flush() }
    }

    func write(_ line: String, immediately: Bool) {
        let size = buffer.withLock { buffer in
            buffer.append(contentsOf: line.utf8)
            return buffer.count
        }
        if immediately || size > 256 * 1024 { flush() }
    }

    /// Appends a line already made of bytes (request lines, ``RequestLog``).
    func write(_ line: [UInt8]) {
        let size = buffer.withLock { buffer in
            buffer.append(contentsOf: line)
            return buffer.count
        }
        if size > 256 * 1024 { flush() }
    }

    func flush() {
        let bytes = buffer.withLock { buffer -> [UInt8] in
            let taken = buffer
            buffer.removeAll(keepingCapacity: true)
            return taken
        }
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}

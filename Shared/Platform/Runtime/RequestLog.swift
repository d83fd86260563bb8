import Logging
import Synchronization

/// The one log line per request, shared by the gateway and the services:
/// `request id=<id> op=<op> us=<microseconds> outcome=<ok|error code|forwarded>`.
///
/// Built as one message rather than metadata: it is written for every request, and a
/// metadata dictionary costs more than the line itself. Never includes tokens or data.
public enum RequestLog {
    /// The message of a request's log line.
    public static func line(id: String?, op: String?, started: ContinuousClock.Instant, outcome: String) -> Logger.Message {
        let micros = (ContinuousClock.now - started).wholeMicroseconds
        return "request id=\(sanitized(id)) op=\(op ?? "-") us=\(micros) outcome=\(outcome)"
    }

    /// Writes a request's line with `logger` at `info`.
    ///
    /// When the process logs through ``LineLogHandler`` (every executable does, see
    /// ``ProcessSetup``), the line is written straight into its buffer as bytes, in the
    /// same format: the socket threads of the gateway and the services write one line per
    /// request, and swift-log's message, event and metadata values cost more than the line.
    public static func record(_ logger: Logger, label: String, id: String?, op: String?, started: ContinuousClock.Instant, outcome: String) {
        guard logger.logLevel <= .info else { return }
        guard directLines.load(ordering: .relaxed) else {
            logger.info(line(id: id, op: op, started: started, outcome: outcome))
            return
        }
        let micros = (ContinuousClock.now - started).wholeMicroseconds
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        if LineLogHandler.json.load(ordering: .relaxed) {
            // {"at","level","label","message":"request","id","op","us","outcome"}
            bytes.append(contentsOf: #"{"at":""#.utf8)
            LogClock.shared.writeTimestamp(to: &bytes)
            bytes.append(contentsOf: #"","level":"info","label":"#.utf8)
            JSONValue.writeString(label, to: &bytes)
            bytes.append(contentsOf: #","message":"request","id":"#.utf8)
            JSONValue.writeString(id ?? "-", to: &bytes)
            bytes.append(contentsOf: #","op":"#.utf8)
            JSONValue.writeString(op ?? "-", to: &bytes)
            bytes.append(contentsOf: #","us":"#.utf8)
            JSONValue.writeInteger(micros, to: &bytes)
            bytes.append(contentsOf: #","outcome":"#.utf8)
            JSONValue.writeString(outcome, to: &bytes)
            bytes.append(contentsOf: "}\n".utf8)
            return LogSink.shared.write(bytes)
        }
        LogClock.shared.writeTimestamp(to: &bytes)
        bytes.append(contentsOf: " info ".utf8)
        bytes.append(contentsOf: label.utf8)
        bytes.append(contentsOf: ": request id=".utf8)
        appendSanitized(id, to: &bytes)
        bytes.append(contentsOf: " op=".utf8)
        appendSanitized(op, to: &bytes)
        bytes.append(contentsOf: " us=".utf8)
        JSONValue.writeInteger(micros, to: &bytes)
        bytes.append(contentsOf: " outcome=".utf8)
        bytes.append(contentsOf: outcome.utf8)
        bytes.append(0x0A)
        LogSink.shared.write(bytes)
    }

    /// Set when the process's log handler is ``LineLogHandler``.
    static let directLines = Atomic<Bool>(false)

    private static func appendSanitized(_ text: String?, to bytes: inout [UInt8]) {
        guard let text else { return bytes.append(UInt8(ascii: "-")) }
        for byte in text.utf8 { bytes.append(byte > 0x20 && byte < 0x7F ? byte : UInt8(ascii: "?")) }
    }

    /// Ids are client-chosen: keep a log line one line, whatever they contain.
    public static func sanitized(_ id: String?) -> String {
        guard let id else { return "-" }
        if id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) { return id }
        return String(String.UnicodeScalarView(id.unicodeScalars.map { $0.value > 0x20 && $0.value < 0x7F ? $0 : "?" }))
    }
}

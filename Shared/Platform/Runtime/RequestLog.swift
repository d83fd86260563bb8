import Logging

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

    /// Ids are client-chosen: keep a log line one line, whatever they contain.
    public static func sanitized(_ id: String?) -> String {
        guard let id else { return "-" }
        if id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) { return id }
        return String(String.UnicodeScalarView(id.unicodeScalars.map { $0.value > 0x20 && $0.value < 0x7F ? $0 : "?" }))
    }
}

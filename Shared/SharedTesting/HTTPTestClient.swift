import Foundation
import Platform

/// A plain HTTP/1.1 client over a TCP socket, for tests of the edge: one request per
/// connection (`Connection: close`), everything the server sends read back as it came.
/// Blocking socket calls run on a thread of their own, never on Swift's cooperative pool.
public enum HTTPTestClient {
    /// An answer as received.
    public struct Answer: Sendable {
        public var status: Int
        /// Header names lowercased; a repeated header keeps its values joined by ", ".
        public var headers: [String: String]
        public var body: Data

        /// The body parsed as JSON (`nil` if it is not).
        public var json: JSONValue? { try? JSONParser.parse(body) }
        /// The error code of an error body.
        public var code: String? { json?["code"]?.stringValue }
    }

    /// Sends a request to `url` (`http://host:port/path`).
    public static func send(
        _ method: String, _ url: String, headers: [String: String] = [:], body: Data? = nil, timeout: Duration = .seconds(10)
    ) async throws -> Answer {
        guard let parsed = URL(string: url), let host = parsed.host, let port = parsed.port else { throw TestStackError("bad URL \(url)") }
        var text = "\(method) \(parsed.path.isEmpty ? "/" : parsed.path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        var request = Data(text.utf8)
        if let body { request.append(body) }
        let bytes = try await exchange(host: host, port: port, sending: [request], timeout: timeout)
        return try parse(bytes)
    }

    /// Connects, sends each chunk (with `pause` between them), and reads until the server
    /// closes or `timeout` passes; returns what was read.
    public static func exchange(
        host: String, port: Int, sending chunks: [Data], pause: Duration = .zero, halfClose: Bool = false, timeout: Duration
    ) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result {
                    try blockingExchange(host: host, port: port, chunks: chunks, pause: pause, halfClose: halfClose, timeout: timeout)
                })
            }
            thread.start()
        }
    }

    /// What ``exchange(host:port:sending:pause:timeout:)`` saw of a slow client's connection.
    public struct SlowOutcome: Sendable {
        /// Whether the server closed the connection (rather than the client giving up).
        public var closedByServer: Bool
        /// How long after connecting that happened.
        public var after: Duration
    }

    /// Opens a connection, sends `first`, then `chunk` every `interval` until the server
    /// closes it or `limit` passes.
    public static func trickle(
        host: String, port: Int, first: Data = Data(), chunk: Data, interval: Duration, limit: Duration
    ) async throws -> SlowOutcome {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result {
                    let descriptor = try connect(host: host, port: port)
                    defer { close(descriptor) }
                    let started = ContinuousClock.now
                    if !first.isEmpty { _ = first.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
                    while ContinuousClock.now - started < limit {
                        let sent = chunk.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        if sent < 0 { return SlowOutcome(closedByServer: true, after: ContinuousClock.now - started) }
                        var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                        if poll(&probe, 1, Int32(interval.wholeMilliseconds)) > 0 {
                            var byte: UInt8 = 0
                            if recv(descriptor, &byte, 1, 0) <= 0 { return SlowOutcome(closedByServer: true, after: ContinuousClock.now - started) }
                        }
                    }
                    return SlowOutcome(closedByServer: false, after: ContinuousClock.now - started)
                })
            }
            thread.start()
        }
    }

    /// Opens `count` connections that send nothing (on a thread of their own), and reports
    /// for each whether the server closed it within `within`; all are closed after.
    public static func idleConnections(host: String, port: Int, count: Int, within: Duration) async throws -> [Bool] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result {
                    var descriptors: [Int32] = []
                    defer { for descriptor in descriptors { close(descriptor) } }
                    for _ in 0..<count { descriptors.append(try connect(host: host, port: port)) }
                    let deadline = ContinuousClock.now + within
                    var closed = Array(repeating: false, count: count)
                    while ContinuousClock.now < deadline {
                        var probes = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                        _ = poll(&probes, nfds_t(probes.count), 50)
                        for (index, probe) in probes.enumerated() where probe.revents != 0 && !closed[index] {
                            var byte: UInt8 = 0
                            if recv(probe.fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { closed[index] = true }
                        }
                    }
                    return closed
                })
            }
            thread.start()
        }
    }

    public static func connect(host: String, port: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { throw TestStackError("cannot resolve \(host)") }
        defer { freeaddrinfo(list) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { throw TestStackError("socket failed") }
        guard Glibc.connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            close(descriptor)
            throw TestStackError("cannot connect to \(host):\(port)")
        }
        return descriptor
    }

    /// `halfClose`: the client shuts its sending side after the last chunk (`SHUT_WR`), as
    /// a client does that has nothing more to ask, and reads what comes back.
    static func blockingExchange(host: String, port: Int, chunks: [Data], pause: Duration, halfClose: Bool = false, timeout: Duration) throws -> Data {
        let descriptor = try connect(host: host, port: port)
        defer { close(descriptor) }
        let deadline = ContinuousClock.now + timeout
        for (index, chunk) in chunks.enumerated() {
            if index > 0, pause > .zero { Thread.sleep(forTimeInterval: Double(pause.wholeMilliseconds) / 1_000) }
            var offset = 0
            while offset < chunk.count {
                let sent = chunk.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { break }
                offset += sent
            }
        }
        if halfClose { shutdown(descriptor, Int32(SHUT_WR)) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let remaining = max(1, (deadline - ContinuousClock.now).wholeMilliseconds)
            guard poll(&probe, 1, Int32(min(remaining, 1_000))) >= 0 else { break }
            if probe.revents == 0 { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return received
    }

    /// Parses one HTTP/1.1 response (Content-Length or read to the end).
    public static func parse(_ bytes: Data) throws -> Answer {
        guard let split = bytes.range(of: Data("\r\n\r\n".utf8)) else { throw TestStackError("no complete answer: \(String(decoding: bytes, as: UTF8.self))") }
        let head = String(decoding: bytes[bytes.startIndex..<split.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw TestStackError("bad status line in \(head)") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        var body = Data(bytes[split.upperBound...])
        if let length = headers["content-length"].flatMap(Int.init), body.count > length { body = body.prefix(length) }
        return Answer(status: status, headers: headers, body: body)
    }
}


/// Operations over the HTTP edge, as an app calls them: `POST /v1/{op}` with the token as
/// a bearer header and `idem` as `Idempotency-Key`; the answer is read back into a reply,
/// so fixtures such as ``AuthFixtures`` run over HTTP unchanged.
public struct EdgeHTTPClient: OperationCalling {
    /// `http://host:port`.
    public let baseURL: String
    /// Headers sent with every call (`X-Forwarded-For` in tests of the client address).
    public var extraHeaders: [String: String]

    public init(baseURL: String, extraHeaders: [String: String] = [:]) {
        self.baseURL = baseURL
        self.extraHeaders = extraHeaders
    }

    public func call(
        _ op: String, data: JSONValue, token: String?, idem: String?, idempotent: Bool?, timeout: Duration, attempts: Int
    ) async throws -> Reply.Parsed {
        var headers = extraHeaders
        headers["Content-Type"] = "application/json"
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if let idem { headers["Idempotency-Key"] = idem }
        let answer = try await HTTPTestClient.send("POST", "\(baseURL)/v1/\(op)", headers: headers, body: data.serialized, timeout: timeout)
        return try Self.reply(answer)
    }

    /// An HTTP answer of the edge as the reply it stands for; throws when the status and
    /// the body disagree.
    public static func reply(_ answer: HTTPTestClient.Answer) throws -> Reply.Parsed {
        let body = try JSONParser.parse(answer.body)
        if answer.status == 200 { return Reply.Parsed(id: answer.headers["x-request-id"], data: body, error: nil) }
        guard case .string(let code)? = body["code"], let errorCode = ErrorCode(rawValue: code),
            case .string(let message)? = body["message"], case .object(let fields)? = body["fields"]
        else { throw TestStackError("HTTP \(answer.status) without the error object: \(String(decoding: answer.body, as: UTF8.self))") }
        var details: [String: JSONValue] = [:]
        if let retryAfter = answer.headers["retry-after"].flatMap(Int64.init) { details["retryAfterMs"] = .integer(retryAfter * 1_000) }
        let error = ServiceError(errorCode, message, fields: fields.compactMapValues(\.stringValue), details: details)
        return Reply.Parsed(id: answer.headers["x-request-id"], data: nil, error: error)
    }
}

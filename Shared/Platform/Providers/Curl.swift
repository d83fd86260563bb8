import CCurl
import Foundation

/// An HTTP request to an external provider.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [String: String]
    public var body: Data?
    public var timeout: Duration

    /// Creates a request.
    public init(method: String = "GET", url: String, headers: [String: String] = [:], body: Data? = nil, timeout: Duration = .seconds(10)) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// An HTTP response.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The body (at most 4 MiB).
    public var body: Data
    /// Creates a response.
    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// A transfer that failed before a response (DNS, connection, TLS, timeout, refused mail).
public struct TransferError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public let description: String
    /// The server's last reply code, when it answered one (an SMTP relay's `550`).
    public let responseCode: Int?
    /// Creates an error.
    public init(description: String, responseCode: Int? = nil) {
        self.description = description
        self.responseCode = responseCode
    }
}

/// Clients for external providers on libcurl (Debian's libcurl4-openssl-dev): HTTP(S)
/// for the Graph API, SMS and payment webhooks, and SMTP for mail relays.
///
/// Calls block, so they never run on the cooperative pool: the async forms hop to
/// dedicated threads, and the message sender calls the blocking forms on its own thread.
public enum Curl {
    /// libcurl, loaded and initialised at the first call (a process that never calls a
    /// provider never maps it): `nil`, or why it cannot be used.
    private static let loadFailure: String? = backend_curl_load().map { String(cString: $0) }

    private static func setUp() throws {
        if let loadFailure { throw TransferError(description: "libcurl (libcurl4) cannot be used: \(loadFailure)") }
    }
    private static let workers = WorkerThreads(name: "provider-calls", count: 4)

    /// Performs an HTTP request (blocking).
    public static func perform(_ request: HTTPRequest) throws -> HTTPResponse {
        try setUp()
        guard let handle = backend_curl_easy_init() else { throw TransferError(description: "curl_easy_init failed") }
        defer { backend_curl_easy_cleanup(handle) }
        let context = TransferContext(upload: request.body ?? Data())
        var headers: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            headers = backend_curl_slist_append(headers, "\(name): \(value)")
        }
        defer { backend_curl_slist_free_all(headers) }
        _ = backend_curl_set_string(handle, CURLOPT_URL, request.url)
        _ = backend_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        _ = backend_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = backend_curl_set_long(handle, CURLOPT_TIMEOUT_MS, request.timeout.wholeMilliseconds)
        _ = backend_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = backend_curl_set_list(handle, CURLOPT_HTTPHEADER, headers)
        if let body = request.body {
            _ = backend_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            _ = backend_curl_set_long(handle, CURLOPT_POST, 1)
            _ = backend_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
            _ = backend_curl_set_callback(handle, CURLOPT_READFUNCTION, readCallback)
        }
        _ = backend_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, writeCallback)
        return try withExtendedLifetime(context) {
            let pointer = Unmanaged.passUnretained(context).toOpaque()
            _ = backend_curl_set_pointer(handle, CURLOPT_WRITEDATA, pointer)
            _ = backend_curl_set_pointer(handle, CURLOPT_READDATA, pointer)
            let code = backend_curl_easy_perform(handle)
            guard code == CURLE_OK else { throw TransferError(description: String(cString: backend_curl_easy_strerror(code))) }
            var status = 0
            _ = backend_curl_response_code(handle, &status)
            return HTTPResponse(status: status, body: context.received)
        }
    }

    /// Performs an HTTP request on a provider-call thread, off the cooperative pool.
    public static func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await workers.run { try perform(request) }
    }

    /// An email for ``sendMail(_:)``.
    public struct Mail: Sendable {
        /// `smtp://host:port` or `smtps://host:port`.
        public var relay: String
        public var from: String
        public var to: String
        public var user: String?
        public var password: String?
        /// The whole RFC 5322 message, headers included, lines ending in CRLF.
        public var message: Data
        public var timeout: Duration = .seconds(30)

        public init(relay: String, from: String, to: String, user: String?, password: String?, message: Data) {
            self.relay = relay
            self.from = from
            self.to = to
            self.user = user
            self.password = password
            self.message = message
        }
    }

    /// Sends an email through an SMTP relay (blocking): libcurl speaks the protocol,
    /// STARTTLS included when the relay offers it.
    public static func sendMail(_ mail: Mail) throws {
        try setUp()
        guard let handle = backend_curl_easy_init() else { throw TransferError(description: "curl_easy_init failed") }
        defer { backend_curl_easy_cleanup(handle) }
        let context = TransferContext(upload: mail.message)
        var recipients: UnsafeMutablePointer<curl_slist>?
        recipients = backend_curl_slist_append(recipients, "<\(mail.to)>")
        defer { backend_curl_slist_free_all(recipients) }
        _ = backend_curl_set_string(handle, CURLOPT_URL, mail.relay)
        _ = backend_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "smtp,smtps")
        _ = backend_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = backend_curl_set_long(handle, CURLOPT_TIMEOUT_MS, mail.timeout.wholeMilliseconds)
        _ = backend_curl_set_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_TRY.rawValue))
        _ = backend_curl_set_string(handle, CURLOPT_MAIL_FROM, "<\(mail.from)>")
        _ = backend_curl_set_list(handle, CURLOPT_MAIL_RCPT, recipients)
        if let user = mail.user { _ = backend_curl_set_string(handle, CURLOPT_USERNAME, user) }
        if let password = mail.password { _ = backend_curl_set_string(handle, CURLOPT_PASSWORD, password) }
        _ = backend_curl_set_long(handle, CURLOPT_UPLOAD, 1)
        _ = backend_curl_set_callback(handle, CURLOPT_READFUNCTION, readCallback)
        try withExtendedLifetime(context) {
            _ = backend_curl_set_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(context).toOpaque())
            let code = backend_curl_easy_perform(handle)
            guard code == CURLE_OK else {
                // The relay's last reply (e.g. 451 try later, 550 no such mailbox) tells a
                // passing failure from a refusal; 0 when it never answered.
                var reply = 0
                _ = backend_curl_response_code(handle, &reply)
                throw TransferError(description: String(cString: backend_curl_easy_strerror(code)), responseCode: reply == 0 ? nil : reply)
            }
        }
    }
}

/// The buffers of one transfer, reached from libcurl's C callbacks through their
/// context pointer. Used by one transfer on one thread only.
private final class TransferContext {
    let upload: Data
    var uploaded = 0
    var received = Data()

    init(upload: Data) {
        self.upload = upload
    }
}

private let writeCallback: backend_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    // Providers' answers are small; refuse anything absurd rather than fill memory.
    guard transfer.received.count + length <= 4 << 20 else { return 0 }
    buffer.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.received.append($0, count: length) }
    return length
}

private let readCallback: backend_curl_data_callback = { buffer, size, count, context in
    guard let buffer, let context else { return 0 }
    let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
    let length = min(size * count, transfer.upload.count - transfer.uploaded)
    guard length > 0 else { return 0 }
    transfer.upload.withUnsafeBytes { bytes in
        UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + transfer.uploaded, byteCount: length)
    }
    transfer.uploaded += length
    return length
}

import Foundation

extension DeliveryChannel {
    /// Emails (an SMTP relay, or the `file` transport).
    public static let email: DeliveryChannel = "email"
    /// SMS (a provider's webhook, or the `file` transport).
    public static let sms: DeliveryChannel = "sms"
}

/// An email or SMS as the message transports read it from a queued ``DeliveryMessage``
/// (its payload is `{"subject"?, "body"}`), and as the `file` transport writes it.
public struct OutgoingMessage: Sendable, Equatable, Codable {
    /// `email` or `sms`.
    public enum Channel: String, Sendable, Codable { case email, sms }

    /// Unique id; transports use it to drop duplicates (file name, Message-ID, Idempotency-Key).
    public var id: String
    public var channel: Channel
    /// An email address or an E.164 phone number.
    public var recipient: String
    /// The subject (emails).
    public var subject: String
    /// The text.
    public var body: String
    /// When it was queued.
    public var createdAt: String

    /// Creates a message.
    public init(id: String, channel: Channel, recipient: String, subject: String, body: String, createdAt: String) {
        self.id = id
        self.channel = channel
        self.recipient = recipient
        self.subject = subject
        self.body = body
        self.createdAt = createdAt
    }

    /// A queued message read as an email or SMS.
    public init(_ message: DeliveryMessage) {
        self.init(
            id: message.id, channel: Channel(rawValue: message.channel.rawValue) ?? .email, recipient: message.destination,
            subject: message.payload["subject"]?.stringValue ?? "", body: message.payload["body"]?.stringValue ?? "",
            createdAt: message.createdAt)
    }

    /// The payload an email or SMS is queued with.
    public static func payload(subject: String = "", body: String) -> JSONValue {
        subject.isEmpty ? ["body": .string(body)] : ["subject": .string(subject), "body": .string(body)]
    }
}

extension FileTransport {
    /// Emails or SMS as `<id>.json` files (``OutgoingMessage``) in `directory`.
    public init(channel: DeliveryChannel, directory: URL) {
        self.init(channel: channel, directory: directory) { message in try WireJSON.encode(OutgoingMessage(message)) }
    }
}

/// Emails through an SMTP relay (libcurl). The message's id is its `Message-ID`, so a
/// resend after a crash can be recognized as the same message. A refusal of the mailbox
/// or the message (550 to 554) is permanent; anything else (4xx, authentication, the
/// network) is retried.
public struct SMTPTransport: DeliveryTransport {
    let url: String
    let from: String
    let user: String?
    let password: String?

    public init(url: String, from: String, user: String?, password: String?) {
        self.url = url
        self.from = from
        self.user = user
        self.password = password
    }

    public var channel: DeliveryChannel { .email }

    public func send(_ delivery: DeliveryMessage) throws -> DeliveryOutcome {
        let message = OutgoingMessage(delivery)
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let subject = "=?UTF-8?B?\(Data(message.subject.utf8).base64EncodedString())?="
        let text = [
            "From: <\(from)>", "To: <\(message.recipient)>", "Subject: \(subject)", "Message-ID: <\(message.id)@\(domain)>",
            "Date: \(Self.rfc5322Date())", "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit", "", message.body, "",
        ].joined(separator: "\r\n")
        do {
            try Curl.sendMail(
                Curl.Mail(relay: url, from: from, to: message.recipient, user: user, password: password, message: Data(text.utf8)))
        } catch let error as TransferError {
            guard let code = error.responseCode, (550...554).contains(code) else { throw error }
            return .permanent(reason: "the relay answered \(code): \(error.description)")
        }
        return .delivered
    }

    static func rfc5322Date() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss +0000"
        return formatter.string(from: Date())
    }
}

/// SMS through a provider's JSON webhook: `POST {"id", "to", "text"}` with a bearer token
/// and `Idempotency-Key: <id>`, so the provider drops a resent duplicate. Any 2xx is
/// success; a 4xx other than 401, 403, 408 and 429 (a number it will never accept) is
/// permanent; anything else is retried.
public struct WebhookTransport: DeliveryTransport {
    let url: String
    let token: String?

    public init(url: String, token: String?) {
        self.url = url
        self.token = token
    }

    public var channel: DeliveryChannel { .sms }

    public func send(_ message: DeliveryMessage) throws -> DeliveryOutcome {
        var headers = ["Content-Type": "application/json", "Idempotency-Key": message.id]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let body: JSONValue = ["id": .string(message.id), "to": .string(message.destination), "text": message.payload["body"] ?? ""]
        let response = try Curl.perform(HTTPRequest(method: "POST", url: url, headers: headers, body: body.serialized))
        switch response.status {
        case 200..<300: return .delivered
        case 401, 403, 408, 429, 500...: return .retry(reason: "the SMS provider answered HTTP \(response.status)")
        default: return .permanent(reason: "the SMS provider answered HTTP \(response.status)")
        }
    }
}

/// How a service's emails and SMS leave, from `<PREFIX>_*` variables: `EMAIL_TRANSPORT`
/// `file` (default) or `smtp` (`SMTP_URL`, `SMTP_FROM`, `SMTP_USER`, `SMTP_PASSWORD`),
/// `SMS_TRANSPORT` `file` (default) or `http` (`SMS_URL`, `SMS_TOKEN`), `OUTBOX_DIR` (the
/// `file` transport's folder, default `<data>/outbox`).
public struct MessageTransportSettings: Sendable, Equatable {
    public var emailTransport = "file"
    public var smsTransport = "file"
    public var outboxDirectory: String?
    public var smtpURL: String?
    public var smtpFrom = "no-reply@localhost"
    public var smtpUser: String?
    public var smtpPassword: String?
    public var smsURL: String?
    public var smsToken: String?

    public init() {}

    /// Reads `<prefix>_EMAIL_TRANSPORT` and the rest; a transport without its endpoint is a
    /// configuration error.
    public static func fromEnvironment(_ environment: [String: String], prefix: String) throws -> MessageTransportSettings {
        func value(_ name: String) -> String? { environment["\(prefix)_\(name)"].flatMap { $0.isEmpty ? nil : $0 } }
        var settings = MessageTransportSettings()
        if let transport = environment["\(prefix)_EMAIL_TRANSPORT"] {
            guard ["file", "smtp"].contains(transport) else { throw ConfigurationError("\(prefix)_EMAIL_TRANSPORT must be file or smtp") }
            settings.emailTransport = transport
        }
        if let transport = environment["\(prefix)_SMS_TRANSPORT"] {
            guard ["file", "http"].contains(transport) else { throw ConfigurationError("\(prefix)_SMS_TRANSPORT must be file or http") }
            settings.smsTransport = transport
        }
        settings.outboxDirectory = value("OUTBOX_DIR")
        settings.smtpURL = value("SMTP_URL")
        if let from = value("SMTP_FROM") { settings.smtpFrom = from }
        settings.smtpUser = value("SMTP_USER")
        settings.smtpPassword = value("SMTP_PASSWORD")
        settings.smsURL = value("SMS_URL")
        settings.smsToken = value("SMS_TOKEN")
        if settings.emailTransport == "smtp" && settings.smtpURL == nil {
            throw ConfigurationError("\(prefix)_EMAIL_TRANSPORT=smtp needs \(prefix)_SMTP_URL")
        }
        if settings.smsTransport == "http" && settings.smsURL == nil {
            throw ConfigurationError("\(prefix)_SMS_TRANSPORT=http needs \(prefix)_SMS_URL")
        }
        return settings
    }

    /// The email and SMS transports these settings name.
    public func transports(dataDirectory: URL) -> [any DeliveryTransport] {
        let folder = outboxDirectory.map { URL(fileURLWithPath: $0) } ?? dataDirectory.appendingPathComponent("outbox")
        var transports: [any DeliveryTransport] = []
        if emailTransport == "smtp", let smtpURL {
            transports.append(SMTPTransport(url: smtpURL, from: smtpFrom, user: smtpUser, password: smtpPassword))
        } else {
            transports.append(FileTransport(channel: .email, directory: folder))
        }
        if smsTransport == "http", let smsURL {
            transports.append(WebhookTransport(url: smsURL, token: smsToken))
        } else {
            transports.append(FileTransport(channel: .sms, directory: folder))
        }
        return transports
    }
}

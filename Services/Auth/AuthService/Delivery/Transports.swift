import Foundation
import Platform

extension FileTransport {
    /// Auth's emails or SMS as `<id>.json` files in `directory`.
    public init(channel: DeliveryChannel, directory: URL) {
        self.init(channel: channel, directory: directory) { message in try WireJSON.encode(OutgoingMessage(message)) }
    }
}

/// Emails through an SMTP relay (libcurl). The message's id is its `Message-ID`, so a
/// resend after a crash can be recognized as the same message. A refusal of the mailbox
/// or the message (550 to 554) is permanent; anything else (4xx, authentication, the
/// network) is retried.
struct SMTPTransport: DeliveryTransport {
    let url: String
    let from: String
    let user: String?
    let password: String?

    var channel: DeliveryChannel { .email }

    func send(_ delivery: DeliveryMessage) throws -> DeliveryOutcome {
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
struct WebhookTransport: DeliveryTransport {
    let url: String
    let token: String?

    var channel: DeliveryChannel { .sms }

    func send(_ message: DeliveryMessage) throws -> DeliveryOutcome {
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

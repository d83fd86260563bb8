import Foundation
import Platform

/// Emails through an SMTP relay (libcurl). The message's id is its `Message-ID`, so a
/// resend after a crash can be recognized as the same message.
struct SMTPTransport: MessageTransport {
    let url: String
    let from: String
    let user: String?
    let password: String?

    func deliver(_ message: OutgoingMessage) throws {
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let subject = "=?UTF-8?B?\(Data(message.subject.utf8).base64EncodedString())?="
        let text = [
            "From: <\(from)>", "To: <\(message.recipient)>", "Subject: \(subject)", "Message-ID: <\(message.id)@\(domain)>",
            "Date: \(Self.rfc5322Date())", "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit", "", message.body, "",
        ].joined(separator: "\r\n")
        try Curl.sendMail(
            Curl.Mail(relay: url, from: from, to: message.recipient, user: user, password: password, message: Data(text.utf8)))
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
/// success; anything else is retried later.
struct WebhookTransport: MessageTransport {
    let url: String
    let token: String?

    func deliver(_ message: OutgoingMessage) throws {
        var headers = ["Content-Type": "application/json", "Idempotency-Key": message.id]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let body: JSONValue = ["id": .string(message.id), "to": .string(message.recipient), "text": .string(message.body)]
        let response = try Curl.perform(HTTPRequest(method: "POST", url: url, headers: headers, body: body.serialized))
        guard (200..<300).contains(response.status) else {
            throw TransferError(description: "the SMS provider answered HTTP \(response.status)")
        }
    }
}

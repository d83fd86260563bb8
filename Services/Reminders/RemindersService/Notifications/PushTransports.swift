import Foundation
import Platform

/// How pushes leave: `file` (the local default: one JSON file per push under the data
/// folder) or `http` (a Gorush push gateway).
struct PushSettings: Sendable {
    var transport = "file"
    /// Gorush's push endpoint, e.g. `http://gorush:8088/api/push`.
    var gatewayURL: String?
    var directory: URL
    /// Each app's APNs topic (bundle id).
    var topics: [PushApp: String] = Dictionary(uniqueKeysWithValues: PushApp.allCases.map { ($0, $0.defaultTopic) })
    /// How pushes are retried and paced.
    var delivery: DeliverySettings
    /// Pushes per request to the gateway (Gorush takes `max_notification` notifications
    /// per request, 100 by default; pushes with the same content share one, with many tokens).
    var batchSize = 500
    /// How greetings sent by email or SMS leave (`BACKEND_REMINDERS_EMAIL_TRANSPORT`,
    /// `_SMTP_*`, `_SMS_TRANSPORT`, `_SMS_*`, `_OUTBOX_DIR`: the platform's
    /// ``MessageTransportSettings``, as auth's codes), through the same outbox and worker.
    var messages = MessageTransportSettings()
    var dataDirectory: URL

    /// Reads `BACKEND_REMINDERS_PUSH_*` (see the README's table).
    init(environment: [String: String], dataDirectory: URL) throws {
        self.dataDirectory = dataDirectory
        directory = environment["BACKEND_REMINDERS_PUSH_DIR"].map { URL(fileURLWithPath: $0) } ?? dataDirectory.appendingPathComponent("push")
        messages = try MessageTransportSettings.fromEnvironment(environment, prefix: "BACKEND_REMINDERS")
        if let value = environment["BACKEND_REMINDERS_PUSH_TRANSPORT"] {
            guard ["file", "http"].contains(value) else { throw ConfigurationError("BACKEND_REMINDERS_PUSH_TRANSPORT must be file or http") }
            transport = value
        }
        gatewayURL = environment["BACKEND_REMINDERS_PUSH_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if transport == "http" {
            guard let url = gatewayURL, url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw ConfigurationError("BACKEND_REMINDERS_PUSH_TRANSPORT=http needs BACKEND_REMINDERS_PUSH_URL (Gorush's /api/push)")
            }
        }
        for pair in (environment["BACKEND_REMINDERS_PUSH_TOPICS"] ?? "").split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let app = PushApp(rawValue: parts[0]), !parts[1].isEmpty else {
                throw ConfigurationError("BACKEND_REMINDERS_PUSH_TOPICS is app=bundle.id,...; apps: \(PushApp.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            topics[app] = parts[1]
        }
        if let value = environment["BACKEND_REMINDERS_PUSH_BATCH"] {
            guard let number = Int(value), (1...1_000).contains(number) else { throw ConfigurationError("BACKEND_REMINDERS_PUSH_BATCH must be 1 to 1000") }
            batchSize = number
        }
        delivery = try DeliverySettings.fromEnvironment(environment, prefix: "BACKEND_REMINDERS_PUSH")
        // A device hears at most 30 pushes a minute unless configured otherwise.
        if environment["BACKEND_REMINDERS_PUSH_RATE_LIMIT"] == nil { delivery.rateLimit = DeliveryRateLimit(limit: 30, window: .seconds(60)) }
        delivery.batchSize = max(delivery.batchSize, batchSize)
    }

    /// The APNs topic of the app a push is for.
    static func topic(of message: DeliveryMessage, in topics: [PushApp: String]) -> String {
        topics[PushApp(rawValue: message.payload["app"]?.stringValue ?? "") ?? .reminder] ?? ""
    }

    /// The outbox's transports: pushes, and greetings' emails and SMS.
    var transports: [any DeliveryTransport] { [pushTransport] + messages.transports(dataDirectory: dataDirectory) }

    /// The configured transport.
    var pushTransport: any DeliveryTransport {
        if transport == "http", let gatewayURL {
            return GorushTransport(url: gatewayURL, topics: topics, batchLimit: batchSize)
        }
        return FileTransport(channel: Notifier.channel, directory: directory) { [topics] message in
            try WireJSON.encode(PushFile(message, topic: Self.topic(of: message, in: topics)))
        }
    }
}

/// A push as the `file` transport writes it: what a push gateway would get for one device.
struct PushFile: Encodable {
    var id: String
    var token: String
    var topic: String
    var payload: JSONValue
    var createdAt: String

    init(_ message: DeliveryMessage, topic: String) {
        id = message.id
        token = message.destination
        self.topic = topic
        payload = message.payload
        createdAt = message.createdAt
    }
}

/// Pushes through a Gorush gateway (`POST /api/push`, its request format): pushes with the
/// same content go as one notification with all their tokens, at most 100 notifications
/// per request (Gorush's default `max_notification`). Gorush in sync mode lists the
/// tokens that failed in `logs`; a token APNs or FCM calls invalid is a permanent failure
/// (the device is disabled), any other a retry; an HTTP error retries the whole request.
struct GorushTransport: DeliveryTransport {
    let url: String
    let topics: [PushApp: String]
    let batchLimit: Int
    static let maxNotificationsPerRequest = 100

    var channel: DeliveryChannel { Notifier.channel }

    func send(_ message: DeliveryMessage) throws -> DeliveryOutcome {
        send(batch: [message])[0]
    }

    func send(batch: [DeliveryMessage]) -> [DeliveryOutcome] {
        // Group by content: a broadcast's thousands share one notification.
        var groups: [(notification: [String: JSONValue], members: [Int])] = []
        var groupOf: [Data: Int] = [:]
        for (index, message) in batch.enumerated() {
            let notification = Self.notification(message.payload, topic: PushSettings.topic(of: message, in: topics))
            let key = JSONValue.object(notification).serialized
            if let group = groupOf[key] {
                groups[group].members.append(index)
            } else {
                groupOf[key] = groups.count
                groups.append((notification, [index]))
            }
        }
        var outcomes = [DeliveryOutcome](repeating: .retry(reason: "not sent"), count: batch.count)
        var start = 0
        while start < groups.count {
            let chunk = groups[start..<min(groups.count, start + Self.maxNotificationsPerRequest)]
            start += chunk.count
            let notifications = chunk.map { group -> JSONValue in
                var notification = group.notification
                notification["tokens"] = .array(group.members.map { .string(batch[$0].destination) })
                return .object(notification)
            }
            let members = chunk.flatMap(\.members)
            do {
                let response = try Curl.perform(HTTPRequest(
                    method: "POST", url: url, headers: ["Content-Type": "application/json"],
                    body: JSONValue.object(["notifications": .array(notifications)]).serialized, timeout: .seconds(30)))
                guard (200..<300).contains(response.status) else {
                    for index in members { outcomes[index] = .retry(reason: "the push gateway answered HTTP \(response.status)") }
                    continue
                }
                let failures = Self.failures(in: response.body)
                for index in members {
                    if let error = failures[batch[index].destination] {
                        outcomes[index] = Self.isInvalidToken(error)
                            ? .permanent(reason: "the push gateway refused the token: \(error)") : .retry(reason: "the push gateway failed: \(error)")
                    } else {
                        outcomes[index] = .delivered
                    }
                }
            } catch {
                for index in members { outcomes[index] = .retry(reason: "the push gateway is unreachable: \(error)") }
            }
        }
        return outcomes
    }

    /// A push's Gorush notification, without its tokens.
    static func notification(_ payload: JSONValue, topic: String) -> [String: JSONValue] {
        let ios = payload["platform"]?.stringValue != "android"
        var notification: [String: JSONValue] = [
            "platform": .integer(ios ? 1 : 2), "title": payload["title"] ?? "", "message": payload["body"] ?? "",
            "priority": .string(payload["kind"]?.stringValue == "announcement" ? "normal" : "high"),
        ]
        var data: [String: JSONValue] = ["notificationId": payload["notificationId"] ?? "", "kind": payload["kind"] ?? ""]
        if case .object(let extra) = payload["data"] { data.merge(extra) { first, _ in first } }
        if let actions = payload["actions"] { data["actions"] = actions }
        if let style = payload["alertStyle"] { data["alertStyle"] = style }
        if ios {
            notification["topic"] = .string(topic)
            // A resend after a crash replaces the first on the device instead of showing twice.
            notification["collapse_id"] = payload["notificationId"] ?? ""
            notification["alert"] = ["title": payload["title"] ?? "", "body": payload["body"] ?? ""]
            if payload["actions"] != nil { notification["category"] = .string("ACTIONS_\(payload["kind"]?.stringValue ?? "")") }
            if let image = payload["image"] {
                notification["mutable_content"] = true
                data["image"] = image
            }
            if let sound = payload["sound"]?.stringValue { notification["sound"] = ["name": .string(sound), "volume": .number(1.0)] }
        } else {
            notification["collapse_key"] = payload["notificationId"] ?? ""
            if let image = payload["image"] { notification["image"] = image }
            if let sound = payload["sound"]?.stringValue { notification["sound"] = .string(sound) }
        }
        notification["data"] = .object(data)
        return notification
    }

    /// The failed tokens of a sync-mode answer, with their errors.
    static func failures(in body: Data) -> [String: String] {
        guard let answer = try? JSONParser.parse(body), case .array(let logs) = answer["logs"] ?? .array([]) else { return [:] }
        var failures: [String: String] = [:]
        for log in logs where log["type"]?.stringValue == "failed-push" {
            if let token = log["token"]?.stringValue { failures[token] = log["error"]?.stringValue ?? "failed" }
        }
        return failures
    }

    /// The errors of APNs and FCM that mean the token will never work again.
    static let invalidTokenErrors = [
        "baddevicetoken", "unregistered", "devicetokennotfortopic", "missingdevicetoken", "invalidregistration", "notregistered",
        "registration-token-not-registered", "invalid-registration-token", "mismatchsenderid",
    ]

    static func isInvalidToken(_ error: String) -> Bool {
        let lowered = error.lowercased()
        return invalidTokenErrors.contains { lowered.contains($0) }
    }
}

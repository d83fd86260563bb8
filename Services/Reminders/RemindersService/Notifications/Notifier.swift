import Foundation
import GRDB
import Platform
import Synchronization

/// A notification to make for one user in one app.
struct Notice: Sendable {
    /// Derived from what caused it (an event's source and seq, an alert's id), so the same
    /// cause never makes two.
    var id: String
    var user: String
    var app: PushApp
    var kind: PushKind
    /// The template's values.
    var values: [String: String] = [:]
    /// Delivered during quiet hours too (what the user marked important).
    var urgent = false
    /// Ids the app opens it at (`reminderId`, `goalId`, `bookingId`, ...).
    var data: [String: JSONValue] = [:]
    var imageURL: String?
    /// The sound the cause chose (a reminder's own), over the preferences'.
    var sound: String?
    /// Buttons on the notification (`snooze`, `done`).
    var actions: [String] = []
}

/// Turns notices into pushes: one history row per user and app (for users with an enabled
/// device of that app), one outbox message per enabled device of that app, each in the device's language, held back by quiet hours
/// unless urgent, all in the caller's transaction (the event's or the timer's: exactly
/// once). The ``DeliveryWorker`` sends them after the commit.
enum Notifier {
    /// The outbox of the reminders service's pushes (one per process: every enqueue wakes
    /// the worker that sends them).
    static let outbox = DeliveryOutbox(service: RemindersService.name, idPrefix: "psh")
    static let channel: DeliveryChannel = "push"
    /// The edge's public address: pushes carry image URLs through it
    /// (`BACKEND_EDGE_PUBLIC_URL`, else the edge's bind address).
    static let publicURL: String = {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["BACKEND_EDGE_PUBLIC_URL"], !url.isEmpty { return url }
        return "http://\(environment["BACKEND_EDGE_BIND"] ?? "127.0.0.1:8080")"
    }()

    struct Device {
        var id: Int64
        var token: String
        var platform: String
        var locale: String
    }

    /// Makes `notice` for its user's devices of its app; returns the number of pushes queued.
    /// (`clock`: the user's, when the caller has it already.)
    @discardableResult
    static func notify(_ db: Database, _ notice: Notice, now: Date, clock known: UserClock? = nil) throws -> Int {
        try notify(db, notice, devices: try devices(db, user: notice.user, app: notice.app), now: now, clock: known)
    }

    /// A user's enabled devices of an app. Nothing is sent to someone with none (a burst
    /// of 10,000 alerts of users who never registered one costs one lookup each: callers
    /// on hot paths ask first and make the notice only for users with a device).
    static func devices(_ db: Database, user: String, app: PushApp) throws -> [Device] {
        // Read by position (asked at every alert of a burst, most often finding none).
        var devices: [Device] = []
        try db.cachedStatement(sql: """
            SELECT id, token, platform, locale FROM push_device WHERE user_id = ? AND app_id = ? AND disabled_at IS NULL ORDER BY id
            """
        ).forEachRow(user, app.rawValue) { row in
            devices.append(Device(id: row.integer(0) ?? 0, token: row.string(1), platform: row.string(2), locale: row.string(3)))
        }
        return devices
    }

    /// Makes `notice` for `devices` (the user's of its app, from ``devices(_:user:app:)``).
    @discardableResult
    static func notify(_ db: Database, _ notice: Notice, devices: [Device], now: Date, clock known: UserClock? = nil) throws -> Int {
        guard !devices.isEmpty else { return 0 }
        let preferences = try loadPreferences(db, user: notice.user, app: notice.app)
        guard preferences.wants(notice.kind) else { return 0 }
        let clock = try known ?? UserClock.load(db, user: notice.user)
        let release = notice.urgent ? nil : preferences.quietHours?.release(after: now, in: clock.zone)
        let language = DeviceRules.language(of: devices[0].locale)
        let words = try render(db, notice.kind, language: language, values: notice.values)
        // Made before (a replayed cause): nothing more.
        guard try recordHistory(
            db, id: notice.id, user: notice.user, app: notice.app, kind: notice.kind, title: words.title, body: words.body, imageURL: notice.imageURL,
            data: String(decoding: JSONValue.object(notice.data).serialized, as: UTF8.self), urgent: notice.urgent, devices: devices.count, now: now,
            release: release, countingDevices: false)
        else { return 0 }
        for device in devices {
            let deviceWords = DeviceRules.language(of: device.locale) == language
                ? words : try render(db, notice.kind, language: DeviceRules.language(of: device.locale), values: notice.values)
            try enqueue(
                db, notificationID: notice.id, device: device, app: notice.app, kind: notice.kind.rawValue, title: deviceWords.title, body: deviceWords.body,
                imageURL: notice.imageURL, data: notice.data, actions: notice.actions, sound: notice.sound, preferences: preferences,
                urgent: notice.urgent, priority: notice.kind.priority, notBefore: release)
        }
        try count(db, kind: notice.kind.rawValue, at: now, notifications: 1, queued: devices.count)
        return devices.count
    }

    /// Writes a user's history entry; returns whether it is new. An entry that exists is
    /// left alone, or, with `countingDevices` (a broadcast reaching a user's next device),
    /// counts one more device.
    @discardableResult
    static func recordHistory(
        _ db: Database, id: String, user: String, app: PushApp, kind: PushKind, title: String, body: String, imageURL: String?, data: String,
        urgent: Bool, devices: Int, now: Date, release: Date?, countingDevices: Bool
    ) throws -> Bool {
        try db.cachedStatement(sql: """
            INSERT INTO notification (id, user_id, app_id, kind, title, body, image_url, data, urgent, devices, created_ms, deliver_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (user_id, id) DO UPDATE SET devices = devices + excluded.devices WHERE ?
            """).execute(arguments: [
                id, user, app.rawValue, kind.rawValue, title, body, imageURL, data, urgent, devices, Instant.milliseconds(now),
                Instant.milliseconds(release ?? now), countingDevices,
            ])
        return db.changesCount > 0
    }

    /// One push to one device.
    static func enqueue(
        _ db: Database, notificationID: String, device: Device, app: PushApp, kind: String, title: String, body: String, imageURL: String?,
        data: [String: JSONValue], actions: [String], sound: String?, preferences: NotificationPreferences, urgent: Bool,
        priority: DeliveryPriority, notBefore: Date?
    ) throws {
        var payload: [String: JSONValue] = [
            "notificationId": .string(notificationID), "app": .string(app.rawValue), "platform": .string(device.platform), "kind": .string(kind),
            "title": .string(title), "body": .string(body), "vibration": .bool(preferences.vibration),
            "alertStyle": .string(preferences.alertStyle.rawValue), "urgent": .bool(urgent),
        ]
        if let imageURL { payload["image"] = .string(imageURL) }
        // A reminder's own sound when it names one the app could ship, else the preference's.
        if let sound = sound.flatMap({ DeviceRules.isPlausibleSound($0) ? $0 : nil }) ?? preferences.sound { payload["sound"] = .string(sound) }
        if !actions.isEmpty { payload["actions"] = .array(actions.map(JSONValue.string)) }
        if !data.isEmpty { payload["data"] = .object(data) }
        try outbox.enqueue(
            db, id: "\(notificationID).\(device.id)", channel: channel, to: device.token, payload: .object(payload), priority: priority, notBefore: notBefore)
    }

    /// A kind's words in `language`: the admins' template, else the shipped one.
    static func render(_ db: Database, _ kind: PushKind, language: String, values: [String: String]) throws -> (title: String, body: String) {
        if kind == .announcement { return (values["title"] ?? "", values["body"] ?? "") }
        return try template(db, kind, language: language).render(values)
    }

    /// Templates as last read (a burst of alerts renders the same few thousands of
    /// times). Rendering happens in write transactions (an event's, a timer's), which
    /// SQLite runs one at a time, so an admin's change, which empties the cache when its
    /// transaction ends, is never raced by a render.
    private static let templates = Mutex<[String: NotificationTemplate]>([:])

    static func template(_ db: Database, _ kind: PushKind, language: String) throws -> NotificationTemplate {
        let key = "\(kind.rawValue)|\(language)"
        if let cached = templates.withLock({ $0[key] }) { return cached }
        let stored = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT title, body FROM push_template WHERE kind = ? AND language = ?"), arguments: [kind.rawValue, language])
        let template = stored.map { NotificationTemplate(title: $0[0], body: $0[1]) } ?? NotificationTemplate.standard(kind, language: language)
        templates.withLock { $0[key] = template }
        return template
    }

    /// Called by a transaction that changes templates: the cache is emptied when it ends.
    static func forgetTemplates(_ db: Database) {
        let reset: @Sendable (Database) -> Void = { _ in templates.withLock { $0.removeAll() } }
        db.afterNextTransaction(onCommit: reset, onRollback: reset)
    }

    /// Adds to the day's counts of `kind`.
    static func count(_ db: Database, kind: String, at date: Date, notifications: Int = 0, queued: Int = 0, sent: Int = 0, failed: Int = 0) throws {
        try db.cachedStatement(sql: """
            INSERT INTO push_daily (day, kind, notifications, queued, sent, failed) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (day, kind) DO UPDATE SET notifications = notifications + excluded.notifications, queued = queued + excluded.queued,
                sent = sent + excluded.sent, failed = failed + excluded.failed
            """).execute(arguments: [String(Instant.format(date).prefix(10)), kind, notifications, queued, sent, failed])
    }

    /// A user's preferences for an app (the defaults where never set).
    static func loadPreferences(_ db: Database, user: String, app: PushApp) throws -> NotificationPreferences {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(preferenceColumns("p")) FROM push_preference AS p WHERE p.user_id = ? AND p.app_id = ?"),
            arguments: [user, app.rawValue])
        return row.map { preferences($0, from: 0) } ?? .standard
    }

    /// The columns of `push_preference` (aliased `alias`) that ``preferences(_:from:)`` reads.
    static func preferenceColumns(_ alias: String) -> String {
        ["disabled", "sound", "vibration", "alert_style", "quiet_start", "quiet_end"].map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    /// Preferences from ``preferenceColumns(_:)`` starting at column `first` of `row`; the
    /// defaults when they are null (no row, in a LEFT JOIN).
    static func preferences(_ row: Row, from first: Int) -> NotificationPreferences {
        guard let vibration = row[first + 2] as Bool? else { return .standard }
        var preferences = NotificationPreferences()
        preferences.disabled = Set(((row[first] as String?) ?? "").split(separator: ",").compactMap { NotificationCategory(rawValue: String($0)) })
        preferences.sound = row[first + 1]
        preferences.vibration = vibration
        preferences.alertStyle = NotificationPreferences.AlertStyle(rawValue: row[first + 3]) ?? .banner
        if let start = (row[first + 4] as String?).flatMap(LocalTime.init), let end = (row[first + 5] as String?).flatMap(LocalTime.init) {
            preferences.quietHours = QuietHours(start: start, end: end)
        }
        return preferences
    }

    /// What the worker's outcomes mean here: a token the gateway refused for good is
    /// disabled (its pushes stop; the message is in the dead letters), and the day's
    /// counts move.
    static func recordOutcomes(_ db: Database, _ results: [DeliveryResult]) throws {
        let now = Date()
        var counts: [String: (sent: Int, failed: Int)] = [:]
        for result in results {
            let kind = result.message.payload["kind"]?.stringValue ?? "unknown"
            switch result.state {
            case .sent: counts[kind, default: (0, 0)].sent += 1
            case .dead:
                counts[kind, default: (0, 0)].failed += 1
                // The registration the push was for, not one the token has moved to since.
                if result.permanent {
                    try db.cachedStatement(sql: "UPDATE push_device SET disabled_at = ?, disabled_reason = ? WHERE token = ? AND app_id = ? AND disabled_at IS NULL")
                        .execute(arguments: [Instant.format(now), result.reason, result.message.destination, result.message.payload["app"]?.stringValue ?? ""])
                }
            case .retrying: break
            }
        }
        for (kind, count) in counts { try Self.count(db, kind: kind, at: now, sent: count.sent, failed: count.failed) }
    }
}

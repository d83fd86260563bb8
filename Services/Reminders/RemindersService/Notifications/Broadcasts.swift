import Foundation
import GRDB
import Logging
import Platform

/// An admin's message to every device of an app, or of a role or a list of users. It
/// fans out on a durable timer a chunk of devices per transaction (a cursor over device
/// ids), so a broadcast to 100,000 devices never holds the database for long, and its
/// pushes queue at `bulk` priority behind anything due. Push ids are the broadcast's and
/// the device's: a chunk run again after a crash queues nothing twice.
enum Broadcasts {
    /// The owner of a broadcast's image reference (``MediaCatalog/reference(_:_:by:)``).
    static func imageOwner(_ broadcast: String) -> String { "broadcast:\(broadcast)" }

    static let timerKind = "notifications.fanout"
    /// Devices per transaction.
    static let chunk = 2_000
    static let logger = Logger(label: "reminders")

    /// Records a broadcast and starts its fan-out; a second start of the same id does nothing.
    static func start(
        _ db: Database, id: String, app: PushApp, kind: BroadcastKind, title: String, body: String, imageURL: String?, audience: String, role: String?,
        userIDs: [String]?, by author: String, now: Date
    ) throws {
        let userList = audience == "everyone" ? nil : userIDs.map { String(decoding: JSONValue.array($0.map(JSONValue.string)).serialized, as: UTF8.self) }
        try db.cachedStatement(sql: """
            INSERT INTO push_broadcast (id, app_id, broadcast_kind, title, body, image_url, audience, role, user_ids, created_at, created_by)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
            """).execute(arguments: [id, app.rawValue, kind.rawValue, title, body, imageURL, audience, role, userList, Instant.format(now), author])
        guard db.changesCount > 0 else { return }
        try DurableTimers.schedule(db, kind: timerKind, at: now, key: id)
    }

    static let handler = TimerHandler(kind: timerKind) { db, timer in
        guard let id = timer.key else { return }
        try fanOut(db, id: id, now: timer.firedAt)
    }

    /// Queues the next chunk of a broadcast's pushes; sets the timer again while devices remain.
    static func fanOut(_ db: Database, id: String, now: Date) throws {
        let started = ContinuousClock.now
        guard let broadcast = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM push_broadcast WHERE id = ? AND finished_at IS NULL"), arguments: [id]),
            let app = PushApp(rawValue: broadcast["app_id"])
        else { return }
        let cursor: Int64 = broadcast["cursor"]
        var audienceFilter = ""
        var arguments: StatementArguments = [app.rawValue, cursor]
        switch broadcast["audience"] as String {
        case "role":
            audienceFilter = "AND d.user_id IN (SELECT user_id FROM push_role WHERE role = ?)"
            _ = arguments.append(contentsOf: [broadcast["role"] as String? ?? ""])
        case "everyone":
            break
        default:
            audienceFilter = "AND d.user_id IN (SELECT value FROM json_each(?))"
            _ = arguments.append(contentsOf: [broadcast["user_ids"] as String? ?? "[]"])
        }
        _ = arguments.append(contentsOf: [chunk])
        // Devices of the app, enabled, whose user has not switched announcements off.
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: """
                SELECT d.id, d.token, d.platform, d.locale, d.user_id, \(Notifier.preferenceColumns("p"))
                FROM push_device AS d LEFT JOIN push_preference AS p ON p.user_id = d.user_id AND p.app_id = d.app_id
                WHERE d.app_id = ? AND d.id > ? AND d.disabled_at IS NULL \(audienceFilter)
                  AND (p.disabled IS NULL OR instr(',' || p.disabled || ',', ',announcements,') = 0)
                ORDER BY d.id LIMIT ?
                """), arguments: arguments)
        let title: String = broadcast["title"], body: String = broadcast["body"], imageURL: String? = broadcast["image_url"]
        let data: [String: JSONValue] = ["broadcastId": .string(id), "broadcastKind": .string(broadcast["broadcast_kind"])]
        let dataText = String(decoding: JSONValue.object(data).serialized, as: UTF8.self)
        // One history entry per user, however many devices they have; one id for all, so
        // pushes of the same content share one request to the gateway.
        let notificationID = "ntf.\(id)"
        var users: Set<String> = []
        for row in rows {
            let user: String = row[4]
            let preferences = Notifier.preferences(row, from: 5)
            let release = try preferences.quietHours.flatMap { try $0.release(after: now, in: UserClock.load(db, user: user).zone) }
            try Notifier.recordHistory(
                db, id: notificationID, user: user, app: app, kind: .announcement, title: title, body: body, imageURL: imageURL, data: dataText,
                urgent: false, devices: 1, now: now, release: release, countingDevices: true)
            users.insert(user)
            try Notifier.enqueue(
                db, notificationID: notificationID, device: Notifier.Device(id: row[0], token: row[1], platform: row[2], locale: row[3]), app: app,
                kind: PushKind.announcement.rawValue, title: title, body: body, imageURL: imageURL, data: data, actions: [], sound: nil,
                preferences: preferences, urgent: false, priority: .bulk, notBefore: release)
        }
        let last: Int64 = rows.last?[0] ?? cursor
        let finished = rows.count < chunk
        try db.cachedStatement(sql: "UPDATE push_broadcast SET cursor = ?, devices = devices + ?, finished_at = ? WHERE id = ?")
            .execute(arguments: [last, rows.count, finished ? Instant.format(now) : nil, id])
        try Notifier.count(db, kind: PushKind.announcement.rawValue, at: now, notifications: users.count, queued: rows.count)
        if !finished { try DurableTimers.schedule(db, kind: timerKind, at: now, key: id) }
        logger.info(
            "broadcast chunk queued",
            metadata: ["broadcast": "\(id)", "devices": "\(rows.count)", "finished": "\(finished)", "ms": "\((ContinuousClock.now - started).wholeMilliseconds)"])
    }
}

/// Keeps notification history bounded: once a day, on a durable timer, entries older
/// than 90 days go, with finished broadcasts of that age and daily counts older than
/// 400 days.
enum NotificationHistoryPruning {
    static let timerKind = "notifications.prune"
    static let keep: TimeInterval = 90 * 86_400

    /// Sets the daily timer (at start-up; the same key, so never twice).
    static func arm(_ pool: DatabasePool) throws {
        try pool.write { db in
            let pending = try Bool.fetchOne(db, sql: "SELECT 1 FROM platform_timer WHERE kind = ? AND key = 'daily'", arguments: [timerKind]) ?? false
            if !pending { try DurableTimers.schedule(db, kind: timerKind, at: Date().addingTimeInterval(3_600), key: "daily") }
        }
    }

    static let handler = TimerHandler(kind: timerKind) { db, timer in
        let cutoff = timer.firedAt.addingTimeInterval(-keep)
        try db.execute(sql: "DELETE FROM notification WHERE created_ms < ?", arguments: [Instant.milliseconds(cutoff)])
        // A pruned broadcast's image is shown no more: its reference goes, and the sweep
        // removes the upload once nothing else shows it.
        for id in try String.fetchAll(
            db, sql: "DELETE FROM push_broadcast WHERE finished_at IS NOT NULL AND finished_at < ? RETURNING id", arguments: [Instant.format(cutoff)])
        {
            try db.execute(sql: "DELETE FROM platform_media_reference WHERE owner = ?", arguments: [Broadcasts.imageOwner(id)])
        }
        try db.execute(sql: "DELETE FROM push_daily WHERE day < ?", arguments: [String(Instant.format(timer.firedAt.addingTimeInterval(-400 * 86_400)).prefix(10))])
        try DurableTimers.schedule(db, kind: timerKind, at: timer.firedAt.addingTimeInterval(86_400), key: "daily")
    }
}

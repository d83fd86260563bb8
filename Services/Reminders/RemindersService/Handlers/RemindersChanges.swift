import Foundation
import GRDB
import Platform

/// `reminders.changes` (section 4.9, offline-first across devices): the caller's
/// reminders changed after a version (purged ones as deletions) and their settings.
enum RemindersChanges {
    static var operation: ServiceOperation {
        ChangeFeed.operation(
            service: "reminders", sources: [reminders, settings],
            summary: "Changes after `since` for an offline app, oldest first: the caller's reminders (`data` as reminders.get; purged ones `deleted: true`) and their settings (entity `settings`, id `me`, `data` as reminders.settings.get). Keep `next` and send it as `since`; `resync: true` means sync again from 0.")
    }

    static let reminders = ChangeSource(entity: "reminder") { db, query in
        let clock = try UserClock.load(db, user: query.viewer.userID)
        var keys: [(id: String, version: Int64)] = []
        let views = try ReminderView.fetch(
            db, sql: "SELECT \(ReminderRow.columns) FROM reminder WHERE user_id = ? AND change_version > ? ORDER BY change_version LIMIT ?",
            arguments: [query.viewer.userID, query.since, query.limit], clock: clock
        ) { keys.append(($0.string(1), $0.integer(30) ?? 0)) }
        return zip(views, keys).map { view, key in Change(entity: "reminder", id: key.id, version: key.version, data: view.jsonValue) }
    }

    static let settings = ChangeSource(entity: "settings") { db, query in
        guard let version = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT change_version FROM settings WHERE user_id = ? AND change_version > ?"), arguments: [query.viewer.userID, query.since])
        else { return [] }
        return [Change(entity: "settings", id: "me", version: version, data: try SettingsOperations.view(db, user: query.viewer.userID))]
    }
}

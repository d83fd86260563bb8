import Foundation
import GRDB
import Platform

/// Every admin action with the admin and the time (section 9), read back with
/// `goals.admin.actions`.
enum AdminLog {
    static func record(_ db: Database, admin: String, action: String, target: String?, detail: JSONValue?, at now: String) throws {
        try db.cachedStatement(sql: "INSERT INTO admin_action (admin_id, action, target, detail, at) VALUES (?, ?, ?, ?, ?)").execute(arguments: [admin, action, target, try detail.map { String(decoding: try WireJSON.encode($0), as: UTF8.self) }, now])
    }

    /// Admin content changed: apps fetch it again (`goals.content`).
    static func contentChanged(_ db: Database) throws {
        try db.execute(sql: "UPDATE content_state SET version = version + 1 WHERE id = 1")
    }
}

import Foundation
import GRDB
import Platform

/// `booking.changes`: what a rider's (or staff's) app keeps offline. A rider gets their
/// own bookings (every status change: cancelled, no-show, a sanction waived), the
/// cables and packages on offer (one taken out of service or withdrawn comes as a
/// deletion), and staff also the blocked periods (a removed one is a tombstone).
enum BookingChanges {
    /// Who sees blocks, so who gets their deletions.
    static let blockRoles = ["staff", "admin"]
    static let blockScopes = blockRoles.map(ChangeViewer.role)

    static var operation: ServiceOperation {
        ChangeFeed.operation(
            service: "booking", sources: [bookings, cables, packages, blocks],
            summary: "Changes after `since` for an offline app, oldest first: the caller's bookings (`data` as booking.mine shows them), cables and packages on offer (taken out of service or withdrawn: `deleted`), and for staff and admins blocked periods. Keep `next` and send it as `since`; `resync: true` means sync again from 0.")
    }

    /// The caller's own bookings (read through `booking_user`: a rider's rows, not the table).
    static let bookings = ChangeSource(entity: "booking") { db, query in
        try Row.fetchAll(
            db,
            sql: "SELECT * FROM booking WHERE user_id = ? AND change_version > ? ORDER BY change_version LIMIT ?",
            arguments: [query.viewer.userID, query.since, query.limit]
        ).map { row in
            let view = BookingView(row: row)
            return Change(entity: "booking", id: view.id, version: row["change_version"], data: try JSONValueEncoder().encode(view))
        }
    }

    static let cables = ChangeSource(entity: "cable") { db, query in
        try catalog(db, query, entity: "cable", table: "cable") { row in
            try JSONValueEncoder().encode(Cable(id: row["id"], name: row["name"], active: true, image: row["image_id"]))
        }
    }

    static let packages = ChangeSource(entity: "package") { db, query in
        let currency = Currency(stored: try String.fetchOne(db, sql: "SELECT currency FROM park WHERE id = 1") ?? "BYN")
        return try catalog(db, query, entity: "package", table: "package") { row in
            try JSONValueEncoder().encode(
                Package(
                    id: row["id"], name: row["name"], sessions: row["sessions"], credit: Money(minor: row["credit_minor"], currency: currency),
                    price: Money(minor: row["price_minor"], currency: currency), image: row["image_id"]))
        }
    }

    /// Catalog rows changed after `since`: active ones with their data, inactive ones as
    /// deletions, only when the device may hold them: they were on offer once
    /// (`ever_active`, so an item staff prepare unpublished never shows, not even its id)
    /// and changed after the device's safe point.
    private static func catalog(
        _ db: Database, _ query: ChangeQuery, entity: String, table: String, data: (Row) throws -> JSONValue
    ) throws -> [Change] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM \(table)
                WHERE change_version > ? AND (active = 1 OR (ever_active = 1 AND change_version > ?))
                ORDER BY change_version LIMIT ?
                """,
            arguments: [query.since, query.deletionsAfter ?? Int64.max, query.limit]
        ).map { row in
            let shown: JSONValue? = (row["active"] as Bool) ? try data(row) : Optional.none
            return Change(entity: entity, id: row["id"], version: row["change_version"], data: shown)
        }
    }

    static let blocks = ChangeSource(entity: "block") { db, query in
        guard !query.viewer.roles.isDisjoint(with: blockRoles) else { return [] }
        return try Row.fetchAll(
            db, sql: "SELECT * FROM block WHERE change_version > ? ORDER BY change_version LIMIT ?", arguments: [query.since, query.limit]
        ).map { row in
            let data: JSONValue = [
                "id": .string(row["id"]), "cable": (row["cable_id"] as String?).map(JSONValue.string) ?? .null,
                "start": .string(row["start_at"]), "end": .string(row["end_at"]), "reason": .string(row["reason"]),
            ]
            return Change(entity: "block", id: row["id"], version: row["change_version"], data: data)
        }
    }
}

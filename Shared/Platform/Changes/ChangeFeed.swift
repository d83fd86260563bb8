import Foundation
import GRDB

/// A changes feed for offline apps: every row a user can see carries the version of its
/// last change, deletions leave a marker (a tombstone) for a while, and
/// `<service>.changes {since, limit}` pages through what changed after a version the
/// device holds.
///
/// Versions come from one counter per service database (`platform_change_state`),
/// advanced by ``stamp(_:)`` inside the write that makes the change. Writes are
/// serialized, so versions are handed out in commit order and a reader's snapshot
/// always holds every change up to the counter it reads: a page never skips a change
/// that commits later with a smaller version. A rolled-back write leaves a gap, which
/// is harmless.
public enum ChangeFeed {
    /// How long deletion markers are kept by default: a device away for a month (and
    /// two weeks more) still learns what was deleted; one away longer starts again.
    public static let defaultTombstoneRetention: TimeInterval = 45 * 86_400

    /// The next version, for a row this transaction changes. Call it in the write that
    /// changes the row and store it in the row's version column.
    public static func stamp(_ db: Database) throws -> Int64 {
        try db.cachedStatement(sql: "UPDATE platform_change_state SET last = last + 1 WHERE id = 1 RETURNING last").firstRow { $0.integer(0) ?? 0 }!
    }

    /// Records that `entity` `id` is gone for the viewers of `scope` (`user:<id>`,
    /// `role:staff`, ``ChangeViewer/everyone``), in the deleting transaction. A later
    /// row with the same id (created again) has a larger version and wins on the device.
    @discardableResult
    public static func recordDeletion(_ db: Database, entity: String, id: String, scope: String, at now: Date = Date()) throws -> Int64 {
        let version = try stamp(db)
        try db.execute(
            sql: "INSERT OR REPLACE INTO platform_tombstone (version, entity, id, scope, deleted_at) VALUES (?, ?, ?, ?, ?)",
            arguments: [version, entity, id, scope, Int64(now.timeIntervalSince1970 * 1000)])
        return version
    }

    /// Whether a deletion of `id` is on record for `scope` (within the markers' retention):
    /// an offline create sent again after its entity was removed for good must not bring
    /// it back.
    public static func wasDeleted(_ db: Database, entity: String, id: String, scope: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM platform_tombstone WHERE entity = ? AND id = ? AND scope = ?"), arguments: [entity, id, scope]) == true
    }

    /// The counter now and the oldest version a device may resume from.
    static func state(_ db: Database) throws -> (last: Int64, horizon: Int64) {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT last, horizon FROM platform_change_state WHERE id = 1"))!
        return (row["last"], row["horizon"])
    }

    /// Removes deletion markers older than `retention`; a device whose `since` is older
    /// than the newest removed marker is told to start again. Returns how many went.
    @discardableResult
    public static func prune(_ db: Database, olderThan retention: TimeInterval = defaultTombstoneRetention, now: Date = Date()) throws -> Int {
        let cutoff = Int64((now.timeIntervalSince1970 - retention) * 1000)
        guard let newest = try Int64.fetchOne(db, sql: "SELECT MAX(version) FROM platform_tombstone WHERE deleted_at < ?", arguments: [cutoff])
        else { return 0 }
        try db.execute(sql: "DELETE FROM platform_tombstone WHERE deleted_at < ?", arguments: [cutoff])
        let removed = db.changesCount
        try db.execute(sql: "UPDATE platform_change_state SET horizon = MAX(horizon, ?) WHERE id = 1", arguments: [newest])
        return removed
    }

    /// One page of changes for `viewer` after `since`, read in one snapshot.
    public static func page(_ db: Database, sources: [ChangeSource], viewer: ChangeViewer, since: ChangeCursor, limit: Int) throws -> ChangePage {
        let (last, horizon) = try state(db)
        let resumed = since.position > 0 || since.safePoint > 0
        // Deletions the device needs may have been pruned; the cursor is newer than this
        // database (restored from a backup, or another installation); or it was made for
        // another user or other roles (what the viewer may see changed): the device
        // cannot trust what it holds.
        if since.position < 0 || since.position > last || since.safePoint > last || (since.safePoint > 0 && since.safePoint < horizon)
            || (resumed && since.viewer != viewer.fingerprint)
        {
            return ChangePage(items: [], next: ChangeCursor.start.text, more: false, resync: true)
        }
        // A first sync (position 0) has nothing to delete; later, only deletions after the
        // safe point matter: older ones are of rows the device never got.
        let deletionsAfter = since.position > 0 ? max(since.position, since.safePoint) : nil
        let query = ChangeQuery(viewer: viewer, since: since.position, limit: limit + 1, deletionsAfter: deletionsAfter)
        var changes: [Change] = []
        for source in sources { changes += try source.changes(db, query) }
        if let deletionsAfter, !viewer.scopes.isEmpty {
            let marks = Array(repeating: "?", count: viewer.scopes.count).joined(separator: ", ")
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT version, entity, id FROM platform_tombstone
                    WHERE scope IN (\(marks)) AND version > ? ORDER BY version LIMIT ?
                    """,
                arguments: StatementArguments(viewer.scopes + [deletionsAfter, limit + 1] as [any DatabaseValueConvertible]))
            changes += rows.map { Change(entity: $0["entity"], id: $0["id"], version: $0["version"], data: nil) }
        }
        changes.sort { $0.version < $1.version }
        // Where a device may resume once it has this snapshot: the counter rounded down to
        // a multiple of 1,024, so that `next` does not tell how busy the service is (what
        // lies between is read again next time and is not the viewer's), and never below
        // the pruned deletions (a cursor there would be told to resync).
        let floor = max(last & ~1_023, horizon)
        guard changes.count > limit else {
            // Everything up to the counter is in this snapshot, so the device may resume
            // past changes it cannot see, from `floor`.
            let position = max(since.position, changes.last?.version ?? 0, floor)
            let next = ChangeCursor(position: position, safePoint: position, viewer: viewer.fingerprint)
            return ChangePage(items: changes.map(ChangePage.Item.init), next: next.text, more: false, resync: false)
        }
        let items = changes.prefix(limit)
        // A first sync pages through rows of any age; the rows it hands out were alive at
        // this snapshot, so only deletions after it matter to the device (its safe point;
        // `floor`, which only sends a few needless deletions).
        let safePoint = since.position == 0 ? floor : since.safePoint
        let next = ChangeCursor(position: items.last!.version, safePoint: safePoint, viewer: viewer.fingerprint)
        return ChangePage(items: items.map(ChangePage.Item.init), next: next.text, more: true, resync: false)
    }

    /// `<service>.changes`: the feed of `sources` for the caller.
    public static func operation(service: String, sources: [ChangeSource], auth: AuthRule = .authenticated, summary: String) -> ServiceOperation {
        .read(
            "\(service).changes", summary: summary, auth: auth,
            request: .object([
                "since": JSONSchema.any.described("the `next` of the last page applied (a string); absent, 0 or \"0\": everything"),
                "limit": .integer(minimum: 1, maximum: maxLimit),
            ]),
            response: ChangePage.schema(entities: sources.map(\.entity))
        ) { (context, input: ChangeRequest, db: Database) in
            let principal = try context.requirePrincipal()
            let since: ChangeCursor
            switch input.since {
            case nil, .null?, .integer(0)?: since = .start
            case .string(let text)?:
                guard let cursor = ChangeCursor(text) else { throw ServiceError.invalid("since", "not a `next` of this feed") }
                since = cursor
            default: throw ServiceError.invalid("since", "not a `next` of this feed")
            }
            return try page(db, sources: sources, viewer: ChangeViewer(principal), since: since, limit: input.limit ?? defaultLimit)
        }
    }

    /// Items per page unless asked.
    public static let defaultLimit = 100
    /// Items per page at most.
    public static let maxLimit: Int64 = 500

    struct ChangeRequest: Codable, Sendable {
        var since: JSONValue?
        var limit: Int?
    }

    /// The tables of the feed (migration `platform-changes-1`).
    static func registerMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("platform-changes-1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE platform_change_state (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        last INTEGER NOT NULL,
                        horizon INTEGER NOT NULL
                    );
                    INSERT INTO platform_change_state (id, last, horizon) VALUES (1, 0, 0);
                    CREATE TABLE platform_tombstone (
                        version INTEGER PRIMARY KEY,
                        entity TEXT NOT NULL,
                        id TEXT NOT NULL,
                        scope TEXT NOT NULL,
                        deleted_at INTEGER NOT NULL,
                        UNIQUE (entity, id, scope)
                    );
                    CREATE INDEX platform_tombstone_scope ON platform_tombstone(scope, version);
                    """)
        }
    }
}

/// Where a device is in the feed: it has applied every change up to `position`, and it
/// needs the deletions after `safePoint` (the counter when its first sync began, while
/// that sync is still paging through older rows; `position` otherwise); `viewer` is the
/// fingerprint of who it was made for (``ChangeViewer/fingerprint``). On the wire,
/// `"<position>[-<safePoint>].<viewer>"`, or `"0"` for the start.
public struct ChangeCursor: Sendable, Hashable {
    public var position: Int64
    public var safePoint: Int64
    public var viewer: String?

    /// Nothing applied yet.
    public static let start = ChangeCursor(position: 0, safePoint: 0, viewer: nil)

    public init(position: Int64, safePoint: Int64, viewer: String?) {
        self.position = position
        self.safePoint = max(position, safePoint)
        self.viewer = viewer
    }

    /// Parses the wire form; `nil` for anything else.
    public init?(_ text: String) {
        let halves = text.split(separator: ".", omittingEmptySubsequences: false)
        guard halves.count <= 2 else { return nil }
        var viewer: String?
        if halves.count == 2 {
            guard halves[1].utf8.count == 8, halves[1].utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else { return nil }
            viewer = String(halves[1])
        }
        let parts = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 19 && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
            let position = Int64(parts[0]), let safePoint = parts.count == 2 ? Int64(parts[1]) : position,
            parts.count == 1 || safePoint > position
        else { return nil }
        self.init(position: position, safePoint: safePoint, viewer: viewer)
    }

    public var text: String {
        let versions = safePoint == position ? "\(position)" : "\(position)-\(safePoint)"
        guard let viewer else { return versions }
        return versions + "." + viewer
    }
}

/// Who reads the feed, and the tombstone scopes that reach them.
public struct ChangeViewer: Sendable {
    /// The scope of deletions every signed-in user sees (a withdrawn catalog item).
    public static let everyone = "everyone"

    public var userID: String
    public var roles: Set<String>

    public init(userID: String, roles: Set<String>) {
        self.userID = userID
        self.roles = roles
    }

    init(_ principal: Principal) { self.init(userID: principal.userID, roles: principal.roles) }

    /// Who this is, as a cursor records it: 8 hex digits of SHA-256 over the user and the
    /// roles, so a cursor is refused (and the device resyncs) when it comes from another
    /// user or after a change of roles (what the viewer may see changed with them).
    public var fingerprint: String {
        String(Digest.sha256Hex(Array((userID + "|" + roles.sorted().joined(separator: ",")).utf8)).prefix(8))
    }

    /// `user:<id>`, `role:<role>` for each role, and ``everyone``.
    public var scopes: [String] { [Self.everyone, Self.user(userID)] + roles.sorted().map(Self.role) }

    /// The scope of one user's rows.
    public static func user(_ id: String) -> String { "user:\(id)" }
    /// The scope of rows everyone in a role sees.
    public static func role(_ role: String) -> String { "role:\(role)" }
}

/// What a source is asked for.
public struct ChangeQuery: Sendable {
    public var viewer: ChangeViewer
    /// Changes with a version above this.
    public var since: Int64
    /// At most this many, smallest versions first.
    public var limit: Int
    /// Rows the viewer can no longer see are wanted as deletions when they changed after
    /// this version (the device may hold them); `nil` on a first sync, which has nothing
    /// to delete.
    public var deletionsAfter: Int64?
}

/// One changed row: its data as the service shows it, or `nil` when it is gone for the viewer.
public struct Change: Sendable, Hashable {
    public var entity: String
    public var id: String
    public var version: Int64
    public var data: JSONValue?

    public init(entity: String, id: String, version: Int64, data: JSONValue?) {
        self.entity = entity
        self.id = id
        self.version = version
        self.data = data
    }
}

/// One kind of row in a service's feed, with its own visibility rule: the rows `query`'s
/// viewer can see changed after `query.since`, smallest version first, at most
/// `query.limit`; with `deletionsAfter`, also rows that changed after it and that the
/// viewer may have held but can no longer see (withdrawn, reassigned), as `data: nil`. Rows
/// deleted outright are the tombstones' business (``ChangeFeed/recordDeletion``).
public struct ChangeSource: Sendable {
    public var entity: String
    public var changes: @Sendable (Database, ChangeQuery) throws -> [Change]

    public init(entity: String, changes: @escaping @Sendable (Database, ChangeQuery) throws -> [Change]) {
        self.entity = entity
        self.changes = changes
    }
}

/// A page of the feed.
public struct ChangePage: Codable, Sendable, Equatable {
    public struct Item: Codable, Sendable, Equatable {
        public var entity: String
        public var id: String
        public var version: Int64
        public var deleted: Bool
        public var data: JSONValue?

        init(_ change: Change) {
            entity = change.entity
            id = change.id
            version = change.version
            deleted = change.data == nil
            data = change.data
        }
    }

    /// Changes in version order; apply them in order (an item replaces the device's copy
    /// of `entity`/`id`, a `deleted` one removes it).
    public var items: [Item]
    /// The `since` of the next call, to keep once the items are applied (opaque).
    public var next: String
    /// Whether another page is waiting now.
    public var more: Bool
    /// Whether the device must drop what it holds and sync again from `since` 0.
    public var resync: Bool

    static func schema(entities: [String]) -> JSONSchema {
        .object(
            [
                "items": .array(
                    of: .object(
                        [
                            "entity": .oneOf(entities), "id": .string(), "version": .integer(minimum: 1), "deleted": .boolean,
                            "data": JSONSchema.any.nullable().described("the row as the service's own operations show it; absent when deleted"),
                        ], required: ["entity", "id", "version", "deleted"]), maxItems: Int(ChangeFeed.maxLimit)),
                "next": JSONSchema.string(minLength: 1, maxLength: 41).described("pass as `since` next time"),
                "more": JSONSchema.boolean.described("another page is waiting: call again with `next` now"),
                "resync": JSONSchema.boolean.described("`since` is older than the deletions kept (or unknown here): drop local copies and sync from 0"),
            ], required: ["items", "next", "more", "resync"])
    }
}

import Foundation
import GRDB

/// One restore of an event source from a backup, as the source keeps it and
/// `events.replay` answers it.
public struct RestoreRecord: Codable, Sendable, Equatable {
    /// A new id at each restore.
    public var id: String
    /// The backup's last event seq: events up to it came from the backup.
    public var restoredAt: Int64
    /// The seq the restored source went on after: its first new event is the next one.
    /// Past every seq any copy of the database gave out (the replaced file's, the clock's
    /// microseconds); equal to `restoredAt` only in restores of earlier versions that gave
    /// seqs again when the replaced file was gone.
    public var resumedAfter: Int64

    /// Whether the source went on right after the backup's last (restores before seqs
    /// were moved past the clock did so when the replaced file was gone).
    public var gaveSeqsAgain: Bool { resumedAfter == restoredAt }

    public init(id: String, restoredAt: Int64, resumedAfter: Int64) {
        self.id = id
        self.restoredAt = restoredAt
        self.resumedAfter = resumedAfter
    }
}

/// The restores of an event source, oldest first, and what a subscriber does about the
/// ones it has not followed (pure: tested apart from sockets and SQL).
///
/// Every event a source wrote after a restore has a seq above that restore's
/// `resumedAfter`. Restores now move seqs past anything the subscriber can have applied,
/// so they need no move of its cursor. A restore of an earlier version that gave seqs
/// again (the replaced file gone) does: a subscriber that has not followed it applied,
/// above its `resumedAfter`, only events of the history it replaced, so every event the
/// source now holds above it is new. The subscriber moves its cursor back to the lowest
/// such `resumedAfter` among the restores it has not followed (never forward), however
/// many restores came after, and records their ids with the cursor.
public enum RestoreHistory {
    /// A source keeps its latest restores, a subscriber the ids it followed.
    public static let keptRestores = 64
    public static let keptFollowed = 256

    /// The first seq a restore may go on after at `date`: microseconds since 1970.
    public static func clockFloor(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down)) }

    /// The records a subscriber takes from a source whose highest seq given out is
    /// `last`: the latest ``keptRestores`` that make sense (an id, seqs within
    /// 0...`last`, the source going on at or after the backup's last); a damaged
    /// history cannot send a cursor below zero or keep a subscriber busy.
    public static func sane(_ restores: [RestoreRecord], last: Int64) -> [RestoreRecord] {
        Array(
            restores.filter {
                !$0.id.isEmpty && $0.id.utf8.count <= 64 && $0.restoredAt >= 0 && $0.resumedAfter >= $0.restoredAt && $0.resumedAfter <= last
            }.suffix(keptRestores))
    }

    /// Where a subscriber at `cursor` that followed `followed` goes on from, given the
    /// source's `restores`, and the ids it has followed then; `nil` when nothing is new.
    public static func rewind(cursor: Int64, followed: [String], restores: [RestoreRecord]) -> (seq: Int64, followed: [String])? {
        let known = Set(followed)
        let unseen = restores.suffix(keptRestores).filter { !known.contains($0.id) }
        guard !unseen.isEmpty else { return nil }
        // Only a restore that gave seqs again (an earlier version's, with the replaced
        // file gone: it went on right after the backup's last) moves a cursor. One that
        // moved seqs on never needs to, and moving back for it would apply events twice.
        let back = unseen.filter(\.gaveSeqsAgain).map(\.resumedAfter).min() ?? cursor
        let seq = max(0, min(cursor, back))
        let ids = followed.filter { id in !unseen.contains { $0.id == id } } + unseen.map(\.id)
        return (seq, Array(ids.suffix(keptFollowed)))
    }

    /// The history of a restored database: the replaced file's restores (its history
    /// gave out the seqs), the backup's that the replaced file does not have (a file
    /// made anew after a loss), then this one.
    public static func appending(_ restore: RestoreRecord, replaced: [RestoreRecord], backup: [RestoreRecord]) -> [RestoreRecord] {
        let replacedIDs = Set(replaced.map(\.id))
        return Array((backup.filter { !replacedIDs.contains($0.id) } + replaced + [restore]).suffix(keptRestores))
    }

    // MARK: - Storage (platform_meta)

    /// The source's restores, oldest first (a database restored before histories were
    /// kept has its one restore under the older keys: it counts as having given seqs
    /// again, the careful reading).
    public static func restores(_ db: Database) throws -> [RestoreRecord] {
        if let stored = try PlatformMeta.get(db, historyKey),
            let restores = try? JSONDecoder().decode([RestoreRecord].self, from: Data(stored.utf8))
        {
            return restores
        }
        guard let id = try PlatformMeta.get(db, Outbox.restoreIDKey) else { return [] }
        let at = try PlatformMeta.get(db, Outbox.restoredAtKey).flatMap(Int64.init) ?? 0
        return [RestoreRecord(id: id, restoredAt: at, resumedAfter: at)]
    }

    /// Records the restore history, and its latest restore under the older keys.
    static func store(_ db: Database, _ restores: [RestoreRecord]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try PlatformMeta.set(db, historyKey, String(decoding: try encoder.encode(restores), as: UTF8.self))
        if let latest = restores.last {
            try PlatformMeta.set(db, Outbox.restoredAtKey, String(latest.restoredAt))
            try PlatformMeta.set(db, Outbox.restoreIDKey, latest.id)
        }
    }

    /// The ids of a source's restores a subscriber has followed, stored beside its cursor
    /// (a single id, as written before histories were kept, reads as one).
    static func followed(_ db: Database, source: String) throws -> [String] {
        guard let stored = try PlatformMeta.get(db, followedKey(source)) else { return [] }
        if stored.hasPrefix("["), let ids = try? JSONDecoder().decode([String].self, from: Data(stored.utf8)) { return ids }
        return [stored]
    }

    static func storeFollowed(_ db: Database, source: String, _ ids: [String]) throws {
        try PlatformMeta.set(db, followedKey(source), String(decoding: try JSONEncoder().encode(ids), as: UTF8.self))
    }

    /// The `platform_meta` key of a source's restore history.
    static let historyKey = "outbox.restores"

    /// The `platform_meta` key of the restores of `source` a subscriber followed.
    static func followedKey(_ source: String) -> String { "events.restore.\(source)" }
}

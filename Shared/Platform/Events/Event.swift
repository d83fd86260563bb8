import Foundation
import GRDB
import Synchronization

/// An event as it travels on the bus and comes back from `events.replay`
/// (CONTRACT.md, "Events").
public struct Event: Sendable, Codable, Equatable {
    /// The service that wrote it.
    public var source: String
    /// Per source: starts at 1, increases by exactly 1, never repeats.
    public var seq: Int64
    /// `<source>.<what happened>`, also the bus topic.
    public var type: String
    /// When it happened (RFC 3339, UTC, milliseconds).
    public var at: String
    /// What happened.
    public var data: JSONValue

    /// Creates an event.
    public init(source: String, seq: Int64, type: String, at: String, data: JSONValue) {
        self.source = source
        self.seq = seq
        self.type = type
        self.at = at
        self.data = data
    }

    /// The event as JSON bytes.
    public var encoded: Data {
        JSONValue.object([
            "source": .string(source), "seq": .integer(seq), "type": .string(type), "at": .string(at), "data": data,
        ]).serialized
    }

    /// Reads an event from JSON.
    public init(json value: JSONValue) throws {
        guard case .string(let source)? = value["source"], case .integer(let seq)? = value["seq"],
            case .string(let type)? = value["type"], case .string(let at)? = value["at"]
        else { throw ServiceError.badRequest("not an event") }
        self.init(source: source, seq: seq, type: type, at: at, data: value["data"] ?? .null)
    }
}

/// An event type a service publishes, as `describe` lists it.
public struct EventDescription: Sendable {
    /// The event type, e.g. `booking.created`.
    public let type: String
    /// When it is published.
    public let summary: String
    /// The schema of its `data`.
    public let data: JSONSchema

    /// Describes an event type.
    public init(_ type: String, summary: String, data: JSONSchema) {
        self.type = type
        self.summary = summary
        self.data = data
    }

    var descriptionValue: JSONValue {
        ["type": .string(type), "summary": .string(summary), "data": data.jsonValue]
    }
}

/// The transactional outbox: events are rows written in the same transaction as the
/// change they report; the ``EventPublisher`` sends them after commit.
public enum Outbox {
    /// Records an event in the current transaction and returns its `seq`.
    @discardableResult
    public static func append(_ db: Database, type: String, data: some Encodable, at date: Date = Date()) throws -> Int64 {
        let json = try WireJSON.encode(data)
        // A cached statement: events are appended by the hottest writes.
        try db.cachedStatement(sql: "INSERT INTO platform_event (type, at, data) VALUES (?, ?, ?)").run(type, Instant.format(date), UTF8Text(json))
        let seq = db.lastInsertedRowID
        OutboxWakeups.wake(after: db)
        return seq
    }

    /// Events with `seq > after`, oldest first, at most `limit`.
    public static func events(_ db: Database, source: String, after: Int64, limit: Int) throws -> [Event] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT seq, type, at, data FROM platform_event WHERE seq > ? ORDER BY seq LIMIT ?",
            arguments: [after, limit])
        return try rows.map { row in
            let data: String = row["data"]
            return Event(
                source: source, seq: row["seq"], type: row["type"], at: row["at"],
                data: try JSONParser.parse(Data(data.utf8)))
        }
    }

    /// Events with `seq > after`, oldest first, at most `limit`, as the bytes the bus
    /// carries (``Event/encoded``, built from the stored text without parsing it) with
    /// their types, for the publisher.
    public static func encodedEvents(_ db: Database, source: String, after: Int64, limit: Int) throws -> [(seq: Int64, type: String, bytes: Data)] {
        // Columns read by position from SQLite's buffers (no GRDB `Row`, no `String` for
        // the data): the publisher reads thousands a second under a burst.
        var events: [(seq: Int64, type: String, bytes: Data)] = []
        try db.cachedStatement(sql: "SELECT seq, type, at, data FROM platform_event WHERE seq > ? ORDER BY seq LIMIT ?")
            .forEachRow(arguments: [after, limit]) { row in
                let seq = row.integer(0) ?? 0, type = row.string(1)
                let data = row.utf8(3) ?? UnsafeBufferPointer(start: nil, count: 0)
                var writer = JSONObjectWriter(capacity: data.count + type.utf8.count + source.utf8.count + 96)
                writer.field("at", utf8: row.utf8(2))
                writer.field("data", json: data)
                writer.field("seq", seq)
                writer.field("source", source)
                writer.field("type", type)
                var bytes: [UInt8] = []
                writer.finish(into: &bytes)
                events.append((seq, type, Data(bytes)))
            }
        return events
    }

    /// Replaces a deleted user's id by `replacement` wherever it stands as a JSON string in
    /// the stored events, which `events.replay` serves for as long as they are kept: a
    /// subscriber catching up later learns what happened, not to whom. Ids are written
    /// as plain JSON strings (no characters to escape), so the quoted id is matched whole.
    /// Returns how many events changed. Account deletions are rare: one scan of the table.
    @discardableResult
    public static func redact(_ db: Database, user: String, as replacement: String) throws -> Int {
        guard !user.isEmpty, user.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 < 0x80 }),
            replacement.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 < 0x80 })
        else { return 0 }
        let quoted = "\"\(user)\""
        try db.execute(
            sql: "UPDATE platform_event SET data = replace(data, ?, ?) WHERE instr(data, ?) > 0",
            arguments: [quoted, "\"\(replacement)\"", quoted])
        return db.changesCount
    }

    /// The highest `seq` written so far (0 when none).
    /// The `platform_meta` key of the last seq of the backup a database was restored from.
    static let restoredAtKey = "outbox.restored_at"

    /// The highest seq given out: the last event's, or past it after a restore moved the
    /// sequence past the replaced database's (`sqlite_sequence`).
    public static func lastSeq(_ db: Database) throws -> Int64 {
        let stored = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM platform_event") ?? 0
        let given = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'platform_event'") ?? 0
        return max(stored, given)
    }

    /// The `platform_meta` key of a restore's id (a new one at each restore).
    static let restoreIDKey = "outbox.restore_id"
}

/// Wakes the process's event publishers after a transaction that appended events
/// commits: one hook per transaction, however many events it appends, and no work for
/// transactions that append none (a database observation would look at every statement).
/// A process runs one service (tests run several): every publisher is woken and reads
/// its own outbox.
enum OutboxWakeups {
    private static let publishers = Mutex<[ObjectIdentifier: @Sendable () -> Void]>([:])
    private static let commits = CommitCollector<Bool>(merge: { _, _ in true }) { _ in
        for wake in publishers.withLock({ Array($0.values) }) { wake() }
    }

    static func register(_ owner: ObjectIdentifier, _ wake: @escaping @Sendable () -> Void) {
        publishers.withLock { $0[owner] = wake }
    }

    static func unregister(_ owner: ObjectIdentifier) {
        _ = publishers.withLock { $0.removeValue(forKey: owner) }
    }

    static func wake(after db: Database) { commits.add(true, in: db) }
}

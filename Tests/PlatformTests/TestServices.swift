import Foundation
import GRDB
import Logging
import Platform
import ServiceLifecycle
import SharedTesting
import Synchronization

/// A small service used to test the runtime: items written with events, a slow
/// operation, and operations behind each auth rule.
enum TestService {
    struct Put: Codable, Sendable {
        var key: String
        var value: Int64
    }

    struct PutResult: Codable, Sendable {
        var seq: Int64
        var count: Int
    }

    struct Slow: Codable, Sendable {
        var ms: Int
        var tag: String?
    }

    /// The tags of the slow requests that have started (a test waits for its own).
    static let slowStarted = Mutex<Set<String>>([])

    /// How `staged.put`'s preparation without waiting answers: 0 prepares, 1 says it would
    /// have to wait (the task prepares), 2 refuses.
    static let stagedMode = Atomic<Int>(0)

    struct StagedResult: Codable, Sendable {
        var count: Int
        /// Where the request was prepared: `socket` or `task`.
        var preparedOn: String
    }

    static let putSchema = JSONSchema.object(
        ["key": .string(minLength: 1, maxLength: 50), "value": .integer()], required: ["key", "value"])

    static func definition(name: String = "test") -> ServiceDefinition {
        ServiceDefinition(
            name: name, summary: "A service for tests.", durability: .full,
            operations: [
                .write(
                    "\(name).put", summary: "Stores an item and publishes an event.", auth: .public,
                    request: putSchema,
                    response: .object(["seq": .integer(minimum: 0), "count": .integer(minimum: 0)], required: ["seq", "count"])
                ) { (_, input: Put, db: Database) in
                    try db.execute(sql: "INSERT INTO item (key, value) VALUES (?, ?)", arguments: [input.key, input.value])
                    let seq = try Outbox.append(db, type: "\(name).item.put", data: input)
                    return PutResult(seq: seq, count: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0)
                },
                .write(
                    "\(name).mine.put", summary: "Stores an item for the caller.", auth: .authenticated,
                    request: putSchema,
                    response: .object(["seq": .integer(minimum: 0), "count": .integer(minimum: 0)], required: ["seq", "count"])
                ) { (_, input: Put, db: Database) in
                    try db.execute(sql: "INSERT INTO item (key, value) VALUES (?, ?)", arguments: [input.key, input.value])
                    return PutResult(seq: 0, count: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0)
                },
                // A write in two steps, whose preparation may run on the socket thread.
                .write(
                    "\(name).staged.put", summary: "Stores an item, prepared on the socket thread or in a task.", auth: .authenticated,
                    request: putSchema,
                    response: .object(["count": .integer(minimum: 0), "preparedOn": .string()], required: ["count", "preparedOn"]),
                    prepare: { (_, input: Put) async throws -> (Put, String) in
                        guard stagedMode.load(ordering: .relaxed) != 2 else { throw ServiceError.invalid("value", "refused now") }
                        return (input, withUnsafeCurrentTask { $0 != nil } ? "task" : "socket")
                    },
                    preparedAtOnce: { (_, input: Put) throws -> (Put, String)? in
                        switch stagedMode.load(ordering: .relaxed) {
                        case 1: return nil
                        case 2: throw ServiceError.invalid("value", "refused now")
                        default: return (input, withUnsafeCurrentTask { $0 != nil } ? "task" : "socket")
                        }
                    }
                ) { (_, prepared: (Put, String), db: Database) in
                    try db.execute(sql: "INSERT INTO item (key, value) VALUES (?, ?)", arguments: [prepared.0.key, prepared.0.value])
                    return StagedResult(count: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0, preparedOn: prepared.1)
                },
                .read(
                    "\(name).count", summary: "Counts items.", auth: .public, request: .empty, response: .integer()
                ) { (_, _: Empty, db: Database) in
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0
                },
                .task(
                    "\(name).slow", summary: "Sleeps.", auth: .public, request: .object(["ms": .integer(minimum: 0), "tag": .string()], required: ["ms"]),
                    response: .empty
                ) { (_, input: Slow) in
                    if let tag = input.tag { _ = slowStarted.withLock { $0.insert(tag) } }
                    try await Task.sleep(for: .milliseconds(input.ms))
                    return Empty()
                },
                // A read that blocks its thread (as a long query would); it tells whether it
                // ran in a task or, as reads should, on a read thread.
                .read(
                    "\(name).slow.read", summary: "Blocks in a read transaction.", auth: .public,
                    request: .object(["ms": .integer(minimum: 0)], required: ["ms"]), response: .object(["onTask": .boolean], required: ["onTask"])
                ) { (_, input: Slow, db: Database) in
                    _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item")
                    Thread.sleep(forTimeInterval: Double(input.ms) / 1_000)
                    return ["onTask": .bool(withUnsafeCurrentTask { $0 != nil })] as JSONValue
                },
                .task("\(name).fail", summary: "Throws a database error.", auth: .public, request: .empty, response: .empty) {
                    (context, _: Empty) in
                    try await context.database().write { db in try db.execute(sql: "SELECT * FROM no_such_table") }
                    return Empty()
                },
                .read("\(name).me", summary: "The caller.", auth: .authenticated, request: .empty, response: .string()) {
                    (context, _: Empty, _) in try context.requirePrincipal().userID
                },
                // A fast path (its token checked on the socket thread) with nothing in memory.
                .read("\(name).me.fast", summary: "The caller, past a fast path.", auth: .authenticated, request: .empty, response: .string()) {
                    (context, _: Empty, _) in try context.requirePrincipal().userID
                }.answeringFromMemory(Empty.self) { _ in nil },
                .read("\(name).admin", summary: "Admins only.", auth: .anyRole(["admin"]), request: .empty, response: .string()) {
                    (_, _: Empty, _) in "secret"
                },
            ],
            events: [EventDescription("\(name).item.put", summary: "An item was stored.", data: putSchema)],
            migrations: { migrator in
                migrator.registerMigration("\(name)-1") { db in
                    try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, key TEXT NOT NULL, value INTEGER NOT NULL)")
                }
            })
    }

    /// A service that applies `source`'s item events into its own table.
    /// While set, the sink refuses events whose key is `poison` (a handler that fails).
    static let poisonFails = Atomic<Bool>(false)

    static func sink(source: String) -> ServiceDefinition {
        ServiceDefinition(
            name: "sink", summary: "Applies events.", durability: .normal,
            operations: [
                .read(
                    "sink.applied", summary: "Applied seqs in order.", auth: .public, request: .empty,
                    response: .array(of: .integer(minimum: 1), maxItems: 100_000)
                ) {
                    (_, _: Empty, db: Database) in try Int64.fetchAll(db, sql: "SELECT source_seq FROM applied ORDER BY id")
                }
            ],
            subscriptions: [
                EventSubscription(source: source, types: ["\(source).item.put"]) { db, event in
                    if event.data["key"] == "poison" && poisonFails.load(ordering: .relaxed) { throw ServiceError.unavailable("poisoned") }
                    try db.execute(sql: "INSERT INTO applied (source_seq) VALUES (?)", arguments: [event.seq])
                }
            ],
            migrations: { migrator in
                migrator.registerMigration("sink-1") { db in
                    try db.execute(sql: "CREATE TABLE applied (id INTEGER PRIMARY KEY, source_seq INTEGER NOT NULL)")
                }
            })
    }
}

import Foundation
import GRDB
import Platform
import Synchronization

/// How reminders look on the wire, and their schemas.
enum ReminderViews {
    static let notificationSchema = JSONSchema.object(
        [
            "kind": JSONSchema.oneOf(NotificationKind.allCases.map(\.rawValue)).described("sound, vibration or both"),
            "sound": JSONSchema.string(minLength: 1, maxLength: 100).nullable().described("a custom sound's name"),
        ], required: ["kind"])

    static let greetingSchema = JSONSchema.object(
        [
            "recipientName": JSONSchema.name(maxLength: 100), "message": JSONSchema.text(minLength: 1, maxLength: 2_000),
            "channel": JSONSchema.oneOf(["email", "sms"]).nullable().described("send it for the user; absent: remind the user to send it"),
            "address": JSONSchema.string(minLength: 3, maxLength: 254).nullable().described("the email address or E.164 phone number"),
        ], required: ["recipientName", "message"])

    static let repeatSchema = JSONSchema.object(
        [
            "everyMinutes": JSONSchema.integer(minimum: Int64(AlertPlan.limits.repeatEvery.lowerBound), maximum: Int64(AlertPlan.limits.repeatEvery.upperBound)),
            "times": JSONSchema.integer(minimum: 1, maximum: Int64(AlertPlan.limits.repeatTimes.upperBound)),
        ], required: ["everyMinutes", "times"])

    static let reminderSchema = JSONSchema.object(
        [
            "id": .string(), "title": .string(), "description": JSONSchema.string(maxLength: 4_000).nullable(),
            "location": JSONSchema.string(maxLength: 500).nullable(), "notes": JSONSchema.string(maxLength: 4_000).nullable(), "category": .oneOf(ReminderCategory.allCases.map(\.rawValue)),
            "importance": .oneOf(Importance.allCases.map(\.rawValue)), "special": .boolean, "imageId": JSONSchema.string().nullable(),
            "notification": notificationSchema,
            "start": JSONSchema.string().described("YYYY-MM-DDTHH:MM, or YYYY-MM-DD all-day"), "allDay": .boolean,
            "zone": JSONSchema.string(format: .timeZone).nullable().described("null: floating (follows the device's zone)"),
            "floating": .boolean, "rrule": JSONSchema.string().nullable(), "exdates": .array(of: .string()),
            "alerts": JSONSchema.array(of: .integer(minimum: 0)).described("lead times in minutes before each occurrence"),
            "repeatAlert": repeatSchema.nullable(), "greeting": greetingSchema.nullable(),
            "status": .oneOf(ReminderStatus.allCases.map(\.rawValue)),
            "source": JSONSchema.string().described("user, import, beautiful, holiday, schedule, birthday, congratulation"),
            "next": RemindersEvents.occurrence.nullable().described("the next occurrence (null: none ahead)"),
            "doneThrough": JSONSchema.string().nullable().described("every occurrence up to this one is done"),
            "version": .integer(minimum: 1), "createdAt": .string(format: .dateTime), "updatedAt": .string(format: .dateTime),
            "closedAt": JSONSchema.string(format: .dateTime).nullable(),
        ],
        required: [
            "id", "title", "category", "importance", "special", "notification", "start", "allDay", "zone", "floating", "rrule", "exdates", "alerts",
            "status", "source", "next", "version", "createdAt", "updatedAt",
        ])

    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }

    /// The `greeting` member of a reminder or an alert (`null` for none).
    static func write(greeting: Greeting?, into object: inout JSONObjectWriter) {
        guard let greeting else { return object.null("greeting") }
        object.object("greeting") { nested in
            nested.field("address", greeting.address)
            nested.field("channel", greeting.channel)
            nested.field("message", greeting.message)
            nested.field("recipientName", greeting.recipientName)
        }
    }

    /// The local text of an instant on a reminder's clock: its zone, else (floating) the
    /// user's; a date alone for an all-day one.
    static func localText(zone: String?, allDay: Bool, at instant: Date, userZone: ZoneClock) -> String {
        let local = (zone.flatMap(ZoneCache.clock) ?? userZone).local(instant)
        return allDay ? local.date.description : LocalText.format(local)
    }
}

/// A reminder as the wire shows it: its JSON text (keys sorted), written straight from
/// its stored columns. Lists send hundreds of them, so no value is made per field: texts
/// are escaped from SQLite's own buffers, and the alerts and exceptions the service
/// stored as JSON are copied as they are. Every answer goes this way, a handler's after
/// a write too (it reads the row back in its transaction), so there is one form.
struct ReminderView: Sendable, JSONWrittenOnly {
    var json: [UInt8]

    func writeJSON(to output: inout [UInt8]) { output.append(contentsOf: json) }

    /// The reminder as it is stored now, in the caller's transaction.
    init(_ db: Database, _ row: ReminderRow, clock: UserClock) throws {
        guard let view = try Self.fetch(db, sql: "SELECT \(ReminderRow.columns) FROM reminder WHERE rowid = ?", arguments: [row.rowID], clock: clock).first
        else { throw ServiceError.notFound("no such reminder") }
        self = view
    }

    init(json: [UInt8]) { self.json = json }

    /// The reminders a query selects (``ReminderRow/columns`` first, in order, or
    /// ``ReminderRow/keptColumns`` with `keptOnly`); `each` sees every row's columns, those
    /// after the reminder's too.
    ///
    /// `keptOnly`: the query selects only what a kept text needs (lists and searches,
    /// whose rows are nearly all kept: SQLite then copies 6 columns a row instead of 35);
    /// a row whose text is not kept is read whole by its rowid.
    static func fetch(
        _ db: Database, sql: String, arguments: StatementArguments, clock: UserClock, keptOnly: Bool = false,
        each: (StoredColumns) -> Void = { _ in }
    ) throws -> [ReminderView] {
        var views: [ReminderView] = []
        // Only what a reader sees is committed: a writer's rows may still be rolled back,
        // and their change version then given to another write.
        let committed = db.configuration.readonly
        let rendered = RenderedReminders.of(db)
        try db.cachedStatement(sql: sql).forEachRow(arguments: arguments) { row in
            var json: [UInt8] = []
            json.reserveCapacity(768)
            let key = RenderedReminders.Key(rowID: row.integer(0) ?? 0, changeVersion: row.integer(30) ?? 0)
            if let rendered, rendered.write(key, to: &json, next: { writeNext(row, userZone: clock.zone, to: &$0) }) {
                // Kept: the row's next occurrence spliced into its text.
            } else if keptOnly {
                try db.cachedStatement(sql: "SELECT \(ReminderRow.columns) FROM reminder WHERE rowid = ?").forEachRow(arguments: [key.rowID]) { whole in
                    try writeRendering(whole, key: key, userZone: clock.zone, keepingIn: committed ? rendered : nil, to: &json)
                }
            } else {
                try writeRendering(row, key: key, userZone: clock.zone, keepingIn: committed ? rendered : nil, to: &json)
            }
            views.append(ReminderView(json: json))
            each(row)
        }
        return views
    }

    /// Writes the reminder of a row selecting ``ReminderRow/columns`` whose text is not
    /// kept: rendered now (and kept in `cache`, given only for a committed row), its next
    /// occurrence spliced in.
    private static func writeRendering(
        _ row: StoredColumns, key: RenderedReminders.Key, userZone: ZoneClock, keepingIn cache: RenderedReminders?, to output: inout [UInt8]
    ) throws {
        let parts = try render(row)
        cache?.keep(key, parts)
        output.append(contentsOf: parts.head)
        writeNext(row, userZone: userZone, to: &output)
        output.append(contentsOf: parts.tail)
    }

    /// The value of `next`: the next occurrence, local and UTC, or `null`. Not kept with
    /// the rest: firing moves it on without a new change version.
    static func writeNext(_ row: StoredColumns, userZone: ZoneClock, to output: inout [UInt8]) {
        guard let nextAtMs = row.integer(26) else {
            output.append(contentsOf: "null".utf8)
            return
        }
        let instant = Instant.date(milliseconds: nextAtMs)
        var nested = JSONObjectWriter(taking: &output)
        if let local = row.utf8(27) {
            nested.field("local", utf8: local)
        } else {
            // Stored before the local text was kept: on the reminder's zone, or the user's.
            nested.field("local", ReminderViews.localText(zone: row.text(15), allDay: row.bool(14), at: instant, userZone: userZone))
        }
        nested.field("utc", Instant.format(instant))
        nested.finish(returningTo: &output)
    }

    /// The reminder's JSON object around the value of `next`: `head` runs up to `"next":`,
    /// `tail` from the member after it to the closing brace. Both depend on the row's
    /// columns alone, which change only with its change version.
    static func render(_ row: StoredColumns) throws -> RenderedReminders.Parts {
        let allDay = row.bool(14)
        /// An occurrence's stored text (YYYY-MM-DDTHH:MM) as the wire shows it: the date
        /// alone for an all-day reminder.
        func occurrence(_ stored: UnsafeBufferPointer<UInt8>?) -> UnsafeBufferPointer<UInt8>? {
            guard let stored, allDay else { return stored }
            return UnsafeBufferPointer(rebasing: stored.prefix(10))
        }
        var head: [UInt8] = []
        head.reserveCapacity(512)
        var object = JSONObjectWriter(taking: &head)
        object.field("alerts", json: row.utf8(18) ?? UnsafeBufferPointer(start: nil, count: 0))
        object.field("allDay", allDay)
        object.field("category", utf8: row.utf8(7))
        object.field("closedAt", utf8: row.utf8(34))
        object.field("createdAt", utf8: row.utf8(32))
        object.field("description", utf8: row.utf8(4))
        object.field("doneThrough", utf8: occurrence(row.utf8(25)))
        if allDay {
            object.field("exdates", strings: try ReminderRow.strings(row.string(17)).map { String($0.prefix(10)) })
        } else {
            object.field("exdates", json: row.utf8(17) ?? UnsafeBufferPointer(start: nil, count: 0))
        }
        object.field("floating", row.utf8(15) == nil)
        ReminderViews.write(greeting: try row.text(21).map { try JSONDecoder().decode(Greeting.self, from: Data($0.utf8)) }, into: &object)
        object.field("id", utf8: row.utf8(1))
        object.field("imageId", utf8: row.utf8(10))
        object.field("importance", utf8: row.utf8(8))
        object.field("location", utf8: row.utf8(5))
        object.null("next")
        object.finish(returningTo: &head)
        head.removeLast("null}".utf8.count)

        var tail: [UInt8] = []
        tail.reserveCapacity(384)
        object = JSONObjectWriter(taking: &tail)
        object.field("notes", utf8: row.utf8(6))
        object.object("notification") { nested in
            nested.field("kind", utf8: row.utf8(11))
            nested.field("sound", utf8: row.utf8(12))
        }
        if let every = row.integer(19) {
            object.object("repeatAlert") { nested in
                nested.field("everyMinutes", every)
                nested.field("times", row.integer(20) ?? 0)
            }
        } else {
            object.null("repeatAlert")
        }
        object.field("rrule", utf8: row.utf8(16))
        object.field("source", utf8: row.utf8(23))
        object.field("special", row.bool(9))
        object.field("start", utf8: occurrence(row.utf8(13)))
        object.field("status", utf8: row.utf8(22))
        object.field("title", utf8: row.utf8(3))
        object.field("updatedAt", utf8: row.utf8(33))
        object.field("version", row.integer(29) ?? 1)
        object.field("zone", utf8: row.utf8(15))
        object.finish(returningTo: &tail)
        tail[0] = UInt8(ascii: ",")
        // Copied to their size: kept, their spare capacity would count against no budget.
        return RenderedReminders.Parts(head: Array(head[...]), tail: Array(tail[...]))
    }
}

/// A page of reminders: `{items, next}`, or `{items}` alone for a list without pages.
struct ReminderPage: Sendable, JSONWrittenOnly {
    var items: [ReminderView]
    var paged: Bool = true
    var next: String?

    func writeJSON(to output: inout [UInt8]) {
        output.reserveCapacity(output.count + 64 + items.reduce(0) { $0 + $1.json.count + 1 })
        output.append(contentsOf: #"{"items":["#.utf8)
        for index in items.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: items[index].json)
        }
        output.append(UInt8(ascii: "]"))
        if paged {
            output.append(contentsOf: #","next":"#.utf8)
            if let next { JSONValue.writeString(next, to: &output) } else { output.append(contentsOf: "null".utf8) }
        }
        output.append(UInt8(ascii: "}"))
    }
}

/// Reminders' JSON as rendered, by row and change version, one cache per database the
/// process serves: a list or search page copies the text of the reminders it has shown
/// before instead of writing each field again (writing them was the largest part of a
/// page). Every change of a reminder's content takes a new change version from the
/// database's one counter, and a version that was committed is never given again while
/// the service runs (a restore needs it stopped; a start makes a new, empty cache), so an
/// entry never goes stale; only rows read on a reader connection, hence committed, are
/// kept. Bounded: in each of 64 shards (by key, so that readers on other threads rarely
/// wait for the same lock: a contended `Mutex` parks the thread in the kernel), two
/// generations of about `generationBytes / 64`; when the newer fills up, the older is
/// dropped and the newer becomes it, and an entry found in the older moves to the newer
/// (an approximate least-recently-used).
final class RenderedReminders: Sendable {
    struct Key: Hashable, Sendable {
        var rowID: Int64
        var changeVersion: Int64
    }

    struct Parts: Sendable {
        var head: [UInt8]
        var tail: [UInt8]
        var bytes: Int { head.count + tail.count + 64 }
    }

    /// A kept text: its head and tail in one allocation of its own. Copying one out touches
    /// no reference count (with arrays, the four read threads asking for the same rows
    /// retained and released the same buffers, and those atomic counts were a seventh of
    /// their time); it is read only under its shard's read lock and freed only under its
    /// write lock, so a reader never sees it freed.
    private struct Kept: @unchecked Sendable {
        let storage: UnsafeMutableRawBufferPointer
        let headCount: Int

        init(_ parts: Parts) {
            storage = .allocate(byteCount: max(1, parts.head.count + parts.tail.count), alignment: 1)
            headCount = parts.head.count
            parts.head.withUnsafeBytes { storage.copyMemory(from: $0) }
            parts.tail.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: storage[headCount...]).copyMemory(from: $0) }
        }

        var bytes: Int { storage.count + 64 }

        /// Appends the head, what `next` writes, and the tail.
        func write(to output: inout [UInt8], next: (inout [UInt8]) -> Void) {
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: storage[..<headCount]))
            next(&output)
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: storage[headCount...]))
        }

        func free() { storage.deallocate() }
    }

    private struct Generations {
        var newer: [Key: Kept] = [:]
        var older: [Key: Kept] = [:]
        var newerBytes = 0

        mutating func freeAll() {
            for kept in newer.values { kept.free() }
            for kept in older.values { kept.free() }
            newer = [:]
            older = [:]
            newerBytes = 0
        }
    }

    /// Behind a read-write lock: concurrent pages of one user look up the same rows, and
    /// with a `Mutex` they queued (and slept in the kernel) on the same shards.
    private final class Shard: Sendable {
        let state = ReadMostly(Generations())
    }

    static let shardCount = 64
    private let shards: [Shard]
    private let shardBytes: Int

    init(generationBytes: Int) {
        shards = (0..<Self.shardCount).map { _ in Shard() }
        shardBytes = max(1, generationBytes / Self.shardCount)
    }

    deinit {
        for shard in shards { shard.state.write { $0.freeAll() } }
    }

    private func shardIndex(_ key: Key) -> Int {
        // Row ids are dense: their low bits spread consecutive rows over the shards.
        Int(UInt64(bitPattern: key.rowID) % UInt64(Self.shardCount))
    }

    /// Appends the kept text of `key` with what `next` writes between its head and tail;
    /// `false` (and nothing written) when it is not kept.
    func write(_ key: Key, to output: inout [UInt8], next: (inout [UInt8]) -> Void) -> Bool {
        let shard = shards[shardIndex(key)]
        let found = shard.state.read { state -> Bool in
            guard let kept = state.pointee.newer[key] else { return false }
            kept.write(to: &output, next: next)
            return true
        }
        if found { return true }
        return shard.state.write { state in
            if let kept = state.newer[key] {
                kept.write(to: &output, next: next)
                return true
            }
            guard let kept = state.older.removeValue(forKey: key) else { return false }
            kept.write(to: &output, next: next)
            Self.add(key, kept, to: &state, limit: shardBytes)
            return true
        }
    }

    func keep(_ key: Key, _ parts: Parts) {
        shards[shardIndex(key)].state.write { state in Self.add(key, Kept(parts), to: &state, limit: shardBytes) }
    }

    /// The bytes kept in all, as the budget counts them (for tests).
    var bytes: Int {
        var total = 0
        for shard in shards {
            total += shard.state.read { state in state.pointee.newerBytes + state.pointee.older.values.reduce(0) { $0 + $1.bytes } }
        }
        return total
    }

    private static func add(_ key: Key, _ kept: Kept, to state: inout Generations, limit: Int) {
        if let replaced = state.newer.updateValue(kept, forKey: key) {
            // Kept twice by two readers of the same row at once: the same text.
            replaced.free()
            return
        }
        state.newerBytes += kept.bytes
        if state.newerBytes > limit {
            for dropped in state.older.values { dropped.free() }
            state.older = state.newer
            state.newer = [:]
            state.newerBytes = 0
        }
    }

    /// The caches by database file: read by every page, changed when a service starts.
    private static let byDatabase = ReadMostly<[String: RenderedReminders]>([:])

    /// A new, empty cache for the database of `pool` (about 32 MiB at most), replacing an
    /// earlier one: the service starts.
    static func start(for pool: DatabasePool, generationBytes: Int = 16 << 20) throws {
        let path = try pool.read { $0.mainFilePath }
        let cache = RenderedReminders(generationBytes: generationBytes)
        byDatabase.write { $0[path] = cache }
    }

    /// The cache of `db`'s database, if its service started one.
    static func of(_ db: Database) -> RenderedReminders? {
        let path = db.mainFilePath
        return byDatabase.read { $0.pointee[path] }
    }
}

/// A value read far more often than it changes, behind a read-write lock: readers never
/// wait for each other (a `Mutex` would serialize them, and park them in the kernel
/// when contended).
final class ReadMostly<Value>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    /// Behind a pointer, so a reader looks into the value in place (a stored property
    /// handed to the closure would be copied, its buffers retained and released: atomic
    /// counts every reader thread contends on).
    private let value: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    func read<Result>(_ body: (UnsafePointer<Value>) throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    func write<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value.pointee)
    }
}

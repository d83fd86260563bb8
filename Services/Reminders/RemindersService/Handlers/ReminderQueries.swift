import Foundation
import GRDB
import Platform

/// Reading many reminders: the main list by next occurrence, full-text search, the
/// history of completed and deleted ones, the widget's upcoming ones, title suggestions,
/// and the preview of a rule's occurrences.
struct ReminderQueries: Sendable {
    static let user = AuthRule.authenticated

    var all: [ServiceOperation] { [list, search, history, upcoming, suggest, preview] }

    static let pageSchema = JSONSchema.object(
        ["items": .array(of: ReminderViews.reminderSchema), "next": JSONSchema.string().nullable().described("send as `cursor` for the next page")],
        required: ["items", "next"])

    static let limit = JSONSchema.integer(minimum: 1, maximum: 200).described("default 50")

    struct ListRequest: Codable, Sendable {
        var status: ReminderStatus?
        var category: ReminderCategory?
        var from: LocalDate?
        var to: LocalDate?
        var order: String?
        var limit: Int?
        var cursor: String?
    }

    var list: ServiceOperation {
        .read(
            "reminders.list",
            summary: "The caller's reminders sorted by next occurrence (`order` asc, default, or desc; those with none ahead come last in asc): `status` (default active), `category`, and `from`/`to` (dates in the user's zone, inclusive) on the next occurrence. Paged: `{items, next}`.",
            auth: Self.user,
            request: .object([
                "status": .oneOf(ReminderStatus.allCases.map(\.rawValue)), "category": .oneOf(ReminderCategory.allCases.map(\.rawValue)),
                "from": .string(format: .date), "to": .string(format: .date), "order": .oneOf(["asc", "desc"]), "limit": Self.limit,
                "cursor": .string(maxLength: 200),
            ]),
            response: Self.pageSchema, remembered: true
        ) { (context, input: ListRequest, db: Database) -> ReminderPage in
            let user = try context.requirePrincipal().userID
            let clock = try UserClock.load(db, user: user)
            let limit = input.limit ?? 50
            let descending = input.order == "desc"
            var filter = "user_id = ? AND status = ?"
            var arguments: StatementArguments = [user, (input.status ?? .active).rawValue]
            if let category = input.category {
                filter += " AND category = ?"
                _ = arguments.append(contentsOf: [category.rawValue])
            }
            if input.from != nil || input.to != nil { filter += " AND next_at_ms IS NOT NULL" }
            if let from = input.from {
                filter += " AND next_sort >= ?"
                _ = arguments.append(contentsOf: [Instant.milliseconds(clock.zone.startOfDay(from))])
            }
            if let to = input.to {
                filter += " AND next_sort < ?"
                _ = arguments.append(contentsOf: [Instant.milliseconds(clock.zone.startOfDay(to.adding(days: 1)))])
            }
            return try Self.keysetPage(db, filter: filter, arguments: arguments, sortColumn: "next_sort", descending: descending, cursor: input.cursor, limit: limit, clock: clock)
        }
    }

    /// One page of reminders ordered by `sortColumn` then rowid, after the cursor's
    /// position, among those matching `filter` (a WHERE clause with its `arguments`).
    static func keysetPage(
        _ db: Database, filter: String, arguments: StatementArguments, sortColumn: String, descending: Bool, cursor: String?, limit: Int, clock: UserClock
    ) throws -> ReminderPage {
        var sql = "SELECT \(ReminderRow.keptColumns), \(sortColumn) FROM reminder WHERE \(filter)"
        var arguments = arguments
        if let cursor {
            let (key, id) = try PageCursor.decode(cursor)
            guard let sort = Int64(key), let rowID = Int64(id) else { throw ServiceError.invalid("cursor", "not a cursor of this list") }
            sql += " AND (\(sortColumn), rowid) \(descending ? "<" : ">") (?, ?)"
            _ = arguments.append(contentsOf: [sort, rowID])
        }
        sql += descending ? " ORDER BY \(sortColumn) DESC, rowid DESC LIMIT ?" : " ORDER BY \(sortColumn), rowid LIMIT ?"
        _ = arguments.append(contentsOf: [limit + 1])
        var keys: [(sort: Int64, rowID: Int64)] = []
        var items = try ReminderView.fetch(db, sql: sql, arguments: arguments, clock: clock, keptOnly: true) { row in
            keys.append((row.integer(Int32(ReminderRow.columnCount)) ?? 0, row.integer(0) ?? 0))
        }
        var next: String?
        if items.count > limit {
            items.removeLast(items.count - limit)
            next = PageCursor.encode(String(keys[limit - 1].sort), String(keys[limit - 1].rowID))
        }
        return ReminderPage(items: items, next: next)
    }

    struct SearchRequest: Codable, Sendable {
        var query: String
        var status: ReminderStatus?
        var limit: Int?
    }

    var search: ServiceOperation {
        .read(
            "reminders.search",
            summary: "Full-text search over the caller's reminders' titles and descriptions (SQLite FTS5, unicode61: case and diacritics folded, Cyrillic included; every word a prefix, all required): those with every word in the title first, then the others, newest first within each; `status` to narrow (default all).",
            auth: Self.user,
            request: .object(
                ["query": .string(minLength: 1, maxLength: 200), "status": .oneOf(ReminderStatus.allCases.map(\.rawValue)), "limit": Self.limit],
                required: ["query"]),
            response: .object(
                [
                    "items": .array(of: ReminderViews.reminderSchema),
                    "next": JSONSchema.string().nullable().described("always null: a search answers its best `limit` matches, unpaged"),
                ], required: ["items", "next"]),
            remembered: true
        ) { (context, input: SearchRequest, db: Database) -> ReminderPage in
            let user = try context.requirePrincipal().userID
            let clock = try UserClock.load(db, user: user)
            // The contract's list shape, `{items, next}`, with nothing after the best matches.
            return ReminderPage(items: try Self.search(db, query: input.query, user: user, status: input.status, limit: input.limit ?? 50, clock: clock))
        }
    }

    /// The caller's reminders with every word of `query`: those with all of them in the
    /// title first, then the others; newest first within each (FTS5 reads its matches in
    /// rowid order and stops at the page, where ranking by relevance scored every match:
    /// a thousand matches cost a millisecond).
    static func search(
        _ db: Database, query: String, user: String, status: ReminderStatus?, limit: Int, clock: UserClock
    ) throws -> [ReminderView] {
        guard let anywhere = SearchTerms.match(query, user: user), let inTitle = SearchTerms.match(query, user: user, in: "search_title") else { return [] }
        var sql = """
            SELECT \(ReminderRow.keptColumns) FROM reminder_fts JOIN reminder ON reminder.rowid = reminder_fts.rowid
            WHERE reminder_fts MATCH ? AND reminder.user_id = ?
            """
        var arguments: StatementArguments = [user]
        if let status {
            sql += " AND reminder.status = ?"
            _ = arguments.append(contentsOf: [status.rawValue])
        }
        sql += " ORDER BY reminder_fts.rowid DESC LIMIT ?"
        var seen = Set<Int64>()
        var found = try ReminderView.fetch(db, sql: sql, arguments: [inTitle] + arguments + [limit], clock: clock, keptOnly: true) {
            seen.insert($0.integer(0) ?? 0)
        }
        guard found.count < limit else { return found }
        // The second read may start with every title match again: it asks for as many more.
        var fresh: [Bool] = []
        let more = try ReminderView.fetch(db, sql: sql, arguments: [anywhere] + arguments + [limit + found.count], clock: clock, keptOnly: true) {
            fresh.append(seen.insert($0.integer(0) ?? 0).inserted)
        }
        for (view, isNew) in zip(more, fresh) where isNew && found.count < limit { found.append(view) }
        return found
    }

    struct HistoryRequest: Codable, Sendable {
        var query: String?
        var order: String?
        var limit: Int?
        var cursor: String?
    }

    var history: ServiceOperation {
        .read(
            "reminders.history",
            summary: "Completed and deleted (archived) reminders in chronological order of when they were completed or deleted (`order` asc, default, or desc); `query` searches them as reminders.search does. Paged.",
            auth: Self.user,
            request: .object(["query": .string(minLength: 1, maxLength: 200), "order": .oneOf(["asc", "desc"]), "limit": Self.limit, "cursor": .string(maxLength: 200)]),
            response: Self.pageSchema, remembered: true
        ) { (context, input: HistoryRequest, db: Database) -> ReminderPage in
            let user = try context.requirePrincipal().userID
            let clock = try UserClock.load(db, user: user)
            var filter = "user_id = ? AND closed_ms IS NOT NULL AND status IN ('completed', 'archived')"
            var arguments: StatementArguments = [user]
            if let query = input.query {
                guard let match = SearchTerms.match(query, user: user) else { return ReminderPage(items: []) }
                filter += " AND rowid IN (SELECT rowid FROM reminder_fts WHERE reminder_fts MATCH ?)"
                _ = arguments.append(contentsOf: [match])
            }
            return try Self.keysetPage(
                db, filter: filter, arguments: arguments, sortColumn: "closed_ms", descending: input.order == "desc", cursor: input.cursor,
                limit: input.limit ?? 50, clock: clock)
        }
    }

    struct UpcomingRequest: Codable, Sendable {
        var limit: Int?
    }

    var upcoming: ServiceOperation {
        .read(
            "reminders.upcoming", summary: "The caller's next active reminders by next occurrence, for widgets (`limit` 1-50, default 5).",
            auth: Self.user, request: .object(["limit": .integer(minimum: 1, maximum: 50)]),
            response: .object(["items": .array(of: ReminderViews.reminderSchema)], required: ["items"])
        ) { (context, input: UpcomingRequest, db: Database) -> ReminderPage in
            let user = try context.requirePrincipal().userID
            let clock = try UserClock.load(db, user: user)
            let items = try ReminderView.fetch(
                db,
                sql: """
                    SELECT \(ReminderRow.columns) FROM reminder WHERE user_id = ? AND status = 'active' AND next_sort >= ? AND next_sort < ?
                    ORDER BY next_sort, rowid LIMIT ?
                    """, arguments: [user, Instant.milliseconds(context.receivedAt), ReminderRow.noNextSort, input.limit ?? 5], clock: clock)
            return ReminderPage(items: items, paged: false)
        }
    }

    struct SuggestRequest: Codable, Sendable {
        var prefix: String
        var limit: Int?
    }

    var suggest: ServiceOperation {
        .read(
            "reminders.suggest",
            summary: "Titles the caller used before that start with `prefix` (case folded, Cyrillic included), most used first: `{titles: [...]}` (`limit` 1-20, default 10).",
            auth: Self.user, request: .object(["prefix": .string(minLength: 1, maxLength: 200), "limit": .integer(minimum: 1, maximum: 20)], required: ["prefix"]),
            response: .object(["titles": .array(of: .string())], required: ["titles"])
        ) { (context, input: SuggestRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let prefix = input.prefix.lowercased()
            let titles = try String.fetchAll(
                db.cachedStatement(sql: """
                    SELECT title FROM reminder WHERE user_id = ? AND title_fold >= ? AND title_fold < ?
                    GROUP BY title ORDER BY COUNT(*) DESC, MAX(rowid) DESC LIMIT ?
                    """), arguments: [user, prefix, prefix + "\u{10FFFF}", input.limit ?? 10])
            return ["titles": .array(titles.map(JSONValue.string))]
        }
    }

    struct PreviewRequest: Codable, Sendable {
        var start: String
        var zone: String
        var rrule: String?
        var exdates: [String]?
        var limit: Int?
    }

    var preview: ServiceOperation {
        .inline(
            "reminders.preview",
            summary: "Expands a rule without saving anything, for the \"next occurrences\" view: `start` a local date-time without offset (2027-03-10T09:00), `zone` an IANA name, `rrule` (absent: the start alone), `exdates`; `{occurrences: [{local, utc}]}` with local YYYY-MM-DDTHH:MM and utc RFC 3339 with Z. Wall-clock time across DST; a time in a gap moves forward by the gap, an ambiguous one takes its first occurrence.",
            auth: Self.user,
            request: .object(
                [
                    "start": .string(minLength: 16, maxLength: 16), "zone": .string(format: .timeZone), "rrule": .string(minLength: 6, maxLength: 500),
                    "exdates": .array(of: .string(minLength: 16, maxLength: 16), maxItems: 1_000), "limit": .integer(minimum: 1, maximum: 1_000),
                ], required: ["start", "zone"]),
            response: .object(["occurrences": .array(of: RemindersEvents.occurrence)], required: ["occurrences"])
        ) { (_, input: PreviewRequest) -> JSONValue in
            guard let start = LocalText.dateTime(input.start) else { throw ServiceError.invalid("start", "not a local date and time YYYY-MM-DDTHH:MM that exists") }
            guard let zone = ZoneClock(identifier: input.zone) else { throw ServiceError.invalid("zone", "not an IANA time zone name") }
            var rule: RecurrenceRule?
            do throws(RecurrenceError) {
                if let text = input.rrule { rule = try RecurrenceRule.parse(text) }
            } catch {
                throw ServiceError.invalid(error.field, error.reason)
            }
            let exceptions = try (input.exdates ?? []).enumerated().map { index, text in
                guard let local = LocalText.dateTime(text) else { throw ServiceError.invalid("exdates[\(index)]", "not a local date and time") }
                return local
            }
            let series: RecurrenceSeries
            do throws(RecurrenceError) {
                series = try RecurrenceSeries(start: start, zone: zone, rule: rule, exceptions: Set(exceptions))
            } catch {
                throw ServiceError.invalid(error.field, error.reason)
            }
            let occurrences = series.occurrences(limit: input.limit ?? 20).map { occurrence -> JSONValue in
                // The wall clock at the instant: a time in a gap shows as moved forward.
                ["local": .string(LocalText.format(zone.local(occurrence.instant))), "utc": .string(Instant.format(occurrence.instant))]
            }
            return ["occurrences": .array(occurrences)]
        }
    }
}

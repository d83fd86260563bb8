import Foundation
import GRDB
import Platform

/// Beautiful dates (the app's own feature) and holiday catalogs: found on request, and
/// subscribed to, which makes all-day reminders for the coming matches and keeps them
/// coming (a monthly timer per subscription tops them up; each match is made once, by
/// its `source_key`).
struct SubscriptionOperations: Sendable {
    static let user = AuthRule.authenticated
    static let timerKind = "reminders.subscription"
    /// How far ahead a subscription keeps reminders made.
    static let horizonDays = 366
    static let topUpEvery: TimeInterval = 30 * 86_400
    static let maximumPerUser = 20
    /// At most this many reminders one top-up of one subscription makes.
    static let maximumPerTopUp = 60

    var all: [ServiceOperation] { [beautifulFind, beautifulSubscribe, holidaysList, holidaysSubscribe, subscriptionsList, subscriptionsDelete] }

    // MARK: Beautiful dates

    struct CustomInput: Codable, Sendable, Hashable {
        var name: String
        var pattern: String
    }

    struct PersonalDate: Codable, Sendable, Hashable {
        var label: String
        var date: LocalDate
    }

    static let customSchema = JSONSchema.array(
        of: .object(
            [
                "name": JSONSchema.string(minLength: 1, maxLength: 40).described("how the pattern is named in answers"),
                "pattern": JSONSchema.string(minLength: 8, maxLength: 10).described(
                    "a digit pattern over DD.MM.YYYY: letters stand for digits (same letter, same digit; different letters, different digits), digits match themselves, ? any digit; dots optional (AB.BA.????, AA.AA.AAAA, ??.??.2025)"),
            ], required: ["name", "pattern"]), maxItems: 10)

    static let patternNames = BeautifulPattern.allCases.map(\.rawValue)

    static func customPatterns(_ inputs: [CustomInput]?) throws -> [(name: String, pattern: CustomDatePattern)] {
        var patterns: [(name: String, pattern: CustomDatePattern)] = []
        for (index, input) in (inputs ?? []).enumerated() {
            do throws(BeautifulDateError) {
                patterns.append((input.name, try CustomDatePattern(input.pattern)))
            } catch {
                throw ServiceError.invalid("custom[\(index)].pattern", error.reason)
            }
        }
        return patterns
    }

    struct FindRequest: Codable, Sendable {
        var from: LocalDate
        var to: LocalDate
        var patterns: [BeautifulPattern]?
        var custom: [CustomInput]?
    }

    static let datesSchema = JSONSchema.object(
        ["dates": .array(of: .object(["date": .string(format: .date), "patterns": .array(of: .string())], required: ["date", "patterns"]))],
        required: ["dates"])

    var beautifulFind: ServiceOperation {
        .inline(
            "reminders.beautiful.find",
            summary: "Beautiful dates between `from` and `to` (inclusive, at most 200 years, at most 1,000 dates): each `{date, patterns}` with the patterns that make it beautiful. Patterns (default all): \(Self.patternNames.joined(separator: ", ")); plus the caller's `custom` digit patterns.",
            auth: .public,
            request: .object(
                [
                    "from": .string(format: .date), "to": .string(format: .date), "patterns": .array(of: .oneOf(Self.patternNames), maxItems: 20),
                    "custom": Self.customSchema,
                ], required: ["from", "to"]),
            response: Self.datesSchema
        ) { (_, input: FindRequest) -> JSONValue in
            guard input.from <= input.to else { throw ServiceError.invalid("to", "must not be before from") }
            guard input.from.days(until: input.to) <= 200 * 366 else { throw ServiceError.invalid("to", "at most 200 years after from") }
            let custom = try Self.customPatterns(input.custom)
            let patterns = input.patterns ?? (custom.isEmpty ? BeautifulPattern.allCases : [])
            let found = BeautifulDates.find(from: input.from, to: input.to, patterns: patterns, custom: custom, limit: 1_000)
            return ["dates": .array(found.map { ["date": .string($0.date.description), "patterns": .array($0.patterns.map(JSONValue.string))] })]
        }
    }

    /// A subscription's parameters as stored.
    struct Params: Codable, Sendable, Hashable {
        var patterns: [BeautifulPattern]?
        var custom: [CustomInput]?
        var personalDates: [PersonalDate]?
        var country: String?
        var keys: [String]?
        var alerts: [Int]?
    }

    struct BeautifulSubscribeRequest: Codable, Sendable {
        var patterns: [BeautifulPattern]?
        var custom: [CustomInput]?
        var personalDates: [PersonalDate]?
        var alerts: [Int]?
    }

    static let alertsSchema = JSONSchema.array(of: .integer(minimum: 0, maximum: Int64(AlertPlan.limits.leadMinutes)), maxItems: AlertPlan.limits.leads)
        .described("lead times of the reminders made (default [0]: on the day, at the all-day time)")

    static let subscriptionSchema = JSONSchema.object(
        [
            "id": .string(), "kind": .oneOf(["beautiful", "holiday"]),
            "params": JSONSchema.object([:], additional: .any).described("what was subscribed to, as sent"),
            "createdAt": .string(format: .dateTime), "made": JSONSchema.integer(minimum: 0).described("reminders made now"),
        ], required: ["id", "kind", "params", "createdAt"])

    var beautifulSubscribe: ServiceOperation {
        .write(
            "reminders.beautiful.subscribe",
            summary: "Subscribes to beautiful dates: `patterns` and `custom` ones, and `personalDates` (`{label, date}`: a birthday, a wedding) whose round counts (10,000 days, 1,000 weeks, 500 months …) are beautiful too. Makes all-day reminders for the matches of the coming year now and keeps them coming. Answers the subscription with `made`. The same patterns, custom patterns and personal dates again (in any order): conflict already_subscribed with `details.subscriptionId`.",
            auth: Self.user,
            request: .object([
                "patterns": .array(of: .oneOf(Self.patternNames), maxItems: 20), "custom": Self.customSchema,
                "personalDates": .array(of: .object(["label": JSONSchema.name(maxLength: 100), "date": .string(format: .date)], required: ["label", "date"]), maxItems: 10),
                "alerts": Self.alertsSchema,
            ]),
            response: Self.subscriptionSchema
        ) { (context, input: BeautifulSubscribeRequest, db: Database) -> JSONValue in
            _ = try Self.customPatterns(input.custom)
            guard input.patterns?.isEmpty == false || input.custom?.isEmpty == false || input.personalDates?.isEmpty == false else {
                throw ServiceError.invalid("patterns", "name at least one pattern, custom pattern or personal date")
            }
            let params = Params(patterns: input.patterns, custom: input.custom, personalDates: input.personalDates, alerts: input.alerts)
            return try Self.subscribe(context, db, kind: "beautiful", params: params)
        }
    }

    // MARK: Holidays

    struct HolidaysRequest: Codable, Sendable {
        var country: String
        var year: Int
        var language: String?
    }

    static let holidaySchema = JSONSchema.object(
        [
            "date": .string(format: .date), "key": JSONSchema.string().described("stable id: easter in every catalog (Orthodox in RU)"), "name": .string(),
            "kind": .oneOf(["public", "religious", "observance"]),
        ], required: ["date", "key", "name", "kind"])

    var holidaysList: ServiceOperation {
        .inline(
            "reminders.holidays.list",
            summary: "A country's holidays in a year (1900-2100): `{holidays: [{date, key, name, kind}]}`. Catalogs: RU (public holidays by the law of each year, Orthodox feasts from Orthodox Easter, named days such as the Apple Feast of the Saviour), DE, US, GB (Gregorian Easter and its feasts). `language` ru, en or de (default: the country's).",
            auth: .public,
            request: .object(
                ["country": .oneOf(HolidayCatalog.countries), "year": .integer(minimum: 1900, maximum: 2100), "language": .oneOf(["ru", "en", "de"])],
                required: ["country", "year"]),
            response: .object(["holidays": .array(of: Self.holidaySchema)], required: ["holidays"])
        ) { (_, input: HolidaysRequest) -> JSONValue in
            guard let holidays = HolidayCatalog.holidays(country: input.country, year: input.year) else { throw ServiceError.invalid("country", "no such catalog") }
            let language = input.language ?? Self.defaultLanguage(input.country)
            return ["holidays": .array(holidays.map { Self.holidayView($0, language: language) })]
        }
    }

    static func defaultLanguage(_ country: String) -> String {
        switch country {
        case "RU": "ru"
        case "DE": "de"
        default: "en"
        }
    }

    static func holidayView(_ holiday: Holiday, language: String) -> JSONValue {
        ["date": .string(holiday.date.description), "key": .string(holiday.key), "name": .string(holiday.name(language)), "kind": .string(holiday.kind.rawValue)]
    }

    struct HolidaysSubscribeRequest: Codable, Sendable {
        var country: String
        var keys: [String]?
        var alerts: [Int]?
    }

    var holidaysSubscribe: ServiceOperation {
        .write(
            "reminders.holidays.subscribe",
            summary: "Subscribes to a country's holidays (all, or the `keys` given): all-day reminders of category holiday for the coming year, titled in the user's language, kept coming every year. One subscription per country: another one is conflict already_subscribed with `details.subscriptionId` (delete it first to choose other holidays).",
            auth: Self.user,
            request: .object(
                ["country": .oneOf(HolidayCatalog.countries), "keys": .array(of: .string(minLength: 1, maxLength: 60), maxItems: 100), "alerts": Self.alertsSchema],
                required: ["country"]),
            response: Self.subscriptionSchema
        ) { (context, input: HolidaysSubscribeRequest, db: Database) -> JSONValue in
            if let keys = input.keys {
                let year = ZoneClock.utc.localDate(of: context.receivedAt).year
                let known = Set(((HolidayCatalog.holidays(country: input.country, year: year) ?? []) + (HolidayCatalog.holidays(country: input.country, year: year + 1) ?? [])).map(\.key))
                if let index = keys.firstIndex(where: { !known.contains($0) }) {
                    throw ServiceError.invalid("keys[\(index)]", "not a holiday of \(input.country) (reminders.holidays.list)")
                }
            }
            return try Self.subscribe(context, db, kind: "holiday", params: Params(country: input.country, keys: input.keys, alerts: input.alerts))
        }
    }

    // MARK: Subscriptions

    static func subscribe(_ context: RequestContext, _ db: Database, kind: String, params: Params) throws -> JSONValue {
        let user = try context.requirePrincipal().userID
        let count = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM subscription WHERE user_id = ?"), arguments: [user]) ?? 0
        guard count < Self.maximumPerUser else {
            throw ServiceError.conflict("you have \(count) subscriptions; remove one first", reason: "too_many_subscriptions")
        }
        if let existing = try Self.repeated(db, user: user, kind: kind, params: params) {
            var error = ServiceError.conflict(
                kind == "holiday"
                    ? "you already follow the holidays of \(params.country ?? "") (\(existing)): delete that subscription first to choose other holidays"
                    : "you already follow these beautiful dates (\(existing))",
                reason: "already_subscribed")
            error.details["subscriptionId"] = .string(existing)
            throw error
        }
        let id = RecordID.make(prefix: "sub", at: context.receivedAt)
        let text = String(decoding: try JSONEncoder().encode(params), as: UTF8.self)
        let createdAt = Instant.format(context.receivedAt)
        try db.cachedStatement(sql: "INSERT INTO subscription (id, user_id, kind, params, created_at) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [id, user, kind, text, createdAt])
        let made = try topUp(db, id: id, user: user, kind: kind, params: params, now: context.receivedAt)
        return ["id": .string(id), "kind": .string(kind), "params": try WireJSON.value(of: params), "createdAt": .string(createdAt), "made": .integer(Int64(made))]
    }

    /// The user's subscription that `params` would repeat, making its reminders a second
    /// time: for holidays one of the same country (one per country), for beautiful dates
    /// one of the same patterns, custom patterns and personal dates, in any order.
    static func repeated(_ db: Database, user: String, kind: String, params: Params) throws -> String? {
        let rows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, params FROM subscription WHERE user_id = ? AND kind = ?"), arguments: [user, kind])
        for row in rows {
            guard let text: String = row["params"], let other = try? JSONDecoder().decode(Params.self, from: Data(text.utf8)) else { continue }
            let same =
                kind == "holiday"
                ? other.country == params.country
                : Set(other.patterns ?? []) == Set(params.patterns ?? []) && Set(other.custom ?? []) == Set(params.custom ?? [])
                    && Set(other.personalDates ?? []) == Set(params.personalDates ?? [])
            if same { return row["id"] }
        }
        return nil
    }

    /// Makes the reminders a subscription owes for the coming year that do not exist yet,
    /// and sets its next top-up. Returns how many it made.
    @discardableResult
    static func topUp(_ db: Database, id: String, user: String, kind: String, params: Params, now: Date) throws -> Int {
        let clock = try UserClock.load(db, user: user)
        let today = clock.zone.localDate(of: now)
        let until = today.adding(days: horizonDays)
        var matches: [(key: String, date: LocalDate, title: String, description: String?, category: ReminderCategory)] = []
        let russian = clock.language == "ru"
        if kind == "beautiful" {
            // The person's own milestones first (a few a year): patterns matching many days
            // fill what room is left, and never crowd them out of the top-up.
            for personal in params.personalDates ?? [] {
                for milestone in Milestones.between(today, until, since: personal.date) {
                    matches.append(
                        ("milestone:\(id):\(personal.label):\(milestone.key)", milestone.date, Self.milestoneTitle(milestone, label: personal.label, russian: russian),
                         nil, .anniversary))
                }
            }
            let custom = (try? customPatterns(params.custom)) ?? []
            let room = max(0, maximumPerTopUp - matches.count)
            for found in BeautifulDates.find(from: today, to: until, patterns: params.patterns ?? [], custom: custom, limit: room) where room > 0 {
                let written = "\(Instant.digits(found.date.day, width: 2)).\(Instant.digits(found.date.month, width: 2)).\(found.date.year)"
                matches.append(
                    ("beautiful:\(id):\(found.date)", found.date, (russian ? "Красивая дата: " : "Beautiful date: ") + written,
                     found.patterns.joined(separator: ", "), .beautifulDate))
            }
        } else if let country = params.country {
            let language = clock.language == "en" || clock.language == "de" || clock.language == "ru" ? clock.language : defaultLanguage(country)
            for year in [today.year, today.year + 1] {
                for holiday in HolidayCatalog.holidays(country: country, year: year) ?? []
                where holiday.date >= today && holiday.date <= until && (params.keys.map { $0.contains(holiday.key) } ?? true) {
                    matches.append(("holiday:\(id):\(holiday.key):\(year)", holiday.date, holiday.name(language), nil, .holiday))
                }
            }
        }
        var made = 0
        let room = ReminderStore.maximumPerUser - (try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM reminder WHERE user_id = ?"), arguments: [user]) ?? 0)
        for match in matches.prefix(maximumPerTopUp) where made < room {
            guard try ReminderRow.bySource(db, user: user, key: match.key) == nil else { continue }
            var content = try ReminderStore.blank(db, user: user)
            content.title = String(match.title.prefix(200))
            content.description = match.description
            content.category = match.category
            content.timing = ReminderTiming(start: LocalDateTime(date: match.date, time: .midnight), allDay: true, zone: nil, rule: nil, exceptions: [])
            content.alerts = AlertPlan(leadMinutes: params.alerts ?? [0])
            try ReminderStore.insert(
                db, id: RecordID.make(prefix: "rem", at: now), user: user, content: content, source: kind, sourceKey: match.key, clock: clock, now: now)
            made += 1
        }
        try DurableTimers.schedule(db, kind: timerKind, at: now.addingTimeInterval(topUpEvery), key: id)
        return made
    }

    static func milestoneTitle(_ milestone: Milestone, label: String, russian: Bool) -> String {
        let count = Self.grouped(milestone.count, separator: russian ? "\u{00A0}" : ",")
        let unit: String
        switch milestone.unit {
        case .days: unit = russian ? "дней" : "days"
        case .weeks: unit = russian ? "недель" : "weeks"
        case .months: unit = russian ? "месяцев" : "months"
        case .years: unit = russian ? "лет" : "years"
        }
        return russian ? "\(count) \(unit): \(label)" : "\(count) \(unit) since \(label)"
    }

    /// 10000 → "10,000" (or with a no-break space, as Russian writes it).
    static func grouped(_ number: Int, separator: String) -> String {
        var digits = String(number)
        var groups: [String] = []
        while digits.count > 3 {
            groups.insert(String(digits.suffix(3)), at: 0)
            digits.removeLast(3)
        }
        groups.insert(digits, at: 0)
        return groups.joined(separator: separator)
    }

    static let topUpHandler = TimerHandler(kind: timerKind) { db, timer in
        guard let id = timer.key,
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT user_id, kind, params FROM subscription WHERE id = ?"), arguments: [id])
        else { return }
        let params = try JSONDecoder().decode(Params.self, from: Data((row["params"] as String).utf8))
        try topUp(db, id: id, user: row["user_id"], kind: row["kind"], params: params, now: timer.firedAt)
    }

    var subscriptionsList: ServiceOperation {
        .read(
            "reminders.subscriptions.list", summary: "The caller's beautiful-date and holiday subscriptions.", auth: Self.user, request: .empty,
            response: .object(["items": .array(of: Self.subscriptionSchema)], required: ["items"])
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM subscription WHERE user_id = ? ORDER BY created_at, id"), arguments: [user])
            return [
                "items": .array(
                    try rows.map { row in
                        [
                            "id": .string(row["id"]), "kind": .string(row["kind"]), "params": try JSONParser.parse(Data((row["params"] as String).utf8)),
                            "createdAt": .string(row["created_at"]),
                        ]
                    })
            ]
        }
    }

    struct DeleteRequest: Codable, Sendable {
        var id: String
        var removeReminders: Bool?
    }

    var subscriptionsDelete: ServiceOperation {
        .write(
            "reminders.subscriptions.delete",
            summary: "Ends a subscription: no more reminders are made; with `removeReminders: true` its active reminders are purged too.",
            auth: Self.user, request: .object(["id": .string(minLength: 1, maxLength: 100), "removeReminders": .boolean], required: ["id"]),
            response: .object(["removed": JSONSchema.integer(minimum: 0).described("reminders purged")], required: ["removed"])
        ) { (context, input: DeleteRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            guard let kind = try String.fetchOne(db.cachedStatement(sql: "SELECT kind FROM subscription WHERE id = ? AND user_id = ?"), arguments: [input.id, user])
            else { throw ServiceError.notFound("no such subscription") }
            try db.cachedStatement(sql: "DELETE FROM subscription WHERE id = ?").execute(arguments: [input.id])
            try DurableTimers.cancel(db, kind: Self.timerKind, key: input.id)
            var removed = 0
            if input.removeReminders == true {
                let prefixes = kind == "beautiful" ? ["beautiful:\(input.id):", "milestone:\(input.id):"] : ["holiday:\(input.id):"]
                let store = try context.mediaStore()
                for prefix in prefixes {
                    let rows = try ReminderRow.fetchAll(
                        db, where: "user_id = ? AND status = 'active' AND source_key >= ? AND source_key < ?", [user, prefix, prefix + "\u{10FFFF}"])
                    for row in rows {
                        try ReminderStore.purge(db, row, now: context.receivedAt, store: store)
                        removed += 1
                    }
                }
            }
            return ["removed": .integer(Int64(removed))]
        }
    }
}

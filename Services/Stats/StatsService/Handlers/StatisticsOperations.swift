import Foundation
import GRDB
import Platform

/// The Stats page (spec 004, Stats b-h): for the last week, two weeks or month in the
/// user's zone, the daily performance series, the shares per body part and per motor
/// ability, and the key facts.
struct StatisticsOperations: Sendable {
    /// Answers kept until the next commit, a second at most ("today" moves at midnight
    /// without a write): an app opening the Stats page asks for all four at once, and again
    /// on every return to it.
    let cache: ReadCache

    var all: [ServiceOperation] { [performance, bodyParts, motorAbilities, keyFacts, chart] }

    /// A period statistic read through the cache, and answered from it on the socket thread.
    static func cached(
        _ op: String, summary: String, response: JSONSchema, cache: ReadCache,
        _ answer: @escaping @Sendable (RequestContext, PeriodRequest, Database) throws -> JSONValue
    ) -> ServiceOperation {
        @Sendable func key(_ principal: Principal, _ input: PeriodRequest) -> String { "\(op)|\(principal.userID)|\(input.period)" }
        let summary = summary + " Answered from memory for at most a second, and never across a write."
        return ServiceOperation.task(op, summary: summary, auth: .authenticated, request: Self.periodRequest, response: response) {
            (context, input: PeriodRequest) -> RawJSON in
            try await cache.remember(key(try context.requirePrincipal(), input), from: context.database()) { db in try answer(context, input, db) }
        }.answeringFromMemory(PeriodRequest.self) { context, input in
            context.principal.flatMap { cache.answer(key($0, input)) }
        }
    }

    struct PeriodRequest: Codable, Sendable {
        var period: String
    }

    static let periodRequest = JSONSchema.object(
        ["period": JSONSchema.oneOf(StatsPeriod.allCases.map(\.rawValue)).described("week (7 days), two_weeks (14) or month (ending today)")],
        required: ["period"])

    static let rangeSchema = JSONSchema.object(["from": .string(format: .date), "to": .string(format: .date)], required: ["from", "to"])

    /// The caller's statistics for the requested period, ending today in their zone. Only
    /// the key facts compare with the period before, count the streak and the workouts:
    /// the other figures read the period's day totals only (their `keyFacts` are not shown).
    static func statistics(_ context: RequestContext, _ input: PeriodRequest, _ db: Database, keyFacts: Bool = false) throws -> PeriodStatistics {
        let user = try context.requirePrincipal().userID
        guard let period = StatsPeriod(rawValue: input.period) else { throw ServiceError.invalid("period", "week, two_weeks or month") }
        let today = try UserPreferences.load(db, user: user).clock.local(context.receivedAt).date
        let from = keyFacts ? period.previousRange(endingOn: today).lowerBound : period.range(endingOn: today).lowerBound
        let days = try Self.days(db, user: user, from: from, through: today, workouts: keyFacts)
        let earlier = keyFacts ? EarlierStreak(first: from, length: try Self.streak(db, user: user, before: from, through: today)) : nil
        return PeriodStatistics(days: days, period: period, today: today, earlier: earlier)
    }

    /// A current streak counts at most this many days, whatever the period.
    static let streakReach = 1_000

    static let dayTotalsQuery =
        "SELECT day, \(DayTotalsSchema.valueColumns.joined(separator: ", ")) FROM exercise_day WHERE user_id = ? AND day >= ? AND day <= ? ORDER BY day"

    /// The user's day totals from `from` through `through` (one row per day with an
    /// exercise done or skipped), with each day's workouts when `workouts` is set.
    static func days(_ db: Database, user: String, from: LocalDate, through: LocalDate, workouts: Bool = true) throws -> [DayTotals] {
        var days: [DayTotals] = []
        let (parts, abilities) = (BodyPart.allCases.count, MotorAbility.allCases.count)
        try db.cachedStatement(sql: Self.dayTotalsQuery).forEachRow(arguments: [user, from.description, through.description]) { row in
            guard let day = LocalDate(row.string(0)) else { return }
            var totals = DayTotals(day: day)
            totals.score = Int(row.integer(1) ?? 0)
            totals.repetitions = Int(row.integer(2) ?? 0)
            totals.done = Int(row.integer(3) ?? 0)
            totals.skipped = Int(row.integer(4) ?? 0)
            for index in 0..<parts { totals.bodyParts[index] = Int(row.integer(Int32(5 + index)) ?? 0) }
            for index in 0..<abilities { totals.motorAbilities[index] = Int(row.integer(Int32(5 + parts + index)) ?? 0) }
            days.append(totals)
        }
        guard workouts else { return days }
        let positions = Dictionary(uniqueKeysWithValues: days.enumerated().map { ($1.day.description, $0) })
        try db.cachedStatement(sql: "SELECT day, workout_id FROM workout_day WHERE user_id = ? AND day >= ? AND day <= ?")
            .forEachRow(arguments: [user, from.description, through.description]) { row in
                guard let position = positions[row.string(0)] else { return }
                days[position].workoutIDs.insert(row.string(1))
            }
        return days
    }

    /// The number of consecutive days with an exercise done that end the day before
    /// `first` (the streak a current streak continues when it reaches back to `first`): the
    /// part before `first` of the training run holding the day before it. A streak counts
    /// at most ``streakReach`` days back from `through`.
    static func streak(_ db: Database, user: String, before first: LocalDate, through: LocalDate) throws -> Int {
        let reach = max(0, Self.streakReach - first.days(until: through))
        let statement = try db.cachedStatement(
            sql: "SELECT first_day, last_day FROM training_run WHERE user_id = ? AND first_day < ? ORDER BY first_day DESC LIMIT 1")
        var length = 0
        try statement.forEachRow(arguments: [user, first.description]) { row in
            let dayBefore = first.adding(days: -1)
            guard let start = LocalDate(row.string(0)), let end = LocalDate(row.string(1)), end >= dayBefore else { return }
            length = start.days(until: first)
        }
        return min(length, reach)
    }

    static func range(_ range: ClosedRange<LocalDate>) -> JSONValue { ["from": .string(range.lowerBound.description), "to": .string(range.upperBound.description)] }

    var performance: ServiceOperation {
        Self.cached(
            "stats.performance",
            summary: "The line chart: one point per day of the period (days without training as zero): the day's score (see stats.workout.complete), repetitions and exercises done.",
            response: .object(
                [
                    "period": .string(), "range": Self.rangeSchema,
                    "points": .array(
                        of: .object(
                            ["day": .string(format: .date), "score": .integer(minimum: 0), "repetitions": .integer(minimum: 0), "exercises": .integer(minimum: 0)],
                            required: ["day", "score", "repetitions", "exercises"]), maxItems: 31),
                ], required: ["period", "range", "points"]), cache: cache
        ) { context, input, db in
            let stats = try Self.statistics(context, input, db)
            return [
                "period": .string(stats.period.rawValue), "range": Self.range(stats.range),
                "points": .array(
                    stats.performance.map {
                        [
                            "day": .string($0.day.description), "score": .integer(Int64($0.score)), "repetitions": .integer(Int64($0.repetitions)),
                            "exercises": .integer(Int64($0.exercises)),
                        ]
                    }),
            ]
        }
    }

    static func sharesSchema(_ categories: [String]) -> JSONSchema {
        .object(
            [
                "period": .string(), "range": Self.rangeSchema,
                "shares": JSONSchema.array(
                    of: .object(
                        ["category": .oneOf(categories), "count": .integer(minimum: 0), "percent": .integer(minimum: 0, maximum: 100)],
                        required: ["category", "count", "percent"])
                ).described("every category in order; percents sum to exactly 100 (largest remainder), or all 0 when nothing was done"),
            ], required: ["period", "range", "shares"])
    }

    static func shares<Category>(_ stats: PeriodStatistics, _ shares: [CategoryShare<Category>], name: (Category) -> String) -> JSONValue {
        [
            "period": .string(stats.period.rawValue), "range": Self.range(stats.range),
            "shares": .array(
                shares.map { ["category": .string(name($0.category)), "count": .integer(Int64($0.count)), "percent": .integer(Int64($0.percent))] }),
        ]
    }

    var bodyParts: ServiceOperation {
        Self.cached(
            "stats.bodyParts", summary: "The share of exercises done per body part in the period (the bar or pie chart).",
            response: Self.sharesSchema(BodyPart.allCases.map(\.rawValue)), cache: cache
        ) { context, input, db in
            let stats = try Self.statistics(context, input, db)
            return Self.shares(stats, stats.bodyPartShares) { $0.rawValue }
        }
    }

    var motorAbilities: ServiceOperation {
        Self.cached(
            "stats.motorAbilities", summary: "The share of exercises done per motor ability (strength, endurance, speed) in the period.",
            response: Self.sharesSchema(MotorAbility.allCases.map(\.rawValue)), cache: cache
        ) { context, input, db in
            let stats = try Self.statistics(context, input, db)
            return Self.shares(stats, stats.motorAbilityShares) { $0.rawValue }
        }
    }

    static let changeSchema = JSONSchema.object(
        [
            "current": .integer(), "previous": .integer(),
            "percentChange": JSONSchema.integer().nullable().described("rounded; null when the previous period had none"),
        ], required: ["current", "previous", "percentChange"])

    static func change(_ change: PeriodChange) -> JSONValue {
        ["current": .integer(Int64(change.current)), "previous": .integer(Int64(change.previous)), "percentChange": change.percentChange.map { .integer(Int64($0)) } ?? .null]
    }

    var keyFacts: ServiceOperation {
        Self.cached(
            "stats.keyFacts",
            summary: "The key facts of the period: workouts, exercises done and skipped, repetitions, score, the best day, the current streak (consecutive days with training ending today, or yesterday when today has none yet; it may reach back before the period) and the longest within it, and the change of score, repetitions and workouts against the period before.",
            response: .object(
                [
                    "period": .string(), "range": Self.rangeSchema, "previousRange": Self.rangeSchema, "workouts": .integer(minimum: 0),
                    "exercisesDone": .integer(minimum: 0), "exercisesSkipped": .integer(minimum: 0), "totalRepetitions": .integer(minimum: 0),
                    "totalScore": .integer(minimum: 0),
                    "bestDay": JSONSchema.object(["day": .string(format: .date), "score": .integer()], required: ["day", "score"]).nullable(),
                    "currentStreak": .integer(minimum: 0), "longestStreak": .integer(minimum: 0), "scoreChange": Self.changeSchema,
                    "repetitionsChange": Self.changeSchema, "workoutsChange": Self.changeSchema,
                ],
                required: [
                    "period", "range", "previousRange", "workouts", "exercisesDone", "exercisesSkipped", "totalRepetitions", "totalScore", "bestDay",
                    "currentStreak", "longestStreak", "scoreChange", "repetitionsChange", "workoutsChange",
                ]), cache: cache
        ) { context, input, db in
            let stats = try Self.statistics(context, input, db, keyFacts: true)
            let facts = stats.keyFacts
            return [
                "period": .string(stats.period.rawValue), "range": Self.range(stats.range), "previousRange": Self.range(stats.previousRange),
                "workouts": .integer(Int64(facts.workouts)), "exercisesDone": .integer(Int64(facts.exercisesDone)),
                "exercisesSkipped": .integer(Int64(facts.exercisesSkipped)), "totalRepetitions": .integer(Int64(facts.totalRepetitions)),
                "totalScore": .integer(Int64(facts.totalScore)),
                "bestDay": facts.bestDay.map { ["day": .string($0.day.description), "score": .integer(Int64($0.score))] } ?? .null,
                "currentStreak": .integer(Int64(facts.currentStreak)), "longestStreak": .integer(Int64(facts.longestStreak)),
                "scoreChange": Self.change(facts.scoreChange), "repetitionsChange": Self.change(facts.repetitionsChange),
                "workoutsChange": Self.change(facts.workoutsChange),
            ]
        }
    }

    struct ChartRequest: Codable, Sendable {
        var kind: String
        var period: String
        var language: String?
    }

    /// Names on the charts, in German or English.
    static func label(_ part: BodyPart, german: Bool) -> String {
        switch part {
        case .chest: german ? "Brust" : "Chest"
        case .back: german ? "Rücken" : "Back"
        case .shoulders: german ? "Schultern" : "Shoulders"
        case .arms: german ? "Arme" : "Arms"
        case .core: german ? "Rumpf" : "Core"
        case .legs: german ? "Beine" : "Legs"
        case .fullBody: german ? "Ganzkörper" : "Full body"
        }
    }

    static func label(_ ability: MotorAbility, german: Bool) -> String {
        switch ability {
        case .strength: german ? "Kraft" : "Strength"
        case .endurance: german ? "Ausdauer" : "Endurance"
        case .speed: german ? "Schnelligkeit" : "Speed"
        }
    }

    var chart: ServiceOperation {
        .read(
            "stats.chart",
            summary: "A chart of the period as SVG (640×360, title, axes, labels, legend), in `language` (de or en; default the preferences'): `performance` a line chart of the daily score, `bodyParts` a pie, `motorAbilities` a bar chart in percent. `{kind, period, contentType: image/svg+xml, svg}`.",
            auth: .authenticated,
            request: .object(
                [
                    "kind": .oneOf(["performance", "bodyParts", "motorAbilities"]), "period": .oneOf(StatsPeriod.allCases.map(\.rawValue)),
                    "language": .oneOf(["de", "en"]),
                ], required: ["kind", "period"]),
            response: .object(
                ["kind": .string(), "period": .string(), "contentType": .string(), "svg": .string(maxLength: 200_000, format: .multiline)],
                required: ["kind", "period", "contentType", "svg"])
        ) { (context, input: ChartRequest, db: Database) -> JSONValue in
            let stats = try Self.statistics(context, PeriodRequest(period: input.period), db)
            let preferred = try UserPreferences.load(db, user: try context.requirePrincipal().userID).language
            let german = (input.language ?? preferred) == "de"
            let range = "\(stats.range.lowerBound) – \(stats.range.upperBound)"
            let svg: String
            switch input.kind {
            case "performance":
                let points = stats.performance.map {
                    ChartSVG.Point(label: "\(Instant.digits($0.day.day, width: 2)).\(Instant.digits($0.day.month, width: 2))", value: $0.score)
                }
                svg = ChartSVG.line(
                    title: (german ? "Leistung " : "Performance ") + range, points: points, seriesName: german ? "Punkte pro Tag" : "Score per day",
                    emptyMessage: german ? "Kein Training in diesem Zeitraum" : "No training in this period")
            case "bodyParts":
                svg = ChartSVG.pie(
                    title: (german ? "Körperpartien " : "Body parts ") + range,
                    slices: stats.bodyPartShares.map { ChartSVG.Slice(label: Self.label($0.category, german: german), percent: $0.percent) },
                    emptyMessage: german ? "Keine Übungen in diesem Zeitraum" : "No exercises in this period")
            default:
                svg = ChartSVG.bars(
                    title: (german ? "Motorik " : "Motor abilities ") + range,
                    bars: stats.motorAbilityShares.map { ChartSVG.Slice(label: Self.label($0.category, german: german), percent: $0.percent) },
                    emptyMessage: german ? "Keine Übungen in diesem Zeitraum" : "No exercises in this period")
            }
            return ["kind": .string(input.kind), "period": .string(stats.period.rawValue), "contentType": "image/svg+xml", "svg": .string(svg)]
        }
    }
}

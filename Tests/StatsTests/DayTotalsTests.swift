import Foundation
import GRDB
import Platform
import PropertyBased
import SharedTesting
import Testing

@testable import StatsService

/// The per-day totals the statistics read (`exercise_day`, `workout_day`), kept by triggers
/// on `workout_exercise`: after any mix of the writes the service makes, they equal the
/// totals computed from the exercises themselves.
@Suite("Stats: day totals kept by the database")
struct DayTotalsTests {
    static let days = (0..<4).map { LocalDate(year: 2027, month: 3, day: 27 + $0) }
    static let users = ["ann", "bob"]

    /// The totals computed from the exercise rows (the statistics' definition, the way they
    /// were computed before the tables existed).
    static func expected(_ db: Database, user: String) throws -> [DayTotals] {
        var records: [ExerciseRecord] = []
        for row in try Row.fetchAll(
            db, sql: "SELECT workout_id, day, body_part, motor_ability, repetitions, score, state FROM workout_exercise WHERE user_id = ? AND state != 'shown'",
            arguments: [user])
        {
            records.append(
                ExerciseRecord(
                    workoutID: row[0], day: LocalDate(row[1] as String)!, bodyPart: BodyPart(rawValue: row[2])!, motorAbility: MotorAbility(rawValue: row[3])!,
                    repetitions: row[4], score: row[5], skipped: row[6] == "skipped"))
        }
        return DayTotals.of(records)
    }

    static func stored(_ db: Database, user: String) throws -> [DayTotals] {
        try StatisticsOperations.days(db, user: user, from: days[0], through: days[days.count - 1], workouts: true)
    }

    /// A new in-memory database with every migration.
    static func migratedQueue() -> DatabaseQueue {
        let queue = try! DatabaseQueue()
        try! migrator().migrate(queue)
        return queue
    }

    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        StatsMigrations.register(in: &migrator)
        return migrator
    }

    /// Makes one of the service's writes at random: an exercise shown, done (perhaps on
    /// another day: completion's day is the local day of completing), skipped, synced done
    /// or skipped, a workout's shown ones removed at its end, a user's history reset.
    static func randomWrite(_ db: Database, _ random: inout SplitMix64, resets: Bool = true) throws {
        let user = users[Int(random.next() % 2)], workout = "w\(random.next() % 3)"
        let number = Int(random.next() % 4) + 1, attempt = Int(random.next() % 2) + 1
        let day = days[Int(random.next() % UInt64(days.count))].description
        let part = BodyPart.allCases[Int(random.next() % UInt64(BodyPart.allCases.count))].rawValue
        let ability = MotorAbility.allCases[Int(random.next() % 3)].rawValue
        let (repetitions, score) = (Int(random.next() % 30), Int(random.next() % 200))
        let key: StatementArguments = [user, workout, number, attempt]
        switch random.next() % 10 {
        case 0, 1, 2:
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO workout_exercise (user_id, workout_id, number, attempt, exercise_id, body_part, motor_ability, recommended, shown_ms, state, day)
                    VALUES (?, ?, ?, ?, 'e', ?, ?, 10, 0, 'shown', ?)
                    """, arguments: key + [part, ability, day])
        case 3, 4, 5:
            try db.execute(
                sql: """
                    UPDATE workout_exercise SET state = 'done', completed_ms = 1, repetitions = ?, score = ?, day = ?
                    WHERE user_id = ? AND workout_id = ? AND number = ? AND attempt = ? AND state = 'shown'
                    """, arguments: [repetitions, score, day] + key)
        case 6:
            try db.execute(
                sql: "UPDATE workout_exercise SET state = 'skipped', completed_ms = 1 WHERE user_id = ? AND workout_id = ? AND number = ? AND attempt = ? AND state = 'shown'",
                arguments: key)
        case 7:
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO workout_exercise (user_id, workout_id, number, attempt, exercise_id, body_part, motor_ability, recommended, shown_ms, state,
                        completed_ms, repetitions, score, day)
                    VALUES (?, ?, ?, ?, 'e', ?, ?, 10, 0, ?, 1, ?, ?, ?)
                    """, arguments: key + [part, ability, random.next() % 4 == 0 ? "skipped" : "done", repetitions, score, day])
        case 8:
            try db.execute(sql: "DELETE FROM workout_exercise WHERE user_id = ? AND workout_id = ? AND state = 'shown'", arguments: [user, workout])
        default:
            if resets, random.next() % 4 == 0 { try db.execute(sql: "DELETE FROM workout_exercise WHERE user_id = ?", arguments: [user]) }
        }
    }

    @Test("the totals' columns follow the body parts and motor abilities in declared order")
    func columnsFollowTheEnums() {
        #expect(DayTotalsSchema.bodyParts == BodyPart.allCases.map(\.rawValue))
        #expect(DayTotalsSchema.motorAbilities == MotorAbility.allCases.map(\.rawValue))
    }

    @Test("after any mix of shows, completions (on any day), skips, syncs, workout ends and resets, the stored totals equal the exercises' own")
    func triggersKeepTheTotals() async throws {
        await propertyCheck(count: 60, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            let queue = Self.migratedQueue()
            try! queue.write { db in
                for step in 0..<120 {
                    try Self.randomWrite(db, &random)
                    guard step % 20 == 19 else { continue }
                    for user in Self.users {
                        #expect(try Self.stored(db, user: user) == Self.expected(db, user: user), "seed \(seed), step \(step), \(user)")
                    }
                }
                // Nothing is left behind for days without an exercise done or skipped.
                #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM exercise_day WHERE done = 0 AND skipped = 0") == 0)
                #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM workout_day WHERE done = 0") == 0)
            }
        }
    }

    @Test("a database with exercises from before the totals existed gets them when it migrates")
    func migrationFillsTheTotals() throws {
        let queue = try DatabaseQueue()
        let migrator = Self.migrator()
        try migrator.migrate(queue, upTo: "stats-2")
        var random = SplitMix64(seed: 7)
        // Without the triggers yet: rows of every kind.
        try queue.write { db in
            for _ in 0..<300 { try Self.randomWrite(db, &random, resets: false) }
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM workout_exercise WHERE state != 'shown'") ?? 0 > 20)
        }
        try migrator.migrate(queue)
        try queue.read { db in
            for user in Self.users {
                let stored = try Self.stored(db, user: user)
                #expect(stored == (try Self.expected(db, user: user)))
                #expect(!stored.isEmpty)
            }
        }
    }

    @Test("the statistics from the stored totals equal those from the exercises, for every period and day")
    func statisticsFromTotalsMatchRecords() throws {
        let queue = try DatabaseQueue()
        try Self.migrator().migrate(queue)
        var random = SplitMix64(seed: 11)
        try queue.write { db in
            for _ in 0..<400 { try Self.randomWrite(db, &random) }
        }
        try queue.read { db in
            for user in Self.users {
                let records = try Self.expected(db, user: user)
                for today in Self.days + [Self.days[3].adding(days: 20)] {
                    for period in StatsPeriod.allCases {
                        let from = period.previousRange(endingOn: today).lowerBound
                        let stored = try StatisticsOperations.days(db, user: user, from: from, through: today, workouts: true)
                        let fromTotals = PeriodStatistics(days: stored, period: period, today: today)
                        let fromExercises = PeriodStatistics(days: records, period: period, today: today)
                        #expect(fromTotals.performance == fromExercises.performance)
                        #expect(fromTotals.bodyPartShares == fromExercises.bodyPartShares)
                        #expect(fromTotals.motorAbilityShares == fromExercises.motorAbilityShares)
                        #expect(fromTotals.keyFacts.workouts == fromExercises.keyFacts.workouts)
                        #expect(fromTotals.keyFacts.totalScore == fromExercises.keyFacts.totalScore)
                        #expect(fromTotals.keyFacts.exercisesSkipped == fromExercises.keyFacts.exercisesSkipped)
                    }
                }
            }
        }
    }

    @Test("the key facts' current streak from the stored totals and the run counted before them equals the one from every exercise, across gaps, today and yesterday")
    func streakFromTheDatabaseMatchesRecords() async throws {
        let today = LocalDate(year: 2027, month: 3, day: 31)
        await propertyCheck(count: 40, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            let queue = Self.migratedQueue()
            // Training days over the 120 days to today: mostly runs, a gap now and then.
            var records: [ExerciseRecord] = []
            try! queue.write { db in
                for back in 0..<120 where random.next() % 9 != 0 {
                    let day = today.adding(days: -back)
                    let skipped = random.next() % 6 == 0
                    try db.execute(
                        sql: """
                            INSERT INTO workout_exercise (user_id, workout_id, number, attempt, exercise_id, body_part, motor_ability, recommended, shown_ms, state,
                                completed_ms, repetitions, score, day)
                            VALUES ('ann', ?, 1, 1, 'e', 'legs', 'speed', 10, 0, ?, 1, 12, 90, ?)
                            """, arguments: ["w\(back)", skipped ? "skipped" : "done", day.description])
                    if !skipped { try db.execute(sql: "INSERT INTO training_day (user_id, day) VALUES ('ann', ?)", arguments: [day.description]) }
                    records.append(
                        ExerciseRecord(
                            workoutID: "w\(back)", day: day, bodyPart: .legs, motorAbility: .speed, repetitions: 12, score: 90, skipped: skipped))
                }
            }
            try! queue.read { db in
                for period in StatsPeriod.allCases {
                    for asOf in [today, today.adding(days: -1), today.adding(days: -17)] {
                        let from = period.previousRange(endingOn: asOf).lowerBound
                        let days = try StatisticsOperations.days(db, user: "ann", from: from, through: asOf)
                        let earlier = EarlierStreak(first: from, length: try StatisticsOperations.streak(db, user: "ann", before: from, through: asOf))
                        let stored = PeriodStatistics(days: days, period: period, today: asOf, earlier: earlier).keyFacts
                        let expected = PeriodStatistics(records: records.filter { $0.day <= asOf }, period: period, today: asOf).keyFacts
                        #expect(stored == expected, "seed \(seed), \(period), as of \(asOf)")
                    }
                }
            }
        }
    }

    /// The runs of consecutive days in `days` (days after 2027-01-01), in order.
    static func runs(_ days: Set<Int>) -> [[String]] {
        var runs: [[String]] = []
        var current: (Int, Int)?
        let base = LocalDate(year: 2027, month: 1, day: 1)
        for day in days.sorted() {
            if let (first, last) = current, day == last + 1 {
                current = (first, day)
                continue
            }
            if let (first, last) = current { runs.append([base.adding(days: first).description, base.adding(days: last).description]) }
            current = (day, day)
        }
        if let (first, last) = current { runs.append([base.adding(days: first).description, base.adding(days: last).description]) }
        return runs
    }

    static func storedRuns(_ db: Database) throws -> [[String]] {
        try Row.fetchAll(db, sql: "SELECT first_day, last_day FROM training_run WHERE user_id = 'ann' ORDER BY first_day").map { [$0[0], $0[1]] }
    }

    @Test("training runs follow every training day added or removed, and the streak before a day is read from them")
    func trainingRunsFollowTheDays() async throws {
        let base = LocalDate(year: 2027, month: 1, day: 1)
        await propertyCheck(count: 60, input: Gen.uint64()) { seed in
            var random = SplitMix64(seed: seed)
            let queue = Self.migratedQueue()
            var days = Set<Int>()
            try! queue.write { db in
                for step in 0..<150 {
                    let day = Int(random.next() % 40)
                    switch random.next() % 20 {
                    case 0..<6:
                        try db.execute(sql: "DELETE FROM training_day WHERE user_id = 'ann' AND day = ?", arguments: [base.adding(days: day).description])
                        days.remove(day)
                    case 6:
                        try db.execute(sql: "DELETE FROM training_day WHERE user_id = 'ann'")
                        days.removeAll()
                    default:
                        try db.execute(sql: "INSERT OR IGNORE INTO training_day (user_id, day) VALUES ('ann', ?)", arguments: [base.adding(days: day).description])
                        days.insert(day)
                    }
                    // Another user's days never touch hers.
                    try db.execute(sql: "INSERT OR IGNORE INTO training_day (user_id, day) VALUES ('bob', ?)", arguments: [base.adding(days: day).description])
                    guard step % 10 == 9 else { continue }
                    #expect(try Self.storedRuns(db) == Self.runs(days), "seed \(seed), step \(step)")
                    for first in [0, 5, 17, 39, 41] {
                        var expected = 0
                        while days.contains(first - 1 - expected) { expected += 1 }
                        let through = base.adding(days: 45)
                        #expect(try StatisticsOperations.streak(db, user: "ann", before: base.adding(days: first), through: through) == expected)
                    }
                }
            }
        }
    }

    @Test("a database with training days from before the runs existed gets them when it migrates")
    func migrationMakesTheRuns() throws {
        let queue = try DatabaseQueue()
        let migrator = Self.migrator()
        try migrator.migrate(queue, upTo: "stats-2")
        let base = LocalDate(year: 2027, month: 1, day: 1)
        let days: Set<Int> = [0, 1, 2, 5, 7, 8, 20, 21, 22, 23, 30]
        try queue.write { db in
            for day in days {
                for user in ["ann", "bob"] {
                    try db.execute(sql: "INSERT INTO training_day (user_id, day) VALUES (?, ?)", arguments: [user, base.adding(days: day).description])
                }
            }
        }
        try migrator.migrate(queue)
        let stored = try queue.read { db in try Self.storedRuns(db) }
        #expect(stored == Self.runs(days))
        #expect(stored.count == 5)
    }
}

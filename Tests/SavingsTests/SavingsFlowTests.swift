import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import SavingsService

/// The savings service in process: its real socket and SQLite file, called as users with
/// test tokens. (The journey through the gateway with real auth: ``SavingsGatewayTests``.)
@Suite("Savings in process")
struct SavingsFlowTests {
    static let ann = TestCaller.user("user-ann", roles: [])
    static let bob = TestCaller.user("user-bob", roles: [])
    static let admin = TestCaller.user("admin-1", roles: ["admin"])

    static func with<T>(_ body: (InProcessService) async throws -> T) async throws -> T {
        try await InProcessService.with(SavingsService.definition, body)
    }

    @discardableResult
    static func ok(
        _ savings: InProcessService, _ op: String, _ data: JSONValue = [:], as caller: TestCaller, idem: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let reply = try await savings.call(op, data: data, as: caller, idem: idem)
        #expect(reply.ok, "\(op): \(reply.error?.code.rawValue ?? "") \(reply.error?.message ?? "") \(reply.error?.fields ?? [:])", sourceLocation: sourceLocation)
        return reply.data ?? .null
    }

    /// The error code and fields of a call that must fail.
    static func failure(_ savings: InProcessService, _ op: String, _ data: JSONValue, as caller: TestCaller) async throws -> (ErrorCode?, [String: String]) {
        let reply = try await savings.call(op, data: data, as: caller)
        #expect(!reply.ok, "\(op) should fail")
        return (reply.error?.code, reply.error?.fields ?? [:])
    }

    static func today() -> LocalDate { ZoneClock.utc.localDate(of: Date()) }
    static func rub(_ minor: Int64) -> JSONValue { ["minor": .integer(minor), "currency": "RUB"] }
    static func date(_ date: LocalDate) -> JSONValue { .string(date.description) }

    /// Ten weekly installments of 1,000 from today, in UTC.
    static func equalPlan(target: Int64 = 10_000, weeks: Int = 10, extra: [String: JSONValue] = [:]) -> JSONValue {
        var data: [String: JSONValue] = [
            "method": "equal", "target": rub(target), "startDate": date(today()), "deadline": date(today().adding(days: 7 * (weeks - 1))),
            "interval": "week", "timeZone": "UTC",
        ]
        data.merge(extra) { _, new in new }
        return .object(data)
    }

    /// Moves a plan `days` into the past, as if started then (the clock cannot be turned).
    static func backdate(_ savings: InProcessService, plan: String, days: Int) async throws {
        try await savings.runtime.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE plan SET start_date = date(start_date, ?), created_on = date(created_on, ?), deadline = date(deadline, ?) WHERE id = ?
                    """, arguments: ["-\(days) days", "-\(days) days", "-\(days) days", plan])
        }
    }

    static func minors(_ installments: JSONValue?) -> [Int64] {
        (installments?.arrayValue ?? []).compactMap { $0["amount"]?["minor"]?.integerValue }
    }

    @Test("methods: every algorithm presented in order, slides read by anyone, edited by admins only")
    func methods() async throws {
        try await Self.with { savings in
            let list = try await Self.ok(savings, "savings.methods.list", as: .anonymous)
            let ids = (list["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            #expect(ids == ["equal", "fifty_two_week", "fifty_two_week_reverse", "income_percent", "fixed_amount"])
            #expect(list["items"]?[0]?["needs"] == ["deadline"])
            let challenge = try await Self.ok(savings, "savings.methods.get", ["id": "fifty_two_week"], as: .anonymous)
            #expect((challenge["slides"]?.arrayValue?.count ?? 0) >= 3)

            let slides: JSONValue = [["title": "One", "text": "First"], ["title": "Two", "text": "Second"]]
            let (code, _) = try await Self.failure(savings, "savings.admin.methods.save", ["id": "equal", "slides": slides], as: Self.ann)
            #expect(code == .forbidden)
            let saved = try await Self.ok(savings, "savings.admin.methods.save", ["id": "equal", "title": "Even steps", "slides": slides], as: Self.admin)
            #expect(saved["title"] == "Even steps" && saved["slides"]?[1]?["text"] == "Second" && saved["slideCount"] == 2)
            let (unknownImage, fields) = try await Self.failure(
                savings, "savings.admin.methods.save", ["id": "equal", "slides": [["title": "A", "text": "B", "imageId": "img-nope"]]], as: Self.admin)
            #expect(unknownImage == .validationFailed && fields["slides[0].imageId"] != nil)
            // The failed save changed nothing.
            #expect(try await Self.ok(savings, "savings.methods.get", ["id": "equal"], as: .anonymous)["slideCount"] == 2)
            #expect(try await Self.failure(savings, "savings.methods.get", ["id": "double_or_nothing"], as: .anonymous).0 == .validationFailed)
        }
    }

    @Test("preview: exact installments for every method, without saving anything")
    func preview() async throws {
        try await Self.with { savings in
            let today = Self.today()
            let tenYears = try await Self.ok(
                savings, "savings.plans.preview",
                ["method": "equal", "target": Self.rub(1_000_000_00), "startDate": Self.date(today), "deadline": Self.date(today.adding(years: 10)), "interval": "week"],
                as: Self.ann)
            let amounts = Self.minors(tenYears["installments"])
            #expect(amounts.count == 522 && tenYears["count"] == 522)
            #expect(amounts.reduce(0, +) == 1_000_000_00 && tenYears["total"]?["minor"] == 1_000_000_00)
            #expect(tenYears["installments"]?[521]?["cumulative"]?["minor"] == 1_000_000_00)
            #expect(tenYears["installments"]?[0]?["date"] == Self.date(today))

            let challenge = try await Self.ok(
                savings, "savings.plans.preview", ["method": "fifty_two_week", "target": Self.rub(1_378), "startDate": Self.date(today), "interval": "week"],
                as: Self.ann)
            #expect(Self.minors(challenge["installments"]) == Array(1...52))
            let reverse = try await Self.ok(
                savings, "savings.plans.preview",
                ["method": "fifty_two_week_reverse", "target": Self.rub(1_378), "startDate": Self.date(today), "interval": "week"], as: Self.ann)
            #expect(Self.minors(reverse["installments"]) == Array((1...52).reversed()))

            let income = try await Self.ok(
                savings, "savings.plans.preview",
                ["method": "income_percent", "target": Self.rub(100_000), "startDate": Self.date(today), "interval": "month",
                 "params": ["income": Self.rub(150_000), "percent": 15]], as: Self.ann)
            // 22,500 a month: four full months and 10,000 in the fifth.
            #expect(Self.minors(income["installments"]) == [22_500, 22_500, 22_500, 22_500, 10_000])
            #expect(income["reachDate"] == Self.date(today.adding(months: 4)))
            let fixed = try await Self.ok(
                savings, "savings.plans.preview",
                ["method": "fixed_amount", "target": Self.rub(10_000), "startDate": Self.date(today), "interval": "two_weeks", "params": ["amount": Self.rub(3_000)]],
                as: Self.ann)
            #expect(Self.minors(fixed["installments"]) == [3_000, 3_000, 3_000, 1_000])
            #expect(fixed["reachDate"] == Self.date(today.adding(days: 42)))
            // Nothing was saved.
            #expect(try await Self.ok(savings, "savings.plans.list", as: Self.ann)["items"] == [])
            // Anonymous callers are refused.
            #expect(try await Self.failure(savings, "savings.plans.preview", Self.equalPlan(), as: .anonymous).0 == .unauthenticated)
        }
    }

    @Test("bad terms: validation_failed with the field and the reason, nothing saved")
    func badTerms() async throws {
        try await Self.with { savings in
            let today = Self.today()
            let cases: [(JSONValue, String)] = [
                (Self.equalPlan(extra: ["deadline": Self.date(today.adding(days: -1))]), "deadline"),
                (Self.equalPlan(extra: ["startDate": Self.date(today.adding(days: -3))]), "startDate"),
                (Self.equalPlan(target: 5), "target"),
                (Self.equalPlan(extra: ["deadline": .null]), "deadline"),
                (Self.equalPlan(extra: ["target": ["minor": 0, "currency": "RUB"]]), "target.minor"),
                (Self.equalPlan(extra: ["target": ["minor": -5, "currency": "RUB"]]), "target.minor"),
                (Self.equalPlan(extra: ["target": ["minor": 1_000_000_000_001, "currency": "RUB"]]), "target.minor"),
                (Self.equalPlan(extra: ["target": ["minor": 100, "currency": "XYZ"]]), "target.currency"),
                (Self.equalPlan(extra: ["startDate": "2026-02-30"]), "startDate"),
                (Self.equalPlan(extra: ["startDate": "tomorrow"]), "startDate"),
                (Self.equalPlan(extra: ["interval": "day"]), "interval"),
                (Self.equalPlan(extra: ["method": "lottery"]), "method"),
                (Self.equalPlan(extra: ["params": ["amount": Self.rub(100)]]), "params.amount"),
                (Self.equalPlan(extra: ["timeZone": "Mars/Olympus"]), "timeZone"),
                (Self.equalPlan(extra: ["colour": "red"]), "colour"),
                (["method": "income_percent", "target": Self.rub(1_000), "startDate": Self.date(today), "interval": "week",
                  "params": ["income": Self.rub(0), "percent": 10]], "params.income.minor"),
                (["method": "income_percent", "target": Self.rub(1_000), "startDate": Self.date(today), "interval": "week",
                  "params": ["income": Self.rub(5), "percent": 10]], "params.income"),
                (["method": "income_percent", "target": Self.rub(1_000), "startDate": Self.date(today), "interval": "week",
                  "params": ["income": Self.rub(500)]], "params.percent"),
                (["method": "fixed_amount", "target": Self.rub(1_000), "startDate": Self.date(today), "interval": "week",
                  "params": ["amount": ["minor": 100, "currency": "EUR"]]], "params.amount.currency"),
                (["method": "fixed_amount", "target": Self.rub(1_000), "startDate": Self.date(today), "interval": "week",
                  "deadline": Self.date(today.adding(days: 7)), "params": ["amount": Self.rub(100)]], "deadline"),
                (["method": "fixed_amount", "target": Self.rub(1_000_000_000_000), "startDate": Self.date(today), "interval": "week",
                  "params": ["amount": Self.rub(1)]], "params.amount"),
            ]
            for (data, field) in cases {
                for op in ["savings.plans.preview", "savings.plans.start"] {
                    let (code, fields) = try await Self.failure(savings, op, data, as: Self.ann)
                    #expect(code == .validationFailed, "\(op) \(data)")
                    #expect(fields[field] != nil, "\(op): expected a problem with \(field), got \(fields)")
                }
            }
            #expect(try await Self.ok(savings, "savings.plans.list", as: Self.ann)["items"] == [])
        }
    }

    @Test("the journey: start, a late, a small and a large deposit, the rest rebalanced, completed, in the history")
    func journey() async throws {
        try await Self.with { savings in
            let started = try await Self.ok(savings, "savings.plans.start", Self.equalPlan(extra: ["name": "Bike"]), as: Self.ann)
            let plan = try #require(started["id"]?.stringValue)
            #expect(started["state"] == "active" && started["name"] == "Bike" && started["installmentsLeft"] == 10)
            #expect(started["next"]?["amount"]?["minor"] == 1_000 && started["status"] == "on_track")
            // Three weeks on: nothing recorded yet.
            try await Self.backdate(savings, plan: plan, days: 21)
            let behind = try await Self.ok(savings, "savings.plans.get", ["planId": .string(plan)], as: Self.ann)
            #expect(behind["status"] == "behind" && behind["behind"]?["minor"] == 3_000 && behind["expected"]?["minor"] == 3_000)
            // What was missed is spread over the seven installments left.
            #expect(behind["installmentsLeft"] == 7 && Self.minors(behind["upcoming"]).reduce(0, +) == 10_000)

            let today = Self.today()
            // Late: week 0's installment, recorded three weeks after its date.
            try await Self.ok(savings, "savings.deposits.record", ["planId": .string(plan), "amount": Self.rub(1_000), "date": Self.date(today.adding(days: -21))], as: Self.ann)
            // Too small: half of week 1's.
            try await Self.ok(savings, "savings.deposits.record", ["planId": .string(plan), "amount": Self.rub(500), "date": Self.date(today.adding(days: -14))], as: Self.ann)
            // Too large: today's, with extra.
            let large = try await Self.ok(
                savings, "savings.deposits.record", ["planId": .string(plan), "amount": Self.rub(3_000), "date": Self.date(today)], as: Self.ann, idem: "dep-large")
            let rebalanced = try #require(large["plan"])
            #expect(rebalanced["saved"]?["minor"] == 4_500 && rebalanced["remaining"]?["minor"] == 5_500 && rebalanced["percent"] == 45)
            #expect(rebalanced["status"] == "on_track" && rebalanced["behind"]?["minor"] == 0)
            // Today's installment is covered: six left, exact, largest last.
            // The reply lists the next three; the plan, all that is left.
            #expect(Self.minors(rebalanced["upcoming"]) == [916, 916, 917])
            let full = try await Self.ok(savings, "savings.plans.get", ["planId": .string(plan)], as: Self.ann)
            #expect(Self.minors(full["upcoming"]) == [916, 916, 917, 917, 917, 917])
            #expect(rebalanced["reachDate"] == rebalanced["deadline"])
            // The same request again is recorded once.
            let retry = try await savings.call(
                "savings.deposits.record", data: ["planId": .string(plan), "amount": Self.rub(3_000), "date": Self.date(today)], as: Self.ann, idem: "dep-large")
            #expect(retry.data?["deposit"]?["id"] == large["deposit"]?["id"])
            let reused = try await savings.call(
                "savings.deposits.record", data: ["planId": .string(plan), "amount": Self.rub(3_001), "date": Self.date(today)], as: Self.ann, idem: "dep-large")
            #expect(reused.error?.code == .conflict)
            #expect(try await Self.ok(savings, "savings.plans.get", ["planId": .string(plan)], as: Self.ann)["deposits"] == 3)

            // The rest at once: completed early, out of the open list, in the history.
            let done = try await Self.ok(savings, "savings.deposits.record", ["planId": .string(plan), "amount": Self.rub(5_500), "date": Self.date(today)], as: Self.ann)
            #expect(done["plan"]?["state"] == "completed" && done["plan"]?["percent"] == 100 && done["plan"]?["status"] == "completed")
            #expect(done["plan"]?["next"] == .null && done["plan"]?["closedAt"] != .null)
            #expect(try await Self.ok(savings, "savings.plans.list", as: Self.ann)["items"] == [])
            let history = try await Self.ok(savings, "savings.history", as: Self.ann)
            #expect(history["items"]?[0]?["id"] == .string(plan) && history["items"]?[0]?["saved"]?["minor"] == 10_000)
            let deposits = try await Self.ok(savings, "savings.deposits.list", ["planId": .string(plan)], as: Self.ann)
            #expect(deposits["items"]?.arrayValue?.compactMap { $0["date"]?.stringValue }.first == today.description)
            #expect(deposits["items"]?.arrayValue?.count == 4)
            // A completed plan takes no more deposits.
            let (closed, _) = try await Self.failure(
                savings, "savings.deposits.record", ["planId": .string(plan), "amount": Self.rub(1), "date": Self.date(today)], as: Self.ann)
            #expect(closed == .conflict)

            // Undoing the last deposit opens it again; the events tell the story.
            let last = try #require(done["deposit"]?["id"])
            let undone = try await Self.ok(savings, "savings.deposits.undo", ["depositId": last], as: Self.ann)
            #expect(undone["plan"]?["state"] == "active" && undone["plan"]?["saved"]?["minor"] == 4_500 && undone["plan"]?["closedAt"] == .null)
            let events = try await savings.runtime.pool.read { db in try String.fetchAll(db, sql: "SELECT type FROM platform_event ORDER BY seq") }
            #expect(events == [
                "savings.plan.started", "savings.deposit.recorded", "savings.deposit.recorded", "savings.deposit.recorded", "savings.deposit.recorded",
                "savings.plan.completed", "savings.deposit.undone", "savings.plan.reopened",
            ])
        }
    }

    @Test("a deadline that can no longer be kept: the plan says so, offers the nearest date, and moving it there rebalances")
    func unreachable() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(weeks: 3), as: Self.ann)["id"]?.stringValue)
            try await Self.backdate(savings, plan: plan, days: 15)
            let view = try await Self.ok(savings, "savings.plans.get", ["planId": .string(plan)], as: Self.ann)
            // Started 15 days ago with its last installment 14 days after the start: past.
            let nearest = try #require(view["nearestDeadline"]?.stringValue)
            #expect(view["status"] == "unreachable" && view["onTrack"] == false && view["next"] == .null && view["installmentsLeft"] == 0)
            #expect(nearest == Self.today().adding(days: 6).description)
            let moved = try await Self.ok(savings, "savings.plans.update", ["planId": .string(plan), "deadline": .string(nearest)], as: Self.ann)
            #expect(moved["status"] == "behind" && Self.minors(moved["upcoming"]) == [10_000] && moved["reachDate"] == .string(nearest))
            let (past, fields) = try await Self.failure(
                savings, "savings.plans.update", ["planId": .string(plan), "deadline": Self.date(Self.today().adding(days: -1))], as: Self.ann)
            #expect(past == .validationFailed && fields["deadline"] != nil)
        }
    }

    @Test("an overpaid plan: sums beyond one amount's range are answered within the schemas; expected is what the plan expected, never what was saved")
    func overpaid() async throws {
        try await Self.with { savings in
            let target = Self.rub(1_000_000_000_000)
            let plan = try #require(
                try await Self.ok(
                    savings, "savings.plans.start",
                    ["method": "equal", "target": target, "startDate": Self.date(Self.today()), "deadline": Self.date(Self.today().adding(days: 70)), "interval": "week", "timeZone": "UTC"],
                    as: Self.ann)["id"])
            try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(999_999_999_999), "date": Self.date(Self.today())], as: Self.ann)
            // The reply of each deposit, the plan and the statistics are checked against their schemas by the test service.
            let done = try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": target, "date": Self.date(Self.today())], as: Self.ann)
            #expect(done["plan"]?["status"] == "completed" && done["plan"]?["saved"]?["minor"] == 1_999_999_999_999)
            #expect(done["plan"]?["expected"]?["minor"] == 0)
            let stats = try await Self.ok(savings, "savings.stats", as: Self.ann)
            #expect(stats["totals"]?[0]?["savedAllTime"]?["minor"] == 1_999_999_999_999)
        }
    }

    @Test("pause, resume, cancel: the lifecycle's conflicts, reminders off while paused, cancelled plans in the history")
    func lifecycle() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann)["id"])
            func timers() async throws -> Int {
                try await savings.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_timer WHERE kind = 'savings.installment'") ?? 0 }
            }
            #expect(try await timers() == 1)
            #expect(try await Self.ok(savings, "savings.plans.pause", ["planId": plan], as: Self.ann)["state"] == "paused")
            #expect(try await timers() == 0)
            #expect(try await Self.failure(savings, "savings.plans.pause", ["planId": plan], as: Self.ann).0 == .conflict)
            // Deposits still count while paused.
            try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(700), "date": Self.date(Self.today())], as: Self.ann)
            #expect(try await Self.ok(savings, "savings.plans.resume", ["planId": plan], as: Self.ann)["saved"]?["minor"] == 700)
            #expect(try await timers() == 1)
            #expect(try await Self.failure(savings, "savings.plans.resume", ["planId": plan], as: Self.ann).0 == .conflict)
            let off = try await Self.ok(savings, "savings.plans.update", ["planId": plan, "reminders": false, "name": "Sofa"], as: Self.ann)
            #expect(off["reminders"]?["enabled"] == false && off["name"] == "Sofa")
            #expect(try await timers() == 0)
            let cancelled = try await Self.ok(savings, "savings.plans.cancel", ["planId": plan], as: Self.ann)
            #expect(cancelled["state"] == "cancelled" && cancelled["status"] == "cancelled")
            for op in ["savings.plans.cancel", "savings.plans.pause", "savings.plans.resume"] {
                let (code, _) = try await Self.failure(savings, op, ["planId": plan], as: Self.ann)
                #expect(code == .conflict, "\(op)")
            }
            let deposits = try await Self.ok(savings, "savings.deposits.list", as: Self.ann)
            let (undo, _) = try await Self.failure(savings, "savings.deposits.undo", ["depositId": deposits["items"]![0]!["id"]!], as: Self.ann)
            #expect(undo == .conflict)
            #expect(try await Self.ok(savings, "savings.history", as: Self.ann)["items"]?[0]?["state"] == "cancelled")
            #expect(try await Self.ok(savings, "savings.plans.delete", ["planId": plan], as: Self.ann)["deleted"] == true)
            #expect(try await Self.ok(savings, "savings.history", as: Self.ann)["items"] == [])
            #expect(try await Self.ok(savings, "savings.deposits.list", as: Self.ann)["items"] == [])
        }
    }

    @Test("other users' plans and deposits do not exist for the caller")
    func othersIDs() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann)["id"])
            let deposit = try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(1_000), "date": Self.date(Self.today())], as: Self.ann)
            let depositID = try #require(deposit["deposit"]?["id"])
            let attempts: [(String, JSONValue)] = [
                ("savings.plans.get", ["planId": plan]), ("savings.plans.schedule", ["planId": plan]), ("savings.plans.pause", ["planId": plan]),
                ("savings.plans.cancel", ["planId": plan]), ("savings.plans.delete", ["planId": plan]), ("savings.plans.update", ["planId": plan, "name": "Mine"]),
                ("savings.deposits.record", ["planId": plan, "amount": Self.rub(1), "date": Self.date(Self.today())]),
                ("savings.deposits.undo", ["depositId": depositID]), ("savings.deposits.list", ["planId": plan]),
            ]
            for (op, data) in attempts {
                let (code, _) = try await Self.failure(savings, op, data, as: Self.bob)
                #expect(code == .notFound, "\(op)")
            }
            #expect(try await Self.ok(savings, "savings.deposits.list", as: Self.bob)["items"] == [])
            #expect(try await Self.ok(savings, "savings.stats", as: Self.bob)["plans"] == [])
            // Ann's plan is untouched.
            let mine = try await Self.ok(savings, "savings.plans.get", ["planId": plan], as: Self.ann)
            #expect(mine["state"] == "active" && mine["saved"]?["minor"] == 1_000 && mine["name"] == "Equal installments")
        }
    }

    @Test("deposits: the plan's currency, dates from its start to today, positive amounts within range")
    func badDeposits() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann)["id"])
            let today = Self.today()
            let cases: [(JSONValue, String)] = [
                (["planId": plan, "amount": ["minor": 100, "currency": "EUR"], "date": Self.date(today)], "amount.currency"),
                (["planId": plan, "amount": Self.rub(0), "date": Self.date(today)], "amount.minor"),
                (["planId": plan, "amount": Self.rub(-100), "date": Self.date(today)], "amount.minor"),
                (["planId": plan, "amount": Self.rub(1_000_000_000_001), "date": Self.date(today)], "amount.minor"),
                (["planId": plan, "amount": ["minor": 100, "currency": "ABC"], "date": Self.date(today)], "amount.currency"),
                (["planId": plan, "amount": ["minor": .number(1.5), "currency": "RUB"], "date": Self.date(today)], "amount.minor"),
                (["planId": plan, "amount": Self.rub(100), "date": Self.date(today.adding(days: 3))], "date"),
                (["planId": plan, "amount": Self.rub(100), "date": Self.date(today.adding(days: -3))], "date"),
                (["planId": plan, "amount": Self.rub(100), "date": "2026-13-01"], "date"),
                (["planId": plan, "amount": Self.rub(100)], "date"),
            ]
            for (data, field) in cases {
                let (code, fields) = try await Self.failure(savings, "savings.deposits.record", data, as: Self.ann)
                #expect(code == .validationFailed && fields[field] != nil, "\(data): \(fields)")
            }
            let view = try await Self.ok(savings, "savings.plans.get", ["planId": plan], as: Self.ann)
            #expect(view["saved"]?["minor"] == 0 && view["deposits"] == 0)
        }
    }

    @Test("racing deposits on one plan all count, and its saved amount is their sum")
    func racingDeposits() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(target: 1_000_000), as: Self.ann)["id"])
            let date = Self.date(Self.today())
            // Each answer is the plan just after its own deposit (worked out before the write
            // transaction, and again in it when another deposit came first): the saved
            // amounts answered are all different, and each is one deposit more than another.
            let answered = try await withThrowingTaskGroup(of: (Int64, Int64, Int64).self) { group in
                for index in 1...40 {
                    group.addTask {
                        let reply = try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(Int64(index)), "date": date], as: Self.ann)
                        return (Int64(index), reply["plan"]?["saved"]?["minor"]?.integerValue ?? -1, reply["plan"]?["deposits"]?.integerValue ?? -1)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let ordered = answered.sorted { $0.1 < $1.1 }
            #expect(ordered.map(\.2) == Array(1...40).map(Int64.init))
            #expect(zip([(Int64(0), Int64(0), Int64(0))] + ordered, ordered).allSatisfy { earlier, later in later.1 - earlier.1 == later.0 })
            let view = try await Self.ok(savings, "savings.plans.get", ["planId": plan], as: Self.ann)
            #expect(view["saved"]?["minor"] == .integer(Int64((1...40).reduce(0, +))) && view["deposits"] == 40)
            let stored = try await savings.runtime.pool.read { db in try Int64.fetchOne(db, sql: "SELECT SUM(amount_minor) FROM deposit") }
            #expect(stored == 820)
        }
    }

    @Test("deposits racing undos, pauses and resumes on one plan: the plan always holds the sum and count of its deposits")
    func depositsRacingOtherChanges() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(target: 1_000_000), as: Self.ann)["id"])
            let date = Self.date(Self.today())
            var first: [JSONValue] = []
            for index in 1...6 {
                let reply = try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(Int64(index)), "date": date], as: Self.ann)
                first.append(try #require(reply["deposit"]?["id"]))
            }
            let firstDeposits = first
            // Deposits worked out against the plan as the last deposit left it meet undos,
            // pauses and resumes that change it in between: each is refused or recorded
            // whole, never against a stale plan.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...30 {
                    group.addTask {
                        _ = try await savings.call(
                            "savings.deposits.record", data: ["planId": plan, "amount": Self.rub(Int64(100 + index)), "date": date], as: Self.ann)
                    }
                }
                for deposit in firstDeposits {
                    group.addTask { _ = try await savings.call("savings.deposits.undo", data: ["depositId": deposit], as: Self.ann) }
                }
                for op in ["savings.plans.pause", "savings.plans.resume", "savings.plans.pause", "savings.plans.resume"] {
                    group.addTask { _ = try await savings.call(op, data: ["planId": plan], as: Self.ann) }
                }
                try await group.waitForAll()
            }
            let view = try await Self.ok(savings, "savings.plans.get", ["planId": plan], as: Self.ann)
            let stored = try await savings.runtime.pool.read { db in
                try Row.fetchOne(db, sql: "SELECT COALESCE(SUM(amount_minor), 0) AS total, COUNT(*) AS count FROM deposit WHERE plan_id = ?", arguments: [plan.stringValue])
            }
            let total: Int64 = try #require(stored)["total"], count: Int64 = try #require(stored)["count"]
            #expect(view["saved"]?["minor"] == .integer(total) && view["deposits"] == .integer(count), "\(view)")
            // Every undo found its deposit: what is left is the racing deposits that were recorded.
            #expect(count <= 30 && total >= count * 101)
            // One more deposit after the dust settles answers the plan as it is.
            if view["state"] == "active" {
                let last = try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(1), "date": date], as: Self.ann)
                #expect(last["plan"]?["saved"]?["minor"] == .integer(total + 1) && last["plan"]?["deposits"] == .integer(count + 1))
            }
        }
    }

    @Test("statistics: each open plan's pace and the totals per currency")
    func stats() async throws {
        try await Self.with { savings in
            let rub = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann)["id"])
            let eur = try #require(
                try await Self.ok(
                    savings, "savings.plans.start",
                    ["method": "fixed_amount", "target": ["minor": 50_000, "currency": "EUR"], "startDate": Self.date(Self.today()), "interval": "month",
                     "params": ["amount": ["minor": 10_000, "currency": "EUR"]]], as: Self.ann)["id"])
            try await Self.ok(savings, "savings.deposits.record", ["planId": rub, "amount": Self.rub(2_500), "date": Self.date(Self.today())], as: Self.ann)
            try await Self.ok(savings, "savings.deposits.record", ["planId": eur, "amount": ["minor": 10_000, "currency": "EUR"], "date": Self.date(Self.today())], as: Self.ann)
            let stats = try await Self.ok(savings, "savings.stats", as: Self.ann)
            #expect(stats["plans"]?.arrayValue?.count == 2)
            #expect(stats["totals"] == [
                ["currency": "EUR", "plans": 1, "target": ["minor": 50_000, "currency": "EUR"], "saved": ["minor": 10_000, "currency": "EUR"],
                 "remaining": ["minor": 40_000, "currency": "EUR"], "savedAllTime": ["minor": 10_000, "currency": "EUR"]],
                ["currency": "RUB", "plans": 1, "target": Self.rub(10_000), "saved": Self.rub(2_500), "remaining": Self.rub(7_500), "savedAllTime": Self.rub(2_500)],
            ])
            let rubPlan = try #require(stats["plans"]?.arrayValue?.first { $0["id"] == rub })
            #expect(rubPlan["percent"] == 25 && rubPlan["onTrack"] == true && rubPlan["next"]?["amount"]?["minor"] == 833)
        }
    }

    @Test("installment reminders: a timer per plan at the user's hour in their zone; firing publishes today's installment and sets the next")
    func reminders() async throws {
        try await Self.with { savings in
            let zone = "Asia/Tokyo"
            let clock = try #require(ZoneClock(identifier: zone))
            let today = clock.localDate(of: Date())
            let started = try await Self.ok(
                savings, "savings.plans.start",
                ["method": "equal", "target": Self.rub(3_000), "startDate": Self.date(today), "deadline": Self.date(today.adding(days: 14)), "interval": "week",
                 "timeZone": .string(zone), "reminderTime": "00:00"], as: Self.ann)
            let plan = try #require(started["id"]?.stringValue)
            // Today's 00:00 has passed: the first reminder is next week's, at midnight Tokyo time.
            let due = try await savings.runtime.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT due_ms FROM platform_timer WHERE kind = 'savings.installment' AND key = ?", arguments: [plan])
            }
            let nextWeek = try #require(clock.instant(today.adding(days: 7), .midnight))
            #expect(due == Int64(nextWeek.timeIntervalSince1970 * 1_000))
            // Fire it now (as if today's reminder were due): today's installment is published, the next one set.
            try await savings.runtime.pool.write { db in
                try DurableTimers.schedule(db, kind: InstallmentReminders.timerKind, at: Date(), key: plan)
            }
            func published() async throws -> [String] {
                try await savings.runtime.pool.read { db in
                    try String.fetchAll(db, sql: "SELECT data FROM platform_event WHERE type = 'savings.installment.due'")
                }
            }
            #expect(try await Poll.until(timeout: .seconds(5), interval: .milliseconds(25)) { try await !published().isEmpty })
            let event = try JSONParser.parse(Data(try #require(try await published().first).utf8))
            #expect(event["planId"] == .string(plan) && event["userId"] == "user-ann" && event["date"] == Self.date(today))
            #expect(event["amount"] == Self.rub(1_000) && event["timeZone"] == .string(zone))
            let rearmed = try await savings.runtime.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT due_ms FROM platform_timer WHERE kind = 'savings.installment' AND key = ?", arguments: [plan])
            }
            #expect(rearmed == Int64(nextWeek.timeIntervalSince1970 * 1_000))
            // Today's deposit moves nothing; the reminder of next week's amount follows the rebalance.
            try await Self.ok(savings, "savings.deposits.record", ["planId": .string(plan), "amount": Self.rub(2_000), "date": Self.date(today)], as: Self.ann)
            #expect(try await published().count == 1)
        }
    }

    @Test("a deleted account's plans, deposits, reminders and idempotency records go; its events keep no id")
    func deletion() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann)["id"])
            try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(1_000), "date": Self.date(Self.today())], as: Self.ann, idem: "d1")
            try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.bob)
            // The plan as its deposit left it is kept in memory for the next deposit, until the account goes.
            #expect(LastWrittenPlans.shared.plan(try #require(plan.stringValue), of: "user-ann")?.saved == 1_000)
            try await savings.runtime.pool.write { db in try UserDeletion.remove(db, user: "user-ann", at: Date()) }
            #expect(LastWrittenPlans.shared.plan(try #require(plan.stringValue), of: "user-ann") == nil)
            let left = try await savings.runtime.pool.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM plan WHERE user_id = 'user-ann'"), try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM deposit"),
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_timer"),
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_event WHERE data LIKE '%user-ann%'"),
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM plan WHERE user_id = 'user-bob'")
                )
            }
            #expect(left.0 == 0 && left.1 == 0 && left.2 == 1 && left.3 == 0 && left.4 == 1)
        }
    }

    // MARK: What an over-the-wire attack found

    @Test("undoing a completing deposit reopens the plan as it was (paused stays paused), within the open plans' limit")
    func undoReopening() async throws {
        try await Self.with { savings in
            let plan = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann)["id"])
            try await Self.ok(savings, "savings.plans.pause", ["planId": plan], as: Self.ann)
            let done = try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(10_000), "date": Self.date(Self.today())], as: Self.ann)
            #expect(done["plan"]?["state"] == "completed")
            let undone = try await Self.ok(savings, "savings.deposits.undo", ["depositId": done["deposit"]!["id"]!], as: Self.ann)
            #expect(undone["plan"]?["state"] == "paused" && undone["plan"]?["closedAt"] == .null)

            // A completed plan does not reopen past the limit of open plans.
            let again = try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(10_000), "date": Self.date(Self.today())], as: Self.ann)
            for _ in 0..<PlanOperations.maximumOpenPlans { try await Self.ok(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann) }
            #expect(try await Self.failure(savings, "savings.plans.start", Self.equalPlan(), as: Self.ann).0 == .conflict)
            let (code, _) = try await Self.failure(savings, "savings.deposits.undo", ["depositId": again["deposit"]!["id"]!], as: Self.ann)
            #expect(code == .conflict)
            #expect(try await Self.ok(savings, "savings.plans.get", ["planId": plan], as: Self.ann)["state"] == "completed")
            #expect(try await Self.ok(savings, "savings.plans.list", as: Self.ann)["items"]?.arrayValue?.count == PlanOperations.maximumOpenPlans)
        }
    }

    @Test("dates: a start more than ten years ahead is refused; deposits are not dated after today in the plan's zone")
    func dateBounds() async throws {
        try await Self.with { savings in
            let far = Self.equalPlan(extra: ["startDate": Self.date(Self.today().adding(years: 11)), "deadline": Self.date(Self.today().adding(years: 12))])
            #expect(try await Self.failure(savings, "savings.plans.preview", far, as: Self.ann).1["startDate"] != nil)
            let lateZone = "Etc/GMT+12"
            let clock = try #require(ZoneClock(identifier: lateZone))
            let today = clock.localDate(of: Date())
            let plan = try #require(
                try await Self.ok(
                    savings, "savings.plans.start",
                    ["method": "equal", "target": Self.rub(1_000), "startDate": Self.date(today), "deadline": Self.date(today.adding(days: 30)), "interval": "week",
                     "timeZone": .string(lateZone)], as: Self.ann)["id"])
            let (code, fields) = try await Self.failure(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(10), "date": Self.date(today.adding(days: 1))], as: Self.ann)
            #expect(code == .validationFailed && fields["date"] != nil)
            try await Self.ok(savings, "savings.deposits.record", ["planId": plan, "amount": Self.rub(10), "date": Self.date(today)], as: Self.ann)
        }
    }

    @Test("the profile's zone is a new plan's default, and clearing it goes back to UTC")
    func profileZone() async throws {
        try await Self.with { savings in
            func profile(_ zone: JSONValue) async throws {
                try await savings.runtime.pool.write { db in
                    try UserDeletion.subscription.apply(
                        db, Event(source: "auth", seq: 1, type: "auth.user.profile_changed", at: Instant.format(Date()), data: ["userId": "user-ann", "timeZone": zone]))
                }
            }
            try await profile("Asia/Tokyo")
            let tokyo = ZoneClock(identifier: "Asia/Tokyo")!.localDate(of: Date())
            let plan = try await Self.ok(
                savings, "savings.plans.start",
                ["method": "equal", "target": Self.rub(1_000), "startDate": Self.date(tokyo), "deadline": Self.date(tokyo.adding(days: 30)), "interval": "week"], as: Self.ann)
            #expect(plan["reminders"]?["timeZone"] == "Asia/Tokyo")
            try await profile(.null)
            let utc = try await Self.ok(savings, "savings.plans.start", Self.equalPlan(extra: [:]).removingTimeZone, as: Self.ann)
            #expect(utc["reminders"]?["timeZone"] == "UTC")
        }
    }

    @Test("a preview without timeZone reads today in the profile's zone, one with it in the zone given")
    func previewZone() async throws {
        try await Self.with { savings in
            // A zone whose date differs from UTC's now: behind before 10:00 UTC, ahead after.
            let zone = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date()).hour! < 10
                ? "Pacific/Pago_Pago" : "Pacific/Kiritimati"
            try await savings.runtime.pool.write { db in
                try UserDeletion.subscription.apply(
                    db, Event(source: "auth", seq: 1, type: "auth.user.profile_changed", at: Instant.format(Date()), data: ["userId": "user-ann", "timeZone": .string(zone)]))
            }
            let there = ZoneClock(identifier: zone)!.localDate(of: Date()), utc = Self.today()
            // Starting on the earlier of the two days is "in the past" only where the date is later.
            let terms: JSONValue = ["method": "equal", "target": Self.rub(1_000), "startDate": Self.date(min(there, utc)), "deadline": Self.date(max(there, utc).adding(days: 30)), "interval": "week"]
            func accepted(_ data: JSONValue) async throws -> Bool { try await savings.call("savings.plans.preview", data: data, as: Self.ann).ok }
            let inProfileZone = try await accepted(terms)
            #expect(inProfileZone == (there <= utc))
            #expect(try await accepted(terms.adding(["timeZone": .string(zone)])) == inProfileZone)
            #expect(try await accepted(terms.adding(["timeZone": "UTC"])) != inProfileZone)
        }
    }

    @Test("moving a deadline is judged by what remains (a part paid on the last date leaves the rest due that day); closed plans refuse changes first; an update that changes nothing writes nothing")
    func deadlineChanges() async throws {
        try await Self.with { savings in
            let today = Self.today()
            let fixed = try #require(
                try await Self.ok(
                    savings, "savings.plans.start",
                    ["method": "fixed_amount", "target": Self.rub(1_000), "startDate": Self.date(today), "interval": "week", "timeZone": "UTC", "params": ["amount": Self.rub(100)]],
                    as: Self.ann)["id"])
            try await Self.ok(savings, "savings.deposits.record", ["planId": fixed, "amount": Self.rub(950), "date": Self.date(today)], as: Self.ann)
            let sooner = try await Self.ok(savings, "savings.plans.update", ["planId": fixed, "deadline": Self.date(today.adding(days: 7))], as: Self.ann)
            #expect(Self.minors(sooner["upcoming"]) == [50] && sooner["deadline"] == Self.date(today.adding(days: 7)))
            // Three days on: no installment date is left after today's, and today's was paid in
            // part: the rest is still due today, so the plan can keep that deadline.
            let soonest = try await Self.ok(savings, "savings.plans.update", ["planId": fixed, "deadline": Self.date(today.adding(days: 3))], as: Self.ann)
            #expect(soonest["status"] == "on_track" && soonest["next"]?["date"] == Self.date(today) && Self.minors(soonest["upcoming"]) == [50])

            let small = try #require(try await Self.ok(savings, "savings.plans.start", Self.equalPlan(target: 12, weeks: 12), as: Self.ann)["id"])
            let longer = try await Self.ok(savings, "savings.plans.update", ["planId": small, "deadline": Self.date(today.adding(days: 7 * 20))], as: Self.ann)
            #expect(Self.minors(longer["upcoming"]).reduce(0, +) == 12 && longer["upcoming"]?.arrayValue?.count == 12)

            let events = { try await savings.runtime.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_event WHERE type = 'savings.plan.changed'") ?? 0 } }
            let before = try await events()
            let same = try await Self.ok(savings, "savings.plans.update", ["planId": small, "name": "Equal installments", "reminders": true], as: Self.ann)
            let after = try await events()
            #expect(same["updatedAt"] == longer["updatedAt"] && after == before)

            try await Self.ok(savings, "savings.plans.cancel", ["planId": small], as: Self.ann)
            let (closed, _) = try await Self.failure(savings, "savings.plans.update", ["planId": small, "deadline": "2020-01-01"], as: Self.ann)
            #expect(closed == .conflict)
        }
    }
}


extension JSONValue {
    /// The same object with `fields` set.
    fileprivate func adding(_ fields: [String: JSONValue]) -> JSONValue {
        guard var object = objectValue else { return self }
        for (key, value) in fields { object[key] = value }
        return .object(object)
    }

    /// The same request without its `timeZone` (the profile's, else UTC, applies).
    fileprivate var removingTimeZone: JSONValue {
        guard var object = objectValue else { return self }
        object["timeZone"] = nil
        return .object(object)
    }
}

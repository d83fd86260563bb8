import Foundation
import GRDB
import Platform

/// One installment on the wire: `{date, amount, cumulative}`, amounts as Money.
struct InstallmentView: Codable, Sendable, JSONWritable {
    var date: LocalDate
    var amount: Money
    var cumulative: Money

    init(_ installment: Installment, _ currency: Currency) {
        date = installment.date
        amount = Money(minor: installment.amount, currency: currency)
        cumulative = Money(minor: installment.cumulative, currency: currency)
    }

    func writeJSON(to output: inout [UInt8]) {
        var object = JSONObjectWriter(capacity: 120)
        object.field("amount", amount)
        object.field("cumulative", cumulative)
        object.field("date", date.description)
        object.finish(into: &output)
    }

    static let schema = JSONSchema.object(
        ["date": .string(format: .date), "amount": Money.schema, "cumulative": Money.schema], required: ["date", "amount", "cumulative"])

    static func writeArray(_ installments: [Installment], _ currency: Currency, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + installments.count * 110)
        output.append(UInt8(ascii: "["))
        for (index, installment) in installments.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            InstallmentView(installment, currency).writeJSON(to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }
}

/// A schedule on the wire: its installments, how many, their total and the date the
/// target is reached (the last installment's). Written straight to bytes: a century of
/// weeks is 5,300 installments.
struct ScheduleView: Encodable, Sendable, JSONWritable {
    var installments: [Installment]
    var currency: Currency

    private enum CodingKeys: String, CodingKey { case count, installments, reachDate, total }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(installments.count, forKey: .count)
        try container.encode(installments.map { InstallmentView($0, currency) }, forKey: .installments)
        try container.encode(installments.last?.date, forKey: .reachDate)
        try container.encode(Money(minor: installments.last?.cumulative ?? 0, currency: currency), forKey: .total)
    }

    func writeJSON(to output: inout [UInt8]) {
        var list: [UInt8] = []
        InstallmentView.writeArray(installments, currency, to: &list)
        var object = JSONObjectWriter(capacity: 80)
        object.field("count", Int64(installments.count))
        object.field("installments", json: list)
        object.field("reachDate", installments.last?.date.description)
        object.field("total", Money(minor: installments.last?.cumulative ?? 0, currency: currency))
        object.finish(into: &output)
    }

    static let schema = JSONSchema.object(
        [
            "installments": .array(of: InstallmentView.schema, maxItems: SavingsSchedule.maximumInstallments), "count": .integer(minimum: 0),
            "reachDate": JSONSchema.string(format: .date).nullable().described("the last installment's date: when the target is reached"),
            "total": Money.schema,
        ], required: ["installments", "count", "reachDate", "total"])
}

/// Plans and deposits as the app shows them.
enum PlanViews {
    /// How many upcoming installments a plan's view lists (the whole rest: savings.plans.schedule).
    static let upcomingShown = 12

    static func money(_ minor: Int64, _ currency: Currency) -> JSONValue { Money(minor: minor, currency: currency).json }

    static func installment(_ installment: Installment, _ currency: Currency) -> JSONValue {
        ["date": .string(installment.date.description), "amount": money(installment.amount, currency), "cumulative": money(installment.cumulative, currency)]
    }

    /// The plan with where it stands on `now`: saved and remaining, percent, pace (on track
    /// or behind by how much), the rebalanced schedule's next installments and reach date,
    /// or, when the deadline can no longer be kept, the nearest feasible one.
    static func plan(_ plan: PlanRow, at now: Date, upcoming: Int = upcomingShown) -> JSONValue {
        let currency = plan.currency
        let today = plan.today(at: now)
        let remaining = max(0, plan.terms.target - plan.saved)
        var view: [String: JSONValue] = [
            "id": .string(plan.id), "name": .string(plan.name), "method": .string(plan.terms.method.rawValue),
            "interval": .string(plan.terms.interval.rawValue), "target": money(plan.terms.target, currency),
            "startDate": .string(plan.terms.start.description), "deadline": plan.terms.deadline.map { .string($0.description) } ?? .null,
            "params": params(plan.terms, currency), "state": .string(plan.state.rawValue), "saved": money(plan.saved, currency),
            "remaining": money(remaining, currency), "deposits": .integer(Int64(plan.deposits)),
            "lastDepositDate": plan.lastDeposit.map { .string($0.description) } ?? .null,
            "reminders": ["enabled": .bool(plan.reminders), "time": .string(plan.reminderTime.description), "timeZone": .string(plan.timeZone)],
            "createdAt": .string(plan.createdAt), "updatedAt": .string(plan.updatedAt), "closedAt": plan.closedAt.map(JSONValue.string) ?? .null,
        ]
        let pace = PlanPace(planned: plan.planned, target: plan.terms.target, saved: plan.saved, today: today)
        view["percent"] = .integer(Int64(pace.percent))
        var schedule: [Installment] = []
        var status = "completed"
        var nearestDeadline: JSONValue = .null
        if plan.state.isOpen {
            switch plan.outcome(on: today) {
            case .completed: status = "completed"
            case .onSchedule(let installments):
                schedule = installments
                status = pace.onTrack ? "on_track" : "behind"
            case .unreachable(_, let nearest):
                status = "unreachable"
                nearestDeadline = .string(nearest.description)
            }
        } else if plan.state == .cancelled {
            status = "cancelled"
        }
        let open = plan.state.isOpen
        view["status"] = .string(status)
        view["onTrack"] = .bool(!open || pace.onTrack)
        view["expected"] = money(open ? pace.expected : plan.saved, currency)
        view["behind"] = money(open ? pace.behind : 0, currency)
        view["nearestDeadline"] = nearestDeadline
        view["next"] = schedule.first.map { installment($0, currency) } ?? .null
        view["reachDate"] = schedule.last.map { .string($0.date.description) } ?? .null
        view["installmentsLeft"] = .integer(Int64(schedule.count))
        view["upcoming"] = .array(schedule.prefix(upcoming).map { installment($0, currency) })
        return .object(view)
    }

    static func params(_ terms: PlanTerms, _ currency: Currency) -> JSONValue {
        var params: [String: JSONValue] = [:]
        if let income = terms.income { params["income"] = money(income, currency) }
        if let percent = terms.percent { params["percent"] = .integer(Int64(percent)) }
        if let amount = terms.amount { params["amount"] = money(amount, currency) }
        return .object(params)
    }

    static func deposit(_ deposit: DepositRow, _ currency: Currency) -> JSONValue {
        [
            "id": .string(deposit.id), "planId": .string(deposit.planID), "amount": money(deposit.amount, currency),
            "date": .string(deposit.date.description), "note": deposit.note.map(JSONValue.string) ?? .null, "createdAt": .string(deposit.createdAt),
        ]
    }

    /// An amount a user gives: at least one minor unit, within the contract's range.
    static let positive = Money.schema(minor: 1...SavingsSchedule.maximumAmount)

    static let paramsSchema = JSONSchema.object(
        [
            "income": positive.described("income_percent: the income expected per interval"),
            "percent": JSONSchema.integer(minimum: 1, maximum: 100).described("income_percent: the share of it saved"),
            "amount": positive.described("fixed_amount: the amount saved per interval"),
        ])

    static let planSchema = JSONSchema.object(
        [
            "id": .string(), "name": .string(), "method": .oneOf(SavingMethod.allCases.map(\.rawValue)),
            "interval": .oneOf(SavingInterval.allCases.map(\.rawValue)), "target": Money.schema, "startDate": .string(format: .date),
            "deadline": JSONSchema.string(format: .date).nullable(), "params": paramsSchema, "state": .oneOf(PlanState.allCases.map(\.rawValue)),
            "saved": Money.schema, "remaining": Money.schema, "percent": .integer(minimum: 0, maximum: 100),
            "status": JSONSchema.oneOf(["on_track", "behind", "unreachable", "completed", "cancelled"]).described(
                "on_track/behind: against the plan as made; unreachable: no installment date is left before the deadline (see nearestDeadline)"),
            "onTrack": .boolean, "expected": Money.schema.described("what the plan as made expected saved by today"),
            "behind": Money.schema.described("how far behind that (zero when on track)"),
            "nearestDeadline": JSONSchema.string(format: .date).nullable().described("when unreachable: the first date the rest could be saved by"),
            "next": InstallmentView.schema.nullable().described("the next installment of the rebalanced schedule"),
            "reachDate": JSONSchema.string(format: .date).nullable().described("when the rebalanced schedule reaches the target"),
            "installmentsLeft": .integer(minimum: 0), "upcoming": .array(of: InstallmentView.schema, maxItems: upcomingShown),
            "deposits": .integer(minimum: 0), "lastDepositDate": JSONSchema.string(format: .date).nullable(),
            "reminders": .object(
                ["enabled": .boolean, "time": .string(format: .time), "timeZone": .string(format: .timeZone)], required: ["enabled", "time", "timeZone"]),
            "createdAt": .string(format: .dateTime), "updatedAt": .string(format: .dateTime), "closedAt": JSONSchema.string(format: .dateTime).nullable(),
        ],
        required: [
            "id", "name", "method", "interval", "target", "startDate", "deadline", "params", "state", "saved", "remaining", "percent", "status", "onTrack",
            "behind", "next", "reachDate", "upcoming", "reminders",
        ])

    static let depositSchema = JSONSchema.object(
        [
            "id": .string(), "planId": .string(), "amount": Money.schema, "date": .string(format: .date), "note": JSONSchema.string().nullable(),
            "createdAt": .string(format: .dateTime),
        ], required: ["id", "planId", "amount", "date", "createdAt"])
}

import Foundation
import GRDB
import Platform
import Synchronization

/// Installments on the wire: each `{amount, cumulative, date}`, amounts as Money, written
/// straight to bytes (a plan may have 1,300 of them; the currency's part is made once).
struct InstallmentWriter {
    /// The text around the numbers and the date, in one buffer: `{"amount":{...,"minor":`,
    /// `},"cumulative":{...,"minor":`, `},"date":"` and `"}`. A preview writes hundreds of
    /// installments, so each is copied with no reference counting and no allocation.
    private let text: [UInt8]
    private let cumulativeStart: Int, dateStart: Int, endStart: Int

    init(_ currency: Currency) {
        // Built in one buffer, with no string interpolation: a deposit's reply makes two.
        var text: [UInt8] = []
        text.reserveCapacity(80)
        func add(_ piece: StaticString) { text.append(contentsOf: UnsafeBufferPointer(start: piece.utf8Start, count: piece.utf8CodeUnitCount)) }
        add(#"{"amount":{"currency":"#)
        JSONValue.writeString(currency.code, to: &text)
        add(#","minor":"#)
        cumulativeStart = text.count
        add(#"},"cumulative":{"currency":"#)
        JSONValue.writeString(currency.code, to: &text)
        add(#","minor":"#)
        dateStart = text.count
        add(#"},"date":""#)
        endStart = text.count
        add(#""}"#)
        self.text = text
    }

    /// One installment.
    func write(_ installment: Installment, to output: inout [UInt8]) {
        text.withUnsafeBufferPointer { text in
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<cumulativeStart]))
            JSONValue.writeInteger(installment.amount, to: &output)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[cumulativeStart..<dateStart]))
            JSONValue.writeInteger(installment.cumulative, to: &output)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[dateStart..<endStart]))
            installment.date.writeText(to: &output)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[endStart...]))
        }
    }

    /// A JSON array of them.
    func writeArray(_ installments: some Collection<Installment>, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + installments.count * 112)
        output.append(UInt8(ascii: "["))
        for (index, installment) in installments.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            write(installment, to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    static let schema = JSONSchema.object(
        ["date": .string(format: .date), "amount": Money.schema, "cumulative": PlanViews.sum], required: ["date", "amount", "cumulative"])
}

/// One installment as a member of a larger reply (a plan's `next`).
struct InstallmentView: Sendable, JSONWrittenOnly {
    var installment: Installment
    var currency: Currency

    func writeJSON(to output: inout [UInt8]) { InstallmentWriter(currency).write(installment, to: &output) }
}

/// A schedule on the wire: its installments, how many, their total and the date the
/// target is reached (the last installment's).
struct ScheduleView: Sendable, JSONWrittenOnly {
    var installments: [Installment]
    var currency: Currency

    func writeJSON(to output: inout [UInt8]) {
        // Written in place: ten years of weekly installments are 57 KB.
        var object = JSONObjectWriter(taking: &output)
        object.field("count", Int64(installments.count))
        object.field("installments") { InstallmentWriter(currency).writeArray(installments, to: &$0) }
        object.field("reachDate", installments.last?.date.description)
        object.field("total", Money(minor: installments.last?.cumulative ?? 0, currency: currency))
        object.finish(returningTo: &output)
    }

    static let schema = JSONSchema.object(
        [
            "installments": .array(of: InstallmentWriter.schema, maxItems: SavingsSchedule.maximumInstallments), "count": .integer(minimum: 0),
            "reachDate": JSONSchema.string(format: .date).nullable().described("the last installment's date: when the target is reached"),
            "total": Money.schema,
        ], required: ["installments", "count", "reachDate", "total"])
}

/// A plan with where it stands, as the app shows it: saved and remaining, percent, pace
/// (on track or behind by how much), the rebalanced schedule's next installments and
/// reach date, or, when the deadline can no longer be kept, the nearest feasible one.
/// Written straight to bytes: it is the reply of every deposit.
struct PlanView: Sendable, JSONWrittenOnly {
    var plan: PlanRow
    var standing: PlanRow.Standing
    /// How many upcoming installments to list.
    var upcoming: Int = PlanViews.upcomingShown

    func writeJSON(to output: inout [UInt8]) {
        let currency = plan.currency
        func money(_ minor: Int64) -> Money { Money(minor: minor, currency: currency) }
        let pace = standing.pace
        var schedule: InstallmentSeries = []
        var status = plan.state == .cancelled ? "cancelled" : "completed"
        var nearestDeadline: LocalDate?
        switch standing.outcome {
        case .none, .completed: break
        case .onSchedule(let installments):
            schedule = installments
            status = pace.onTrack ? "on_track" : "behind"
        case .unreachable(_, let nearest):
            status = "unreachable"
            nearestDeadline = nearest
        }
        let open = plan.state.isOpen
        // Written in place, nested objects included: no buffer of its own to copy.
        var object = JSONObjectWriter(taking: &output)
        object.field("behind", money(open ? pace.behind : 0))
        object.field("closedAt", plan.closedAt)
        object.field("createdAt", plan.createdAt)
        object.field("deadline", plan.terms.deadline?.description)
        object.field("deposits", Int64(plan.deposits))
        // What the plan as made expected by today (for a closed plan too: never what was saved).
        object.field("expected", money(pace.expected))
        object.field("id", plan.id)
        object.field("installmentsLeft", Int64(schedule.count))
        object.field("interval", plan.terms.interval.rawValue)
        object.field("lastDepositDate", plan.lastDeposit?.description)
        object.field("method", plan.terms.method.rawValue)
        object.field("name", plan.name)
        object.field("nearestDeadline", nearestDeadline?.description)
        object.field("next", schedule.first.map { InstallmentView(installment: $0, currency: currency) })
        object.field("onTrack", !open || (status != "unreachable" && pace.onTrack))
        object.object("params") { params in
            if let amount = plan.terms.amount { params.field("amount", money(amount)) }
            if let income = plan.terms.income { params.field("income", money(income)) }
            if let percent = plan.terms.percent { params.field("percent", Int64(percent)) }
        }
        object.field("percent", Int64(pace.percent))
        object.field("reachDate", schedule.last?.date.description)
        object.field("remaining", money(max(0, plan.terms.target - plan.saved)))
        object.object("reminders") { reminders in
            reminders.field("enabled", plan.reminders)
            reminders.field("time", plan.reminderTime.description)
            reminders.field("timeZone", plan.timeZone)
        }
        object.field("saved", money(plan.saved))
        object.field("startDate", plan.terms.start.description)
        object.field("state", plan.state.rawValue)
        object.field("status", status)
        object.field("target", money(plan.terms.target))
        object.field("upcoming") { InstallmentWriter(currency).writeArray(schedule.prefix(upcoming), to: &$0) }
        object.field("updatedAt", plan.updatedAt)
        object.finish(returningTo: &output)
    }
}

/// A deposit as the app shows it.
struct DepositView: Sendable, JSONWrittenOnly {
    var deposit: DepositRow
    var currency: Currency

    func writeJSON(to output: inout [UInt8]) {
        var object = JSONObjectWriter(taking: &output)
        object.field("amount", Money(minor: deposit.amount, currency: currency))
        object.field("createdAt", deposit.createdAt)
        object.field("date", deposit.date.description)
        object.field("id", deposit.id)
        object.field("note", deposit.note)
        object.field("planId", deposit.planID)
        object.finish(returningTo: &output)
    }
}

/// The reply of a deposit and of its undo: the deposit and the plan after it.
struct DepositReply: Sendable, JSONWrittenOnly {
    var deposit: DepositView
    var plan: PlanView

    func writeJSON(to output: inout [UInt8]) {
        output.reserveCapacity(output.count + 2_048)
        var object = JSONObjectWriter(taking: &output)
        object.field("deposit", deposit)
        object.field("plan", plan)
        object.finish(returningTo: &output)
    }
}

/// Plans and deposits as the app shows them.
enum PlanViews {
    /// How many upcoming installments a plan's view lists (the whole rest: savings.plans.schedule).
    static let upcomingShown = 12

    static func money(_ minor: Int64, _ currency: Currency) -> JSONValue { Money(minor: minor, currency: currency).json }

    /// The plan's view (``PlanView``) as a tree, seen on `now`; from ``PlanViewCache``
    /// when the plan has not changed since the same view was made the same day.
    static func plan(_ plan: PlanRow, at now: Date, upcoming: Int = upcomingShown) -> JSONValue {
        let key = PlanViewCache.Key(plan: plan, today: plan.today(at: now), upcoming: upcoming)
        if let view = PlanViewCache.shared.view(for: key) { return view }
        let view = PlanView(plan: plan, standing: plan.standing(at: now), upcoming: upcoming).jsonValue
        PlanViewCache.shared.store(view, for: key)
        return view
    }

    /// An amount a user gives: at least one minor unit, within the contract's range.
    static let positive = Money.schema(minor: 1...SavingsSchedule.maximumAmount)
    /// A sum of amounts (saved in a plan, totals over plans): each amount is within the
    /// contract's range, their sum need not be.
    static let sum = Money.schema(minor: 0...Int64.max)

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
            "saved": sum, "remaining": Money.schema, "percent": .integer(minimum: 0, maximum: 100),
            "status": JSONSchema.oneOf(["on_track", "behind", "unreachable", "completed", "cancelled"]).described(
                "on_track/behind: against the plan as made; unreachable: no installment date is left before the deadline (see nearestDeadline)"),
            "onTrack": .boolean, "expected": Money.schema.described("what the plan as made expected saved by today (at most the target)"),
            "behind": Money.schema.described("how far behind that (zero when on track)"),
            "nearestDeadline": JSONSchema.string(format: .date).nullable().described("when unreachable: the first date the rest could be saved by"),
            "next": InstallmentWriter.schema.nullable().described("the next installment of the rebalanced schedule"),
            "reachDate": JSONSchema.string(format: .date).nullable().described("when the rebalanced schedule reaches the target"),
            "installmentsLeft": .integer(minimum: 0), "upcoming": .array(of: InstallmentWriter.schema, maxItems: upcomingShown),
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

/// Plans' views already made, for the reads that list many plans (`plans.list`, `stats`,
/// `history`, `get`): a view depends only on the plan's row and the day in its zone, so a
/// view found under the same row and day is the view. A user polling the list of a hundred long plans costs a lookup per plan, not
/// a hundred rebalances. Bounded: it starts afresh past ``capacity`` views.
final class PlanViewCache: Sendable {
    struct Key: Hashable, Sendable {
        /// The whole row: any change of any column is another key.
        var plan: PlanRow
        var today: LocalDate
        var upcoming: Int
    }

    static let shared = PlanViewCache()
    /// About 2.5 KB each: at most some 10 MB.
    static let capacity = 4_000

    private let views = Mutex<[Key: JSONValue]>([:])

    func view(for key: Key) -> JSONValue? { views.withLock { $0[key] } }

    func store(_ view: JSONValue, for key: Key) {
        views.withLock { views in
            if views.count >= Self.capacity { views.removeAll(keepingCapacity: true) }
            views[key] = view
        }
    }
}

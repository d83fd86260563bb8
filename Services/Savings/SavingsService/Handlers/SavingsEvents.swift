import Foundation
import GRDB
import Platform

/// The events savings publishes (each listed with its schema in `savings.describe`),
/// written to the outbox in the transaction that makes the change. They carry the user's
/// id and the amounts, so the reminders, stats and notifications services need no
/// lookups.
enum SavingsEvents {
    static let planData = JSONSchema.object(
        [
            "planId": .string(), "userId": .string(), "name": .string(), "method": .oneOf(SavingMethod.allCases.map(\.rawValue)),
            "interval": .oneOf(SavingInterval.allCases.map(\.rawValue)), "state": .oneOf(PlanState.allCases.map(\.rawValue)),
            "target": Money.schema, "saved": Money.schema, "percent": .integer(minimum: 0, maximum: 100),
            "startDate": .string(format: .date), "deadline": JSONSchema.string(format: .date).nullable(),
        ], required: ["planId", "userId", "name", "method", "interval", "state", "target", "saved", "percent", "startDate"])

    static let depositData = JSONSchema.object(
        [
            "planId": .string(), "userId": .string(), "depositId": .string(), "amount": Money.schema, "date": .string(format: .date),
            "saved": Money.schema, "target": Money.schema, "percent": .integer(minimum: 0, maximum: 100),
        ], required: ["planId", "userId", "depositId", "amount", "date", "saved", "target", "percent"])

    static let dueData = JSONSchema.object(
        [
            "planId": .string(), "userId": .string(), "name": .string(), "date": .string(format: .date), "amount": Money.schema,
            "cumulative": Money.schema, "saved": Money.schema, "target": Money.schema, "timeZone": .string(format: .timeZone),
        ], required: ["planId", "userId", "name", "date", "amount", "cumulative", "saved", "target", "timeZone"])

    static let descriptions: [EventDescription] = [
        EventDescription("savings.plan.started", summary: "A user started a plan (\"the stash has started\").", data: planData),
        EventDescription(
            "savings.installment.due",
            summary: "An installment falls due today: sent on its date at the user's reminder time in their zone (push it to them).", data: dueData),
        EventDescription("savings.deposit.recorded", summary: "A user recorded a deposit.", data: depositData),
        EventDescription("savings.deposit.undone", summary: "A user took a deposit back.", data: depositData),
        EventDescription("savings.plan.completed", summary: "A plan reached its target (congratulate the user).", data: planData),
        EventDescription("savings.plan.reopened", summary: "Undoing a deposit took a completed plan below its target: it is active again.", data: planData),
        EventDescription("savings.plan.paused", summary: "A user paused a plan: no reminders until resumed.", data: planData),
        EventDescription("savings.plan.resumed", summary: "A user resumed a paused plan.", data: planData),
        EventDescription("savings.plan.changed", summary: "A user changed a plan's name, deadline or reminders.", data: planData),
        EventDescription("savings.plan.cancelled", summary: "A user gave a plan up; it stays in their history.", data: planData),
        EventDescription("savings.plan.deleted", summary: "A user deleted a plan and its deposits.", data: planData),
    ]

    static func percent(_ plan: PlanRow) -> JSONValue {
        .integer(Int64(PlanPace.percent(saved: plan.saved, of: plan.terms.target)))
    }

    static func plan(_ db: Database, _ type: String, _ plan: PlanRow, at date: Date) throws {
        try Outbox.append(
            db, type: type,
            data: [
                "planId": .string(plan.id), "userId": .string(plan.userID), "name": .string(plan.name), "method": .string(plan.terms.method.rawValue),
                "interval": .string(plan.terms.interval.rawValue), "state": .string(plan.state.rawValue),
                "target": PlanViews.money(plan.terms.target, plan.currency), "saved": PlanViews.money(plan.saved, plan.currency), "percent": percent(plan),
                "startDate": .string(plan.terms.start.description), "deadline": plan.terms.deadline.map { .string($0.description) } ?? .null,
            ] as JSONValue, at: date)
    }

    static func deposit(_ db: Database, _ type: String, _ plan: PlanRow, _ deposit: DepositRow, at date: Date) throws {
        try Outbox.append(db, type: type, data: DepositData(plan: plan, deposit: deposit), at: date)
    }

    /// A deposit event's data (``depositData``), written straight to bytes: one per deposit.
    struct DepositData: JSONWrittenOnly {
        var plan: PlanRow
        var deposit: DepositRow

        func writeJSON(to output: inout [UInt8]) {
            var object = JSONObjectWriter(taking: &output)
            object.field("amount", Money(minor: deposit.amount, currency: plan.currency))
            object.field("date", deposit.date.description)
            object.field("depositId", deposit.id)
            object.field("percent", Int64(PlanPace.percent(saved: plan.saved, of: plan.terms.target)))
            object.field("planId", plan.id)
            object.field("saved", Money(minor: plan.saved, currency: plan.currency))
            object.field("target", Money(minor: plan.terms.target, currency: plan.currency))
            object.field("userId", plan.userID)
            object.finish(returningTo: &output)
        }
    }

    static func due(_ db: Database, _ plan: PlanRow, _ installment: Installment, at date: Date) throws {
        try Outbox.append(
            db, type: "savings.installment.due",
            data: [
                "planId": .string(plan.id), "userId": .string(plan.userID), "name": .string(plan.name), "date": .string(installment.date.description),
                "amount": PlanViews.money(installment.amount, plan.currency), "cumulative": PlanViews.money(installment.cumulative, plan.currency),
                "saved": PlanViews.money(plan.saved, plan.currency), "target": PlanViews.money(plan.terms.target, plan.currency), "timeZone": .string(plan.timeZone),
            ] as JSONValue, at: date)
    }
}

import Foundation
import GRDB
import Platform

/// The park's desk: booking for a rider who phoned or walked in, crediting or debiting a
/// pass by hand, and looking at one rider (bookings, pass, ledger, what staff did) before
/// deciding; and for admins, the top-ups' payments. Every change is a ledger movement or
/// a status change with the staff member and reason, logged in ``StaffLog``.
struct DeskOperations: Sendable {
    let riders: RiderDirectory
    let state: BookingState
    /// Desk bookings run one at a time (people at a counter, not a flood): each checks the
    /// slot after the one before has booked it, so racing walk-ins for one place do not
    /// each create an account in auth and then find the place taken.
    let deskLine = SerialLine()

    var all: [ServiceOperation] { [book, passAdjust, rider, actions, paymentsList, paymentsReconcile] }

    // MARK: Booking for a rider

    struct BookRequest: Codable, Sendable {
        var user: String?
        var phone: String?
        var firstName: String?
        var lastName: String?
        var cable: String
        var start: String
        var payWith: String
        var reason: String?
    }

    struct Booked: Codable, Sendable {
        var booking: BookingView
        var rider: JSONValue
    }

    var book: ServiceOperation {
        let (riders, state) = (self.riders, self.state)
        return .task(
            "booking.staff.book",
            summary: "Books for a rider who phoned or walked in: by `user` id, or by `phone` (the account with that number; with firstName and lastName and none found, a new phone-only account the rider later signs in to with an SMS code). `payWith`: `pass` (a session, else the balance) or `cash` taken at the desk (a `cash` ledger movement into the balance, which the booking takes). The rider's rules apply (capacity, blocks, their own bookings, the daily limit) except the minimum notice. Recorded with the staff member and reason. Send idem: a retry books once.",
            auth: StaffOperations.staff,
            request: .object(
                [
                    "user": .string(minLength: 1, maxLength: 100), "phone": .string(format: .e164), "firstName": .name(maxLength: 100),
                    "lastName": .name(maxLength: 100), "cable": .string(minLength: 1, maxLength: 50),
                    "start": .string(format: .dateTime), "payWith": .oneOf(["pass", "cash"]), "reason": StaffOperations.reasonField,
                ], required: ["cable", "start", "payWith"]),
            response: .object(
                [
                    "booking": BookingView.schema,
                    "rider": .object(
                        ["id": .string(), "name": .string(), "phone": JSONSchema.string(format: .e164).nullable(), "created": .boolean],
                        required: ["id", "name"]),
                ], required: ["booking", "rider"])
        ) { (context, input: BookRequest) in
            let actor = try context.requirePrincipal().userID
            guard (input.user == nil) != (input.phone == nil) else {
                throw ServiceError.validationFailed(["user": "give the rider's user id or phone", "phone": "give the rider's user id or phone"])
            }
            if input.user == DeletedRider.id { throw ServiceError.notFound("no such rider") }
            if input.user == actor { throw StaffOperations.ownAccount }
            if let earlier = try await context.earlierReply(as: Booked.self) { return earlier }
            return try await deskLine.run {
                // Asked again in the line: a double submit waits behind its first copy and
                // gets that copy's reply, not a refusal from the place it took.
                if let earlier = try await context.earlierReply(as: Booked.self) { return earlier }
                return try await Self.book(input, actor: actor, context: context, riders: riders, state: state)
            }
        }
    }

    /// The desk booking itself, in the desk's line.
    private static func book(
        _ input: BookRequest, actor: String, context: RequestContext, riders: RiderDirectory, state: BookingState
    ) async throws -> Booked {
        // The slot and the rules are checked before anyone is created in auth.
        let park = try await state.configuration(outside: context.database())
        let request = RiderOperations.CreateRequest(cable: input.cable, start: input.start)
        let channel = BookingAdmission.Channel.desk(cash: input.payWith == "cash")
        let probe = try BookingPlan(request, rider: "", park: park, now: context.receivedAt, channel: channel)
        _ = try await context.database().read { db in try BookingWriter.admit(db, probe, park: park, knownRider: false) }
        let rider =
            if let phone = input.phone {
                try await riders.rider(phone: phone, firstName: input.firstName, lastName: input.lastName, actor: actor)
            } else {
                try await riders.rider(input.user ?? "")
            }
        guard let riderID = rider["id"]?.stringValue else { throw ServiceError.unavailable("auth sent no rider") }
        // The phone may be the staff member's own.
        guard riderID != actor else { throw StaffOperations.ownAccount }
        let plan = try BookingPlan(
            request, rider: riderID, park: park, now: context.receivedAt, channel: channel, actor: actor, reason: input.reason)
        return try await context.commit { db in
            Booked(booking: try BookingWriter.book(db, plan, state: state), rider: rider)
        }
    }

    // MARK: A pass by hand

    struct AdjustRequest: Codable, Sendable {
        var user: String
        var sessions: Int64?
        var amount: Int64?
        var reason: String
    }

    var passAdjust: ServiceOperation {
        let (riders, state) = (self.riders, self.state)
        return .task(
            "booking.staff.pass.adjust",
            summary: "Credits (positive) or debits (negative) a rider's pass by hand: `sessions` and/or `amount` in minor units of the park's currency, with a `reason` (a cash sale, goodwill). One `adjustment` ledger movement with the staff member; a debit beyond what the pass holds is conflict `insufficient`; one's own pass is forbidden. Answers the pass with its latest movements. Send idem: a retry moves once.",
            auth: StaffOperations.staff,
            request: .object(
                [
                    "user": .string(minLength: 1, maxLength: 100), "sessions": .integer(minimum: -1_000, maximum: 1_000),
                    "amount": .integer(minimum: -100_000_000, maximum: 100_000_000), "reason": .string(minLength: 1, maxLength: 500),
                ], required: ["user", "reason"]),
            response: RiderOperations.passSchema
        ) { (context, input: AdjustRequest) in
            let actor = try context.requirePrincipal().userID
            guard input.user != actor else { throw StaffOperations.ownAccount }
            let (sessions, amount) = (input.sessions ?? 0, input.amount ?? 0)
            guard sessions != 0 || amount != 0 else {
                throw ServiceError.validationFailed(["sessions": "give sessions or amount, not zero", "amount": "give sessions or amount, not zero"])
            }
            guard !input.reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ServiceError.invalid("reason", "must not be blank") }
            if let earlier = try await context.earlierReply(as: RiderOperations.PassView.self) { return earlier }
            // Only a rider auth knows gets a pass: never a pass for an unknown or deleted id.
            guard input.user != DeletedRider.id else { throw ServiceError.notFound("no such rider") }
            _ = try await riders.rider(input.user)
            return try await context.commit { db in
                let pass = try Row.fetchOne(db, sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?", arguments: [input.user])
                guard (pass?["sessions"] as Int64? ?? 0) + sessions >= 0, (pass?["balance_minor"] as Int64? ?? 0) + amount >= 0 else {
                    throw ServiceError.conflict("the pass holds less than the debit", reason: "insufficient")
                }
                let now = Instant.format(Date())
                try PassLedger.post(
                    db, user: input.user, kind: .adjustment, sessions: sessions, amount: amount, at: now, passExists: pass != nil, actor: actor,
                    reason: input.reason)
                try StaffLog.record(
                    db, .passAdjusted, actor: actor, user: input.user, reason: input.reason,
                    detail: ["sessions": .integer(sessions), "amount": .integer(amount)], at: now)
                state.changed(db)
                return try RiderOperations.passView(db, user: input.user, currency: try ParkConfiguration.load(db).price.currency, withActors: true)
            }
        }
    }

    // MARK: One rider, and who did what

    struct RiderRequest: Codable, Sendable {
        var user: String?
        /// Instead of `user`: the rider with this phone number (a rider at the counter).
        var phone: String?
    }

    var rider: ServiceOperation {
        let riders = self.riders
        return .task(
            "booking.staff.rider",
            summary: "One rider as the desk needs them before deciding a sanction: name and phone (from auth; null when auth cannot say or the account was deleted; not_found when neither auth nor the park knows the id), the pass with its latest 50 ledger movements (with the staff member behind each), the latest 50 bookings (newest start first) and the latest 50 staff actions about them. Give `user` (an id) or `phone` (the rider at the counter; not_found when no account has that number).",
            auth: StaffOperations.staff,
            request: .object(["user": .string(minLength: 1, maxLength: 100), "phone": .string(format: .e164)]),
            response: .object(
                [
                    "rider": JSONSchema.object(
                        ["id": .string(), "name": .string(), "phone": JSONSchema.string(format: .e164).nullable()], required: ["id", "name"]
                    ).nullable(),
                    "pass": RiderOperations.passSchema(recent: 50),
                    "bookings": .array(of: BookingView.schema, maxItems: 50),
                    "actions": .array(of: StaffLog.entrySchema, maxItems: 50),
                    "staff": JSONSchema.object([:], additional: .string()).described("the names of the staff members behind the actions and ledger movements, by user id"),
                ], required: ["rider", "pass", "bookings", "actions", "staff"])
        ) { (context, input: RiderRequest) in
            // Unknown to auth and to the park: not_found. Auth down: the park's records, rider null.
            var found: JSONValue?
            let user: String
            switch (input.user, input.phone) {
            case (let id?, nil): user = id
            case (nil, let phone?):
                // Found, never created: no names are given.
                let rider = try await riders.rider(phone: phone, firstName: nil, lastName: nil, actor: try context.requirePrincipal().userID)
                guard let id = rider["id"]?.stringValue else { throw ServiceError.notFound("no rider has this phone number") }
                user = id
            default: throw ServiceError.validationFailed(["user": "give user or phone, one of them"])
            }
            // The anonymous id pools every deleted rider: not one rider to look at.
            if user == DeletedRider.id { throw ServiceError.notFound("no such rider") }
            var unknown = false
            do {
                found = try await riders.rider(user)
            } catch let error as ServiceError where error.code == .notFound {
                unknown = true
            } catch {}
            let (person, unknownToAuth) = (found, unknown)
            let (answer, actors) = try await context.database().read { db -> (JSONValue, Set<String>) in
                let currency = try ParkConfiguration.load(db).price.currency
                let pass = try RiderOperations.passView(db, user: user, currency: currency, recent: 50, withActors: true)
                let bookings = try Row.fetchAll(
                    db, sql: "SELECT * FROM booking WHERE user_id = ? ORDER BY start_at DESC, id DESC LIMIT 50", arguments: [user]
                ).map(BookingView.init(row:))
                let actions = try StaffLog.list(db, user: user, booking: nil, before: nil, limit: 50)
                if unknownToAuth, bookings.isEmpty, actions.isEmpty, pass.recent.isEmpty { throw ServiceError.notFound("no such rider") }
                var rider = JSONValue.null
                if case .object(var members)? = person {
                    members["id"] = .string(user)
                    rider = .object(members)
                }
                let answer: JSONValue = [
                    "rider": rider, "pass": try WireJSON.value(of: pass), "bookings": try WireJSON.value(of: bookings),
                    "actions": try WireJSON.value(of: actions),
                ]
                return (answer, Set(actions.map(\.actor) + pass.recent.compactMap(\.actor)))
            }
            // The staff behind the actions and movements, by name (auth's; left out when
            // auth cannot say).
            guard case .object(var members) = answer else { return answer }
            let names = await riders.lookup(actors)
            members["staff"] = .object(names.compactMapValues { $0["name"] })
            return .object(members)
        }
    }

    struct ActionsRequest: Codable, Sendable {
        var user: String?
        var booking: String?
        var limit: Int?
        var cursor: String?
    }

    var actions: ServiceOperation {
        .read(
            "booking.staff.actions",
            summary: "What staff did (bookings made for riders, marks and corrections, sanctions, cancellations, pass adjustments, blocks, reconciled payments), newest first, for one rider (`user`), one booking, or all; with who and why. Paged.",
            auth: StaffOperations.staff,
            request: .object([
                "user": .string(maxLength: 100), "booking": .string(maxLength: 50), "limit": .integer(minimum: 1, maximum: 200),
                "cursor": .string(maxLength: 30),
            ]),
            response: .object(["items": .array(of: StaffLog.entrySchema, maxItems: 200), "next": JSONSchema.string().nullable()], required: ["items"])
        ) { (_, input: ActionsRequest, db: Database) in
            let limit = input.limit ?? 50
            let before = try input.cursor.map { cursor -> Int64 in
                guard let id = Int64(cursor), id > 0 else { throw ServiceError.invalid("cursor", "not a cursor from this list") }
                return id
            }
            let rows = try StaffLog.list(db, user: input.user, booking: input.booking, before: before, limit: limit + 1)
            let items = Array(rows.prefix(limit))
            return ["items": try WireJSON.value(of: items), "next": rows.count > limit ? .string(String(items.last?.id ?? 0)) : .null] as JSONValue
        }
    }
}

// MARK: Payments, for admins

extension DeskOperations {
    struct PaymentsRequest: Codable, Sendable {
        var status: String?
        var user: String?
        var limit: Int?
        var cursor: String?
    }

    struct PaymentView: Codable, Sendable {
        var id: String
        var userId: String
        var package: String
        var amount: Money
        var sessions: Int64
        var credit: Int64
        var status: String
        var providerRef: String?
        var createdAt: String
        var settledAt: String?
        var reconciledBy: String?
        var reason: String?

        init(row: Row) {
            id = row["id"]
            userId = row["user_id"]
            package = row["package_id"]
            amount = Money(minor: row["amount_minor"], currency: Currency(stored: row["currency"]))
            sessions = row["sessions"]
            credit = row["credit_minor"]
            status = row["status"]
            providerRef = row["provider_ref"]
            createdAt = row["created_at"]
            settledAt = row["settled_at"]
            reconciledBy = row["reconciled_by"]
            reason = row["reconcile_reason"]
        }
    }

    static let paymentSchema = JSONSchema.object(
        [
            "id": .string(), "userId": .string(), "package": .string(), "amount": Money.schema, "sessions": .integer(minimum: 0),
            "credit": .integer(minimum: 0), "status": .oneOf(PaymentStatus.names), "providerRef": JSONSchema.string().nullable(),
            "createdAt": .string(format: .dateTime), "settledAt": JSONSchema.string(format: .dateTime).nullable(),
            "reconciledBy": JSONSchema.string().nullable().described("the admin who settled it by hand"),
            "reason": JSONSchema.string().nullable(),
        ], required: ["id", "userId", "package", "amount", "sessions", "credit", "status", "createdAt"])

    var paymentsList: ServiceOperation {
        .read(
            "booking.admin.payments.list",
            summary: "Top-up payments, newest first, optionally by status (pending, settled, failed, expired, unclaimed: settled after the rider's account was deleted, to refund with the provider) and rider. Paged.",
            auth: StaffOperations.admin,
            request: .object([
                "status": .oneOf(PaymentStatus.names), "user": .string(maxLength: 100), "limit": .integer(minimum: 1, maximum: 200),
                "cursor": .string(maxLength: 200),
            ]),
            response: .object(["items": .array(of: Self.paymentSchema, maxItems: 200), "next": JSONSchema.string().nullable()], required: ["items"])
        ) { (_, input: PaymentsRequest, db: Database) in
            let limit = input.limit ?? 50
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let status = input.status { conditions.append("status = ?"); arguments.append(status) }
            if let user = input.user { conditions.append("user_id = ?"); arguments.append(user) }
            if let cursor = input.cursor {
                let (key, id) = try PageCursor.decode(cursor)
                conditions.append("(created_at, id) < (?, ?)")
                arguments += [key, id]
            }
            let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM payment \(whereClause) ORDER BY created_at DESC, id DESC LIMIT ?",
                arguments: StatementArguments(arguments + [limit + 1]) ?? [])
            let items = rows.prefix(limit).map(PaymentView.init(row:))
            let next = rows.count > limit ? items.last.map { PageCursor.encode($0.createdAt, $0.id) } : nil
            return ["items": try WireJSON.value(of: Array(items)), "next": next.map { .string($0) } ?? .null] as JSONValue
        }
    }

    struct ReconcileRequest: Codable, Sendable {
        var payment: String
        var outcome: String
        var reason: String
    }

    var paymentsReconcile: ServiceOperation {
        let state = self.state
        return .write(
            "booking.admin.payments.reconcile",
            summary: "Settles a top-up by hand after checking it with the provider: `succeeded` credits the pass with what was bought (a pending, expired or failed payment: the provider's success is what counts; `unclaimed` if the rider's account was deleted), `failed` closes a pending one. With a reason; recorded with the admin. conflict not_pending when the payment is already settled or unclaimed, or `failed` is asked for one that is not pending. A provider's success callback after a failure settles the same way.",
            auth: StaffOperations.admin,
            request: .object(
                ["payment": .string(maxLength: 100), "outcome": .oneOf(["succeeded", "failed"]), "reason": .string(minLength: 1, maxLength: 500)],
                required: ["payment", "outcome", "reason"]),
            response: Self.paymentSchema
        ) { (context, input: ReconcileRequest, db: Database) in
            let actor = try context.requirePrincipal().userID
            guard let before = try Row.fetchOne(db, sql: "SELECT * FROM payment WHERE id = ?", arguments: [input.payment]) else {
                throw ServiceError.notFound("no such payment")
            }
            guard try PaymentCallbacks.settle(
                db, payment: input.payment, succeeded: input.outcome == "succeeded", state: state, actor: actor, reason: input.reason)
            else {
                throw ServiceError.conflict("this payment is \(before["status"] as String)", reason: "not_pending")
            }
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM payment WHERE id = ?", arguments: [input.payment]) else {
                throw ServiceError.internal(ref: input.payment)
            }
            let payment = PaymentView(row: row)
            try StaffLog.record(
                db, .paymentReconciled, actor: actor, user: payment.userId, reason: input.reason,
                detail: ["payment": .string(payment.id), "from": .string(before["status"]), "to": .string(payment.status)])
            return payment
        }
    }
}

import Foundation
import GRDB
import Platform

/// What riders do: see free slots, book, cancel, look back, top up the pass.
struct RiderOperations: Sendable {
    /// The payment provider; `nil` when none is configured (top-ups answer `unavailable`).
    let payments: (any PaymentProvider)?
    let state: BookingState
    /// A top-up the provider has not settled after this long expires.
    var paymentExpirySeconds = BookingSettings().paymentExpirySeconds

    var all: [ServiceOperation] { [park, days, slots, create, cancel, history, passGet, passTopup] }

    static let rider = AuthRule.authenticated

    // MARK: The park

    struct ParkView: Codable, Sendable {
        var timeZone: String
        var slotMinutes: Int
        var capacity: Int
        var minimumNoticeMinutes: Int
        var horizonDays: Int
        var maxBookingsPerDay: Int
        var price: Money
        var freeCancellationSeconds: Int64
        var lateSanction: String
        var cables: [Cable]
        var packages: [Package]
        /// Opening hours per weekday (1 = Monday; a missing day is closed).
        var hours: [DayHours]
        /// Dates from today on with other hours (`open` and `close` null: closed).
        var exceptions: [DateHours]

        struct DayHours: Codable, Sendable {
            var weekday: Int
            var open: String
            var close: String
        }

        struct DateHours: Codable, Sendable {
            var date: String
            var open: String?
            var close: String?

            /// Closed days say so with nulls (the schema requires both members).
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(date, forKey: .date)
                try container.encode(open, forKey: .open)
                try container.encode(close, forKey: .close)
            }
        }

        /// `HH:MM`; the end of the day (24:00) is written 00:00, as booking.admin.hours.set takes it.
        static func clock(_ minutes: Int) -> String { Slot.clock(minutes % 1_440) }

        static func hours(_ schedule: ParkSchedule, from today: LocalDate) -> (weekly: [DayHours], exceptions: [DateHours]) {
            let weekly = schedule.weekly.sorted { $0.key < $1.key }.map { DayHours(weekday: $0.key, open: clock($0.value.open), close: clock($0.value.close)) }
            let exceptions = schedule.exceptions.filter { $0.key >= today }.sorted { $0.key < $1.key }.prefix(366).map { date, hours in
                DateHours(date: date.description, open: hours.map { clock($0.open) }, close: hours.map { clock($0.close) })
            }
            return (weekly, Array(exceptions))
        }
    }

    var park: ServiceOperation {
        let state = self.state
        return .read(
            "booking.park.get",
            summary: "The park: time zone, reverses (cables), slot length, places per slot, rules, price and pass packages; cables and packages with their pictures' ids (booking.media.get).",
            auth: .public, request: .empty,
            response: .object(
                [
                    "timeZone": .string(format: .timeZone), "slotMinutes": .integer(minimum: 5, maximum: 240), "capacity": .integer(minimum: 1),
                    "minimumNoticeMinutes": .integer(minimum: 0), "horizonDays": .integer(minimum: 1), "maxBookingsPerDay": .integer(minimum: 1),
                    "price": Money.schema, "freeCancellationSeconds": .integer(minimum: 0), "lateSanction": .oneOf(["forfeit", "none"]),
                    "cables": .array(
                        of: .object(["id": .string(), "name": .string(), "active": .boolean, "image": Self.imageSchema], required: ["id", "name", "active"])),
                    "packages": .array(of: Self.packageSchema),
                    "hours": .array(
                        of: .object(
                            ["weekday": .integer(minimum: 1, maximum: 7), "open": .string(format: .time), "close": .string(format: .time)],
                            required: ["weekday", "open", "close"]), maxItems: 7
                    ).described("opening hours per weekday, 1 = Monday; a weekday missing is closed; close 00:00 means midnight"),
                    "exceptions": .array(
                        of: .object(
                            [
                                "date": .string(format: .date), "open": JSONSchema.string(format: .time).nullable(),
                                "close": JSONSchema.string(format: .time).nullable(),
                            ], required: ["date", "open", "close"]), maxItems: 366
                    ).described("dates from today (the park's) on with other hours; open and close null: closed that day"),
                ],
                required: [
                    "timeZone", "slotMinutes", "capacity", "minimumNoticeMinutes", "horizonDays", "maxBookingsPerDay", "price",
                    "freeCancellationSeconds", "lateSanction", "cables", "packages", "hours", "exceptions",
                ])
        ) { (_, _: Empty, db: Database) in
            let park = try state.configuration(db)
            let today = park.schedule.clock.local(Date()).date
            let hours = ParkView.hours(park.schedule, from: today)
            return ParkView(
                timeZone: park.schedule.timeZone.identifier, slotMinutes: park.schedule.slotMinutes, capacity: park.capacity,
                minimumNoticeMinutes: Int(park.minimumNotice / 60), horizonDays: park.horizonDays,
                maxBookingsPerDay: park.maxBookingsPerDay, price: park.price,
                freeCancellationSeconds: park.policy.freeCancellationSeconds, lateSanction: park.policy.sanction.rawValue,
                cables: park.cables.filter(\.active), packages: try ParkConfiguration.packages(db, currency: park.price.currency),
                hours: hours.weekly, exceptions: hours.exceptions)
        }
    }

    // MARK: Availability

    struct SlotView: Codable, Sendable {
        var cable: String
        var date: String
        var localStart: String
        var localEnd: String
        var start: String
        var end: String
        var capacity: Int
        var free: Int
        /// Whether it can be booked now (not past, not inside the notice, not blocked, open for booking).
        var bookable: Bool
        var price: Money

        /// One item of `booking.slots`, built by hand: availability is the hottest answer.
        var compactJSON: JSONValue {
            [
                "cable": .string(cable), "localStart": .string(localStart), "localEnd": .string(localEnd), "start": .string(start),
                "end": .string(end), "free": .integer(Int64(free)), "bookable": .bool(bookable),
            ]
        }

        var json: JSONValue {
            [
                "cable": .string(cable), "date": .string(date), "localStart": .string(localStart), "localEnd": .string(localEnd),
                "start": .string(start), "end": .string(end), "capacity": .integer(Int64(capacity)), "free": .integer(Int64(free)),
                "bookable": .bool(bookable), "price": price.json,
            ]
        }
    }

    /// The slots of a date with their free places, as of `now`.
    static func availability(_ db: Database, park: ParkConfiguration, date: LocalDate, cable: String?, now: Date) throws -> [SlotView] {
        let occupancy = try DayOccupancy.load(db, date: date, cables: park.cables.filter { $0.active && (cable == nil || $0.id == cable) }.map(\.id))
        let horizon = now.addingTimeInterval(TimeInterval(park.horizonDays * 86_400))
        var views: [SlotView] = []
        for slot in park.schedule.slots(on: date) {
            let start = Instant.format(slot.start), end = Instant.format(slot.end)
            for item in park.cables where item.active && (cable == nil || item.id == cable) {
                let blocked = occupancy.isBlocked(cable: item.id, start: start, end: end)
                let free = blocked ? 0 : occupancy.free(cable: item.id, slot: slot, capacity: park.capacity)
                let timely = slot.start >= now.addingTimeInterval(park.minimumNotice) && slot.start <= horizon
                views.append(
                    SlotView(
                        cable: item.id, date: date.description, localStart: Slot.clock(slot.localStart),
                        localEnd: Slot.clock(slot.localEnd % 1440), start: start, end: end, capacity: park.capacity, free: free,
                        bookable: free > 0 && timely, price: park.price))
            }
        }
        return views
    }

    struct DaysRequest: Codable, Sendable {
        var from: String
        var to: String
    }

    static func daysKey(_ request: DaysRequest) -> String { "days|\(request.from)|\(request.to)" }

    var days: ServiceOperation {
        let state = self.state
        return ServiceOperation.task(
            "booking.days",
            summary: "Which days between `from` and `to` (at most 62 days) have slots that can be booked now, and how many; only days from today to the end of the booking horizon can have any. Answered from memory for at most a second, and never across a booking.",
            auth: .public,
            request: .object(["from": .string(format: .date), "to": .string(format: .date)], required: ["from", "to"]),
            response: .object(
                ["items": .array(of: .object(["date": .string(format: .date), "bookableSlots": .integer()], required: ["date", "bookableSlots"]))],
                required: ["items"])
        ) { (context, input: DaysRequest) in
            let (from, to) = (try ParkDates.parse(input.from, field: "from"), try ParkDates.parse(input.to, field: "to"))
            guard from <= to else { throw ServiceError.invalid("to", "must not be before `from`") }
            guard to <= from.adding(days: 61) else { throw ServiceError.invalid("to", "at most 62 days after `from`") }
            let key = Self.daysKey(input)
            if let cached = state.cachedAvailability(key) { return RawJSON(cached) }
            let generation = state.generation
            let answer = try await context.database().read { db -> Data in
                let park = try state.configuration(db)
                let now = Date()
                // Only days inside the horizon can have a bookable slot: the rest are not read.
                let first = max(from, park.schedule.localDate(of: now))
                let last = min(to, park.schedule.localDate(of: now.addingTimeInterval(TimeInterval(park.horizonDays * 86_400))))
                var items: [JSONValue] = []
                var date = first
                while date <= last {
                    let count = try Self.availability(db, park: park, date: date, cable: nil, now: now).filter(\.bookable).count
                    if count > 0 { items.append(["date": .string(date.description), "bookableSlots": .integer(Int64(count))]) }
                    date = date.adding(days: 1)
                }
                return JSONValue.object(["items": .array(items)]).serialized
            }
            state.storeAvailability(key, answer, generation: generation)
            return RawJSON(answer)
        }
        .answeringFromMemory(DaysRequest.self) { input in state.cachedAvailability(Self.daysKey(input)) }
    }

    struct SlotsRequest: Codable, Sendable {
        var date: String
        var cable: String?
    }

    static func availabilityKey(_ request: SlotsRequest) -> String { "\(request.date)|\(request.cable ?? "*")" }

    var slots: ServiceOperation {
        let state = self.state
        return ServiceOperation.task(
            "booking.slots",
            summary: "The slots of a day (optionally one cable) with start and end in the park's local time and in UTC, free places and price. Answered from memory for at most a second, and never across a booking.",
            auth: .public,
            request: .object(["date": .string(format: .date), "cable": .string(maxLength: 50)], required: ["date"]),
            response: .object(
                [
                    "date": .string(format: .date), "timeZone": .string(format: .timeZone), "capacity": .integer(minimum: 1),
                    "price": Money.schema, "cables": .array(of: .string()).described("the order of `free` and `bookable` in each item"),
                    "items": .array(
                        of: .object(
                            [
                                "localStart": .string(format: .time), "localEnd": .string(format: .time),
                                "start": .string(format: .dateTime), "end": .string(format: .dateTime),
                                "free": .array(of: .integer(minimum: 0)).described("free places per cable"),
                                "bookable": .array(of: .boolean).described("per cable: free, not past, not inside the minimum notice, open for booking"),
                            ], required: ["localStart", "localEnd", "start", "end", "free", "bookable"]), maxItems: 10_000),
                ], required: ["date", "timeZone", "capacity", "price", "cables", "items"])
        ) { (context, input: SlotsRequest) in
            let date = try ParkDates.parse(input.date, field: "date")
            let key = Self.availabilityKey(input)
            if let cached = state.cachedAvailability(key) { return RawJSON(cached) }
            let generation = state.generation
            let items = try await context.database().read { db -> Data in
                let park = try state.configuration(db)
                if let cable = input.cable, !park.cables.contains(where: { $0.id == cable && $0.active }) {
                    throw ServiceError.invalid("cable", "no such cable")
                }
                let views = try Self.availability(db, park: park, date: date, cable: input.cable, now: Date())
                // One item per time; what all items share is said once, and each cable's
                // free places and bookability are arrays aligned with `cables`.
                let cables = park.cables.filter { $0.active && (input.cable == nil || $0.id == input.cable) }.map(\.id)
                var items: [JSONValue] = []
                var index = 0
                while index < views.count {
                    let first = views[index]
                    let group = views[index..<min(views.count, index + cables.count)]
                    items.append([
                        "localStart": .string(first.localStart), "localEnd": .string(first.localEnd), "start": .string(first.start),
                        "end": .string(first.end), "free": .array(group.map { .integer(Int64($0.free)) }),
                        "bookable": .array(group.map { .bool($0.bookable) }),
                    ])
                    index += max(1, cables.count)
                }
                return JSONValue.object([
                    "date": .string(date.description), "timeZone": .string(park.schedule.timeZone.identifier),
                    "capacity": .integer(Int64(park.capacity)),
                    "price": park.price.json,
                    "cables": .array(cables.map { .string($0) }), "items": .array(items),
                ]).serialized
            }
            state.storeAvailability(key, items, generation: generation)
            return RawJSON(items)
        }
        .answeringFromMemory(SlotsRequest.self) { input in state.cachedAvailability(Self.availabilityKey(input)) }
    }

    // MARK: Booking

    struct CreateRequest: Codable, Sendable {
        var cable: String
        var start: String
    }

    var create: ServiceOperation {
        let state = self.state
        return .write(
            "booking.create",
            summary: "Books a place on a cable at a slot start (an instant with its offset). Takes one pass session, or the price from the balance. Never over capacity. Send idem: a retry books once.",
            auth: Self.rider,
            request: .object(["cable": .string(minLength: 1, maxLength: 50), "start": .string(format: .dateTime)], required: ["cable", "start"]),
            response: BookingView.schema,
            // The rule is applied at the moment the request arrived, not after it queued.
            prepare: { (context, input: CreateRequest) in
                try BookingPlan(input, rider: try context.requirePrincipal().userID, park: try await state.configuration(outside: context.database()), now: context.receivedAt)
            },
            preparedAtOnce: { (context, input: CreateRequest) in
                guard let park = state.cachedConfiguration else { return nil }
                return try BookingPlan(input, rider: try context.requirePrincipal().userID, park: park, now: context.receivedAt)
            }
        ) { (_, prepared: BookingPlan, db: Database) in
            try BookingWriter.book(db, prepared, state: state)
        }
    }

    struct CancelRequest: Codable, Sendable {
        var booking: String
    }

    var cancel: ServiceOperation {
        let state = self.state
        return .write(
            "booking.cancel",
            summary: "Cancels the caller's booking. Strictly more than the free-cancellation period (2 hours) before the start, the session or money comes back; otherwise it is a late cancellation and the sanction copied onto the booking applies (default: forfeited).",
            auth: Self.rider, request: .object(["booking": .string(maxLength: 50)], required: ["booking"]), response: BookingView.schema
        ) { (context, input: CancelRequest, db: Database) in
            let rider = try context.requirePrincipal().userID
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM booking WHERE id = ? AND user_id = ?", arguments: [input.booking, rider]) else {
                throw ServiceError.notFound("no such booking")
            }
            let booking = BookingView(row: row)
            guard booking.status == "booked" else { throw ServiceError.conflict("this booking is \(booking.status)", reason: "not_active") }
            // The rule is applied at the moment the request arrived, not after it queued.
            let now = context.receivedAt
            guard let start = Instant.parse(booking.start), start > now else {
                throw ServiceError.conflict("the training has already started", reason: "started")
            }
            let policy = LateCancellationPolicy(
                freeCancellationSeconds: row["policy_free_seconds"],
                sanction: LateCancellationPolicy.Sanction(rawValue: row["policy_sanction"]) ?? .forfeit)
            let late = policy.isLate(start: start, now: now)
            let status = late ? "late_cancelled" : "cancelled"
            var sanction: String?
            if !late {
                try PassLedger.refund(db, booking)
            } else if policy.sanction == .forfeit {
                sanction = "forfeit"
                try PassLedger.post(db, user: rider, kind: .forfeit, sessions: 0, amount: 0, booking: booking.id)
            } else {
                sanction = "none"
                try PassLedger.refund(db, booking)
            }
            try db.execute(
                sql: "UPDATE booking SET status = ?, sanction = ?, cancelled_at = ?, change_version = ? WHERE id = ?",
                arguments: [status, sanction, Instant.format(now), try ChangeFeed.stamp(db), booking.id])
            guard let updated = try BookingView.load(db, id: booking.id) else { throw ServiceError.internal(ref: booking.id) }
            try Outbox.append(db, type: late ? "booking.late_cancelled" : "booking.cancelled", data: updated.eventData)
            state.changed(db)
            return updated
        }
    }

    struct HistoryRequest: Codable, Sendable {
        var filter: String
        var limit: Int?
        var cursor: String?
    }

    var history: ServiceOperation {
        .read(
            "booking.history",
            summary: "The caller's bookings: `upcoming` (soonest first), `past` (newest first), `cancelled` (newest first); paged.",
            auth: Self.rider,
            request: .object(
                ["filter": .oneOf(["upcoming", "past", "cancelled"]), "limit": .integer(minimum: 1, maximum: 100), "cursor": .string(maxLength: 200)],
                required: ["filter"]),
            response: .object(["items": .array(of: BookingView.schema), "next": JSONSchema.string().nullable()], required: ["items"])
        ) { (context, input: HistoryRequest, db: Database) in
            let rider = try context.requirePrincipal().userID
            let limit = input.limit ?? 20
            let now = Instant.format(Date())
            let ascending = input.filter == "upcoming"
            var condition: String
            var arguments: [(any DatabaseValueConvertible)?] = [rider]
            switch input.filter {
            case "upcoming":
                condition = "status = 'booked' AND start_at > ?"
                arguments.append(now)
            case "past":
                condition = "status IN ('booked', 'attended', 'no_show') AND start_at <= ?"
                arguments.append(now)
            default:
                condition = "status IN ('cancelled', 'late_cancelled', 'cancelled_by_park')"
            }
            if let cursor = input.cursor {
                let (key, id) = try PageCursor.decode(cursor)
                condition += ascending ? " AND (start_at, id) > (?, ?)" : " AND (start_at, id) < (?, ?)"
                arguments += [key, id]
            }
            let order = ascending ? "start_at ASC, id ASC" : "start_at DESC, id DESC"
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM booking WHERE user_id = ? AND \(condition) ORDER BY \(order) LIMIT ?",
                arguments: StatementArguments(arguments + [limit + 1]) ?? [])
            let items = rows.prefix(limit).map(BookingView.init(row:))
            let next = rows.count > limit ? items.last.map { PageCursor.encode($0.start, $0.id) } : nil
            return ["items": try WireJSON.value(of: Array(items)), "next": next.map { .string($0) } ?? .null] as JSONValue
        }
    }

    // MARK: The pass

    struct LedgerEntry: Codable, Sendable {
        var at: String
        var kind: String
        var sessions: Int64
        var amount: Money
        var booking: String?
        var payment: String?
        /// Staff's words for a movement they made (a credit, a correction, cash at the desk).
        var reason: String?
        /// The staff member who made it: in staff views only.
        var actor: String?
    }

    static let ledgerEntrySchema = JSONSchema.object(
        [
            "at": .string(format: .dateTime), "kind": .oneOf(LedgerKind.names), "sessions": .integer(), "amount": Money.schema,
            "booking": JSONSchema.string().nullable(), "payment": JSONSchema.string().nullable(),
            "reason": JSONSchema.string().nullable().described("staff's words for a movement they made"),
            "actor": JSONSchema.string().nullable().described("the staff member who made it (staff views only)"),
        ], required: ["at", "kind", "sessions", "amount"])

    static let packageSchema = JSONSchema.object(
        [
            "id": .string(), "name": .string(), "sessions": .integer(minimum: 0), "credit": Money.schema, "price": Money.schema,
            "image": RiderOperations.imageSchema,
        ],
        required: ["id", "name", "sessions", "credit", "price"])

    /// The picture of a cable or package: an id for `booking.media.get`, absent when none.
    static let imageSchema = JSONSchema.string(maxLength: 100).described("its picture: an id for booking.media.get; absent when none")

    static let passSchema = passSchema(recent: 20)

    /// A pass with at most `recent` of its latest ledger entries.
    static func passSchema(recent: Int) -> JSONSchema {
        .object(
            [
                "sessions": .integer(minimum: 0), "balance": Money.schema,
                "recent": .array(of: ledgerEntrySchema, maxItems: recent).described("the latest ledger entries, newest first"),
            ], required: ["sessions", "balance", "recent"])
    }

    struct PassView: Codable, Sendable {
        var sessions: Int64
        var balance: Money
        var recent: [LedgerEntry]
    }

    /// A pass with its latest `recent` ledger entries; `withActors` for staff.
    static func passView(_ db: Database, user: String, currency: Currency, recent: Int = 20, withActors: Bool = false) throws -> PassView {
        let pass = try Row.fetchOne(db, sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?", arguments: [user])
        let entries = try Row.fetchAll(
            db, sql: "SELECT * FROM ledger WHERE user_id = ? ORDER BY id DESC LIMIT ?", arguments: [user, recent]
        ).map {
            LedgerEntry(
                at: $0["at"], kind: $0["kind"], sessions: $0["sessions_delta"], amount: Money(minor: $0["amount_minor_delta"], currency: currency),
                booking: $0["booking_id"], payment: $0["payment_id"], reason: $0["reason"], actor: withActors ? $0["actor"] : nil)
        }
        return PassView(
            sessions: pass?["sessions"] ?? 0, balance: Money(minor: pass?["balance_minor"] ?? 0, currency: currency), recent: entries)
    }

    var passGet: ServiceOperation {
        .read(
            "booking.pass.get", summary: "The caller's pass: sessions left, money balance, and the latest ledger entries.",
            auth: Self.rider, request: .empty, response: Self.passSchema
        ) { (context, _: Empty, db: Database) in
            let rider = try context.requirePrincipal().userID
            return try Self.passView(db, user: rider, currency: try ParkConfiguration.load(db).price.currency)
        }
    }

    struct TopupRequest: Codable, Sendable {
        var package: String
    }

    struct TopupResult: Codable, Sendable {
        var payment: String
        var status: String
        /// Where the rider confirms a pending payment (providers that settle later).
        var confirmationUrl: String?
        var pass: PassView
    }

    var passTopup: ServiceOperation {
        let payments = self.payments
        return .task(
            "booking.pass.topup",
            summary: "Buys a package (sessions and/or balance) through the payment provider: `dev` (chosen explicitly) settles at once; `http` answers `pending` with a confirmationUrl and credits the pass when the provider calls back; a payment still pending after BACKEND_BOOKING_PAYMENT_EXPIRY_SECONDS (30 minutes) expires (`booking.payment.expired`). Send idem: a retry pays once; the same idem for another package is a conflict, however late. Without a configured provider: unavailable.",
            auth: Self.rider, request: .object(["package": .string(minLength: 1, maxLength: 50)], required: ["package"]),
            response: .object(
                [
                    "payment": .string(), "status": .oneOf(PaymentStatus.names),
                    "confirmationUrl": JSONSchema.string(maxLength: 2_000).nullable().described("where the rider confirms a pending payment"),
                    "pass": Self.passSchema,
                ], required: ["payment", "status", "pass"])
        ) { (context, input: TopupRequest) in
            let rider = try context.requirePrincipal().userID
            guard let payments else {
                throw ServiceError.unavailable(
                    "top-ups are not available: no payment provider is configured (BACKEND_BOOKING_PAYMENT_PROVIDER)")
            }
            // A retry must not charge again: answer it before calling the provider.
            if let earlier = try await context.earlierReply(as: TopupResult.self) { return earlier }
            let pool = try context.database()
            let (package, currency) = try await pool.read { db -> (Package?, Currency) in
                let currency = try ParkConfiguration.load(db).price.currency
                return (try ParkConfiguration.packages(db, currency: currency).first { $0.id == input.package }, currency)
            }
            guard let package else { throw ServiceError.invalid("package", "no such package") }
            // Every charge gets its own random payment id. The idem key is kept on the
            // payment for good (the idempotency record is pruned after a week): the same key
            // again finds its payment (a retry after a failed first attempt asks the provider
            // again under the same id and Idempotency-Key), the same key for another package
            // is a conflict whenever it comes. Concurrent retries meet on the unique index.
            let idemKey = context.idempotencyKey.map { Digest.sha256Hex(Array($0.utf8)) }
            let expiry = paymentExpirySeconds
            let recorded = try await context.write { db -> (id: String, status: String, amount: Money) in
                if let idemKey, let row = try Row.fetchOne(
                    db, sql: "SELECT id, package_id, status, amount_minor, currency FROM payment WHERE user_id = ? AND idem_key = ?",
                    arguments: [rider, idemKey])
                {
                    guard row["package_id"] as String == package.id else { throw ServiceError.idempotencyConflict }
                    // A retry asks for what the payment was recorded at, whatever the package costs now.
                    return (row["id"], row["status"], Money(minor: row["amount_minor"], currency: Currency(stored: row["currency"])))
                }
                // The payment is on record before the provider is asked, so a callback that
                // comes back at once finds it, and a crash leaves a pending payment, not a lost one.
                let now = Date()
                let id = "pay_" + Digest.hex(Digest.randomBytes(12))
                try db.execute(
                    sql: """
                        INSERT INTO payment (id, user_id, package_id, amount_minor, currency, status, created_at, sessions, credit_minor, idem_key)
                        VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)
                        """,
                    arguments: [
                        id, rider, package.id, package.price.minor, currency.code, Instant.format(now), package.sessions, package.credit.minor, idemKey,
                    ])
                try PaymentExpiry.schedule(db, payment: id, createdAt: now, after: expiry)
                return (id, "pending", package.price)
            }
            let paymentID = recorded.id
            guard recorded.status == "pending" else {
                // Settled, failed or expired under this key before: nothing is charged again.
                return try await pool.read { db in
                    TopupResult(payment: paymentID, status: recorded.status, confirmationUrl: nil, pass: try Self.passView(db, user: rider, currency: currency))
                }
            }
            // Retries arriving while the first attempt is still with the provider wait for
            // its answer instead of asking again.
            let outcome = try await PaymentCharges.shared.charge(
                PaymentRequest(id: paymentID, user: rider, amount: recorded.amount, description: package.name), with: payments)
            let state = self.state
            // The provider has charged: this is recorded even if the account went meanwhile
            // (its deletion made the payment anonymous, so it settles `unclaimed`).
            return try await context.commit(requiringLiveSession: false) { db -> TopupResult in
                try db.execute(sql: "UPDATE payment SET provider_ref = ? WHERE id = ?", arguments: [outcome.providerReference, paymentID])
                if outcome.settled {
                    _ = try PaymentCallbacks.settle(db, payment: paymentID, succeeded: true, state: state)
                }
                let status = try String.fetchOne(db, sql: "SELECT status FROM payment WHERE id = ?", arguments: [paymentID]) ?? "pending"
                return TopupResult(
                    payment: paymentID, status: status, confirmationUrl: outcome.confirmationURL,
                    pass: try Self.passView(db, user: rider, currency: currency))
            }
        }
    }
}

import Foundation
import GRDB
import Platform

/// What riders do: see free slots, book, cancel, look back, top up the pass.
struct RiderOperations: Sendable {
    let payments: any PaymentProvider
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
                ],
                required: [
                    "timeZone", "slotMinutes", "capacity", "minimumNoticeMinutes", "horizonDays", "maxBookingsPerDay", "price",
                    "freeCancellationSeconds", "lateSanction", "cables", "packages",
                ])
        ) { (_, _: Empty, db: Database) in
            let park = try state.configuration(db)
            return ParkView(
                timeZone: park.schedule.timeZone.identifier, slotMinutes: park.schedule.slotMinutes, capacity: park.capacity,
                minimumNoticeMinutes: Int(park.minimumNotice / 60), horizonDays: park.horizonDays,
                maxBookingsPerDay: park.maxBookingsPerDay, price: park.price,
                freeCancellationSeconds: park.policy.freeCancellationSeconds, lateSanction: park.policy.sanction.rawValue,
                cables: park.cables.filter(\.active), packages: try ParkConfiguration.packages(db, currency: park.price.currency))
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
        let occupancy = try DayOccupancy.load(db, date: date)
        let horizon = now.addingTimeInterval(TimeInterval(park.horizonDays * 86_400))
        var views: [SlotView] = []
        for slot in park.schedule.slots(on: date) {
            let start = Instant.format(slot.start), end = Instant.format(slot.end)
            for item in park.cables where item.active && (cable == nil || item.id == cable) {
                let blocked = occupancy.isBlocked(cable: item.id, start: start, end: end)
                let free = blocked ? 0 : max(0, park.capacity - (occupancy.taken[item.id]?[start] ?? 0))
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

    struct DayView: Codable, Sendable {
        var date: String
        var bookableSlots: Int
    }

    var days: ServiceOperation {
        let state = self.state
        return .read(
            "booking.days", summary: "Which days between `from` and `to` (at most 62 days) have slots that can be booked now, and how many.",
            auth: .public,
            request: .object(["from": .string(format: .date), "to": .string(format: .date)], required: ["from", "to"]),
            response: .object(["items": .array(of: .object(["date": .string(format: .date), "bookableSlots": .integer()]))], required: ["items"])
        ) { (_, input: DaysRequest, db: Database) in
            let (from, to) = (try ParkDates.parse(input.from, field: "from"), try ParkDates.parse(input.to, field: "to"))
            guard from <= to else { throw ServiceError.invalid("to", "must not be before `from`") }
            guard to <= from.adding(days: 61) else { throw ServiceError.invalid("to", "at most 62 days after `from`") }
            let park = try state.configuration(db)
            var items: [DayView] = []
            var date = from
            let now = Date()
            while date <= to {
                let count = try Self.availability(db, park: park, date: date, cable: nil, now: now).filter(\.bookable).count
                if count > 0 { items.append(DayView(date: date.description, bookableSlots: count)) }
                date = date.adding(days: 1)
            }
            return ["items": try WireJSON.value(of: items)] as JSONValue
        }
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

    /// What `booking.create` settles before its transaction: the slot on the park's grid,
    /// its times formatted, the new id. The transaction re-plans only if the park's
    /// settings changed in between.
    struct CreatePlan: Sendable {
        var input: CreateRequest
        var rider: String
        var now: Date
        var parkVersion: Int
        var slot: Slot
        var start: String
        var end: String
        /// Bookings that overlap the slot start after this (no slot is longer than 4 hours).
        var earliestOverlapping: String
        /// Every instant of the slot's local date lies in this UTC window (offsets run from
        /// -12 to +14 hours), which bounds the scan of the rider's bookings that day.
        var dayWindow: (from: String, to: String)
        var freeCancellationUntil: String
        var createdAt: String
        var id: String

        init(_ input: CreateRequest, rider: String, park: ParkConfiguration, now: Date, id: String? = nil) throws {
            guard park.cables.contains(where: { $0.id == input.cable && $0.active }) else {
                throw ServiceError.invalid("cable", "no such cable")
            }
            guard let instant = Instant.parse(input.start), let slot = park.schedule.slot(startingAt: instant) else {
                throw ServiceError.invalid("start", "not the start of a slot on the park's grid")
            }
            if let refusal = BookingAdmission.timing(start: slot.start, now: now, rules: park.admissionRules) {
                throw refusal.error(rules: park.admissionRules)
            }
            self.input = input
            self.rider = rider
            self.now = now
            parkVersion = park.version
            self.slot = slot
            start = Instant.format(slot.start)
            end = Instant.format(slot.end)
            earliestOverlapping = Instant.format(slot.start.addingTimeInterval(-4 * 3_600))
            let midnight = slot.date.daysSinceEpoch * 86_400_000
            dayWindow = (Instant.format(epochMilliseconds: midnight - 14 * 3_600_000), Instant.format(epochMilliseconds: midnight + 36 * 3_600_000))
            freeCancellationUntil = Instant.format(slot.start.addingTimeInterval(-TimeInterval(park.policy.freeCancellationSeconds)))
            createdAt = Instant.format(now)
            self.id = id ?? RecordID.make(prefix: "bkg", at: now)
        }
    }

    var create: ServiceOperation {
        let state = self.state
        return .write(
            "booking.create",
            summary: "Books a place on a cable at a slot start (an instant with its offset). Takes one pass session, or the price from the balance. Never over capacity. Send idem: a retry books once.",
            auth: Self.rider,
            request: .object(["cable": .string(minLength: 1, maxLength: 50), "start": .string(format: .dateTime)], required: ["cable", "start"]),
            response: BookingView.schema,
            prepare: { (context, input: CreateRequest) in
                // The rule is applied at the moment the request arrived, not after it queued.
                let park = try await state.configuration(outside: context.database())
                return try CreatePlan(input, rider: try context.requirePrincipal().userID, park: park, now: context.receivedAt)
            }
        ) { (_, prepared: CreatePlan, db: Database) in
            let park = try state.configuration(db, inWriter: true)
            // Settings changed since the plan was made (even earlier in this group commit): plan again.
            let plan = park.version == prepared.parkVersion
                ? prepared : try CreatePlan(prepared.input, rider: prepared.rider, park: park, now: prepared.now, id: prepared.id)
            let cable = plan.input.cable, rider = plan.rider, start = plan.start, end = plan.end
            // Load: targeted, cached statements, as this is the hottest write of the service.
            // Writes are serialized, so the counts below cannot interleave with another booking.
            let blocked = try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM block WHERE (cable_id IS NULL OR cable_id = ?) AND start_at < ? AND ? < end_at LIMIT 1"),
                arguments: [cable, end, start]) == true
            // Places are counted by overlapping time, so a changed grid cannot double a place.
            let taken = try Int.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT COUNT(*) FROM booking
                        WHERE cable_id = ? AND start_at > ? AND start_at < ? AND end_at > ? AND status IN \(BookingStatus.holdingSQL)
                        """),
                arguments: [cable, plan.earliestOverlapping, end, start]) ?? 0
            let ridersDay = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT start_at, end_at FROM booking
                        WHERE user_id = ? AND start_at >= ? AND start_at < ? AND local_date = ? AND status IN \(BookingStatus.holdingSQL)
                        """),
                arguments: [rider, plan.dayWindow.from, plan.dayWindow.to, plan.slot.date.description]
            ).map { (start: Instant.parse($0[0]) ?? .distantPast, end: Instant.parse($0[1]) ?? .distantPast) }
            let pass = try Row.fetchOne(db.cachedStatement(sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?"), arguments: [rider])
            let facts = BookingAdmission.Facts(
                blocked: blocked, taken: taken, ridersDay: ridersDay, sessions: pass?["sessions"] ?? 0, balanceMinor: pass?["balance_minor"] ?? 0)
            // Decide.
            let paidWith: PaymentMethod
            switch BookingAdmission.decide(start: plan.slot.start, end: plan.slot.end, now: plan.now, rules: park.admissionRules, facts: facts) {
            case .success(let method): paidWith = method
            case .failure(let refusal): throw refusal.error(rules: park.admissionRules)
            }
            // Write.
            let booking = BookingView(
                id: plan.id, userId: rider, cable: cable, date: plan.slot.date.description, localStart: Slot.clock(plan.slot.localStart),
                localEnd: Slot.clock(plan.slot.localEnd % 1440), start: start, end: end, status: BookingStatus.booked.rawValue,
                paidWith: paidWith.rawValue, price: park.price, sanction: nil, freeCancellationUntil: plan.freeCancellationUntil,
                createdAt: plan.createdAt, cancelledAt: nil)
            try db.cachedStatement(
                sql: """
                    INSERT INTO booking (id, user_id, cable_id, start_at, end_at, local_date, local_start, local_end, status, paid_with,
                                         price_minor, currency, policy_free_seconds, policy_sanction, created_at, change_version)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                booking.id, rider, cable, start, end, booking.date, booking.localStart, booking.localEnd, BookingStatus.booked, paidWith,
                park.price.minor, park.price.currency.code, park.policy.freeCancellationSeconds, park.policy.sanction.rawValue, booking.createdAt,
                try ChangeFeed.stamp(db),
            ])
            try PassLedger.post(
                db, user: rider, kind: "booking", sessions: paidWith == .session ? -1 : 0,
                amount: paidWith == .balance ? -park.price.minor : 0, booking: booking.id, at: plan.createdAt, passExists: pass != nil)
            try Outbox.append(db, type: "booking.created", data: booking.eventBytes, at: plan.now)
            state.changed(db)
            return booking
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
                try PassLedger.post(db, user: rider, kind: "forfeit", sessions: 0, amount: 0, booking: booking.id)
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
    }

    static let packageSchema = JSONSchema.object(
        [
            "id": .string(), "name": .string(), "sessions": .integer(minimum: 0), "credit": Money.schema, "price": Money.schema,
            "image": RiderOperations.imageSchema,
        ],
        required: ["id", "name", "sessions", "credit", "price"])

    /// The picture of a cable or package: an id for `booking.media.get`, absent when none.
    static let imageSchema = JSONSchema.string(maxLength: 100).described("its picture: an id for booking.media.get; absent when none")

    static let passSchema = JSONSchema.object(
        [
            "sessions": .integer(minimum: 0), "balance": Money.schema,
            "recent": .array(
                of: .object(
                    [
                        "at": .string(format: .dateTime), "kind": .oneOf(["topup", "booking", "refund", "forfeit", "waiver"]),
                        "sessions": .integer(), "amount": Money.schema, "booking": JSONSchema.string().nullable(),
                    ], required: ["at", "kind", "sessions", "amount"]), maxItems: 20).described("the latest ledger entries, newest first"),
        ], required: ["sessions", "balance", "recent"])

    struct PassView: Codable, Sendable {
        var sessions: Int64
        var balance: Money
        var recent: [LedgerEntry]
    }

    static func passView(_ db: Database, user: String, currency: Currency) throws -> PassView {
        let pass = try Row.fetchOne(db, sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?", arguments: [user])
        let entries = try Row.fetchAll(
            db, sql: "SELECT * FROM ledger WHERE user_id = ? ORDER BY id DESC LIMIT 20", arguments: [user]
        ).map {
            LedgerEntry(
                at: $0["at"], kind: $0["kind"], sessions: $0["sessions_delta"], amount: Money(minor: $0["amount_minor_delta"], currency: currency),
                booking: $0["booking_id"])
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
            summary: "Buys a package (sessions and/or balance) through the payment provider: `dev` settles at once; `http` answers `pending` with a confirmationUrl and credits the pass when the provider calls back; a payment still pending after BACKEND_BOOKING_PAYMENT_EXPIRY_SECONDS (30 minutes) expires (`booking.payment.expired`). Send idem: a retry pays once.",
            auth: Self.rider, request: .object(["package": .string(minLength: 1, maxLength: 50)], required: ["package"]),
            response: .object(
                [
                    "payment": .string(), "status": .oneOf(["pending", "settled", "failed", "expired"]),
                    "confirmationUrl": JSONSchema.string(maxLength: 2_000).nullable().described("where the rider confirms a pending payment"),
                    "pass": Self.passSchema,
                ], required: ["payment", "status", "pass"])
        ) { (context, input: TopupRequest) in
            let rider = try context.requirePrincipal().userID
            // A retry must not charge again: answer it before calling the provider.
            if let earlier = try await context.earlierReply(as: TopupResult.self) { return earlier }
            let pool = try context.database()
            let (package, currency) = try await pool.read { db -> (Package?, Currency) in
                let currency = try ParkConfiguration.load(db).price.currency
                return (try ParkConfiguration.packages(db, currency: currency).first { $0.id == input.package }, currency)
            }
            guard let package else { throw ServiceError.invalid("package", "no such package") }
            // With an idem key the payment id follows from it, so concurrent retries give
            // the provider the same id (and Idempotency-Key) and are charged once.
            let paymentID = "pay_" + (context.idempotencyKey.map { Digest.sha256Hex(Array("\(rider)|\($0)".utf8)).prefix(20) }.map(String.init)
                ?? Digest.hex(Digest.randomBytes(10)))
            // The payment is on record before the provider is asked, so a callback that
            // comes back at once finds it, and a crash leaves a pending payment, not a lost one.
            let expiry = paymentExpirySeconds
            try await context.write { db in
                let now = Date()
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO payment (id, user_id, package_id, amount_minor, currency, status, created_at, sessions, credit_minor)
                        VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)
                        """,
                    arguments: [
                        paymentID, rider, package.id, package.price.minor, currency.code, Instant.format(now), package.sessions, package.credit.minor,
                    ])
                // A retry finds the payment recorded (no change): its timer stays as set.
                if db.changesCount > 0 { try PaymentExpiry.schedule(db, payment: paymentID, createdAt: now, after: expiry) }
            }
            let outcome = try await payments.charge(
                PaymentRequest(id: paymentID, user: rider, amount: package.price, description: package.name))
            let state = self.state
            return try await context.commit { db -> TopupResult in
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

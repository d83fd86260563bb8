import Foundation
import GRDB
import Platform

/// What park staff do: the day's schedule, attendance, sanctions, cancellations by the
/// park, blocked periods, and the park's configuration.
struct StaffOperations: Sendable {
    let riders: RiderDirectory
    let state: BookingState

    /// Running the day: staff and admins.
    static let staff = AuthRule.anyRole(["staff", "admin"])
    /// Prices, packages, opening hours and the park's settings: admins only.
    static let admin = AuthRule.anyRole(["admin"])

    var all: [ServiceOperation] { [day, mark, sanction, parkCancel, blockAdd, blockRemove, configure, hoursSet, cableSet, packageSet] }

    struct DayRequest: Codable, Sendable {
        var date: String
    }

    var day: ServiceOperation {
        let riders = self.riders, state = self.state
        return .task(
            "booking.staff.day",
            summary: "The day's schedule across all cables: every slot with its bookings and each rider's name and phone, the list of all the day's bookings, and the blocked periods that overlap the day's slots (to remove with booking.staff.blocks.remove).",
            auth: Self.staff, request: .object(["date": .string(format: .date)], required: ["date"]),
            response: .object(
                [
                    "date": .string(format: .date),
                    "items": .array(
                        of: .object(
                            [
                                "cable": .string(), "date": .string(format: .date), "localStart": .string(format: .time),
                                "localEnd": .string(format: .time), "start": .string(format: .dateTime), "end": .string(format: .dateTime),
                                "capacity": .integer(minimum: 1), "free": .integer(minimum: 0), "bookable": .boolean, "price": Money.schema,
                                "bookings": .array(of: BookingView.staffSchema, maxItems: 10_000),
                            ],
                            required: ["cable", "date", "localStart", "localEnd", "start", "end", "capacity", "free", "bookable", "price", "bookings"]),
                        maxItems: 100_000).described("every slot of the day on every cable, with its bookings"),
                    "bookings": .array(of: BookingView.staffSchema, maxItems: 100_000)
                        .described("every booking of the day, also those off today's grid"),
                    "blocks": .array(
                        of: .object(
                            [
                                "id": .string(), "cable": JSONSchema.string().nullable().described("null: every cable"),
                                "start": .string(format: .dateTime), "end": .string(format: .dateTime), "reason": .string(),
                            ], required: ["id", "cable", "start", "end", "reason"]), maxItems: 10_000),
                ], required: ["date", "items", "bookings", "blocks"])
        ) { (context, input: DayRequest) in
            let date = try ParkDates.parse(input.date, field: "date")
            let (slots, bookings, blocks) = try await context.database().read { db in
                let park = try state.configuration(db)
                let slots = try RiderOperations.availability(db, park: park, date: date, cable: nil, now: Date())
                let bookings = try Row.fetchAll(
                    db, sql: "SELECT * FROM booking WHERE local_date = ? ORDER BY start_at, cable_id, created_at", arguments: [date.description]
                ).map(BookingView.init(row:))
                // The day's span: its slots and its bookings (also those off the grid).
                let starts = slots.map(\.start) + bookings.map(\.start)
                let ends = slots.map(\.end) + bookings.map(\.end)
                var blocks: [JSONValue] = []
                if let from = starts.min(), let to = ends.max() {
                    blocks = try Row.fetchAll(
                        db, sql: "SELECT id, cable_id, start_at, end_at, reason FROM block WHERE start_at < ? AND end_at > ? ORDER BY start_at, id",
                        arguments: [to, from]
                    ).map { row in
                        [
                            "id": .string(row["id"]), "cable": (row["cable_id"] as String?).map { .string($0) } ?? .null,
                            "start": .string(row["start_at"]), "end": .string(row["end_at"]), "reason": .string(row["reason"]),
                        ]
                    }
                }
                return (slots, bookings, blocks)
            }
            let people = await riders.lookup(Set(bookings.map(\.userId)))
            let items: [JSONValue] = try slots.map { slot in
                let here = bookings.filter { $0.cable == slot.cable && $0.start == slot.start }
                var value = try WireJSON.value(of: slot)
                guard case .object(var members) = value else { return value }
                members["bookings"] = .array(
                    try here.map { booking in
                        guard case .object(var entry) = try WireJSON.value(of: booking) else { return .null }
                        entry["rider"] = people[booking.userId] ?? ["name": "unknown", "phone": nil]
                        return .object(entry)
                    })
                value = .object(members)
                return value
            }
            // Every booking of the day, also those off today's grid (a changed slot length, a
            // closed day, a cable taken out of service), so staff never lose one.
            let all: [JSONValue] = try bookings.map { booking in
                guard case .object(var entry) = try WireJSON.value(of: booking) else { return .null }
                entry["rider"] = people[booking.userId] ?? ["name": "unknown", "phone": nil]
                return .object(entry)
            }
            return ["date": .string(date.description), "items": .array(items), "bookings": .array(all), "blocks": .array(blocks)] as JSONValue
        }
    }

    struct MarkRequest: Codable, Sendable {
        var booking: String
        var outcome: String
        var reason: String?
    }

    /// Loads a booking for staff, or `not_found`.
    /// A booking staff act on; `forbidden` when it is `actor`'s own: the desk's powers
    /// (refunds, waivers, cash) are for riders, never for the staff member's own account.
    static func booking(_ db: Database, _ id: String, notOf actor: String) throws -> (BookingView, Row) {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM booking WHERE id = ?", arguments: [id]) else {
            throw ServiceError.notFound("no such booking")
        }
        let booking = BookingView(row: row)
        guard booking.userId != actor else { throw Self.ownAccount }
        return (booking, row)
    }

    /// Staff acting on their own account at the desk.
    static let ownAccount = ServiceError.forbidden("staff do not act on their own bookings or pass at the desk; ask a colleague")

    /// Staff's reason for an action: optional, up to 500 characters.
    static let reasonField = JSONSchema.string(maxLength: 500).described("why, in staff's words: kept with the action")

    var mark: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.mark",
            summary: "Marks a booking attended or no_show once its training has started, or corrects an earlier mark (attended ↔ no_show) with the pass adjusted: a no-show follows the booking's late-cancellation sanction (forfeit keeps the session, none returns it); a correction takes back or returns the difference (conflict already_spent when the pass no longer holds it). Recorded with the staff member and reason.",
            auth: Self.staff,
            request: .object(
                ["booking": .string(maxLength: 50), "outcome": .oneOf(AttendanceMark.Outcome.allCases.map(\.rawValue)), "reason": Self.reasonField],
                required: ["booking", "outcome"]),
            response: BookingView.schema
        ) { (context, input: MarkRequest, db: Database) in
            let actor = try context.requirePrincipal().userID
            let (booking, row) = try Self.booking(db, input.booking, notOf: actor)
            guard let outcome = AttendanceMark.Outcome(rawValue: input.outcome), let status = BookingStatus(rawValue: booking.status) else {
                throw ServiceError.invalid("outcome", "attended or no_show")
            }
            if status == .booked {
                guard let start = Instant.parse(booking.start), start <= context.receivedAt else {
                    throw ServiceError.conflict("attendance is marked once the training has started", reason: "not_started")
                }
            }
            let policy = LateCancellationPolicy.Sanction(rawValue: row["policy_sanction"]) ?? .forfeit
            let change: AttendanceMark.Change
            switch AttendanceMark.apply(outcome, to: AttendanceMark.State(status: status, sanction: booking.sanction), policy: policy) {
            case .success(let decided): change = decided
            case .failure(.unchanged): return booking
            case .failure(.notActive): throw ServiceError.conflict("this booking is \(booking.status)", reason: "not_active")
            }
            if change.movement > 0 {
                try PassLedger.refund(db, booking, kind: change.correction ? .correction : .refund, actor: actor, reason: input.reason)
            } else if change.movement < 0 {
                try PassLedger.takeBack(db, booking, kind: .correction, actor: actor, reason: input.reason)
            } else if change.sanction == "forfeit" {
                try PassLedger.post(db, user: booking.userId, kind: .forfeit, sessions: 0, amount: 0, booking: booking.id, actor: actor)
            }
            try db.execute(
                sql: "UPDATE booking SET status = ?, sanction = ?, change_version = ? WHERE id = ?",
                arguments: [change.status.rawValue, change.sanction, try ChangeFeed.stamp(db), booking.id])
            try StaffLog.record(
                db, change.correction ? .markCorrected : .marked, actor: actor, booking: booking.id, user: booking.userId, reason: input.reason,
                detail: ["from": .string(booking.status), "to": .string(change.status.rawValue), "sanction": change.sanction.map { .string($0) } ?? .null])
            guard let updated = try BookingView.load(db, id: booking.id) else { throw ServiceError.internal(ref: booking.id) }
            try Outbox.append(db, type: "booking.\(change.status.rawValue)", data: updated.eventData)
            state.changed(db)
            return updated
        }
    }

    struct SanctionRequest: Codable, Sendable {
        var booking: String
        var action: String
        var reason: String?
    }

    var sanction: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.sanction",
            summary: "Decides a late cancellation's or no-show's sanction: `waive` returns the session or money, `forfeit` keeps it (conflict already_spent when the pass no longer holds what was returned). Recorded with the staff member and reason.",
            auth: Self.staff,
            request: .object(
                ["booking": .string(maxLength: 50), "action": .oneOf(["waive", "forfeit"]), "reason": Self.reasonField], required: ["booking", "action"]),
            response: BookingView.schema
        ) { (context, input: SanctionRequest, db: Database) in
            let actor = try context.requirePrincipal().userID
            let (booking, _) = try Self.booking(db, input.booking, notOf: actor)
            guard booking.userId != DeletedRider.id else {
                throw ServiceError.conflict("the rider's account was deleted; there is no pass to adjust", reason: "rider_deleted")
            }
            guard ["late_cancelled", "no_show"].contains(booking.status) else {
                throw ServiceError.conflict("only late cancellations and no-shows have sanctions", reason: "no_sanction")
            }
            let current = booking.sanction ?? "none"
            let decided: String
            switch (input.action, current) {
            case ("waive", "forfeit"):
                try PassLedger.refund(db, booking, kind: .waiver, actor: actor, reason: input.reason)
                decided = "waived"
            case ("forfeit", "none"), ("forfeit", "waived"):
                // Taking back what was returned: the pass must still hold it.
                try PassLedger.takeBack(db, booking, kind: .forfeit, actor: actor, reason: input.reason)
                decided = "forfeit"
            default:
                return booking  // already as asked
            }
            try db.execute(
                sql: "UPDATE booking SET sanction = ?, change_version = ? WHERE id = ?", arguments: [decided, try ChangeFeed.stamp(db), booking.id])
            try StaffLog.record(
                db, .sanction, actor: actor, booking: booking.id, user: booking.userId, reason: input.reason,
                detail: ["from": .string(current), "to": .string(decided)])
            guard let updated = try BookingView.load(db, id: booking.id) else { throw ServiceError.internal(ref: booking.id) }
            try Outbox.append(db, type: "booking.sanction_changed", data: updated.eventData)
            state.changed(db)
            return updated
        }
    }

    struct ParkCancelRequest: Codable, Sendable {
        var booking: String
        var reason: String?
    }

    /// Cancels a booking on the park's side: full refund (none for a deleted rider's), the
    /// staff action logged, `booking.cancelled_by_park` with the reason.
    static func cancelByPark(_ db: Database, _ booking: BookingView, actor: String, reason: String?, detail: JSONValue = .object([:])) throws -> BookingView {
        let now = Instant.format(Date())
        try PassLedger.refund(db, booking, at: now, actor: actor, reason: reason)
        try db.execute(
            sql: "UPDATE booking SET status = 'cancelled_by_park', cancelled_at = ?, change_version = ? WHERE id = ?",
            arguments: [now, try ChangeFeed.stamp(db), booking.id])
        try StaffLog.record(db, .cancelled, actor: actor, booking: booking.id, user: booking.userId, reason: reason, detail: detail, at: now)
        guard let updated = try BookingView.load(db, id: booking.id) else { throw ServiceError.internal(ref: booking.id) }
        if case .object(var data) = updated.eventData {
            data["reason"] = .string(reason ?? "")
            try Outbox.append(db, type: "booking.cancelled_by_park", data: JSONValue.object(data))
        }
        return updated
    }

    var parkCancel: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.cancel",
            summary: "Cancels a booking on the park's side: full refund, and an event so the rider is notified. Recorded with the staff member and reason.",
            auth: Self.staff,
            request: .object(["booking": .string(maxLength: 50), "reason": Self.reasonField], required: ["booking"]),
            response: BookingView.schema
        ) { (context, input: ParkCancelRequest, db: Database) in
            let actor = try context.requirePrincipal().userID
            let (booking, _) = try Self.booking(db, input.booking, notOf: actor)
            guard booking.status == "booked" else { throw ServiceError.conflict("this booking is \(booking.status)", reason: "not_active") }
            let updated = try Self.cancelByPark(db, booking, actor: actor, reason: input.reason)
            state.changed(db)
            return updated
        }
    }

    struct BlockRequest: Codable, Sendable {
        var cable: String?
        var start: String
        var end: String
        var reason: String?
        var cancelBookings: Bool?
    }

    struct BlockResult: Codable, Sendable {
        var id: String
        var cancelled: [String]
    }

    var blockAdd: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.blocks.add",
            summary: "Blocks a period (maintenance, a storm, an event) on one cable or all. With `cancelBookings: true` every booking inside it (overlapping the period) is cancelled by the park in the same transaction, each with a full refund and booking.cancelled_by_park; otherwise bookings already made stay. Answers the block's id and the cancelled bookings' ids. Recorded with the staff member and reason.",
            auth: Self.staff,
            request: .object(
                [
                    "cable": .string(maxLength: 50), "start": .string(format: .dateTime), "end": .string(format: .dateTime), "reason": Self.reasonField,
                    "cancelBookings": .boolean,
                ],
                required: ["start", "end"]),
            response: .object(["id": .string(), "cancelled": .array(of: .string(), maxItems: 100_000)], required: ["id", "cancelled"])
        ) { (context, input: BlockRequest, db: Database) in
            let actor = try context.requirePrincipal().userID
            try ParkDates.requireInstant(input.start, field: "start")
            try ParkDates.requireInstant(input.end, field: "end")
            guard let start = Instant.parse(input.start), let end = Instant.parse(input.end), start < end else {
                throw ServiceError.invalid("end", "must be after `start`")
            }
            if let cable = input.cable, try Bool.fetchOne(db, sql: "SELECT 1 FROM cable WHERE id = ?", arguments: [cable]) != true {
                throw ServiceError.invalid("cable", "no such cable")
            }
            let id = "blk_" + Digest.hex(Digest.randomBytes(8))
            let (from, to) = (Instant.format(start), Instant.format(end))
            try db.execute(
                sql: "INSERT INTO block (id, cable_id, start_at, end_at, reason, change_version) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [id, input.cable, from, to, input.reason ?? "", try ChangeFeed.stamp(db)])
            var cancelled: [String] = []
            if input.cancelBookings == true {
                let inside = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM booking WHERE status = 'booked' AND start_at < ? AND end_at > ? AND (? IS NULL OR cable_id = ?)
                        ORDER BY start_at, id
                        """,
                    arguments: [to, from, input.cable, input.cable]
                ).map(BookingView.init(row:))
                for booking in inside {
                    cancelled.append(try Self.cancelByPark(db, booking, actor: actor, reason: input.reason, detail: ["block": .string(id)]).id)
                }
            }
            try StaffLog.record(
                db, .blockAdded, actor: actor, reason: input.reason,
                detail: [
                    "block": .string(id), "cable": input.cable.map { .string($0) } ?? .null, "start": .string(from), "end": .string(to),
                    "cancelled": .integer(Int64(cancelled.count)),
                ])
            state.changed(db)
            return BlockResult(id: id, cancelled: cancelled)
        }
    }

    struct BlockRemove: Codable, Sendable {
        var id: String
        var reason: String?
    }

    var blockRemove: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.blocks.remove", summary: "Removes a blocked period.", auth: Self.staff,
            request: .object(["id": .string(maxLength: 50), "reason": Self.reasonField], required: ["id"]), response: .empty
        ) { (context, input: BlockRemove, db: Database) in
            let actor = try context.requirePrincipal().userID
            try db.execute(sql: "DELETE FROM block WHERE id = ?", arguments: [input.id])
            guard db.changesCount == 1 else { throw ServiceError.notFound("no such block") }
            try StaffLog.record(db, .blockRemoved, actor: actor, reason: input.reason, detail: ["block": .string(input.id)])
            for scope in BookingChanges.blockScopes { try ChangeFeed.recordDeletion(db, entity: "block", id: input.id, scope: scope) }
            state.changed(db)
            return Empty()
        }
    }

    struct Configure: Codable, Sendable {
        var timeZone: String?
        var slotMinutes: Int?
        var capacity: Int?
        var minimumNoticeMinutes: Int?
        var horizonDays: Int?
        var maxBookingsPerDay: Int?
        var price: Money?
        var freeCancellationSeconds: Int64?
        var lateSanction: String?
    }

    var configure: ServiceOperation {
        let state = self.state
        return .write(
            "booking.admin.park.update",
            summary: "Changes the park's settings (absent fields stay). Bookings already made keep the price and cancellation rule they were made with. Bookings already made stay where a change leaves them (over a lowered capacity, on a closed day, on a cable out of service): cancel them with booking.staff.blocks.add `cancelBookings: true` or booking.staff.cancel, which refund them.",
            auth: Self.admin,
            request: .object([
                "timeZone": .string(format: .timeZone), "slotMinutes": .integer(minimum: 5, maximum: 240),
                "capacity": .integer(minimum: 1, maximum: 100), "minimumNoticeMinutes": .integer(minimum: 0, maximum: 10_080),
                "horizonDays": .integer(minimum: 1, maximum: 365), "maxBookingsPerDay": .integer(minimum: 1, maximum: 100),
                "price": Money.schema(minor: 0...100_000_000), "freeCancellationSeconds": .integer(minimum: 0, maximum: 604_800),
                "lateSanction": .oneOf(["forfeit", "none"]),
            ]),
            response: .empty
        ) { (_, input: Configure, db: Database) in
            if let price = input.price, price.minor < 0 || price.minor > 100_000_000 {
                throw ServiceError.invalid("price.minor", "must be 0 to 100000000")
            }
            // Balances and the ledger are in the park's currency: it cannot change under them.
            let currencyChanges = try input.price.map { $0.currency.code != (try String.fetchOne(db, sql: "SELECT currency FROM park WHERE id = 1")) } ?? false
            if currencyChanges, try Bool.fetchOne(db, sql: "SELECT 1 FROM ledger WHERE amount_minor_delta != 0 LIMIT 1") == true {
                throw ServiceError.conflict("balances exist in the current currency; it cannot change", reason: "currency_in_use")
            }
            if currencyChanges {
                // Packages are priced in the park's currency: devices get them again.
                for id in try String.fetchAll(db, sql: "SELECT id FROM package") {
                    try db.execute(sql: "UPDATE package SET change_version = ? WHERE id = ?", arguments: [try ChangeFeed.stamp(db), id])
                }
            }
            try db.execute(
                sql: """
                    UPDATE park SET time_zone = COALESCE(?, time_zone), slot_minutes = COALESCE(?, slot_minutes),
                        capacity = COALESCE(?, capacity), min_notice_minutes = COALESCE(?, min_notice_minutes),
                        horizon_days = COALESCE(?, horizon_days), max_bookings_per_day = COALESCE(?, max_bookings_per_day),
                        price_minor = COALESCE(?, price_minor), currency = COALESCE(?, currency),
                        free_cancellation_seconds = COALESCE(?, free_cancellation_seconds), sanction = COALESCE(?, sanction)
                    WHERE id = 1
                    """,
                arguments: [
                    input.timeZone, input.slotMinutes, input.capacity, input.minimumNoticeMinutes, input.horizonDays, input.maxBookingsPerDay,
                    input.price?.minor, input.price?.currency.code, input.freeCancellationSeconds, input.lateSanction,
                ])
            try state.settingsChanged(db)
            return Empty()
        }
    }

    struct HoursRequest: Codable, Sendable {
        var weekday: Int?
        var date: String?
        var open: String?
        var close: String?
    }

    var hoursSet: ServiceOperation {
        let state = self.state
        return .write(
            "booking.admin.hours.set",
            summary: "Sets opening hours for a weekday (1 = Monday) or an exception date; without open/close the day is closed. `close` 24:00 is written 00:00. Bookings already made stay where a change leaves them (over a lowered capacity, on a closed day, on a cable out of service): cancel them with booking.staff.blocks.add `cancelBookings: true` or booking.staff.cancel, which refund them.",
            auth: Self.admin,
            request: .object([
                "weekday": .integer(minimum: 1, maximum: 7), "date": .string(format: .date), "open": .string(format: .time),
                "close": .string(format: .time),
            ]),
            response: .empty
        ) { (_, input: HoursRequest, db: Database) in
            guard (input.weekday == nil) != (input.date == nil) else {
                throw ServiceError.validationFailed(["weekday": "give a weekday or a date", "date": "give a weekday or a date"])
            }
            if let date = input.date { _ = try ParkDates.parse(date, field: "date") }
            var hours: OpeningHours?
            if let openText = input.open, let closeText = input.close, let open = Platform.Formats.time(openText),
                var close = Platform.Formats.time(closeText)
            {
                if close == 0 { close = 1_440 }
                guard open < close else { throw ServiceError.invalid("close", "must be after `open`") }
                hours = OpeningHours(open: open, close: close)
            } else if input.open != nil || input.close != nil {
                throw ServiceError.validationFailed(["open": "give both open and close", "close": "give both open and close"])
            }
            if let weekday = input.weekday {
                if let hours {
                    try db.execute(sql: "INSERT OR REPLACE INTO park_hours VALUES (?, ?, ?)", arguments: [weekday, hours.open, hours.close])
                } else {
                    try db.execute(sql: "DELETE FROM park_hours WHERE weekday = ?", arguments: [weekday])
                }
            } else if let date = input.date {
                try db.execute(sql: "INSERT OR REPLACE INTO park_exception VALUES (?, ?, ?)", arguments: [date, hours?.open, hours?.close])
            }
            try state.settingsChanged(db)
            return Empty()
        }
    }

    struct CableRequest: Codable, Sendable {
        var id: String
        var name: String
        var active: Bool?
        var image: String?
    }

    /// The `image` member of a cable or package request: absent keeps the picture, `null`
    /// clears it, an id (of `booking.media.put`) sets it.
    static let imageField = JSONSchema.string(minLength: 1, maxLength: 100).nullable()
        .described("its picture: an id from booking.media.put; null removes it; absent keeps it")

    /// The picture a row should show after a request: the one it had unless the request
    /// names `image` (an id, or `null` for none).
    static func requestedImage(_ context: RequestContext, current: String?) -> String? {
        guard let given = context.data["image"] else { return current }
        return given.stringValue
    }

    var cableSet: ServiceOperation {
        let state = self.state
        return .write(
            "booking.admin.cables.set",
            summary: "Adds or renames a cable (reverse), takes it out of service (`active: false`), or sets or removes its picture (`image`). Bookings already made stay where a change leaves them (over a lowered capacity, on a closed day, on a cable out of service): cancel them with booking.staff.blocks.add `cancelBookings: true` or booking.staff.cancel, which refund them.",
            auth: Self.admin,
            request: .object(
                [
                    "id": .string(minLength: 1, maxLength: 50, format: .key), "name": .name(maxLength: 100), "active": .boolean,
                    "image": Self.imageField,
                ], required: ["id", "name"]),
            response: .empty
        ) { (context, input: CableRequest, db: Database) in
            let current = try String.fetchOne(db, sql: "SELECT image_id FROM cable WHERE id = ?", arguments: [input.id])
            let image = Self.requestedImage(context, current: current)
            try MediaCatalog.requireUpload(db, image, field: "image")
            try db.execute(
                sql: """
                    INSERT INTO cable (id, name, active, image_id, change_version, ever_active) VALUES (?, ?, ?, ?, ?, ?3)
                    ON CONFLICT(id) DO UPDATE SET name = excluded.name, active = excluded.active, image_id = excluded.image_id,
                        change_version = excluded.change_version, ever_active = MAX(ever_active, excluded.active)
                    """,
                arguments: [input.id, input.name, input.active ?? true, image, try ChangeFeed.stamp(db)])
            try MediaCatalog.replace(db, owner: Cable.imageOwner(input.id), current, with: image, field: "image", store: try context.mediaStore())
            try state.settingsChanged(db)
            return Empty()
        }
    }

}

extension StaffOperations {
    struct PackageRequest: Codable, Sendable {
        var id: String
        var name: String
        var sessions: Int64
        var credit: Int64
        var price: Int64
        var active: Bool?
        var image: String?
    }

    var packageSet: ServiceOperation {
        let state = self.state
        return .write(
            "booking.admin.packages.set",
            summary: "Adds or changes a pass package: sessions and/or balance credit (minor units) for a price (minor units, the park's currency); `active: false` withdraws it; `image` sets or removes its picture.",
            auth: Self.admin,
            request: .object(
                [
                    "id": .string(minLength: 1, maxLength: 50, format: .key), "name": .name(maxLength: 100),
                    "sessions": .integer(minimum: 0, maximum: 1_000), "credit": .integer(minimum: 0, maximum: 100_000_000),
                    "price": .integer(minimum: 1, maximum: 100_000_000), "active": .boolean, "image": Self.imageField,
                ], required: ["id", "name", "sessions", "credit", "price"]),
            response: .empty
        ) { (context, input: PackageRequest, db: Database) in
            guard input.sessions > 0 || input.credit > 0 else {
                throw ServiceError.validationFailed(["sessions": "a package gives sessions or credit", "credit": "a package gives sessions or credit"])
            }
            let current = try String.fetchOne(db, sql: "SELECT image_id FROM package WHERE id = ?", arguments: [input.id])
            let image = Self.requestedImage(context, current: current)
            try MediaCatalog.requireUpload(db, image, field: "image")
            try db.execute(
                sql: """
                    INSERT INTO package (id, name, sessions, credit_minor, price_minor, active, image_id, change_version, ever_active)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?6)
                    ON CONFLICT(id) DO UPDATE SET name = excluded.name, sessions = excluded.sessions, credit_minor = excluded.credit_minor,
                        price_minor = excluded.price_minor, active = excluded.active, image_id = excluded.image_id,
                        change_version = excluded.change_version, ever_active = MAX(ever_active, excluded.active)
                    """,
                arguments: [input.id, input.name, input.sessions, input.credit, input.price, input.active ?? true, image, try ChangeFeed.stamp(db)])
            try MediaCatalog.replace(db, owner: Package.imageOwner(input.id), current, with: image, field: "image", store: try context.mediaStore())
            try state.settingsChanged(db)
            return Empty()
        }
    }
}

/// Riders' names and phones, asked from auth (`auth.internal.users.get`) when staff look
/// at a day or a rider: booking keeps only user ids, so a deleted account leaves no
/// personal data here. The desk also finds or creates riders by phone through it.
struct RiderDirectory: Sendable {
    let client: ServiceClient?

    /// `{name, phone}` of an auth user record.
    private static func person(_ user: JSONValue) -> JSONValue {
        let name = [user["firstName"]?.stringValue, user["lastName"]?.stringValue].compactMap { $0 }.joined(separator: " ")
        return ["name": .string(name), "phone": user["phone"] ?? .null]
    }

    private func users(_ ids: Set<String>) async throws -> [JSONValue] {
        guard let client else { throw ServiceError.unavailable("riders cannot be looked up: auth is not configured") }
        let reply: Reply.Parsed
        do {
            reply = try await client.call(
                "auth.internal.users.get", data: ["ids": .array(ids.sorted().map { .string($0) })], idempotent: true, timeout: .seconds(2))
        } catch {
            throw ServiceError.unavailable("auth did not answer; try again")
        }
        guard case .array(let users)? = reply.data?["users"] else { throw ServiceError.unavailable("auth could not list the riders") }
        return users
    }

    /// `{name, phone}` per user id; riders auth cannot give (or all, when auth does not
    /// answer) are left out, and staff see them as unknown.
    func lookup(_ ids: Set<String>) async -> [String: JSONValue] {
        guard client != nil, !ids.isEmpty, let users = try? await users(ids) else { return [:] }
        var people: [String: JSONValue] = [:]
        for user in users {
            guard let id = user["id"]?.stringValue else { continue }
            people[id] = Self.person(user)
        }
        return people
    }

    /// A rider known to auth: `{id, name, phone}`; `not_found` when auth has no such
    /// user, `unavailable` when auth cannot be asked.
    func rider(_ id: String) async throws -> JSONValue {
        guard let user = try await users([id]).first(where: { $0["id"]?.stringValue == id }), case .object(var person) = Self.person(user) else {
            throw ServiceError.notFound("no such rider")
        }
        person["id"] = .string(id)
        return .object(person)
    }

    /// The rider with a phone number, created as a phone-only account when there is none
    /// and names are given (`auth.internal.users.by_phone`): `{id, name, phone, created}`.
    func rider(phone: String, firstName: String?, lastName: String?, actor: String) async throws -> JSONValue {
        guard let client else { throw ServiceError.unavailable("riders cannot be looked up: auth is not configured") }
        var request: [String: JSONValue] = ["phone": .string(phone), "actor": .string(actor)]
        if let firstName { request["firstName"] = .string(firstName) }
        if let lastName { request["lastName"] = .string(lastName) }
        let data = JSONValue.object(request)
        let reply: Reply.Parsed
        do {
            // A retry cannot create two accounts: the second finds the first by its number.
            reply = try await client.call("auth.internal.users.by_phone", data: data, idempotent: true, timeout: .seconds(3))
        } catch {
            throw ServiceError.unavailable("auth did not answer; try again")
        }
        if let error = reply.error {
            switch error.code {
            case .notFound: throw ServiceError.notFound(error.message)
            case .validationFailed:
                // Auth's field names are the request's: phone, firstName, lastName.
                throw ServiceError.validationFailed(error.fields.isEmpty ? ["phone": error.message] : error.fields)
            default: throw ServiceError.unavailable("auth could not find or create the rider; try again")
            }
        }
        guard let user = reply.data, let id = user["id"]?.stringValue, case .object(var person) = Self.person(user) else {
            throw ServiceError.unavailable("auth sent no rider")
        }
        person["id"] = .string(id)
        person["created"] = user["created"] ?? false
        return .object(person)
    }
}

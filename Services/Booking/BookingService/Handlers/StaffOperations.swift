import Foundation
import GRDB
import Platform

/// What park staff do: the day's schedule, attendance, sanctions, cancellations by the
/// park, blocked periods, and the park's configuration.
struct StaffOperations: Sendable {
    let riders: RiderDirectory
    let state: BookingState

    static let staff = AuthRule.anyRole(["staff", "admin"])

    var all: [ServiceOperation] { [day, mark, sanction, parkCancel, blockAdd, blockRemove, configure, hoursSet, cableSet, packageSet] }

    struct DayRequest: Codable, Sendable {
        var date: String
    }

    var day: ServiceOperation {
        let riders = self.riders, state = self.state
        return .task(
            "booking.staff.day",
            summary: "The day's schedule across all cables: every slot with its bookings and each rider's name and phone, and the list of all the day's bookings.",
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
                ], required: ["date", "items", "bookings"])
        ) { (context, input: DayRequest) in
            let date = try ParkDates.parse(input.date, field: "date")
            let (slots, bookings) = try await context.database().read { db in
                let park = try state.configuration(db)
                let slots = try RiderOperations.availability(db, park: park, date: date, cable: nil, now: Date())
                let bookings = try Row.fetchAll(
                    db, sql: "SELECT * FROM booking WHERE local_date = ? ORDER BY start_at, cable_id, created_at", arguments: [date.description]
                ).map(BookingView.init(row:))
                return (slots, bookings)
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
            return ["date": .string(date.description), "items": .array(items), "bookings": .array(all)] as JSONValue
        }
    }

    struct MarkRequest: Codable, Sendable {
        var booking: String
        var outcome: String
    }

    /// Loads a booking for staff, or `not_found`.
    static func booking(_ db: Database, _ id: String) throws -> (BookingView, Row) {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM booking WHERE id = ?", arguments: [id]) else {
            throw ServiceError.notFound("no such booking")
        }
        return (BookingView(row: row), row)
    }

    var mark: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.mark",
            summary: "Marks a booking attended or no_show once its training has started; a no-show follows the booking's late-cancellation sanction unless waived later.",
            auth: Self.staff,
            request: .object(["booking": .string(maxLength: 50), "outcome": .oneOf(["attended", "no_show"])], required: ["booking", "outcome"]),
            response: BookingView.schema
        ) { (context, input: MarkRequest, db: Database) in
            let (booking, row) = try Self.booking(db, input.booking)
            guard booking.status == "booked" else { throw ServiceError.conflict("this booking is \(booking.status)", reason: "not_active") }
            guard let start = Instant.parse(booking.start), start <= context.receivedAt else {
                throw ServiceError.conflict("attendance is marked once the training has started", reason: "not_started")
            }
            var sanction: String?
            if input.outcome == "no_show" {
                if row["policy_sanction"] as String == "forfeit" {
                    sanction = "forfeit"
                    try PassLedger.post(db, user: booking.userId, kind: "forfeit", sessions: 0, amount: 0, booking: booking.id)
                } else {
                    sanction = "none"
                    try PassLedger.refund(db, booking)
                }
            }
            try db.execute(
                sql: "UPDATE booking SET status = ?, sanction = ?, change_version = ? WHERE id = ?",
                arguments: [input.outcome, sanction, try ChangeFeed.stamp(db), booking.id])
            guard let updated = try BookingView.load(db, id: booking.id) else { throw ServiceError.internal(ref: booking.id) }
            try Outbox.append(db, type: "booking.\(input.outcome)", data: updated.eventData)
            state.changed(db)
            return updated
        }
    }

    struct SanctionRequest: Codable, Sendable {
        var booking: String
        var action: String
    }

    var sanction: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.sanction",
            summary: "Decides a late cancellation's or no-show's sanction: `waive` returns the session or money, `forfeit` keeps it.",
            auth: Self.staff,
            request: .object(["booking": .string(maxLength: 50), "action": .oneOf(["waive", "forfeit"])], required: ["booking", "action"]),
            response: BookingView.schema
        ) { (_, input: SanctionRequest, db: Database) in
            let (booking, _) = try Self.booking(db, input.booking)
            guard booking.userId != "deleted" else {
                throw ServiceError.conflict("the rider's account was deleted; there is no pass to adjust", reason: "rider_deleted")
            }
            guard ["late_cancelled", "no_show"].contains(booking.status) else {
                throw ServiceError.conflict("only late cancellations and no-shows have sanctions", reason: "no_sanction")
            }
            let current = booking.sanction ?? "none"
            switch (input.action, current) {
            case ("waive", "forfeit"):
                try PassLedger.refund(db, booking, kind: "waiver")
                try db.execute(
                    sql: "UPDATE booking SET sanction = 'waived', change_version = ? WHERE id = ?", arguments: [try ChangeFeed.stamp(db), booking.id])
            case ("forfeit", "none"), ("forfeit", "waived"):
                // Taking back what was returned: the pass must still hold it.
                let pass = try Row.fetchOne(db, sql: "SELECT sessions, balance_minor FROM pass WHERE user_id = ?", arguments: [booking.userId])
                let enough = booking.paidWith == "session"
                    ? (pass?["sessions"] as Int64? ?? 0) >= 1 : (pass?["balance_minor"] as Int64? ?? 0) >= booking.price.minor
                guard enough else {
                    throw ServiceError.conflict("the rider's pass no longer holds what was returned", reason: "already_spent")
                }
                if booking.paidWith == "session" {
                    try PassLedger.post(db, user: booking.userId, kind: "forfeit", sessions: -1, amount: 0, booking: booking.id)
                } else {
                    try PassLedger.post(db, user: booking.userId, kind: "forfeit", sessions: 0, amount: -booking.price.minor, booking: booking.id)
                }
                try db.execute(
                    sql: "UPDATE booking SET sanction = 'forfeit', change_version = ? WHERE id = ?", arguments: [try ChangeFeed.stamp(db), booking.id])
            default:
                break  // already as asked
            }
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

    var parkCancel: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.cancel", summary: "Cancels a booking on the park's side: full refund, and an event so the rider is notified.",
            auth: Self.staff,
            request: .object(["booking": .string(maxLength: 50), "reason": .string(maxLength: 500)], required: ["booking"]),
            response: BookingView.schema
        ) { (_, input: ParkCancelRequest, db: Database) in
            let (booking, _) = try Self.booking(db, input.booking)
            guard booking.status == "booked" else { throw ServiceError.conflict("this booking is \(booking.status)", reason: "not_active") }
            try PassLedger.refund(db, booking)
            try db.execute(
                sql: "UPDATE booking SET status = 'cancelled_by_park', cancelled_at = ?, change_version = ? WHERE id = ?",
                arguments: [Instant.format(Date()), try ChangeFeed.stamp(db), booking.id])
            guard let updated = try BookingView.load(db, id: booking.id) else { throw ServiceError.internal(ref: booking.id) }
            guard case .object(var data) = updated.eventData else { return updated }
            data["reason"] = .string(input.reason ?? "")
            try Outbox.append(db, type: "booking.cancelled_by_park", data: JSONValue.object(data))
            state.changed(db)
            return updated
        }
    }

    struct BlockRequest: Codable, Sendable {
        var cable: String?
        var start: String
        var end: String
        var reason: String?
    }

    var blockAdd: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.blocks.add", summary: "Blocks a period (maintenance, events) on one cable or all; bookings already made stay (cancel them with booking.staff.cancel).",
            auth: Self.staff,
            request: .object(
                ["cable": .string(maxLength: 50), "start": .string(format: .dateTime), "end": .string(format: .dateTime), "reason": .string(maxLength: 500)],
                required: ["start", "end"]),
            response: .object(["id": .string()], required: ["id"])
        ) { (_, input: BlockRequest, db: Database) in
            guard let start = Instant.parse(input.start), let end = Instant.parse(input.end), start < end else {
                throw ServiceError.invalid("end", "must be after `start`")
            }
            if let cable = input.cable, try Bool.fetchOne(db, sql: "SELECT 1 FROM cable WHERE id = ?", arguments: [cable]) != true {
                throw ServiceError.invalid("cable", "no such cable")
            }
            let id = "blk_" + Digest.hex(Digest.randomBytes(8))
            try db.execute(
                sql: "INSERT INTO block (id, cable_id, start_at, end_at, reason, change_version) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [id, input.cable, Instant.format(start), Instant.format(end), input.reason ?? "", try ChangeFeed.stamp(db)])
            state.changed(db)
            return ["id": .string(id)] as JSONValue
        }
    }

    struct BlockRemove: Codable, Sendable {
        var id: String
    }

    var blockRemove: ServiceOperation {
        let state = self.state
        return .write(
            "booking.staff.blocks.remove", summary: "Removes a blocked period.", auth: Self.staff,
            request: .object(["id": .string(maxLength: 50)], required: ["id"]), response: .empty
        ) { (_, input: BlockRemove, db: Database) in
            try db.execute(sql: "DELETE FROM block WHERE id = ?", arguments: [input.id])
            guard db.changesCount == 1 else { throw ServiceError.notFound("no such block") }
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
            summary: "Changes the park's settings (absent fields stay). Bookings already made keep the price and cancellation rule they were made with.",
            auth: Self.staff,
            request: .object([
                "timeZone": .string(format: .timeZone), "slotMinutes": .integer(minimum: 5, maximum: 240),
                "capacity": .integer(minimum: 1, maximum: 100), "minimumNoticeMinutes": .integer(minimum: 0, maximum: 10_080),
                "horizonDays": .integer(minimum: 1, maximum: 365), "maxBookingsPerDay": .integer(minimum: 1, maximum: 100),
                "price": Money.schema, "freeCancellationSeconds": .integer(minimum: 0, maximum: 604_800),
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
            state.settingsChanged(db)
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
            summary: "Sets opening hours for a weekday (1 = Monday) or an exception date; without open/close the day is closed. `close` 24:00 is written 00:00.",
            auth: Self.staff,
            request: .object([
                "weekday": .integer(minimum: 1, maximum: 7), "date": .string(format: .date), "open": .string(format: .time),
                "close": .string(format: .time),
            ]),
            response: .empty
        ) { (_, input: HoursRequest, db: Database) in
            guard (input.weekday == nil) != (input.date == nil) else {
                throw ServiceError.validationFailed(["weekday": "give a weekday or a date", "date": "give a weekday or a date"])
            }
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
            state.settingsChanged(db)
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
            summary: "Adds or renames a cable (reverse), takes it out of service (`active: false`), or sets or removes its picture (`image`).",
            auth: Self.staff,
            request: .object(
                [
                    "id": .string(minLength: 1, maxLength: 50), "name": .string(minLength: 1, maxLength: 100), "active": .boolean,
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
            state.settingsChanged(db)
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
            auth: Self.staff,
            request: .object(
                [
                    "id": .string(minLength: 1, maxLength: 50), "name": .string(minLength: 1, maxLength: 100),
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
            state.settingsChanged(db)
            return Empty()
        }
    }
}

/// Riders' names and phones, asked from auth (`auth.internal.users.get`) when staff look
/// at a day: booking keeps only user ids, so a deleted account leaves no personal data here.
struct RiderDirectory: Sendable {
    let client: ServiceClient?

    func lookup(_ ids: Set<String>) async -> [String: JSONValue] {
        guard let client, !ids.isEmpty else { return [:] }
        guard let reply = try? await client.call(
            "auth.internal.users.get", data: ["ids": .array(ids.sorted().map { .string($0) })], idempotent: true, timeout: .seconds(2)),
            case .array(let users)? = reply.data?["users"]
        else { return [:] }
        var people: [String: JSONValue] = [:]
        for user in users {
            guard let id = user["id"]?.stringValue else { continue }
            let name = [user["firstName"]?.stringValue, user["lastName"]?.stringValue].compactMap { $0 }.joined(separator: " ")
            people[id] = ["name": .string(name), "phone": user["phone"] ?? .null]
        }
        return people
    }
}

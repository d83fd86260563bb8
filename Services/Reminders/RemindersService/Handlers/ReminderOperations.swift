import Foundation
import GRDB
import Platform

/// A user's reminders: made (with an id the app generates offline), read, changed (offline
/// edits merged per field, the latest edit winning), marked done (one occurrence of a
/// recurring one), snoozed, archived by deleting, restored, purged.
struct ReminderOperations: Sendable {
    static let user = AuthRule.authenticated

    var all: [ServiceOperation] { [create, get, update, delete, restore, purge, done, snooze] }

    static let reminderResponse = ReminderViews.reminderSchema
    static let idField = JSONSchema.string(minLength: 1, maxLength: 64)

    struct IDRequest: Codable, Sendable {
        var id: String
        var editedAt: String?
    }

    var create: ServiceOperation {
        var request = ReminderInput.fields
        request["id"] = ClientGeneratedID.schema.described("the app's own id for it (a retried or replayed create names the same reminder); default: one is made")
        return .write(
            "reminders.create",
            summary: "Makes a reminder: title, description, location, notes, category, importance, the special mark, an image, the notification kind; `start` in `zone` or floating or all-day; an RRULE with exceptions; alerts (lead times) and a repeating alert. With the app's own `id` (unique per user), a create sent again is answered with the reminder it made (the same id with other content: conflict id_taken; an id purged meanwhile: conflict purged).",
            auth: Self.user, request: .object(request, required: ["title", "start"]), response: Self.reminderResponse
        ) { (context, input: ReminderInput, db: Database) -> ReminderView in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            let present = ReminderInput.present(context.data)
            let content = try input.apply(to: try ReminderStore.blank(db, user: user), present: present) { _ in true }
            let id = try input.id.map { try ClientGeneratedID.check($0) } ?? RecordID.make(prefix: "rem", at: now)
            let createHash = Self.createHash(context.data)
            if let existing = try ReminderRow.find(db, id: id, user: user) {
                // The same create again (its reply lost, sent again after other devices
                // changed, archived or restored the reminder): the reminder as it is now.
                let original = try String.fetchOne(db, sql: "SELECT create_hash FROM reminder WHERE rowid = ?", arguments: [existing.rowID])
                // A digest stored before lead times were taken as a set is of the alerts as sent.
                guard original.map({ $0 == createHash || $0 == Self.createHash(context.data, alertsAsSent: true) }) ?? (existing.content == content) else {
                    throw ServiceError.conflict("this id names another reminder", reason: "id_taken")
                }
                return try ReminderView(db, existing, clock: try UserClock.load(db, user: user))
            }
            // Purged on another device before this create (sent again from an offline queue) came.
            if input.id != nil, try ChangeFeed.wasDeleted(db, entity: "reminder", id: id, scope: ChangeViewer.user(user)) {
                throw ServiceError.conflict("this reminder was removed for good; make a new one", reason: "purged")
            }
            try ReminderStore.requireRoom(db, user: user)
            try MediaCatalog.requireUpload(db, content.imageID, field: "imageId", uploadedBy: user)
            try ReminderStore.reportZone(db, user: user, zone: input.deviceZone, now: now)
            let clock = try UserClock.load(db, user: user)
            let row = try ReminderStore.insert(
                db, id: id, user: user, content: content, source: "user", clock: clock, now: now, editedAt: input.editedAt(now: now))
            try db.cachedStatement(sql: "UPDATE reminder SET create_hash = ? WHERE rowid = ?").execute(arguments: [createHash, row.rowID])
            return try ReminderView(db, row, clock: clock)
        }
    }

    /// What a create asked for, as a digest of its `data` in canonical form (keys sorted)
    /// without what differs between sendings of the same create (the device's zone and
    /// clock at the time it was sent).
    static func createHash(_ data: JSONValue, alertsAsSent: Bool = false) -> String {
        guard case .object(var members) = data else { return Digest.sha256Hex(data.serialized) }
        members["editedAt"] = nil
        members["deviceZone"] = nil
        // Lead times are a set (AlertPlan keeps them sorted, once each): their order or a
        // repeat does not make another create.
        if !alertsAsSent, case .array(let alerts)? = members["alerts"] {
            let leads = alerts.compactMap(\.integerValue)
            if leads.count == alerts.count { members["alerts"] = .array(Set(leads).sorted().map(JSONValue.integer)) }
        }
        return Digest.sha256Hex(JSONValue.object(members).serialized)
    }

    var get: ServiceOperation {
        .read(
            "reminders.get", summary: "One of the caller's reminders, with its next occurrence.", auth: Self.user,
            request: .object(["id": Self.idField], required: ["id"]), response: Self.reminderResponse
        ) { (context, input: IDRequest, db: Database) -> ReminderView in
            let user = try context.requirePrincipal().userID
            return try ReminderView(db, try ReminderRow.own(db, id: input.id, user: user), clock: try UserClock.load(db, user: user))
        }
    }

    var update: ServiceOperation {
        var request = ReminderInput.fields
        request["id"] = Self.idField
        return .write(
            "reminders.update",
            summary: "Changes the fields sent (null clears an optional one). Offline edits from several devices merge per field: each field takes the edit made last (`editedAt`, the device's time of the edit; default now), so edits of different fields all apply and an older edit of a field does not overwrite a newer one. The timing (start, allDay, zone, rrule, exdates) is one field, as are the alerts. The reminder is armed again from the new content: it never fires in its old form.",
            auth: Self.user, request: .object(request, required: ["id"]), response: Self.reminderResponse
        ) { (context, input: ReminderInput, db: Database) -> ReminderView in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            var row = try ReminderRow.own(db, id: input.id ?? "", user: user)
            let editedAt = input.editedAt(now: now)
            var clocks = row.fieldClocks
            let content = try input.apply(to: row.content, present: ReminderInput.present(context.data)) { clocks.admit($0, editedAt: editedAt) }
            try ReminderStore.reportZone(db, user: user, zone: input.deviceZone, now: now)
            let clock = try UserClock.load(db, user: user)
            guard content != row.content else { return try ReminderView(db, row, clock: clock) }
            if let (field, reason) = GreetingDelivery.problem(of: content) { throw ServiceError.invalid(field, reason) }
            try MediaCatalog.replace(
                db, owner: row.imageOwner, row.content.imageID, with: content.imageID, field: "imageId", store: try context.mediaStore(), uploadedBy: user)
            if content.timing != row.content.timing { row.doneThrough = nil }
            row.content = content
            row.fieldClocks = clocks
            try ReminderStore.commit(db, &row, change: "updated", clock: clock, now: now)
            return try ReminderView(db, row, clock: clock)
        }
    }

    /// Sets the status of a reminder the caller owns, by the offline merge rule.
    static func setStatus(
        _ context: RequestContext, _ input: IDRequest, _ db: Database, from allowed: Set<ReminderStatus>, to status: ReminderStatus, change: String
    ) throws -> ReminderView {
        let user = try context.requirePrincipal().userID
        let now = context.receivedAt
        var row = try ReminderRow.own(db, id: input.id, user: user)
        let clock = try UserClock.load(db, user: user)
        guard row.status != status else { return try ReminderView(db, row, clock: clock) }
        guard allowed.contains(row.status) else {
            throw ServiceError.conflict("the reminder is \(row.status.rawValue)", reason: "reminder_\(row.status.rawValue)")
        }
        let editedAt = ReminderInput.editedAt(input.editedAt, now: now)
        guard row.fieldClocks.admit(.status, editedAt: editedAt) else { return try ReminderView(db, row, clock: clock) }
        row.status = status
        row.closedAt = status == .active ? nil : Instant.format(now)
        try ReminderStore.commit(db, &row, change: change, clock: clock, now: now)
        return try ReminderView(db, row, clock: clock)
    }

    static let statusRequest = JSONSchema.object(
        ["id": Self.idField, "editedAt": JSONSchema.string(format: .dateTime).described("when the device did it (offline)")], required: ["id"])

    var delete: ServiceOperation {
        .write(
            "reminders.delete",
            summary: "Deletes a reminder into the archive (it stops alerting; it is in reminders.history and can be restored; reminders.purge removes it for good).",
            auth: Self.user, request: Self.statusRequest, response: Self.reminderResponse
        ) { (context, input: IDRequest, db: Database) -> ReminderView in
            try Self.setStatus(context, input, db, from: [.active, .completed], to: .archived, change: "archived")
        }
    }

    var restore: ServiceOperation {
        .write(
            "reminders.restore", summary: "Brings an archived or completed reminder back to the active list; it alerts again from now on.",
            auth: Self.user, request: Self.statusRequest, response: Self.reminderResponse
        ) { (context, input: IDRequest, db: Database) -> ReminderView in
            try Self.setStatus(context, input, db, from: [.archived, .completed], to: .active, change: "restored")
        }
    }

    struct PurgeRequest: Codable, Sendable {
        var id: String?
        var archived: Bool?
    }

    var purge: ServiceOperation {
        .write(
            "reminders.purge",
            summary: "Removes reminders for good: one (`id`, in any status) or every archived one (`archived: true`; not both). Other devices see deletions in reminders.changes.",
            auth: Self.user,
            request: .object(["id": Self.idField, "archived": JSONSchema.boolean.described("purge the whole archive")]),
            response: .object(["purged": .integer(minimum: 0)], required: ["purged"])
        ) { (context, input: PurgeRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let store = try context.mediaStore()
            var rows: [ReminderRow] = []
            if input.id != nil, input.archived != nil {
                // Which was meant is not clear: one reminder, or the whole archive.
                throw ServiceError.invalid("archived", "send either id (one reminder) or archived: true (the whole archive), not both")
            }
            if let id = input.id {
                rows.append(try ReminderRow.own(db, id: id, user: user))
            } else if input.archived == true {
                rows = try ReminderRow.fetchAll(db, where: "user_id = ? AND status = 'archived'", [user])
            } else {
                throw ServiceError.invalid("id", "name a reminder, or send archived: true")
            }
            for row in rows { try ReminderStore.purge(db, row, now: context.receivedAt, store: store) }
            return ["purged": .integer(Int64(rows.count))]
        }
    }

    struct DoneRequest: Codable, Sendable {
        var id: String
        var occurrence: String?
    }

    var done: ServiceOperation {
        .write(
            "reminders.done",
            summary: "Marks a reminder done. A one-off one is completed. For a recurring one, this occurrence: `occurrence` (as `start`: YYYY-MM-DDTHH:MM, or YYYY-MM-DD all-day), default the latest one at or before now not yet done, else the next not done. Done covers every occurrence through the one named, so it may be at most the next one not done yet (`validation_failed` beyond it). Its repeating alerts stop, and the reminder is completed when that was its last occurrence.",
            auth: Self.user,
            request: .object(["id": Self.idField, "occurrence": JSONSchema.string(minLength: 10, maxLength: 16)], required: ["id"]),
            response: Self.reminderResponse
        ) { (context, input: DoneRequest, db: Database) -> ReminderView in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            var row = try ReminderRow.own(db, id: input.id, user: user)
            let clock = try UserClock.load(db, user: user)
            guard row.status == .active else { throw ServiceError.conflict("the reminder is \(row.status.rawValue)", reason: "reminder_\(row.status.rawValue)") }
            let timing = row.content.timing
            let series = try timing.series(userZone: clock.zone, allDayTime: clock.allDayTime)
            let occurrence = try Self.occurrence(input.occurrence, of: timing, series, doneThrough: row.doneThrough, now: now)
            let local = timing.wireLocal(occurrence)
            row.doneThrough = max(row.doneThrough ?? local, local)
            var change = "done"
            if timing.rule == nil || series.next(after: occurrence.instant) == nil {
                row.status = .completed
                row.closedAt = Instant.format(now)
                change = "completed"
            }
            try ReminderStore.commit(db, &row, change: change, clock: clock, now: now)
            return try ReminderView(db, row, clock: clock)
        }
    }

    /// The occurrence a done names: the given one (it must be one of the series), or the
    /// latest at or before now that is not done, else the next.
    static func occurrence(
        _ text: String?, of timing: ReminderTiming, _ series: RecurrenceSeries, doneThrough: LocalDateTime?, now: Date
    ) throws -> Occurrence {
        if let text {
            guard let local = LocalText.occurrence(text) else { throw ServiceError.invalid("occurrence", "not a local date-time (or a date, all-day)") }
            // Occurrences within a day of that local time: its instant in any zone is there.
            let guess = ZoneClock.utc.instant(local.date, local.time) ?? now
            let near = series.occurrences(from: guess.addingTimeInterval(-2 * 86_400), through: guess.addingTimeInterval(2 * 86_400), limit: 200)
            // Named as the rule makes it, or as the reminder shows it (the wall clock at its
            // instant: 03:30 for a 02:30 in a DST gap).
            let shown = { (occurrence: Occurrence) in !timing.allDay && series.zone.local(occurrence.instant) == local }
            guard let match = near.first(where: { timing.wireLocal($0) == local }) ?? near.first(where: shown) else {
                throw ServiceError.invalid("occurrence", "not an occurrence of this reminder")
            }
            // Done covers every occurrence through the one named (`doneThrough`): naming one
            // beyond the next that is not done would mark those in between done unseen.
            if let pending = nextPending(after: now, series, timing, doneThrough: doneThrough), match.instant > pending.instant {
                throw ServiceError.invalid(
                    "occurrence", "only an occurrence up to the next one not done (\(LocalText.format(timing.wireLocal(pending)))) can be marked done: those before it are marked with it")
            }
            return match
        }
        let recent = series.occurrences(from: now.addingTimeInterval(-400 * 86_400), through: now, limit: 10_000)
        if let latest = recent.last(where: { !timing.isDone($0, doneThrough: doneThrough) }) { return latest }
        if let next = nextPending(after: now, series, timing, doneThrough: doneThrough) ?? series.next(after: now) { return next }
        if let latest = recent.last { return latest }
        guard let first = series.occurrences(limit: 1).first else { throw ServiceError.conflict("the reminder has no occurrence", reason: "no_occurrence") }
        return first
    }

    /// The first occurrence after `now` that is not done yet (`nil` when there is none,
    /// or when more than a thousand in a row are done).
    static func nextPending(after now: Date, _ series: RecurrenceSeries, _ timing: ReminderTiming, doneThrough: LocalDateTime?) -> Occurrence? {
        var candidate = series.next(after: now)
        for _ in 0..<1_000 {
            guard let occurrence = candidate, timing.isDone(occurrence, doneThrough: doneThrough) else { return candidate }
            candidate = series.next(after: occurrence.instant)
        }
        return nil
    }

    struct SnoozeRequest: Codable, Sendable {
        var alert: String
        var minutes: Int
    }

    var snooze: ServiceOperation {
        .write(
            "reminders.snooze",
            summary: "Snoozes an alert (`alert`: the alertId of reminders.due): it comes again in `minutes` (1 to 1440), as reminders.due with kind snooze, unless the reminder is deleted, completed or that occurrence marked done before.",
            auth: Self.user,
            request: .object(["alert": .string(minLength: 1, maxLength: 100), "minutes": .integer(minimum: 1, maximum: 1_440)], required: ["alert", "minutes"]),
            response: .object(["alertId": .string(), "until": .string(format: .dateTime)], required: ["alertId", "until"])
        ) { (context, input: SnoozeRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            guard let reminderID = try String.fetchOne(
                db.cachedStatement(sql: "SELECT reminder_id FROM fired_alert WHERE id = ? AND user_id = ?"), arguments: [input.alert, user])
            else { throw ServiceError.notFound("no such alert") }
            let row = try ReminderRow.own(db, id: reminderID, user: user)
            guard row.status == .active else { throw ServiceError.conflict("the reminder is \(row.status.rawValue)", reason: "reminder_\(row.status.rawValue)") }
            let until = context.receivedAt.addingTimeInterval(TimeInterval(input.minutes * 60))
            try DurableTimers.schedule(db, kind: ReminderScheduler.snoozeKind, at: until, key: input.alert)
            try db.cachedStatement(sql: "UPDATE fired_alert SET snoozed_until_ms = ? WHERE id = ?").execute(arguments: [Instant.milliseconds(until), input.alert])
            return ["alertId": .string(input.alert), "until": .string(Instant.format(until))]
        }
    }
}


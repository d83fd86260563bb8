import Foundation
import GRDB
import Platform

/// iCalendar files (RFC 5545): a user's `.ics` imported into reminders (VEVENT with
/// RRULE, EXDATE, VALARM and TZID), all or nothing, each event keyed by its UID so a
/// second import of the same file changes what changed and duplicates nothing; and the
/// user's reminders exported as `.ics`.
///
/// Mapping: a DATE start is all-day; a floating start is a floating reminder; a TZID
/// start keeps its zone; a UTC start is zoned UTC. VALARMs before the start become lead
/// times (an absolute trigger counts back from the first occurrence; alarms after the
/// start have no lead time and are left out). CATEGORIES naming one of ours sets the
/// category. A modified instance of a recurring event (RECURRENCE-ID) is not imported:
/// the series keeps its rule.
struct CalendarFileOperations: Sendable {
    static let user = AuthRule.authenticated

    var all: [ServiceOperation] { [importFile, exportFile] }

    struct ImportRequest: Codable, Sendable {
        var content: String
    }

    /// What one VEVENT becomes.
    struct Imported {
        var uid: String
        var content: ReminderContent
    }

    static func convert(_ event: ICalEvent, blank: ReminderContent, untitled: String) throws -> Imported {
        func fail(_ reason: String) -> ServiceError { ServiceError.invalid("content", "event \(event.uid.prefix(80)): \(reason)") }
        var content = blank
        let summary = Self.plainLine(event.summary)
        content.title = String((summary.isEmpty ? untitled : summary).prefix(200))
        content.description = ReminderInput.blankIsNil(event.description.map { String($0.prefix(4_000)) })
        content.location = ReminderInput.blankIsNil(event.location.map { String($0.prefix(500)) })
        content.category =
            event.categories.lazy.compactMap { ReminderCategory(rawValue: $0.lowercased().replacingOccurrences(of: " ", with: "_")) }.first ?? .personal
        var timing = ReminderTiming(start: LocalDateTime(date: LocalDate(year: 2000, month: 1, day: 1), time: .midnight), allDay: false, zone: nil, rule: nil, exceptions: [])
        switch event.start {
        case .date(let date):
            timing.allDay = true
            timing.start = LocalDateTime(date: date, time: .midnight)
        case .floating(let local): timing.start = Self.minute(local)
        case .zoned(let local, let zone):
            timing.start = Self.minute(local)
            timing.zone = zone
        case .utc(let instant):
            timing.start = Self.minute(ZoneClock.utc.local(instant))
            timing.zone = "UTC"
        }
        if let text = event.rrule {
            do { timing.rule = try RecurrenceRule.parse(text) } catch { throw fail("RRULE: \(error.reason)") }
        }
        let clock = timing.zone.flatMap(ZoneClock.init(identifier:)) ?? .utc
        timing.exceptions = event.exdates.map { exdate in
            switch exdate {
            case .date(let date): LocalDateTime(date: date, time: timing.allDay ? .midnight : timing.start.time)
            case .floating(let local): Self.minute(local)
            case .zoned(let local, let zone):
                zone == timing.zone ? Self.minute(local) : Self.minute(clock.local(ZoneClock(identifier: zone)?.instant(local.date, local.time) ?? Date()))
            case .utc(let instant): Self.minute(clock.local(instant))
            }
        }
        guard (1...9999).contains(timing.start.date.year) else { throw fail("DTSTART: the year must be 1 to 9999") }
        do { _ = try timing.series(userZone: .utc, allDayTime: UserClock.defaultAllDayTime) } catch { throw fail("RRULE: \(error.reason)") }
        content.timing = timing
        let startInstant = clock.instant(timing.start.date, timing.allDay ? UserClock.defaultAllDayTime : timing.start.time) ?? Date()
        let leads = event.alarms.compactMap { alarm -> Int? in
            switch alarm.trigger {
            case .relative(let seconds, let fromEnd): return !fromEnd && seconds <= 0 ? -seconds / 60 : nil
            case .absolute(let instant): return instant <= startInstant ? Int(startInstant.timeIntervalSince(instant) / 60) : nil
            }
        }.filter { $0 <= AlertPlan.limits.leadMinutes }
        content.alerts = AlertPlan(leadMinutes: Array(leads.prefix(AlertPlan.limits.leads)))
        return Imported(uid: event.uid, content: content)
    }

    /// A title as `create` would take it: line breaks and other control characters become
    /// spaces, direction overrides and isolates are dropped (a file is not checked by the
    /// request's schema).
    static func plainLine(_ text: String) -> String {
        let bidi: ClosedRange<UInt32> = 0x202A...0x202E, isolates: ClosedRange<UInt32> = 0x2066...0x2069
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !bidi.contains(scalar.value) && !isolates.contains(scalar.value) {
            scalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
        }
        return String(scalars).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// At most this many events per import: a bigger file is split (the writer is shared).
    static let maximumEvents = 1_000

    /// Reminders keep minutes: seconds of a file's times are dropped.
    static func minute(_ local: LocalDateTime) -> LocalDateTime {
        LocalDateTime(date: local.date, time: LocalTime(secondOfDay: local.time.secondOfDay / 60 * 60) ?? .midnight)
    }

    var importFile: ServiceOperation {
        .write(
            "reminders.ics.import",
            summary: "Imports an iCalendar file (`content`: its text, UTF-8, up to the request limit, at most 1,000 events): every VEVENT becomes a reminder (DTSTART with TZID, floating, UTC or DATE; RRULE; EXDATE; VALARM lead times; SUMMARY, DESCRIPTION, LOCATION, CATEGORIES). All or nothing: a malformed file or event is validation_failed naming the line or event. Events are keyed by UID: importing again updates them and duplicates nothing. Send `idem`.",
            auth: Self.user, request: .object(["content": .string(minLength: 1, maxLength: RequestLimits().maxRequestBytes, format: .multiline)], required: ["content"]),
            response: .object(
                [
                    "created": .integer(minimum: 0), "updated": .integer(minimum: 0), "unchanged": .integer(minimum: 0),
                    "skipped": JSONSchema.integer(minimum: 0).described("modified instances (RECURRENCE-ID) left out"),
                    "ids": JSONSchema.array(of: .string(), maxItems: Self.maximumEvents).described("the reminders, in the file's order"),
                ], required: ["created", "updated", "unchanged", "skipped", "ids"])
        ) { (context, input: ImportRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let now = context.receivedAt
            let calendar: ICalCalendar
            do throws(ICalError) { calendar = try ICalendar.parse(input.content) } catch {
                throw ServiceError.invalid("content", error.line.map { "line \($0): \(error.reason)" } ?? error.reason)
            }
            guard calendar.events.count <= Self.maximumEvents else {
                throw ServiceError.invalid("content", "\(calendar.events.count) events; at most \(Self.maximumEvents) per import (split the file)")
            }
            let clock = try UserClock.load(db, user: user)
            let blank = try ReminderStore.blank(db, user: user)
            let untitled = clock.language == "ru" ? "Без названия" : "Untitled"
            var imported: [Imported] = []
            var seen = Set<String>()
            var skipped = 0
            for event in calendar.events {
                guard event.recurrenceID == nil else {
                    skipped += 1
                    continue
                }
                guard seen.insert(event.uid).inserted else { throw ServiceError.invalid("content", "event \(event.uid.prefix(80)): UID appears twice") }
                guard event.uid.utf8.count <= 500 else { throw ServiceError.invalid("content", "a UID longer than 500 bytes") }
                imported.append(try Self.convert(event, blank: blank, untitled: untitled))
            }
            // Everything checked: now write, in this one transaction.
            var existing: [String: ReminderRow] = [:]
            for item in imported {
                // A UID this service wrote (`<id>@reminders`, an export brought back) names
                // the reminder it was exported from.
                existing[item.uid] = try ReminderRow.bySource(db, user: user, key: "ics:" + item.uid) ?? Self.exported(db, uid: item.uid, user: user)
            }
            try ReminderStore.requireRoom(db, user: user, adding: imported.count - existing.count)
            var created = 0, updated = 0, unchanged = 0
            var ids: [JSONValue] = []
            for item in imported {
                if var row = existing[item.uid] {
                    ids.append(.string(row.id))
                    var content = item.content
                    content.notificationKind = row.content.notificationKind
                    content.sound = row.content.sound
                    content.importance = row.content.importance
                    content.special = row.content.special
                    content.notes = row.content.notes
                    content.imageID = row.content.imageID
                    content.greeting = row.content.greeting
                    // The file's alerts are lead times; a repeat after each occurrence it cannot say.
                    content.alerts.repeatEveryMinutes = row.content.alerts.repeatEveryMinutes
                    content.alerts.repeatTimes = row.content.alerts.repeatTimes
                    // A rule written as the file must write it (UNTIL of the start's type) is the
                    // same rule as the one kept.
                    if let rule = content.timing.rule, let kept = row.content.timing.rule,
                        rule.icalendarText(allDay: content.timing.allDay, zone: content.timing.zone)
                            == kept.icalendarText(allDay: row.content.timing.allDay, zone: row.content.timing.zone)
                    {
                        content.timing.rule = kept
                    }
                    guard content != row.content else {
                        unchanged += 1
                        continue
                    }
                    // A greeting sent by email or SMS keeps its yearly rule and its alert at 0.
                    if let (field, reason) = GreetingDelivery.problem(of: content) {
                        throw ServiceError.invalid("content", "event \(item.uid.prefix(80)): \(field): \(reason)")
                    }
                    row.content = content
                    row.doneThrough = nil
                    try ReminderStore.commit(db, &row, change: "updated", clock: clock, now: now)
                    updated += 1
                } else {
                    let row = try ReminderStore.insert(
                        db, id: RecordID.make(prefix: "rem", at: now), user: user, content: item.content, source: "import", sourceKey: "ics:" + item.uid,
                        clock: clock, now: now)
                    ids.append(.string(row.id))
                    created += 1
                }
            }
            return [
                "created": .integer(Int64(created)), "updated": .integer(Int64(updated)), "unchanged": .integer(Int64(unchanged)),
                "skipped": .integer(Int64(skipped)), "ids": .array(ids),
            ]
        }
    }

    struct ExportRequest: Codable, Sendable {
        var status: ReminderStatus?
    }

    /// The user's reminder an export named `<id>@reminders` (one not imported: an imported
    /// one keeps its own UID), if it exists.
    static func exported(_ db: Database, uid: String, user: String) throws -> ReminderRow? {
        guard uid.hasSuffix(exportedUIDSuffix) else { return nil }
        guard let row = try ReminderRow.find(db, id: String(uid.dropLast(exportedUIDSuffix.count)), user: user),
            !(row.sourceKey?.hasPrefix("ics:") ?? false)
        else { return nil }
        return row
    }

    static let exportedUIDSuffix = "@reminders"

    /// A reminder as a VEVENT: its UID is the imported one, else its id at this service.
    static func event(_ row: ReminderRow) -> ICalEvent {
        let c = row.content
        let start: ICalDateTime
        func value(_ local: LocalDateTime) -> ICalDateTime {
            if c.timing.allDay { return .date(local.date) }
            if let zone = c.timing.zone { return .zoned(local, zone: zone) }
            return .floating(local)
        }
        start = value(c.timing.start)
        let uid = row.sourceKey.flatMap { $0.hasPrefix("ics:") ? String($0.dropFirst(4)) : nil } ?? row.id + Self.exportedUIDSuffix
        return ICalEvent(
            uid: uid, summary: c.title, description: c.description, location: c.location, start: start, end: nil, durationSeconds: nil,
            rrule: c.timing.rule?.icalendarText(allDay: c.timing.allDay, zone: c.timing.zone), exdates: c.timing.exceptions.map(value),
            alarms: c.alerts.leadMinutes.map { ICalAlarm(trigger: .relative(seconds: -$0 * 60, fromEnd: false), action: "DISPLAY", description: c.title) },
            categories: [c.category.rawValue.uppercased()], status: nil, sequence: row.version - 1, lastModified: Instant.parse(row.updatedAt),
            created: Instant.parse(row.createdAt), recurrenceID: nil)
    }

    var exportFile: ServiceOperation {
        .read(
            "reminders.ics.export",
            summary: "The caller's reminders (`status`, default active) as an iCalendar file: `{content, count}` (text/calendar, CRLF lines). Imported events keep their UID.",
            auth: Self.user, request: .object(["status": .oneOf(ReminderStatus.allCases.map(\.rawValue))]),
            response: .object(["content": .string(maxLength: 100_000_000, format: .multiline), "count": .integer(minimum: 0)], required: ["content", "count"])
        ) { (context, input: ExportRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let events = try ReminderRow.fetchAll(db, where: "user_id = ? AND status = ? ORDER BY rowid", [user, (input.status ?? .active).rawValue])
                .map(Self.event)
            let text = ICalendar.write(ICalCalendar(productID: nil, name: nil, events: events), productID: "-//Backend//Reminders//EN", now: context.receivedAt)
            return ["content": .string(text), "count": .integer(Int64(events.count))]
        }
    }
}

import Foundation
import Platform

/// When a reminder happens: its start (a local date and time), its zone or none
/// (floating: the zone the user's device reports, so it adapts when they travel), whether
/// it is all-day, its recurrence rule and the occurrences removed from it.
///
/// An all-day reminder's occurrences are dates; it is notified at the user's all-day time
/// (settings, default 09:00) on that date, and its alerts count back from there.
struct ReminderTiming: Sendable, Hashable {
    var start: LocalDateTime
    var allDay: Bool
    /// An IANA zone; `nil` is floating.
    var zone: String?
    var rule: RecurrenceRule?
    var exceptions: [LocalDateTime]

    /// The series in the zone that applies: the reminder's own, else the user's.
    func series(userZone: ZoneClock, allDayTime: LocalTime) throws(RecurrenceError) -> RecurrenceSeries {
        let clock = zone.flatMap(ZoneCache.clock) ?? userZone
        let start = allDay ? LocalDateTime(date: start.date, time: allDayTime) : start
        let exceptions = allDay ? self.exceptions.map { LocalDateTime(date: $0.date, time: allDayTime) } : self.exceptions
        return try RecurrenceSeries(start: start, zone: clock, rule: rule, exceptions: Set(exceptions))
    }

    /// The local date-time an occurrence is known by (what `done_through` and the wire
    /// hold): an all-day one keeps midnight, its notification time is a setting.
    func wireLocal(_ occurrence: Occurrence) -> LocalDateTime {
        allDay ? LocalDateTime(date: occurrence.local.date, time: .midnight) : occurrence.local
    }

    /// The occurrence as the wire writes it: `YYYY-MM-DD` all-day, else `YYYY-MM-DDTHH:MM`.
    func wireText(_ occurrence: Occurrence) -> String {
        allDay ? occurrence.local.date.description : LocalText.format(occurrence.local)
    }

    /// Whether the occurrence is marked done (every one at or before `doneThrough` is).
    func isDone(_ occurrence: Occurrence, doneThrough: LocalDateTime?) -> Bool {
        doneThrough.map { wireLocal(occurrence) <= $0 } ?? false
    }
}

/// One moment a reminder alerts: a lead time before an occurrence (0 is at its time), or
/// the n-th repeat after it (an alert that repeats, "every morning until done", kept apart
/// from the event's own recurrence).
struct AlertPoint: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case lead(minutes: Int)
        case repeated(number: Int)
    }

    var at: Date
    var occurrence: Occurrence
    var kind: Kind
}

/// A reminder's alerts: lead times before each occurrence, and optional repeats after it
/// until the occurrence is marked done.
struct AlertPlan: Sendable, Hashable {
    /// Minutes before the occurrence, distinct, ascending; 0 is at its time.
    var leadMinutes: [Int]
    /// Repeat every this many minutes after the occurrence, `repeatTimes` times.
    var repeatEveryMinutes: Int?
    var repeatTimes: Int

    init(leadMinutes: [Int], repeatEveryMinutes: Int? = nil, repeatTimes: Int = 0) {
        self.leadMinutes = Array(Set(leadMinutes)).sorted()
        self.repeatEveryMinutes = repeatTimes > 0 ? repeatEveryMinutes : nil
        self.repeatTimes = repeatEveryMinutes == nil ? 0 : repeatTimes
    }

    static let limits = (leads: 10, leadMinutes: 366 * 24 * 60, repeatEvery: 5...(7 * 24 * 60), repeatTimes: 0...100)

    /// How long after an occurrence its last repeat comes.
    var repeatSpan: TimeInterval { TimeInterval((repeatEveryMinutes ?? 0) * repeatTimes * 60) }
    var longestLead: TimeInterval { TimeInterval((leadMinutes.last ?? 0) * 60) }
    var isEmpty: Bool { leadMinutes.isEmpty && repeatTimes == 0 }

    /// Every alert point of one occurrence, in time order.
    func points(of occurrence: Occurrence) -> [AlertPoint] {
        var points = leadMinutes.reversed().map {
            AlertPoint(at: occurrence.instant.addingTimeInterval(-TimeInterval($0 * 60)), occurrence: occurrence, kind: .lead(minutes: $0))
        }
        if let every = repeatEveryMinutes {
            for number in stride(from: 1, through: repeatTimes, by: 1) {
                points.append(
                    AlertPoint(at: occurrence.instant.addingTimeInterval(TimeInterval(number * every * 60)), occurrence: occurrence, kind: .repeated(number: number)))
            }
        }
        return points
    }

    /// The first alert point strictly after `after`, among occurrences not marked done.
    func next(in series: RecurrenceSeries, after: Date, isDone: (Occurrence) -> Bool) -> AlertPoint? {
        nextPoints(in: series, after: after, isDone: isDone).first
    }

    /// Every alert point at the first instant strictly after `after` that has one, among
    /// occurrences not marked done, in the occurrences' order: points of different
    /// occurrences may meet (a daily reminder's "a day before" for tomorrow comes at the
    /// time of today's own alert, a repeat may land on another occurrence's lead), and each
    /// is an alert of its own. Occurrences are read in order from the first whose repeats
    /// could still be ahead, and the search stops once an occurrence's earliest lead comes
    /// after the points found.
    func nextPoints(in series: RecurrenceSeries, after: Date, isDone: (Occurrence) -> Bool) -> [AlertPoint] {
        var found: [AlertPoint] = []
        walk(series, from: after, isDone: isDone) { occurrence in
            if let at = found.first?.at, occurrence.instant.addingTimeInterval(-longestLead) > at { return false }
            guard let point = points(of: occurrence).first(where: { $0.at > after }) else { return true }
            if let at = found.first?.at, point.at > at { return true }
            if let at = found.first?.at, point.at < at { found.removeAll() }
            // An occurrence's own points are at distinct instants: its first one ahead is all it adds.
            found.append(point)
            return true
        }
        return found
    }

    /// Calls `visit` with each occurrence not marked done whose alert points may come at
    /// or after `instant`, in order (from the first whose repeats could still be ahead),
    /// until it returns `false`; at most 2,000 occurrences are read.
    private func walk(_ series: RecurrenceSeries, from instant: Date, isDone: (Occurrence) -> Bool, _ visit: (Occurrence) -> Bool) {
        guard !isEmpty else { return }
        var cursor = instant.addingTimeInterval(-repeatSpan - 1)
        var scanned = 0
        while scanned < 2_000 {
            let batch = series.occurrences(after: cursor, limit: 16)
            guard !batch.isEmpty else { return }
            for occurrence in batch {
                scanned += 1
                if isDone(occurrence) { continue }
                guard visit(occurrence) else { return }
            }
            cursor = batch[batch.count - 1].instant
        }
    }
}

/// What the scheduler derives from a reminder at an instant: its next occurrence (the
/// list's order, the widget's), the next alert, and when its timer should wake (the
/// earlier of the two: the next occurrence moves on even when nothing alerts).
struct ReminderOutlook: Sendable, Hashable {
    var nextOccurrence: Occurrence?
    var nextAlert: AlertPoint?

    var wake: Date? {
        switch (nextOccurrence?.instant, nextAlert?.at) {
        case (let occurrence?, let alert?): min(occurrence, alert)
        case (let occurrence?, nil): occurrence
        case (nil, let alert?): alert
        case (nil, nil): nil
        }
    }

    init(series: RecurrenceSeries, timing: ReminderTiming, alerts: AlertPlan, doneThrough: LocalDateTime?, after: Date) {
        // The next occurrence not marked done (one marked ahead of its time is behind the user).
        var next = series.next(after: after)
        var skipped = 0
        while let occurrence = next, timing.isDone(occurrence, doneThrough: doneThrough), skipped < 1_000 {
            next = series.next(after: occurrence.instant)
            skipped += 1
        }
        nextOccurrence = next
        nextAlert = alerts.next(in: series, after: after) { timing.isDone($0, doneThrough: doneThrough) }
    }
}

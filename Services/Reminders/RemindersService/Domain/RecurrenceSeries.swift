import Foundation
import Platform

/// One occurrence of a series: the wall-clock date and time in the series' zone, and the
/// instant that is.
struct Occurrence: Sendable, Hashable {
    var local: LocalDateTime
    var instant: Date
}

/// A recurring reminder: a start in a zone, an optional ``RecurrenceRule`` and exception
/// dates, expanded into occurrences.
///
/// Semantics:
/// - **The start is the first occurrence**, even when it does not match the rule, and
///   `COUNT` includes it (RFC 5545 3.8.5.3: "The DTSTART property value always counts as
///   the first occurrence"). Without a rule the series is the start alone.
/// - **Every occurrence is at the start's wall-clock time.** Parts the rule leaves out
///   come from the start: a `WEEKLY` rule repeats on the start's weekday, a `MONTHLY`
///   one on its day of the month, a `YEARLY` one on its month and day.
/// - **Local to UTC**: an occurrence keeps its wall-clock time across daylight-saving
///   changes (a 09:00 reminder stays at 09:00). A time the clocks skip moves forward by
///   the gap's length (02:30 becomes 03:30), a time that happens twice takes its first
///   occurrence (RFC 5545 3.3.5): `zone.instant(date, time, gap: .shiftForward,
///   overlap: .earlier)`.
/// - **UNTIL** is inclusive. A UTC `UNTIL` is compared with each occurrence's instant; a
///   local one with its local date and time; a `DATE` one includes that whole local day.
/// - **Exceptions** (`EXDATE`, local date-times in the series' zone) are removed after
///   `COUNT` has been applied, as in RFC 5545's recurrence set: excepting an occurrence
///   of a `COUNT=5` series leaves four. The start can be excepted too.
/// - **Termination**: expansion ends after 9999-12-31 and when a rule can never match
///   again (see ``RecurrencePeriods/emptyPeriodLimit``: at most 400 years' worth of empty
///   periods are looked at), so every call returns.
/// - **Speed**: for a rule without `COUNT`, questions about a later instant (``next(after:)``,
///   ``occurrences(after:limit:)``, ``occurrences(from:through:limit:)``) jump straight to
///   the period holding it. With `COUNT` the occurrences before it must be counted, so the
///   series walks from the start (at most 10,000 occurrences).
/// - Instants of successive occurrences never decrease: they follow the local order, as
///   the gap and overlap rules above keep that order.
struct RecurrenceSeries: Sendable {
    let start: LocalDateTime
    let zone: ZoneClock
    let rule: RecurrenceRule?
    let exceptions: Set<LocalDateTime>
    /// The rule's calendar, anchored at the start (`nil` without a rule).
    private let periods: RecurrencePeriods?
    /// The start's instant.
    private let startInstant: Date

    /// The first instant of the year 10000, UTC.
    private static let lastInstant = Date(timeIntervalSince1970: TimeInterval(Instant.days(year: 10_000, month: 1, day: 1) * 86_400))

    /// No occurrence happens after this instant (9999-12-31 local, in any zone).
    private static let endOfExpansion = Date(timeIntervalSince1970: TimeInterval(Instant.days(year: 10_000, month: 1, day: 3) * 86_400))

    /// A series starting at `start` (a local date and time in `zone`).
    ///
    /// Throws when the rule breaks a limit (``RecurrenceRule/validate()``), when `UNTIL`
    /// is before the start, or when the start is not a date in the years 1...9999.
    init(start: LocalDateTime, zone: ZoneClock, rule: RecurrenceRule?, exceptions: Set<LocalDateTime> = []) throws(RecurrenceError) {
        guard (1...9_999).contains(start.date.year) else {
            throw RecurrenceError(reason: "The start's year \(start.date.year) is outside the years 1 to 9999", field: "start")
        }
        guard LocalDate(validYear: start.date.year, month: start.date.month, day: start.date.day) != nil else {
            throw RecurrenceError(reason: "The start \(start.date) is not a date that exists", field: "start")
        }
        try rule?.validate()
        self.start = start
        self.zone = zone
        self.rule = rule
        self.exceptions = exceptions
        self.startInstant = Self.instant(of: start, in: zone)
        // 9999-12-31 late in a zone behind UTC is an instant of the year 10000, which no
        // date-time on the wire can name.
        guard startInstant < Self.lastInstant else {
            throw RecurrenceError(reason: "The start is after the last instant of the year 9999 (UTC)", field: "start")
        }
        self.periods = rule.map { RecurrencePeriods(rule: $0, start: start.date) }
        try checkUntilIsNotBeforeStart(rule?.until)
    }

    private func checkUntilIsNotBeforeStart(_ until: RecurrenceRule.Until?) throws(RecurrenceError) {
        let isBefore: Bool
        switch until {
        case nil: return
        case .date(let date): isBefore = date < start.date
        case .local(let local): isBefore = local < start
        case .utc(let instant): isBefore = instant < startInstant
        }
        if isBefore, let until {
            throw RecurrenceError("UNTIL: \(RecurrenceRule.text(of: until)) is before the start (\(start)): give an UNTIL on or after it")
        }
    }

    // MARK: Questions

    /// Whether the series ends: it has no rule, or its rule has `COUNT` or `UNTIL`. (A
    /// rule without them that can never match again still counts as endless here.)
    var isFinite: Bool { rule.map { $0.count != nil || $0.until != nil } ?? true }

    /// The last occurrence of a finite series; `nil` when it is endless, or when
    /// exceptions remove every occurrence. With `UNTIL` it is found from the end (the
    /// period holding `UNTIL`, backwards), not by walking the whole series.
    var last: Occurrence? {
        guard isFinite else { return nil }
        if let periods, let until = rule?.until {
            return lastOccurrence(through: until, periods)
        }
        var walk = Walk(self)
        var last: Occurrence?
        while let occurrence = walk.next() {
            if !isException(occurrence) { last = occurrence }
        }
        return last
    }

    /// The first `limit` occurrences, from the start, in order.
    func occurrences(limit: Int) -> [Occurrence] {
        collect(Walk(self), limit: limit, keep: { _ in true }, stop: { _ in false })
    }

    /// Up to `limit` occurrences strictly after `after`, in order.
    func occurrences(after: Date, limit: Int) -> [Occurrence] {
        guard !after.timeIntervalSince1970.isNaN else { return [] }
        return collect(walk(toward: after), limit: limit, keep: { $0.instant > after }, stop: { _ in false })
    }

    /// The first occurrence strictly after `after`.
    func next(after: Date) -> Occurrence? {
        occurrences(after: after, limit: 1).first
    }

    /// Up to `limit` occurrences from `from` through `through` (both inclusive), in order.
    func occurrences(from: Date, through: Date, limit: Int) -> [Occurrence] {
        guard !from.timeIntervalSince1970.isNaN, !through.timeIntervalSince1970.isNaN, from <= through else { return [] }
        return collect(walk(toward: from), limit: limit, keep: { $0.instant >= from }, stop: { $0.instant > through })
    }

    // MARK: Walking

    /// Takes occurrences from `walk` that `keep` accepts and are not exceptions, until
    /// `limit` of them, the end of the series, or one that `stop` refuses.
    private func collect(_ walk: Walk, limit: Int, keep: (Occurrence) -> Bool, stop: (Occurrence) -> Bool) -> [Occurrence] {
        guard limit > 0 else { return [] }
        var walk = walk
        var result: [Occurrence] = []
        while result.count < limit, let occurrence = walk.next(), !stop(occurrence) {
            if keep(occurrence), !isException(occurrence) { result.append(occurrence) }
        }
        return result
    }

    /// A walk that reaches every occurrence at or after `instant` (and maybe a few
    /// before): from the start for a series with `COUNT` (the occurrences before must be
    /// counted) or when `instant` is not after the start; otherwise from the period just
    /// before the one holding `instant`'s local date, found by arithmetic.
    private func walk(toward instant: Date) -> Walk {
        guard let periods, rule?.count == nil, instant > startInstant else { return Walk(self) }
        guard instant < Self.endOfExpansion else { return Walk(self, fromPeriod: periods.lastPeriod + 1) }
        // Two days back covers any zone's gap or offset change between the instant and a
        // local date; one period back covers a day SKIP=FORWARD moved into the next period.
        let nearDate = zone.local(instant).date.adding(days: -2)
        return Walk(self, fromPeriod: periods.periodIndex(containing: nearDate) - 1)
    }

    /// The occurrences of a series in order with `COUNT` and `UNTIL` applied, exceptions
    /// still in (they are removed after counting).
    private struct Walk: IteratorProtocol {
        private let series: RecurrenceSeries
        private var startIsNext: Bool
        private var dates: RecurrenceDateWalk?
        /// How many more `COUNT` allows; `nil` without `COUNT`.
        private var remaining: Int?
        /// The instant of the occurrence given last: a local time in a gap moves forward
        /// onto the next occurrence's instant when the gap is a whole period (Samoa skipped
        /// 30 December 2011), and RFC 5545 counts a duplicate instance once.
        private var lastInstant: Date?

        /// From the start.
        init(_ series: RecurrenceSeries) {
            self.series = series
            self.startIsNext = true
            self.dates = series.periods.map { RecurrenceDateWalk($0) }
            self.remaining = series.rule?.count
        }

        /// From a later period, without the start (only for a series without `COUNT`).
        init(_ series: RecurrenceSeries, fromPeriod period: Int) {
            self.series = series
            self.startIsNext = false
            self.dates = series.periods.map { RecurrenceDateWalk($0, fromPeriod: period) }
            self.remaining = series.rule?.count
        }

        mutating func next() -> Occurrence? {
            while true {
                guard remaining ?? 1 > 0 else { return nil }
                let local: LocalDateTime
                if startIsNext {
                    startIsNext = false
                    local = series.start
                } else {
                    guard let date = dates?.next() else { return nil }
                    local = LocalDateTime(date: date, time: series.start.time)
                }
                let occurrence = series.occurrence(at: local)
                guard series.isWithinUntil(occurrence) else {
                    remaining = 0
                    return nil
                }
                if let lastInstant, occurrence.instant <= lastInstant { continue }
                lastInstant = occurrence.instant
                remaining = remaining.map { $0 - 1 }
                return occurrence
            }
        }
    }

    // MARK: Until and the last occurrence

    private func isWithinUntil(_ occurrence: Occurrence) -> Bool {
        switch rule?.until {
        case nil: true
        case .date(let date): occurrence.local.date <= date
        case .local(let local): occurrence.local <= local
        case .utc(let instant): occurrence.instant <= instant
        }
    }

    /// The last occurrence up to `until`: periods from the one holding `until` backwards,
    /// the first date found within `until` and not an exception; the start when none is.
    private func lastOccurrence(through until: RecurrenceRule.Until, _ periods: RecurrencePeriods) -> Occurrence? {
        let lastDate: LocalDate
        switch until {
        case .date(let date): lastDate = date
        case .local(let local): lastDate = local.date
        case .utc(let instant):
            lastDate = instant < Self.endOfExpansion ? zone.local(instant).date.adding(days: 1) : RecurrencePeriods.lastDate
        }
        var period = min(periods.periodIndex(containing: min(lastDate, RecurrencePeriods.lastDate)), periods.lastPeriod)
        var emptyPeriodsInARow = 0
        while period >= 0, emptyPeriodsInARow < periods.emptyPeriodLimit {
            let dates = periods.dates(inPeriod: period)
            emptyPeriodsInARow = dates.isEmpty ? emptyPeriodsInARow + 1 : 0
            for date in dates.reversed() where date > start.date && date <= RecurrencePeriods.lastDate {
                let occurrence = occurrence(at: LocalDateTime(date: date, time: start.time))
                if isWithinUntil(occurrence), !isException(occurrence) { return occurrence }
            }
            period -= 1
        }
        let first = occurrence(at: start)
        return isException(first) ? nil : first
    }

    /// Whether an exception removes `occurrence`: named by its local time as the rule
    /// makes it, or by the wall clock at its instant (they differ in a DST gap: a 02:30
    /// that does not exist happens at 03:30, which is what the reminder shows).
    func isException(_ occurrence: Occurrence) -> Bool {
        guard !exceptions.isEmpty else { return false }
        return exceptions.contains(occurrence.local) || exceptions.contains(zone.local(occurrence.instant))
    }

    // MARK: Local to UTC

    private func occurrence(at local: LocalDateTime) -> Occurrence {
        Occurrence(local: local, instant: Self.instant(of: local, in: zone))
    }

    /// The instant of a local date and time: what `zone.instant(date, time, gap:
    /// .shiftForward, overlap: .earlier)` gives, written out so that no optional arises.
    private static func instant(of local: LocalDateTime, in zone: ZoneClock) -> Date {
        switch zone.resolve(local) {
        case .unique(let instant): instant
        case .skipped(let shifted): shifted
        case .repeated(let earlier, _): earlier
        }
    }
}

import Foundation
import Synchronization

/// A local date and wall-clock time in some zone.
public struct LocalDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var date: LocalDate
    public var time: LocalTime

    public init(date: LocalDate, time: LocalTime) {
        self.date = date
        self.time = time
    }

    /// Seconds since 1970-01-01T00:00 as if the wall clock were UTC.
    var naiveSeconds: Int64 { date.daysSinceEpoch * 86_400 + Int64(time.secondOfDay) }

    public var description: String { "\(date)T\(time)" }

    public static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool { (lhs.date, lhs.time) < (rhs.date, rhs.time) }
}

/// The wall clock of one IANA time zone: instants to local dates and times and back,
/// across daylight-saving gaps (a local time that never happens) and overlaps (one that
/// happens twice), with no `Calendar` (offsets come straight from the zone's rules, so
/// the conversions are cheap enough for a schedule of a year of slots).
public struct ZoneClock: Sendable, Hashable {
    /// The zone.
    public let timeZone: TimeZone

    public init(_ timeZone: TimeZone) { self.timeZone = timeZone }

    /// The clock of an IANA zone name (`Europe/Minsk`), or `nil` for an unknown one.
    public init?(identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.init(zone)
    }

    /// UTC.
    public static let utc = ZoneClock(TimeZone(identifier: "UTC")!)

    // MARK: Instant to local

    /// The zone's offset from UTC at an instant, in seconds.
    public func offset(at instant: Date) -> Int { timeZone.secondsFromGMT(for: instant) }

    /// The local date and time an instant shows on this clock (seconds truncated
    /// towards the past).
    public func local(_ instant: Date) -> LocalDateTime {
        let seconds = Int64((instant.timeIntervalSince1970).rounded(.down)) + Int64(offset(at: instant))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        return LocalDateTime(date: LocalDate(daysSinceEpoch: days), time: LocalTime(secondOfDay: Int(seconds - days * 86_400))!)
    }

    /// The local date of an instant.
    public func localDate(of instant: Date) -> LocalDate { local(instant).date }

    // MARK: Local to instant

    /// What a local date and time is on this clock.
    public enum Resolution: Sendable, Hashable {
        /// It happens once, at this instant.
        case unique(Date)
        /// It never happens: the clocks jump over it (spring forward). `after` is the
        /// instant the wall clock would show it had it not jumped, i.e. the local time
        /// moved forward by the gap's length (02:30 in a 02:00-03:00 gap is 03:30).
        case skipped(after: Date)
        /// It happens twice (fall back): at `earlier` with the summer offset, then at
        /// `later`.
        case repeated(earlier: Date, later: Date)
    }

    /// Resolves a local date and time into the instants it happens at.
    public func resolve(_ local: LocalDateTime) -> Resolution {
        let naive = local.naiveSeconds
        func offset(_ seconds: Int64) -> Int64 { Int64(self.offset(at: Date(timeIntervalSince1970: TimeInterval(seconds)))) }
        func date(_ seconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }
        // The offsets in force a day around: a zone changes offset at most once in that
        // window in practice, so the time is either one of these or in a gap between.
        let before = offset(naive - 86_400), after = offset(naive + 86_400)
        // The usual case, no change near: one offset, checked once.
        let early = naive - before
        let earlyHolds = offset(early) == before
        if before == after, earlyHolds { return .unique(date(early)) }
        let late = naive - after
        let lateHolds = before != after && offset(late) == after
        switch (earlyHolds, lateHolds) {
        case (true, true):
            return .repeated(earlier: date(min(early, late)), later: date(max(early, late)))
        case (true, false): return .unique(date(early))
        case (false, true): return .unique(date(late))
        case (false, false):
            // Two changes within the window (as some zones had): the offset at the naive
            // time itself may still hold; otherwise it is a gap, shifted forward by it,
            // using the offset before it.
            let middle = offset(naive)
            if offset(naive - middle) == middle { return .unique(date(naive - middle)) }
            return .skipped(after: date(naive - before))
        }
    }

    /// What to do with a local time inside a gap.
    public enum GapRule: Sendable { case reject, shiftForward }
    /// Which occurrence of a repeated local time to take.
    public enum OverlapRule: Sendable { case earlier, later }

    /// The instant of a local date and time: `nil` in a gap with `.reject`; the first
    /// occurrence in an overlap unless told otherwise. A reminder "at 02:30" on the
    /// spring-forward night takes `.shiftForward` and fires at 03:30; a park's slot takes
    /// `.reject` and does not exist.
    public func instant(_ date: LocalDate, _ time: LocalTime, gap: GapRule = .shiftForward, overlap: OverlapRule = .earlier) -> Date? {
        switch resolve(LocalDateTime(date: date, time: time)) {
        case .unique(let instant): return instant
        case .skipped(let after): return gap == .shiftForward ? after : nil
        case .repeated(let earlier, let later): return overlap == .earlier ? earlier : later
        }
    }

    /// The instant the local `date` starts: its midnight, or the first moment after a gap
    /// when midnight itself is skipped (as in zones that change clocks at 00:00).
    public func startOfDay(_ date: LocalDate) -> Date { instant(date, .midnight)! }
}

/// Zone clocks by IANA name, made once: lists and statistics read a zone per row or per
/// request, and `TimeZone(identifier:)` looks the zone's rules up every time.
public enum ZoneCache {
    private static let clocks = Mutex<[String: ZoneClock]>([:])

    public static func clock(_ identifier: String) -> ZoneClock? {
        if let known = clocks.withLock({ $0[identifier] }) { return known }
        guard let clock = ZoneClock(identifier: identifier) else { return nil }
        // There are a few hundred zone names; the cache cannot grow past them.
        clocks.withLock { $0[identifier] = clock }
        return clock
    }
}

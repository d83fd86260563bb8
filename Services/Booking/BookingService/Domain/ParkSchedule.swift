import Foundation
import Platform

/// The dates the park's schedule answers for: years 1970 to 9998, so every slot's
/// instant, in any zone, is one the wire can write (`Instant` covers years 0000-9999 in
/// UTC).
public enum ParkDates {
    public static let years = 1970...9998

    /// A UTC window holding every instant of a local date in any zone (offsets run from
    /// -12 to +14 hours), opened `earlier` seconds before, for bounded scans by instant.
    public static func utcWindow(of date: LocalDate, earlier: Int64 = 0) -> (from: String, to: String) {
        let midnight = date.daysSinceEpoch * 86_400_000
        return (Instant.format(epochMilliseconds: midnight - 14 * 3_600_000 - earlier * 1_000), Instant.format(epochMilliseconds: midnight + 36 * 3_600_000))
    }

    /// The date in `text`, or `validation_failed` on `field`.
    public static func parse(_ text: String, field: String) throws -> LocalDate {
        guard let date = LocalDate(text) else { throw ServiceError.invalid(field, "not a date") }
        guard years.contains(date.year) else { throw ServiceError.invalid(field, "must be in the years 1970 to 9998") }
        return date
    }

    /// `validation_failed` on `field` unless the instant in `text` falls in ``years`` (UTC).
    public static func requireInstant(_ text: String, field: String) throws {
        guard let year = Int(text.prefix(4)), years.contains(year) else {
            throw ServiceError.invalid(field, "must be in the years 1970 to 9998")
        }
    }
}

/// Opening hours of one day, in minutes after local midnight: `[open, close)`.
public struct OpeningHours: Sendable, Hashable, Codable {
    public var open: Int
    public var close: Int

    public init(open: Int, close: Int) {
        self.open = open
        self.close = close
    }
}

/// One bookable slot: its local wall-clock start and its real instants.
public struct Slot: Sendable, Hashable {
    /// The local date.
    public var date: LocalDate
    /// Local start, minutes after midnight.
    public var localStart: Int
    /// Local end, minutes after midnight.
    public var localEnd: Int
    /// The instant it starts.
    public var start: Date
    /// The instant it ends.
    public var end: Date

    /// `HH:MM` of a minute of the day.
    public static func clock(_ minutes: Int) -> String { Instant.digits(minutes / 60, width: 2) + ":" + Instant.digits(minutes % 60, width: 2) }
}

/// When the park is open and how its time is cut into slots: pure rules, no storage.
public struct ParkSchedule: Sendable, Hashable {
    /// The park's IANA time zone.
    public var timeZone: TimeZone
    /// Opening hours per ISO weekday (1 = Monday); a missing day is closed.
    public var weekly: [Int: OpeningHours]
    /// Dates with other hours (`nil`: closed that day).
    public var exceptions: [LocalDate: OpeningHours?]
    /// Slot length in minutes.
    public var slotMinutes: Int
    /// The park's wall clock.
    public let clock: ZoneClock

    public init(timeZone: TimeZone, weekly: [Int: OpeningHours], exceptions: [LocalDate: OpeningHours?] = [:], slotMinutes: Int) {
        self.timeZone = timeZone
        self.weekly = weekly
        self.exceptions = exceptions
        self.slotMinutes = slotMinutes
        self.clock = ZoneClock(timeZone)
    }

    /// The hours of `date`, exceptions first.
    public func hours(on date: LocalDate) -> OpeningHours? {
        if let exception = exceptions[date] { return exception }
        return weekly[date.isoWeekday]
    }

    /// The slots of `date`, in order. Each lasts `slotMinutes` of real time from its
    /// start. A local start that does not exist (the hour skipped when clocks go forward)
    /// is left out; a local start that happens twice (clocks going back) is one slot, at
    /// its first occurrence.
    public func slots(on date: LocalDate) -> [Slot] {
        guard let hours = hours(on: date), slotMinutes > 0 else { return [] }
        var slots: [Slot] = []
        var minute = hours.open
        while minute + slotMinutes <= hours.close {
            if let start = instant(date, minute) {
                let end = start.addingTimeInterval(TimeInterval(slotMinutes * 60))
                slots.append(Slot(date: date, localStart: minute, localEnd: localMinute(of: end, after: minute), start: start, end: end))
            }
            minute += slotMinutes
        }
        return slots
    }

    /// The slot that starts at `instant`, if any: computed directly from the instant's
    /// local time, without listing the day.
    public func slot(startingAt instant: Date) -> Slot? {
        let local = clock.local(instant)
        guard local.time.second == 0, instant.timeIntervalSince1970 - instant.timeIntervalSince1970.rounded(.down) < 0.001 else { return nil }
        let date = local.date, minute = local.time.minuteOfDay
        guard let hours = hours(on: date), slotMinutes > 0, minute >= hours.open, minute + slotMinutes <= hours.close,
            (minute - hours.open) % slotMinutes == 0,
            let start = self.instant(date, minute), abs(start.timeIntervalSince(instant)) < 0.001
        else { return nil }
        let end = start.addingTimeInterval(TimeInterval(slotMinutes * 60))
        return Slot(date: date, localStart: minute, localEnd: localMinute(of: end, after: minute), start: start, end: end)
    }

    /// The local wall-clock minute of `instant`, counted past midnight when it falls on
    /// the next day (so an end is never before its start); across a clock change it is
    /// the time the clock shows, e.g. 03:00 for a 01:00 slot on the spring-forward night.
    func localMinute(of instant: Date, after start: Int) -> Int {
        let minute = clock.local(instant).time.minuteOfDay
        return minute <= start ? minute + 1_440 : minute
    }

    /// The local date of an instant in the park's zone.
    public func localDate(of instant: Date) -> LocalDate { clock.localDate(of: instant) }

    /// The instant of a local wall-clock time, or `nil` when that time does not exist (a
    /// slot in the hour skipped when clocks go forward); a repeated time is its first
    /// occurrence.
    func instant(_ date: LocalDate, _ minute: Int) -> Date? {
        // Midnight at the end of the day is the next day's 00:00.
        if minute == 24 * 60 { return instant(date.adding(days: 1), 0) }
        guard let time = LocalTime(secondOfDay: minute * 60) else { return nil }
        return clock.instant(date, time, gap: .reject, overlap: .earlier)
    }
}

/// The park's rule for late cancellations (WAKEPARKBY 3.1.1.4).
public struct LateCancellationPolicy: Sendable, Hashable, Codable {
    /// What happens to a late cancellation or a no-show.
    public enum Sanction: String, Sendable, Hashable, Codable {
        /// The session (or the price) is kept by the park.
        case forfeit
        /// Nothing: the session is returned as for a timely cancellation.
        case none
    }

    /// A cancellation is free when strictly more than this many seconds remain (7,200).
    public var freeCancellationSeconds: Int64
    /// The sanction otherwise.
    public var sanction: Sanction

    /// The park's default: more than two hours before, free; otherwise forfeited.
    public static let standard = LateCancellationPolicy(freeCancellationSeconds: 7_200, sanction: .forfeit)

    public init(freeCancellationSeconds: Int64, sanction: Sanction) {
        self.freeCancellationSeconds = freeCancellationSeconds
        self.sanction = sanction
    }

    /// Whether cancelling at `now` a booking that starts at `start` is late. Exactly two
    /// hours before is late: the spec says "more than two hours" for a free cancellation.
    public func isLate(start: Date, now: Date) -> Bool {
        let remainingMilliseconds = Int64(((start.timeIntervalSince1970 - now.timeIntervalSince1970) * 1000).rounded())
        return remainingMilliseconds <= freeCancellationSeconds * 1000
    }
}


import Foundation
import Platform

/// One workout exercise of a plan as the schedule rules see it.
public struct PlannedWorkout: Sendable, Hashable {
    public var id: String
    public var date: LocalDate
    public var done: Bool

    public init(id: String, date: LocalDate, done: Bool) {
        self.id = id
        self.date = date
        self.done = done
    }
}

/// Moving a day's workout within the current week, with the "parallel shift of the whole
/// plan" (section 3.7): the day's exercises not yet done move from `from` to `to`, and
/// every exercise of the plan dated after `from` moves by the same number of days.
///
/// The edges, decided here:
/// - `from` and `to` are days of the current ISO week (Monday to Sunday) of `today`, and
///   `to` is today or later: a missed Monday can be done on Thursday, nothing moves into
///   the past. Moving backwards (Thursday's workout done on Tuesday) pulls the rest of
///   the plan earlier by as many days; it cannot reach the past, since everything that
///   moves is later than `from` and lands later than `to`.
/// - Exercises already done on `from` stay there (they happened that day).
/// - A day may hold several exercises, so a moved day joins the exercises already on
///   `to` (a collision merges; nothing is lost or overwritten).
/// - Dates cross month ends freely: the plan is written per month, but an exercise keeps
///   its plan and the calendar shows it on its new date.
public enum PlanReschedule {
    /// Why a move is refused.
    public enum Refusal: Error, Sendable, Equatable {
        /// `from` or `to` is outside the current week (field, problem).
        case outsideWeek(field: String)
        /// `to` is before today.
        case intoThePast
        /// `from` and `to` are the same day.
        case sameDay
        /// Nothing on `from` is left to move.
        case nothingToMove
        /// A later workout would move past 9999-12-31, which a date cannot name.
        case pastTheCalendar

        /// The wire error.
        public var serviceError: ServiceError {
            switch self {
            case .outsideWeek(let field): .invalid(field, "must be a day of the current week (Monday to Sunday)")
            case .intoThePast: .invalid("to", "must be today or later")
            case .sameDay: .invalid("to", "must differ from `from`")
            case .nothingToMove: .conflict("no workout left to do on that day", reason: "nothing_to_move")
            case .pastTheCalendar: .invalid("to", "a later workout of the plan would move past 9999-12-31")
            }
        }
    }

    /// The first and last day of `date`'s ISO week.
    public static func week(of date: LocalDate) -> ClosedRange<LocalDate> {
        let monday = date.adding(days: 1 - date.isoWeekday)
        return monday...monday.adding(days: 6)
    }

    /// The new date of every exercise that moves (those absent stay), or why not.
    public static func move(
        _ plan: [PlannedWorkout], from: LocalDate, to: LocalDate, today: LocalDate
    ) -> Result<[String: LocalDate], Refusal> {
        let week = week(of: today)
        guard week.contains(from) else { return .failure(.outsideWeek(field: "from")) }
        guard week.contains(to) else { return .failure(.outsideWeek(field: "to")) }
        guard to >= today else { return .failure(.intoThePast) }
        guard to != from else { return .failure(.sameDay) }
        guard plan.contains(where: { $0.date == from && !$0.done }) else { return .failure(.nothingToMove) }
        let shift = from.days(until: to)
        var moved: [String: LocalDate] = [:]
        for workout in plan where (workout.date == from && !workout.done) || workout.date > from {
            let date = workout.date.adding(days: shift)
            guard date.year <= 9999 else { return .failure(.pastTheCalendar) }
            moved[workout.id] = date
        }
        return .success(moved)
    }
}

/// A checkable plan item as progress sees it: dated (workouts, dated nutrition) or not.
public struct CheckableItem: Sendable, Hashable {
    public var date: LocalDate?
    public var done: Bool

    public init(date: LocalDate?, done: Bool) {
        self.date = date
        self.done = done
    }
}

/// How far a goal's plan is done and whether the recipient keeps pace with its calendar
/// (section 7: "progress against the calendar plan"), shown to both sides beside the
/// admin's percent.
public struct PlanProgress: Sendable, Hashable, Codable {
    /// Whether the recipient keeps pace.
    public enum Pace: String, Codable, Sendable {
        /// Every item dated before today is done.
        case onTrack = "on_track"
        /// Some item dated before today is not done.
        case behind
        /// Nothing is due yet (no dated item before today).
        case notStarted = "not_started"
    }

    /// Checkable items in the plan.
    public var total: Int
    /// Of them, done.
    public var done: Int
    /// `done` of `total` in whole percent, rounded down (0 for an empty plan).
    public var sharePercent: Int
    /// Dated items due so far (dated today or earlier).
    public var due: Int
    /// Of them, done.
    public var doneOfDue: Int
    /// Items dated before today and not done.
    public var overdue: Int
    public var pace: Pace

    /// The counts progress is made of, as a database can sum them in one pass.
    public struct Counts: Sendable, Hashable {
        public var total = 0, done = 0, due = 0, doneOfDue = 0, overdue = 0, pastDue = 0

        /// The counts of `items` as of `today`.
        public init(_ items: [CheckableItem], today: LocalDate) {
            for item in items {
                total += 1
                if item.done { done += 1 }
                guard let date = item.date else { continue }
                if date <= today {
                    due += 1
                    if item.done { doneOfDue += 1 }
                }
                if date < today {
                    pastDue += 1
                    if !item.done { overdue += 1 }
                }
            }
        }

        public init(total: Int, done: Int, due: Int, doneOfDue: Int, overdue: Int, pastDue: Int) {
            (self.total, self.done, self.due, self.doneOfDue, self.overdue, self.pastDue) = (total, done, due, doneOfDue, overdue, pastDue)
        }
    }

    /// The progress of `items` as of `today`.
    public init(_ items: [CheckableItem], today: LocalDate) {
        self.init(Counts(items, today: today))
    }

    /// The progress of items with these counts: behind when anything dated before today is
    /// not done, on track when something was due before today and all of it is done.
    public init(_ counts: Counts) {
        total = counts.total
        done = counts.done
        sharePercent = total == 0 ? 0 : done * 100 / total
        due = counts.due
        doneOfDue = counts.doneOfDue
        overdue = counts.overdue
        pace = overdue > 0 ? .behind : counts.pastDue > 0 ? .onTrack : .notStarted
    }
}

/// The dates a plan item may carry: within ``reachYears`` of today. A plan is written a
/// month or a season ahead, and checked off as it goes: a workout in 1900 or 9999 is a
/// typo, which the calendar would otherwise keep (and page through) for good.
public enum PlanDates {
    /// How far before or after today an item's date may be.
    public static let reachYears = 5

    /// Why `date` is refused on `today` (the server's UTC day: a day's slack either way
    /// does not matter here), or `nil`.
    public static func problem(_ date: LocalDate, today: LocalDate) -> String? {
        guard date < today.adding(years: -reachYears) || today.adding(years: reachYears) < date else { return nil }
        return "must be within \(reachYears) years of today (\(today))"
    }

    /// The UTC day of `instant`.
    public static func utcDay(_ instant: Date) -> LocalDate {
        LocalDate(daysSinceEpoch: Int64((instant.timeIntervalSince1970 / 86_400).rounded(.down)))
    }
}

import Foundation
import Platform
import Testing

@testable import RemindersService

/// Shared helpers for the recurrence tests.
enum RecurrenceFixtures {
    /// `2027-03-28T09:00` (or with seconds) as a local date-time; records an issue and
    /// returns midnight of 1970-01-01 for anything else.
    static func local(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> LocalDateTime {
        let pieces = text.split(separator: "T", maxSplits: 1)
        guard pieces.count == 2, let date = LocalDate(String(pieces[0])), let time = LocalTime(String(pieces[1])) else {
            Issue.record("not a local date-time: \(text)", sourceLocation: sourceLocation)
            return LocalDateTime(date: LocalDate(year: 1970, month: 1, day: 1), time: .midnight)
        }
        return LocalDateTime(date: date, time: time)
    }

    /// An RFC 3339 instant such as `2027-03-28T01:30:00Z`.
    static func instant(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Date {
        guard let date = Instant.parse(text) else {
            Issue.record("not an instant: \(text)", sourceLocation: sourceLocation)
            return Date(timeIntervalSince1970: 0)
        }
        return date
    }

    static func zone(_ identifier: String) throws -> ZoneClock {
        try #require(ZoneClock(identifier: identifier))
    }

    /// A series from text, in `zone`.
    static func series(
        _ start: String, _ rule: String?, zone: ZoneClock = .utc, exceptions: [String] = []
    ) throws -> RecurrenceSeries {
        try RecurrenceSeries(
            start: local(start), zone: zone, rule: rule.map { try RecurrenceRule.parse($0) },
            exceptions: Set(exceptions.map { local($0) }))
    }

    /// Occurrences as `2027-03-28T09:00` text.
    static func locals(_ occurrences: [Occurrence]) -> [String] { occurrences.map { "\($0.local)" } }

    /// Occurrences' instants as RFC 3339 text without milliseconds: `2027-03-28T07:00:00Z`.
    static func instants(_ occurrences: [Occurrence]) -> [String] {
        occurrences.map { Instant.format($0.instant).replacingOccurrences(of: ".000Z", with: "Z") }
    }
}

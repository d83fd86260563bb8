import Foundation
import Platform
import Testing

@testable import RemindersService

/// The oracle: `Fixtures/rrule-corpus.json`, made by `Fixtures/make_rrule_corpus.py` from
/// python-dateutil (see the script for how RFC 5545's DTSTART rule and SKIP are handled).
/// The file is checked in, so these tests run without Python.
@Suite("RRULE corpus (python-dateutil oracle)")
struct RecurrenceCorpusTests {
    struct Corpus: Decodable {
        var oracle: String
        var limit: Int
        var cases: [Case]
    }

    struct Case: Decodable {
        var name: String
        var source: String
        var start: String
        var rrule: String
        var exdates: [String]?
        var occurrences: [String]
    }

    static func loadCorpus() throws -> Corpus {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent("rrule-corpus.json")
        return try JSONDecoder().decode(Corpus.self, from: Data(contentsOf: url))
    }

    static func series(for testCase: Case) throws -> RecurrenceSeries {
        try RecurrenceFixtures.series(testCase.start, testCase.rrule, exceptions: testCase.exdates ?? [])
    }

    @Test func everyCaseMatchesExactly() throws {
        let corpus = try Self.loadCorpus()
        #expect(corpus.cases.count >= 300)
        var mismatches: [String] = []
        for testCase in corpus.cases {
            let got = RecurrenceFixtures.locals(try Self.series(for: testCase).occurrences(limit: corpus.limit))
            if got != testCase.occurrences {
                let firstDifference = got.indices.first { $0 >= testCase.occurrences.count || got[$0] != testCase.occurrences[$0] } ?? got.count
                mismatches.append("\(testCase.name) [\(testCase.start) \(testCase.rrule)]: at \(firstDifference) got \(got.dropFirst(firstDifference).prefix(3)), expected \(testCase.occurrences.dropFirst(firstDifference).prefix(3))")
            }
        }
        print("RRULE corpus (\(corpus.oracle)): \(corpus.cases.count - mismatches.count) of \(corpus.cases.count) cases match")
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches:\n\(mismatches.prefix(20).joined(separator: "\n"))")
    }

    @Test func everyRuleRoundTripsThroughItsText() throws {
        for testCase in try Self.loadCorpus().cases {
            let rule = try RecurrenceRule.parse(testCase.rrule)
            #expect(try RecurrenceRule.parse(rule.text) == rule, "\(testCase.rrule) -> \(rule.text)")
        }
    }

    /// `next(after:)` jumps to the period holding the instant (without COUNT); it must
    /// find exactly the occurrence that follows each one in the corpus.
    @Test func nextAfterEachOccurrenceIsTheFollowingOne() throws {
        var mismatches: [String] = []
        for testCase in try Self.loadCorpus().cases where testCase.occurrences.count > 1 {
            let series = try Self.series(for: testCase)
            let occurrences = series.occurrences(limit: testCase.occurrences.count)
            for (occurrence, following) in zip(occurrences, occurrences.dropFirst()) {
                let next = series.next(after: occurrence.instant)
                if next != following {
                    mismatches.append("\(testCase.name): after \(occurrence.local) got \(next.map { "\($0.local)" } ?? "nil"), expected \(following.local)")
                    break
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(20).joined(separator: "\n"))")
    }

    /// For a series that ends within the corpus' limit, `last` is its last occurrence
    /// (found backwards from UNTIL, or by walking COUNT), and nothing follows it.
    @Test func lastIsTheLastOccurrenceOfAFiniteSeries() throws {
        let corpus = try Self.loadCorpus()
        for testCase in corpus.cases where testCase.occurrences.count < corpus.limit {
            let series = try Self.series(for: testCase)
            guard series.isFinite else { continue }
            #expect(series.last.map { "\($0.local)" } == testCase.occurrences.last, "\(testCase.name): \(testCase.rrule)")
            if let last = series.last { #expect(series.next(after: last.instant) == nil, "\(testCase.name)") }
        }
    }
}

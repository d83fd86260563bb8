import Foundation
import Platform
import Testing
@testable import RemindersService

private func date(_ text: String) -> LocalDate {
    guard let date = LocalDate(text) else {
        Issue.record("bad test date \(text)")
        return LocalDate(year: 2000, month: 1, day: 1)
    }
    return date
}

/// The rules again, over the written string, independent of the packed digits.
private func reference(_ date: LocalDate) -> [String] {
    let dd = Instant.digits(date.day, width: 2), mm = Instant.digits(date.month, width: 2)
    let yyyy = Instant.digits(date.year, width: 4), yy = String(yyyy.suffix(2))
    let written = dd + mm + yyyy, iso = yyyy + mm + dd, short = dd + mm + yy
    let (day, month, suffix) = (date.day, date.month, date.year % 100)
    var names: [String] = []
    if written == String(written.reversed()) { names.append("palindrome_ddmmyyyy") }
    if iso == String(iso.reversed()) { names.append("palindrome_yyyymmdd") }
    if day == month { names.append("day_equals_month") }
    if day == suffix { names.append("day_equals_year_suffix") }
    if dd == yy && (mm == dd || mm == String(yyyy.prefix(2).reversed())) { names.append("repeating_pairs") }
    if Set(written.filter { $0 != "0" }).count == 1 { names.append("single_digit") }
    if month == day + 1 && suffix == day + 2 { names.append("ascending") }
    if month == day - 1 && suffix == day - 2 { names.append("descending") }
    if short == String(short.reversed()) { names.append("mirrored") }
    if dd + mm == yyyy { names.append("doubled_year") }
    return names
}

@Suite struct BeautifulDatesTests {
    @Test func specExamplesAreFoundWithTheirPatterns() {
        let found = BeautifulDates.find(from: date("2022-01-01"), to: date("2025-12-31"))
        let byDate = Dictionary(found.map { ($0.date, $0.patterns) }, uniquingKeysWith: { first, _ in first })
        #expect(byDate[date("2025-05-25")] == ["day_equals_year_suffix"])
        #expect(byDate[date("2022-02-22")] == ["palindrome_ddmmyyyy", "day_equals_year_suffix", "repeating_pairs", "single_digit"])
        #expect(byDate[date("2023-11-11")] == ["day_equals_month"])
        #expect(byDate[date("2022-02-02")] == ["day_equals_month", "single_digit"])
        #expect(found.map(\.date) == found.map(\.date).sorted())
    }

    @Test(arguments: [
        ("2022-02-22", ["palindrome_ddmmyyyy", "day_equals_year_suffix", "repeating_pairs", "single_digit"]),
        ("2020-02-02", ["palindrome_ddmmyyyy", "palindrome_yyyymmdd", "day_equals_month", "single_digit"]),
        ("2021-02-12", ["palindrome_ddmmyyyy"]),
        ("2092-02-29", ["palindrome_ddmmyyyy"]),
        ("2021-12-02", ["palindrome_yyyymmdd"]),
        ("2030-03-02", ["palindrome_yyyymmdd"]),
        ("2025-05-25", ["day_equals_year_suffix"]),
        ("2012-12-12", ["day_equals_month", "day_equals_year_suffix", "repeating_pairs"]),
        ("2001-01-01", ["day_equals_month", "day_equals_year_suffix", "repeating_pairs"]),
        ("2010-10-10", ["day_equals_month", "day_equals_year_suffix", "repeating_pairs"]),
        ("2020-02-20", ["day_equals_year_suffix", "repeating_pairs", "single_digit"]),
        ("2002-02-02", ["day_equals_month", "day_equals_year_suffix", "repeating_pairs", "single_digit"]),
        ("1111-11-11", ["palindrome_ddmmyyyy", "palindrome_yyyymmdd", "day_equals_month", "day_equals_year_suffix",
                        "repeating_pairs", "single_digit", "mirrored", "doubled_year"]),
        ("2003-02-01", ["ascending"]),
        ("2005-04-03", ["ascending"]),
        ("2012-11-10", ["ascending"]),
        ("2001-02-03", ["descending"]),
        ("2010-11-12", ["descending"]),
        ("2011-12-13", ["descending"]),
        ("2012-11-21", ["mirrored"]),
        ("2022-11-22", ["day_equals_year_suffix", "mirrored"]),
        ("2020-11-02", ["mirrored"]),
        ("2012-12-20", ["doubled_year"]),
        ("1905-05-19", ["doubled_year"]),
        ("2024-06-17", []),
    ])
    func patternsOfADate(_ text: String, _ expected: [String]) {
        #expect(BeautifulDates.patterns(of: date(text)).map(\.rawValue) == expected)
        #expect(reference(date(text)) == expected)
    }

    @Test func findAgreesWithTheStringRulesOver200Years() {
        let from = date("1900-01-01"), to = date("2100-01-01")
        let found = BeautifulDates.find(from: from, to: to, limit: .max)
        var expected: [(LocalDate, [String])] = []
        var day = from
        while day <= to {
            let names = reference(day)
            if !names.isEmpty { expected.append((day, names)) }
            day = day.adding(days: 1)
        }
        #expect(found.count == expected.count)
        for (got, want) in zip(found, expected) where got.date != want.0 || got.patterns != want.1 {
            Issue.record("\(got.date) \(got.patterns) != \(want.0) \(want.1)")
            break
        }
        // patterns(of:) is the same rule.
        for entry in found.prefix(500) {
            #expect(BeautifulDates.patterns(of: entry.date).map(\.rawValue) == entry.patterns)
        }
    }

    @Test func documentedCounts() {
        func count(_ pattern: BeautifulPattern, _ from: String, _ to: String) -> Int {
            BeautifulDates.find(from: date(from), to: date(to), patterns: [pattern], limit: .max).count
        }
        #expect(count(.dayEqualsMonth, "2025-01-01", "2025-12-31") == 12)
        #expect(count(.repeatingPairs, "1901-01-01", "1999-12-31") == 12)
        #expect(count(.repeatingPairs, "2001-01-01", "2100-12-31") == 12 + 27)
        #expect(count(.ascending, "2001-01-01", "2100-12-31") == 11)
        #expect(count(.descending, "2000-01-01", "2099-12-31") == 12)
        #expect(count(.mirrored, "2000-01-01", "2099-12-31") == 30)
        #expect(count(.doubledYear, "2000-01-01", "2099-12-31") == 12)
        #expect(count(.singleDigit, "1900-01-01", "2100-01-01") == 12)
        #expect(count(.dayEqualsYearSuffix, "2000-01-01", "2000-12-31") == 0)
    }

    @Test func selectedPatternsOnlyAndCustomNamesLast() throws {
        let twos = try CustomDatePattern("?2.?2.????")
        let found = BeautifulDates.find(
            from: date("2022-02-01"), to: date("2022-02-28"), patterns: [.singleDigit],
            custom: [(name: "twos", pattern: twos), (name: "twos", pattern: twos)])
        #expect(found.map(\.date) == [date("2022-02-02"), date("2022-02-12"), date("2022-02-20"), date("2022-02-22")])
        #expect(found.map(\.patterns) == [["single_digit", "twos"], ["twos"], ["single_digit"], ["single_digit", "twos"]])
    }

    @Test func limitsAndBounds() {
        #expect(BeautifulDates.find(from: date("2025-01-01"), to: date("2030-01-01"), limit: 3).count == 3)
        #expect(BeautifulDates.find(from: date("2025-01-01"), to: date("2030-01-01"), limit: 0).isEmpty)
        #expect(BeautifulDates.find(from: date("2025-01-02"), to: date("2025-01-01")).isEmpty)
        #expect(BeautifulDates.find(from: date("2025-01-01"), to: date("2025-12-31"), patterns: []).isEmpty)
        // One day, inclusive at both ends.
        #expect(BeautifulDates.find(from: date("2022-02-22"), to: date("2022-02-22")).map(\.date) == [date("2022-02-22")])
        // At most 200 years: 2100-01-01 is the last date searched from 1900-01-01.
        let long = BeautifulDates.find(from: date("1900-01-01"), to: date("2500-12-31"), patterns: [.dayEqualsMonth], limit: .max)
        #expect(long.last?.date == date("2100-01-01"))
        #expect(long.count == 200 * 12 + 1)
        // No four-digit year, no match.
        #expect(BeautifulDates.patterns(of: LocalDate(year: 10_000, month: 1, day: 1)).isEmpty)
        #expect(BeautifulDates.patterns(of: LocalDate(year: 2022, month: 2, day: 30)).isEmpty)
    }

    @Test func twoHundredYearsOfAllPatternsIsFast() throws {
        let custom = [(name: "mine", pattern: try CustomDatePattern("AB.BA.????"))]
        var best = Duration.seconds(60)
        for _ in 0..<3 {
            let clock = ContinuousClock()
            let elapsed = clock.measure {
                _ = BeautifulDates.find(from: date("1900-01-01"), to: date("2100-01-01"), custom: custom, limit: .max)
            }
            best = min(best, elapsed)
        }
        // About 73,000 days: about 2 ms optimized, about 70 ms in a debug build. The debug
        // bound leaves room for a busy machine.
        #if DEBUG
        let bound = Duration.milliseconds(400)
        #else
        let bound = Duration.milliseconds(50)
        #endif
        #expect(best < bound, "took \(best)")
    }
}

import Platform
import PropertyBased
import Testing
@testable import RemindersService

private func date(_ text: String) -> LocalDate { LocalDate(text) ?? LocalDate(year: 1, month: 1, day: 1) }

private func dates(_ pattern: String, _ from: String, _ to: String) throws -> [LocalDate] {
    let custom = try CustomDatePattern(pattern)
    return BeautifulDates.find(from: date(from), to: date(to), patterns: [], custom: [(name: "p", pattern: custom)], limit: .max)
        .map(\.date)
}

@Suite struct CustomDatePatternTests {
    @Test func mirroredDayAndMonth() throws {
        #expect(try dates("AB.BA.????", "2025-01-01", "2025-12-31")
            == ["2025-01-10", "2025-02-20", "2025-03-30", "2025-10-01", "2025-12-21"].map(date))
        // Dots are optional, letters case-insensitive and of any alphabet.
        for same in ["ABBA????", "ab.BA.????", "аб.ба.????", "  A.B.B.A.?.?.?.?  "] {
            #expect(try dates(same, "2025-01-01", "2025-12-31").count == 5, "\(same)")
        }
        #expect(try CustomDatePattern("  ab.BA.????\n").text == "ab.BA.????")
    }

    @Test func lettersLiteralsAndWildcards() throws {
        #expect(try dates("AA.AA.AAAA", "1000-01-01", "1200-01-01") == [date("1111-11-11")])
        #expect(try dates("??.??.2025", "2024-01-01", "2026-12-31").count == 365)
        let sameDayAndYear = try dates("AA.??.20AA", "2000-01-01", "2099-12-31")
        #expect(sameDayAndYear.contains(date("2022-03-22")) && sameDayAndYear.contains(date("2011-06-11")))
        #expect(sameDayAndYear.allSatisfy { $0.day % 11 == 0 && $0.day == $0.year % 100 })
        // Letters are not compared with literal digits.
        #expect(try CustomDatePattern("A2.02.2022").matches(date("2022-02-22")))
        // Different letters are different digits.
        #expect(try !CustomDatePattern("AB.??.????").matches(date("2022-02-22")))
        #expect(try CustomDatePattern("AB.??.????").matches(date("2021-02-21")))
        // Accepted though nothing matches: a year ending in 1 is never leap.
        #expect(try dates("29.02.???1", "1900-01-01", "2100-01-01").isEmpty)
        #expect(try !CustomDatePattern("??.??.????").matches(LocalDate(year: 2025, month: 2, day: 30)))
    }

    @Test(arguments: [
        ("", "empty"),
        ("   ", "empty"),
        ("12.12.201", "has 7 of the eight places"),
        ("12.12.20123", "more than eight places"),
        ("12/12/2012", "unexpected character \u{201C}/\u{201D}"),
        ("AB-BA-????", "unexpected character \u{201C}-\u{201D}"),
        ("??.13.????", "no day and month fit"),
        ("2025.??.??", "no day and month fit"),
        ("31.04.????", "no day and month fit"),
        ("29.02.2023", "no day and month fit"),
        ("١٢.١٢.٢٠١٢", "unexpected character"),
    ])
    func refusedPatterns(_ text: String, _ reason: String) {
        #expect {
            _ = try CustomDatePattern(text)
        } throws: { error in
            (error as? BeautifulDateError)?.reason.contains(reason) == true
        }
    }

    @Test func leapDayWithAFixedLeapYearIsAccepted() throws {
        #expect(try dates("29.02.2024", "2024-01-01", "2024-12-31") == [date("2024-02-29")])
    }

    @Test func theWrittenDateMatchesItselfOnly() async {
        await propertyCheck(input: Gen.int(in: 0...3_652_058)) { offset in
            // 0000-01-01 plus up to 9999 years.
            let day = LocalDate(year: 0, month: 1, day: 1).adding(days: offset)
            let text = Instant.digits(day.day, width: 2) + "." + Instant.digits(day.month, width: 2) + "." + Instant.digits(day.year, width: 4)
            guard let pattern = try? CustomDatePattern(text) else {
                Issue.record("refused \(text)")
                return
            }
            #expect(pattern.matches(day))
            #expect(!pattern.matches(day.adding(days: 1)))
            #expect((try? CustomDatePattern("??.??.????"))?.matches(day) == true)
        }
    }
}

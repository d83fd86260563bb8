import Foundation
import Platform
import Testing
@testable import RemindersService

private func date(_ text: String) -> LocalDate { LocalDate(text) ?? LocalDate(year: 1, month: 1, day: 1) }

private struct EasterTable: Decodable {
    struct Row: Decodable {
        var year: Int
        var western: LocalDate
        var orthodox: LocalDate
    }
    var rows: [Row]
}

@Suite struct ComputusTests {
    @Test func everyYearOfTheDateutilTable() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent("easter-1900-2100.json")
        let table = try JSONDecoder().decode(EasterTable.self, from: Data(contentsOf: url))
        #expect(table.rows.map(\.year) == Array(1900...2100))
        for row in table.rows {
            #expect(Computus.westernEaster(year: row.year) == row.western, "western \(row.year)")
            #expect(Computus.orthodoxEaster(year: row.year) == row.orthodox, "orthodox \(row.year)")
        }
    }

    @Test(arguments: [
        (1900, "1900-04-15", "1900-04-22"),
        (2024, "2024-03-31", "2024-05-05"),
        (2025, "2025-04-20", "2025-04-20"),
        (2026, "2026-04-05", "2026-04-12"),
        (2027, "2027-03-28", "2027-05-02"),
    ])
    func publishedDates(_ year: Int, _ western: String, _ orthodox: String) {
        #expect(Computus.westernEaster(year: year) == date(western))
        #expect(Computus.orthodoxEaster(year: year) == date(orthodox))
    }

    @Test func alwaysASundayInItsWindow() {
        for year in 1583...4099 {
            let western = Computus.westernEaster(year: year), orthodox = Computus.orthodoxEaster(year: year)
            #expect(western.isoWeekday == 7 && orthodox.isoWeekday == 7, "\(year)")
            #expect(western >= LocalDate(year: year, month: 3, day: 22) && western <= LocalDate(year: year, month: 4, day: 25))
            // Julian March 22 - April 25, plus the calendars' difference.
            #expect(orthodox >= western && orthodox.year == year, "\(year)")
        }
    }

    @Test func julianCalendar() {
        #expect(Computus.gregorian(julianYear: 1582, month: 10, day: 5) == date("1582-10-15"))
        #expect(Computus.gregorian(julianYear: 2025, month: 1, day: 6) == date("2025-01-19"))
        #expect(Computus.gregorian(julianYear: 1969, month: 12, day: 19) == date("1970-01-01"))
        // Julian-only leap days widen the difference.
        #expect(Computus.gregorian(julianYear: 1900, month: 2, day: 28) == date("1900-03-12"))
        #expect(Computus.gregorian(julianYear: 1900, month: 2, day: 29) == date("1900-03-13"))
        #expect(Computus.gregorian(julianYear: 2100, month: 2, day: 29) == date("2100-03-14"))
        #expect(Computus.gregorian(julianYear: 2100, month: 3, day: 1) == date("2100-03-15"))
        // The usual shortcut, difference = century - century / 4 - 2 after the Julian
        // leap day, agrees for every Orthodox Easter the algorithms are published for.
        for year in 1583...4099 {
            let difference = year / 100 - year / 400 - 2
            let easter = Computus.orthodoxEaster(year: year)
            let julian = easter.adding(days: -difference)
            #expect(Computus.gregorian(julianYear: year, month: julian.month, day: julian.day) == easter, "\(year)")
        }
    }
}

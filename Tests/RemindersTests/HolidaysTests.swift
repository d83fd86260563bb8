import Foundation
import Platform
import Testing
@testable import RemindersService

private func date(_ text: String) -> LocalDate { LocalDate(text) ?? LocalDate(year: 1, month: 1, day: 1) }

private func holidays(_ country: String, _ year: Int) -> [Holiday] {
    guard let list = HolidayCatalog.holidays(country: country, year: year) else {
        Issue.record("no catalog \(country) \(year)")
        return []
    }
    return list
}

/// `key → date` of one kind (a key on several dates keeps its first).
private func dates(_ country: String, _ year: Int, _ kind: HolidayKind? = nil) -> [String: String] {
    var result: [String: String] = [:]
    for holiday in holidays(country, year) where kind == nil || holiday.kind == kind {
        if result[holiday.key] == nil { result[holiday.key] = holiday.date.description }
    }
    return result
}

@Suite struct HolidayCatalogTests {
    @Test func catalogs() {
        #expect(HolidayCatalog.countries == ["RU", "DE", "US", "GB"])
        #expect(HolidayCatalog.holidays(country: "FR", year: 2025) == nil)
        #expect(HolidayCatalog.holidays(country: "RU", year: 1899) == nil)
        #expect(HolidayCatalog.holidays(country: "RU", year: 2101) == nil)
        #expect(HolidayCatalog.holidays(country: "ru", year: 2025) == HolidayCatalog.holidays(country: "RU", year: 2025))
    }

    @Test(arguments: HolidayCatalog.countries)
    func everyYearIsWellFormed(_ country: String) {
        for year in HolidayCatalog.years {
            let list = holidays(country, year)
            #expect(list == list.sorted { ($0.date, $0.key) < ($1.date, $1.key) })
            #expect(list.allSatisfy { $0.date.year == year && LocalDate(validYear: $0.date.year, month: $0.date.month, day: $0.date.day) != nil })
            #expect(Set(list.map { "\($0.date) \($0.key)" }).count == list.count, "\(country) \(year)")
            #expect(list.allSatisfy { $0.names["en"] != nil && $0.names["ru"] != nil && (country != "DE" || $0.names["de"] != nil) })
            #expect(list.allSatisfy { $0.key.allSatisfy { $0.isLowercase || $0 == "_" } })
            let easter = list.filter { $0.key == "easter" }
            let expected = country == "RU" ? Computus.orthodoxEaster(year: year) : Computus.westernEaster(year: year)
            #expect(easter.map(\.date) == [expected] && easter.allSatisfy { $0.kind == .religious }, "\(country) \(year)")
        }
    }

    @Test func names() {
        let victory = holidays("RU", 2025).first { $0.key == "victory_day" }
        #expect(victory?.name("ru") == "День Победы")
        #expect(victory?.name("ru-RU") == "День Победы")
        #expect(victory?.name("en") == "Victory Day")
        #expect(victory?.name("fr") == "Victory Day")
        let unity = holidays("DE", 2025).first { $0.key == "german_unity_day" }
        #expect(unity?.name("de_DE") == "Tag der Deutschen Einheit")
        #expect(Holiday(date: date("2025-01-01"), key: "x", names: [:], kind: .observance).name("en") == "x")
        #expect(HolidayKind.publicHoliday.rawValue == "public")
    }

    @Test func russia2025() {
        let list = holidays("RU", 2025)
        let publicDays = list.filter { $0.kind == .publicHoliday }.map { "\($0.date.month)-\($0.date.day) \($0.key)" }
        #expect(publicDays == [
            "1-1 new_year", "1-2 new_year_holidays", "1-3 new_year_holidays", "1-4 new_year_holidays", "1-5 new_year_holidays",
            "1-6 new_year_holidays", "1-7 orthodox_christmas", "1-8 new_year_holidays", "2-23 defender_of_the_fatherland_day",
            "3-8 international_womens_day", "5-1 spring_and_labour_day", "5-9 victory_day", "6-12 russia_day", "11-4 unity_day",
        ])
        #expect(dates("RU", 2025, .religious) == [
            "easter": "2025-04-20", "palm_sunday": "2025-04-13", "ascension": "2025-05-29", "trinity": "2025-06-08",
            "maslenitsa_forgiveness_sunday": "2025-03-02", "radonitsa": "2025-04-29", "epiphany": "2025-01-19",
            "annunciation": "2025-04-07", "honey_feast_of_the_saviour": "2025-08-14", "apple_feast_of_the_saviour": "2025-08-19",
            "nut_feast_of_the_saviour": "2025-08-29", "intercession": "2025-10-14",
        ])
        #expect(dates("RU", 2025, .observance) == [
            "valentines_day": "2025-02-14", "cosmonautics_day": "2025-04-12", "knowledge_day": "2025-09-01",
            "family_day": "2025-07-08", "tatiana_day": "2025-01-25", "old_new_year": "2025-01-14", "constitution_day": "2025-12-12",
        ])
        #expect(dates("RU", 2026)["easter"] == "2026-04-12" && dates("RU", 2026)["radonitsa"] == "2026-04-21")
    }

    /// Russia's public days of every year 1991-2030 against the PyPI `holidays` package
    /// (Fixtures/make_ru_holidays_table.py: an implementation independent of this one).
    @Test func russiaPublicDaysAgainstThePythonHolidaysTable() throws {
        struct Table: Decodable {
            struct Row: Decodable {
                var year: Int
                var dates: [String]
            }
            var rows: [Row]
        }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures").appendingPathComponent("ru-public-holidays-1991-2030.json")
        let table = try JSONDecoder().decode(Table.self, from: Data(contentsOf: url))
        #expect(table.rows.map(\.year) == Array(1991...2030))
        for row in table.rows {
            let ours = Set(holidays("RU", row.year).filter { $0.kind == .publicHoliday }.map(\.date.description))
            #expect(ours == Set(row.dates), "RU \(row.year): ours only \(ours.subtracting(row.dates).sorted()), theirs only \(Set(row.dates).subtracting(ours).sorted())")
        }
    }

    @Test func russiaLawsOverTheYears() {
        func publicDays(_ year: Int) -> [String] {
            holidays("RU", year).filter { $0.kind == .publicHoliday }.map { "\($0.date.month)-\($0.date.day) \($0.key)" }
        }
        #expect(publicDays(1917) == [])
        #expect(publicDays(1960) == [
            "1-1 new_year", "5-1 spring_and_labour_day", "5-2 spring_and_labour_day", "11-7 october_revolution_day",
            "11-8 october_revolution_day", "12-5 constitution_day",
        ])
        #expect(publicDays(1985) == [
            "1-1 new_year", "3-8 international_womens_day", "5-1 spring_and_labour_day", "5-2 spring_and_labour_day", "5-9 victory_day",
            "10-7 constitution_day", "11-7 october_revolution_day", "11-8 october_revolution_day",
        ])
        #expect(publicDays(2000) == [
            "1-1 new_year", "1-2 new_year", "1-7 orthodox_christmas", "3-8 international_womens_day", "5-1 spring_and_labour_day",
            "5-2 spring_and_labour_day", "5-9 victory_day", "6-12 russia_day", "11-7 accord_and_reconciliation_day", "12-12 constitution_day",
        ])
        #expect(publicDays(2010).filter { $0.hasPrefix("1-") } == [
            "1-1 new_year", "1-2 new_year_holidays", "1-3 new_year_holidays", "1-4 new_year_holidays", "1-5 new_year_holidays",
            "1-7 orthodox_christmas",
        ])
        // Days that were not days off are still there as what they were.
        let kinds = { (year: Int) in Dictionary(holidays("RU", year).map { ($0.key, $0.kind) }, uniquingKeysWith: { first, _ in first }) }
        #expect(kinds(1950)["victory_day"] == .observance && kinds(1965)["victory_day"] == .publicHoliday)
        #expect(kinds(2001)["defender_of_the_fatherland_day"] == .observance && kinds(2002)["defender_of_the_fatherland_day"] == .publicHoliday)
        #expect(kinds(1990)["orthodox_christmas"] == .religious && kinds(2025)["constitution_day"] == .observance)
        #expect(kinds(1940)["new_year"] == .observance && kinds(1940)["international_womens_day"] == .observance)
        #expect(dates("RU", 1990)["orthodox_christmas"] == "1990-01-07" && dates("RU", 1900)["orthodox_christmas"] == "1900-01-06")
    }

    @Test func russiaHistoryAndTheJulianDrift() {
        #expect(dates("RU", 1944)["victory_day"] == nil && dates("RU", 1945)["victory_day"] == "1945-05-09")
        #expect(dates("RU", 1991)["russia_day"] == nil && dates("RU", 1992)["russia_day"] == "1992-06-12")
        #expect(dates("RU", 2004)["unity_day"] == nil && dates("RU", 2005)["unity_day"] == "2005-11-04")
        #expect(dates("RU", 1918)["old_new_year"] == nil && dates("RU", 1919)["old_new_year"] == "1919-01-14")
        #expect(dates("RU", 1900)["epiphany"] == "1900-01-18" && dates("RU", 1900)["annunciation"] == "1900-04-07")
        #expect(dates("RU", 2100)["epiphany"] == "2100-01-19" && dates("RU", 2100)["annunciation"] == "2100-04-08")
        #expect(dates("RU", 2100)["orthodox_christmas"] == "2100-01-07")
    }

    @Test func germany2025() {
        #expect(dates("DE", 2025) == [
            "new_year": "2025-01-01", "good_friday": "2025-04-18", "easter": "2025-04-20", "easter_monday": "2025-04-21",
            "labour_day": "2025-05-01", "ascension": "2025-05-29", "whit_sunday": "2025-06-08", "whit_monday": "2025-06-09",
            "german_unity_day": "2025-10-03", "christmas": "2025-12-25", "second_christmas_day": "2025-12-26",
        ])
        #expect(dates("DE", 1989)["german_unity_day"] == nil)
        #expect(holidays("DE", 2025).filter { $0.kind == .religious }.map(\.key) == ["easter", "whit_sunday"])
    }

    @Test func unitedStates2025() {
        #expect(dates("US", 2025) == [
            "new_year": "2025-01-01", "martin_luther_king_day": "2025-01-20", "washingtons_birthday": "2025-02-17",
            "easter": "2025-04-20", "memorial_day": "2025-05-26", "juneteenth": "2025-06-19", "independence_day": "2025-07-04",
            "labor_day": "2025-09-01", "columbus_day": "2025-10-13", "veterans_day": "2025-11-11",
            "thanksgiving_day": "2025-11-27", "christmas": "2025-12-25",
        ])
    }

    @Test func unitedStatesFloatingRules() {
        #expect(dates("US", 2026)["thanksgiving_day"] == "2026-11-26")
        #expect(dates("US", 2027)["martin_luther_king_day"] == "2027-01-18")
        #expect(dates("US", 2027)["memorial_day"] == "2027-05-31")
        #expect(dates("US", 2027)["labor_day"] == "2027-09-06")
        #expect(dates("US", 2027)["columbus_day"] == "2027-10-11")
        #expect(dates("US", 2027)["washingtons_birthday"] == "2027-02-15")
    }

    @Test func unitedStatesObservedDays() {
        // 2021: Juneteenth's first year, on a Saturday; 1 January 2022 a Saturday too.
        #expect(dates("US", 2020)["juneteenth"] == nil)
        #expect(dates("US", 2021)["juneteenth_observed"] == "2021-06-18")
        #expect(dates("US", 2021)["new_year_observed"] == "2021-12-31")
        #expect(dates("US", 2022)["new_year_observed"] == nil)
        // 2027: Juneteenth and Christmas on a Saturday, 4 July a Sunday, 1 January 2028 a
        // Saturday.
        #expect(dates("US", 2027)["independence_day_observed"] == "2027-07-05")
        #expect(dates("US", 2027)["christmas_observed"] == "2027-12-24")
        #expect(dates("US", 2027)["independence_day"] == "2027-07-04")
        let observed = holidays("US", 2027).filter { $0.key.hasSuffix("_observed") }
        #expect(observed.map { "\($0.date) \($0.key)" } == [
            "2027-06-18 juneteenth_observed", "2027-07-05 independence_day_observed", "2027-12-24 christmas_observed",
            "2027-12-31 new_year_observed",
        ])
        #expect(observed.dropFirst().first?.name("en") == "Independence Day (observed)")
        #expect(observed.allSatisfy { $0.kind == .publicHoliday })
        // Weekday fixed holidays have no observed entry.
        #expect(holidays("US", 2025).allSatisfy { !$0.key.hasSuffix("_observed") })
        #expect(holidays("US", 1970).allSatisfy { !$0.key.hasSuffix("_observed") })
    }

    @Test func unitedStatesHistory() {
        #expect(dates("US", 1985)["martin_luther_king_day"] == nil && dates("US", 1986)["martin_luther_king_day"] == "1986-01-20")
        #expect(dates("US", 1970)["memorial_day"] == "1970-05-30" && dates("US", 1971)["memorial_day"] == "1971-05-31")
        #expect(dates("US", 1970)["washingtons_birthday"] == "1970-02-22" && dates("US", 1971)["washingtons_birthday"] == "1971-02-15")
        #expect(dates("US", 1936)["columbus_day"] == nil && dates("US", 1970)["columbus_day"] == "1970-10-12")
        #expect(dates("US", 1975)["veterans_day"] == "1975-10-27" && dates("US", 1978)["veterans_day"] == "1978-11-11")
        #expect(dates("US", 1937)["veterans_day"] == nil)
        #expect(holidays("US", 1950).first { $0.key == "veterans_day" }?.name("en") == "Armistice Day")
        #expect(dates("US", 1938)["thanksgiving_day"] == "1938-11-24")
        #expect(dates("US", 1939)["thanksgiving_day"] == "1939-11-23")
        #expect(dates("US", 1940)["thanksgiving_day"] == "1940-11-21")
        #expect(dates("US", 1941)["thanksgiving_day"] == "1941-11-20")
        #expect(dates("US", 1942)["thanksgiving_day"] == "1942-11-26")
    }

    @Test func greatBritain2025() {
        #expect(dates("GB", 2025) == [
            "new_year": "2025-01-01", "good_friday": "2025-04-18", "easter": "2025-04-20", "easter_monday": "2025-04-21",
            "early_may_bank_holiday": "2025-05-05", "spring_bank_holiday": "2025-05-26", "summer_bank_holiday": "2025-08-25",
            "christmas": "2025-12-25", "boxing_day": "2025-12-26",
        ])
    }

    @Test func greatBritainSubstitutes() {
        // 2027: Christmas on a Saturday, Boxing Day on a Sunday.
        let christmas2027 = holidays("GB", 2027).filter { $0.date.month == 12 && $0.date.day >= 25 }
        #expect(christmas2027.map { "\($0.date) \($0.key)" } == [
            "2027-12-25 christmas", "2027-12-26 boxing_day", "2027-12-27 christmas_substitute", "2027-12-28 boxing_day_substitute",
        ])
        #expect(christmas2027.last?.name("en") == "Boxing Day (substitute day)")
        // 2022: Christmas on a Sunday, Boxing Day the Monday.
        #expect(dates("GB", 2022)["christmas_substitute"] == "2022-12-27" && dates("GB", 2022)["boxing_day_substitute"] == nil)
        // 2026: Boxing Day on a Saturday.
        #expect(dates("GB", 2026)["boxing_day_substitute"] == "2026-12-28" && dates("GB", 2026)["christmas_substitute"] == nil)
        // New Year's Day on a Saturday (2022) and a Sunday (2023).
        #expect(dates("GB", 2022)["new_year_substitute"] == "2022-01-03")
        #expect(dates("GB", 2023)["new_year_substitute"] == "2023-01-02")
        #expect(dates("GB", 1973)["new_year"] == nil && dates("GB", 1977)["early_may_bank_holiday"] == nil)
    }
}

import Platform
import Testing
@testable import RemindersService

private func date(_ text: String) -> LocalDate { LocalDate(text) ?? LocalDate(year: 1, month: 1, day: 1) }

@Suite struct MilestonesTests {
    @Test func roundCounts() {
        let yes: [(Int, Milestone.Unit)] = [(1_000, .days), (10_000, .days), (1_111, .days), (22_222, .days), (100, .weeks),
                                            (1_000, .weeks), (1_111, .weeks), (100, .months), (500, .months), (111, .months),
                                            (999, .months), (5, .years), (25, .years)]
        let no: [(Int, Milestone.Unit)] = [(0, .days), (111, .days), (500, .days), (1_112, .days), (111, .weeks), (150, .weeks),
                                           (50, .months), (11, .months), (11, .years), (12, .years), (-1_000, .days)]
        for (count, unit) in yes { #expect(Milestones.isRound(count, unit: unit), "\(count) \(unit)") }
        for (count, unit) in no { #expect(!Milestones.isRound(count, unit: unit), "\(count) \(unit)") }
    }

    @Test func aLifeOfMilestones() {
        let birthday = date("2000-01-01")
        let all = Milestones.between(date("1990-01-01"), date("2100-01-01"), since: birthday)
        func find(_ key: String) -> LocalDate? { all.first { $0.key == key }?.date }
        #expect(find("10000_days") == date("2027-05-19"))
        #expect(find("1000_weeks") == birthday.adding(days: 7_000))
        #expect(find("500_months") == date("2041-09-01"))
        #expect(find("25_years") == date("2025-01-01"))
        #expect(find("22222_days") == birthday.adding(days: 22_222))
        #expect(find("111_months") == date("2009-04-01"))
        #expect(Set(all.map(\.key)).count == all.count)
        #expect(all.allSatisfy { $0.count > 0 && $0.date > birthday })
        // 1,000 weeks and 7,000 days are the same day: days first.
        let sameDay = all.filter { $0.date == birthday.adding(days: 7_000) }.map(\.key)
        #expect(sameDay == ["7000_days", "1000_weeks"])
        let order = Milestone.Unit.allCases
        #expect(zip(all, all.dropFirst()).allSatisfy {
            ($0.date, order.firstIndex(of: $0.unit) ?? 0, $0.count) < ($1.date, order.firstIndex(of: $1.unit) ?? 0, $1.count)
        })
        // Exactly the documented counts: every unit's round counts, nothing else.
        #expect(all.filter { $0.unit == .years }.map(\.count) == Array(stride(from: 5, through: 100, by: 5)))
        #expect(all.filter { $0.unit == .months }.map(\.count).sorted()
            == (Array(stride(from: 100, through: 1_200, by: 100)) + (1...9).map { $0 * 111 } + [1_111]).sorted())
    }

    @Test func agreesWithCountingEveryDay() {
        let personal = date("1987-03-31")
        let from = date("1990-06-15"), to = date("2060-02-29")
        var expected: [String: LocalDate] = [:]
        var day = from
        while day <= to {
            let days = personal.days(until: day)
            if Milestones.isRound(days, unit: .days) { expected["\(days)_days"] = day }
            if days % 7 == 0, Milestones.isRound(days / 7, unit: .weeks) { expected["\(days / 7)_weeks"] = day }
            day = day.adding(days: 1)
        }
        for months in 1...1_000 {
            let day = personal.adding(months: months)
            guard day >= from, day <= to else { continue }
            if Milestones.isRound(months, unit: .months) { expected["\(months)_months"] = day }
            if months % 12 == 0, Milestones.isRound(months / 12, unit: .years) { expected["\(months / 12)_years"] = day }
        }
        let got = Milestones.between(from, to, since: personal)
        #expect(Dictionary(uniqueKeysWithValues: got.map { ($0.key, $0.date) }) == expected)
    }

    @Test func calendarMonthsClampToTheMonthEnd() {
        let personal = date("2000-01-31")
        let all = Milestones.between(date("2000-01-01"), date("2010-12-31"), since: personal)
        #expect(all.first { $0.key == "100_months" }?.date == date("2008-05-31"))
        #expect(all.first { $0.key == "111_months" }?.date == date("2009-04-30"))
        let leap = Milestones.between(date("2004-01-01"), date("2005-12-31"), since: date("2000-02-29"))
        #expect(leap.first { $0.key == "5_years" }?.date == date("2005-02-28"))
    }

    @Test func windowBoundsAreInclusive() {
        let personal = date("2000-01-01"), tenThousand = date("2027-05-19")
        #expect(Milestones.between(tenThousand, tenThousand, since: personal).map(\.key) == ["10000_days"])
        #expect(Milestones.between(tenThousand.adding(days: 1), date("2027-06-01"), since: personal).isEmpty)
        #expect(Milestones.between(date("2027-05-01"), tenThousand.adding(days: -1), since: personal).map(\.key) == ["9999_days"])
        #expect(Milestones.between(date("2027-05-01"), tenThousand.adding(days: -2), since: personal).isEmpty)
        #expect(Milestones.between(date("2030-01-01"), date("2020-01-01"), since: personal).isEmpty)
        #expect(Milestones.between(date("1990-01-01"), personal, since: personal).isEmpty)
    }
}

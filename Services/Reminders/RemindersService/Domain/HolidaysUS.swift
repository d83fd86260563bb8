import Platform

extension HolidayCatalog {
    /// The United States: the federal holidays (5 U.S.C. 6103) and Western Easter.
    ///
    /// | Key | Date | History kept |
    /// |---|---|---|
    /// | `new_year` | 1 January | |
    /// | `martin_luther_king_day` | 3rd Monday of January | from 1986 |
    /// | `washingtons_birthday` | 3rd Monday of February | 22 February before 1971 |
    /// | `memorial_day` | last Monday of May | 30 May before 1971 |
    /// | `juneteenth` | 19 June | from 2021 |
    /// | `independence_day` | 4 July | |
    /// | `labor_day` | 1st Monday of September | |
    /// | `columbus_day` | 2nd Monday of October | from 1937; 12 October before 1971 |
    /// | `veterans_day` | 11 November | from 1938 (Armistice Day until 1953); 4th Monday of October 1971-1977 |
    /// | `thanksgiving_day` | 4th Thursday of November | from 1942; the last Thursday before 1939, the next-to-last 1939-1941 |
    /// | `christmas` | 25 December | |
    /// | `easter` | Western Easter Sunday (religious) | |
    ///
    /// (The 1971 changes are the Uniform Monday Holiday Act; Inauguration Day, a holiday
    /// only around Washington, D.C., is left out.)
    ///
    /// **Observed days**: a holiday on a fixed date that falls on a Saturday is observed
    /// on the Friday before, on a Sunday on the Monday after (Executive Order 11582; listed
    /// from 1971 on). The holiday stays on its own date and the observed day is a second
    /// public entry, `<key>_observed` ("Independence Day (observed)"). New Year's Day on a
    /// Saturday is observed on 31 December of the year before, so that entry
    /// (`new_year_observed`) belongs to the earlier year's list.
    static func unitedStates(_ year: Int) -> [Holiday] {
        var list = HolidayList(year: year)
        let modernMondays = year >= 1971
        // The holidays on a fixed date this year, for the observed days.
        var fixed: [(key: String, date: LocalDate, en: String, ru: String)] = []
        func addFixed(_ key: String, month: Int, day: Int, since: Int? = nil, en: String, ru: String) {
            if let since, year < since { return }
            guard let date = LocalDate(validYear: year, month: month, day: day) else { return }
            list.add(key, date, .publicHoliday, en: en, ru: ru)
            fixed.append((key, date, en, ru))
        }

        addFixed("new_year", month: 1, day: 1, en: "New Year's Day", ru: "Новый год")
        list.add("martin_luther_king_day", weekday: Weekday.monday, ordinal: 3, month: 1, .publicHoliday, since: 1986,
                 en: "Martin Luther King Jr. Day", ru: "День Мартина Лютера Кинга")
        let washingtonEn = "Washington's Birthday", washingtonRu = "День рождения Вашингтона (День президентов)"
        if modernMondays {
            list.add("washingtons_birthday", weekday: Weekday.monday, ordinal: 3, month: 2, .publicHoliday, en: washingtonEn, ru: washingtonRu)
        } else {
            addFixed("washingtons_birthday", month: 2, day: 22, en: washingtonEn, ru: washingtonRu)
        }
        if modernMondays {
            list.add("memorial_day", weekday: Weekday.monday, ordinal: -1, month: 5, .publicHoliday, en: "Memorial Day", ru: "День памяти")
        } else {
            addFixed("memorial_day", month: 5, day: 30, en: "Memorial Day", ru: "День памяти")
        }
        addFixed("juneteenth", month: 6, day: 19, since: 2021,
                 en: "Juneteenth National Independence Day", ru: "Джунтинс (День освобождения от рабства)")
        addFixed("independence_day", month: 7, day: 4, en: "Independence Day", ru: "День независимости")
        list.add("labor_day", weekday: Weekday.monday, ordinal: 1, month: 9, .publicHoliday, en: "Labor Day", ru: "День труда")
        if modernMondays {
            list.add("columbus_day", weekday: Weekday.monday, ordinal: 2, month: 10, .publicHoliday, en: "Columbus Day", ru: "День Колумба")
        } else {
            addFixed("columbus_day", month: 10, day: 12, since: 1937, en: "Columbus Day", ru: "День Колумба")
        }
        let veteransEn = year < 1954 ? "Armistice Day" : "Veterans Day", veteransRu = year < 1954 ? "День перемирия" : "День ветеранов"
        if (1971...1977).contains(year) {
            list.add("veterans_day", weekday: Weekday.monday, ordinal: 4, month: 10, .publicHoliday, en: veteransEn, ru: veteransRu)
        } else {
            addFixed("veterans_day", month: 11, day: 11, since: 1938, en: veteransEn, ru: veteransRu)
        }
        let thanksgivingOrdinal = year >= 1942 ? 4 : year >= 1939 ? -2 : -1
        list.add("thanksgiving_day", weekday: Weekday.thursday, ordinal: thanksgivingOrdinal, month: 11, .publicHoliday,
                 en: "Thanksgiving Day", ru: "День благодарения")
        addFixed("christmas", month: 12, day: 25, en: "Christmas Day", ru: "Рождество")
        list.add("easter", Computus.westernEaster(year: year), .religious, en: "Easter Sunday", ru: "Пасха")

        guard year >= 1971 else { return list.holidays }
        for holiday in fixed {
            let observed: LocalDate
            switch holiday.date.isoWeekday {
            case Weekday.saturday: observed = holiday.date.adding(days: -1)
            case Weekday.sunday: observed = holiday.date.adding(days: 1)
            default: continue
            }
            // New Year's Day on a Saturday: observed on 31 December of the year before.
            guard observed.year == year else { continue }
            list.add(holiday.key + "_observed", observed, .publicHoliday, en: holiday.en + " (observed)", ru: holiday.ru + " (перенос выходного)")
        }
        // Next year's New Year's Day on a Saturday is observed on this 31 December.
        let nextNewYear = LocalDate(year: year + 1, month: 1, day: 1)
        if nextNewYear.isoWeekday == Weekday.saturday {
            list.add("new_year_observed", LocalDate(year: year, month: 12, day: 31), .publicHoliday,
                     en: "New Year's Day (observed)", ru: "Новый год (перенос выходного)")
        }
        return list.holidays
    }
}

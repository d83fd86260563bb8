import Platform

extension HolidayCatalog {
    /// The United Kingdom: the bank holidays of England and Wales (Scotland and
    /// Northern Ireland have others), with Western Easter.
    ///
    /// - `new_year` (1 January, from 1974), `good_friday` (Easter - 2), `easter_monday`
    ///   (+1), `early_may_bank_holiday` (1st Monday of May, from 1978),
    ///   `spring_bank_holiday` (last Monday of May), `summer_bank_holiday` (last Monday of
    ///   August), `christmas` (25 December), `boxing_day` (26 December): public.
    /// - `easter` (Easter Sunday): religious, not a bank holiday.
    ///
    /// **Substitute days**: New Year's Day, Christmas Day and Boxing Day on a weekend keep
    /// their entry and get a substitute bank holiday, `<key>_substitute` ("Christmas Day
    /// (substitute day)"), on the first weekday after them that is not already a bank
    /// holiday: Christmas on a Saturday gives Monday 27th and Boxing Day (Sunday) Tuesday
    /// 28th; Christmas on a Sunday gives Tuesday 27th, as Boxing Day is the Monday.
    ///
    /// Today's rules are applied to every year: the Whitsun and early-August bank holidays
    /// before 1971 and the one-off changes (the Early May holiday moved to 8 May in 1995
    /// and 2020, the 2022 Platinum Jubilee and others) are not modelled.
    static func greatBritain(_ year: Int) -> [Holiday] {
        var list = HolidayList(year: year)
        let easter = Computus.westernEaster(year: year)
        list.add("new_year", month: 1, day: 1, .publicHoliday, since: 1974, en: "New Year's Day", ru: "Новый год")
        list.add("good_friday", easter.adding(days: -2), .publicHoliday, en: "Good Friday", ru: "Страстная пятница")
        list.add("easter", easter, .religious, en: "Easter Sunday", ru: "Пасха")
        list.add("easter_monday", easter.adding(days: 1), .publicHoliday, en: "Easter Monday", ru: "Пасхальный понедельник")
        list.add("early_may_bank_holiday", weekday: Weekday.monday, ordinal: 1, month: 5, .publicHoliday, since: 1978,
                 en: "Early May bank holiday", ru: "Майский банковский выходной")
        list.add("spring_bank_holiday", weekday: Weekday.monday, ordinal: -1, month: 5, .publicHoliday,
                 en: "Spring bank holiday", ru: "Весенний банковский выходной")
        list.add("summer_bank_holiday", weekday: Weekday.monday, ordinal: -1, month: 8, .publicHoliday,
                 en: "Summer bank holiday", ru: "Летний банковский выходной")
        list.add("christmas", month: 12, day: 25, .publicHoliday, en: "Christmas Day", ru: "Рождество")
        list.add("boxing_day", month: 12, day: 26, .publicHoliday, en: "Boxing Day", ru: "День подарков")

        // Substitutes, in date order so a later one skips an earlier substitute.
        for key in ["new_year", "christmas", "boxing_day"] {
            guard let holiday = list.holidays.first(where: { $0.key == key }),
                holiday.date.isoWeekday >= Weekday.saturday
            else { continue }
            var substitute = holiday.date.adding(days: 1)
            while substitute.isoWeekday >= Weekday.saturday || list.hasPublicHoliday(on: substitute) {
                substitute = substitute.adding(days: 1)
            }
            list.add(key + "_substitute", substitute, .publicHoliday,
                     en: holiday.name("en") + " (substitute day)", ru: holiday.name("ru") + " (перенос выходного)")
        }
        return list.holidays
    }
}

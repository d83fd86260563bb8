import Platform

extension HolidayCatalog {
    /// Germany: the holidays kept in every Land (each Land adds its own, such as
    /// Epiphany or Reformation Day; those and the one-off nationwide Reformation Day of
    /// 2017 are not in the catalog). Easter is Western (``Computus/westernEaster(year:)``).
    ///
    /// - Public: `new_year` (Neujahr, 1 January), `good_friday` (Karfreitag, Easter - 2),
    ///   `easter_monday` (Ostermontag, +1), `labour_day` (Tag der Arbeit, 1 May),
    ///   `ascension` (Christi Himmelfahrt, +39), `whit_monday` (Pfingstmontag, +50),
    ///   `german_unity_day` (Tag der Deutschen Einheit, 3 October, from 1990),
    ///   `christmas` (1. Weihnachtstag, 25 December), `second_christmas_day`
    ///   (2. Weihnachtstag, 26 December).
    /// - Religious: `easter` (Ostersonntag) and `whit_sunday` (Pfingstsonntag, +49): they
    ///   are Sundays anyway, and a statutory holiday only in Brandenburg.
    static func germany(_ year: Int) -> [Holiday] {
        var list = HolidayList(year: year)
        let easter = Computus.westernEaster(year: year)
        list.add("new_year", month: 1, day: 1, .publicHoliday, en: "New Year's Day", ru: "Новый год", de: "Neujahr")
        list.add("good_friday", easter.adding(days: -2), .publicHoliday, en: "Good Friday", ru: "Страстная пятница", de: "Karfreitag")
        list.add("easter", easter, .religious, en: "Easter Sunday", ru: "Пасха", de: "Ostersonntag")
        list.add("easter_monday", easter.adding(days: 1), .publicHoliday, en: "Easter Monday", ru: "Пасхальный понедельник", de: "Ostermontag")
        list.add("labour_day", month: 5, day: 1, .publicHoliday, en: "Labour Day", ru: "День труда", de: "Tag der Arbeit")
        list.add("ascension", easter.adding(days: 39), .publicHoliday, en: "Ascension Day", ru: "Вознесение", de: "Christi Himmelfahrt")
        list.add("whit_sunday", easter.adding(days: 49), .religious, en: "Whit Sunday (Pentecost)", ru: "Троица (Пятидесятница)", de: "Pfingstsonntag")
        list.add("whit_monday", easter.adding(days: 50), .publicHoliday, en: "Whit Monday", ru: "Духов день", de: "Pfingstmontag")
        list.add("german_unity_day", month: 10, day: 3, .publicHoliday, since: 1990,
                 en: "German Unity Day", ru: "День германского единства", de: "Tag der Deutschen Einheit")
        list.add("christmas", month: 12, day: 25, .publicHoliday, en: "Christmas Day", ru: "Рождество", de: "1. Weihnachtstag")
        list.add("second_christmas_day", month: 12, day: 26, .publicHoliday,
                 en: "Second Day of Christmas", ru: "Второй день Рождества", de: "2. Weihnachtstag")
        return list.holidays
    }
}

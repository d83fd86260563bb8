import Platform

extension HolidayCatalog {
    /// Russia.
    ///
    /// **Public** (non-working days of the Labour Code, art. 112):
    /// - `new_year` (1 January) and `new_year_holidays` (2-6 and 8 January: one key for
    ///   the six days of the New Year break, so hiding "the holidays" is one setting);
    /// - `orthodox_christmas` (7 January, as the Code fixes it in the Gregorian calendar);
    /// - `defender_of_the_fatherland_day` (23 February), `international_womens_day`
    ///   (8 March), `spring_and_labour_day` (1 May), `victory_day` (9 May, from 1945),
    ///   `russia_day` (12 June, from 1992), `unity_day` (4 November, from 2005).
    ///
    /// The yearly government decree that moves days off (a holiday on a weekend gives a
    /// working day off later) is not part of the catalog.
    ///
    /// **Religious** (Russian Orthodox; none is a day off):
    /// - from Orthodox Easter (``Computus/orthodoxEaster(year:)``): `easter`,
    ///   `maslenitsa_forgiveness_sunday` (-49 days, the last day of Maslenitsa),
    ///   `palm_sunday` (-7), `radonitsa` (+9, a Tuesday), `ascension` (+39),
    ///   `trinity` (+49);
    /// - fixed feasts, kept by the Julian calendar and converted exactly
    ///   (``Computus/gregorian(julianYear:month:day:)``): `epiphany` (Julian 6 January =
    ///   19 January), `annunciation` (25 March = 7 April), `honey_feast_of_the_saviour`
    ///   (1 August = 14 August), `apple_feast_of_the_saviour` (the Transfiguration,
    ///   6 August = 19 August), `nut_feast_of_the_saviour` (16 August = 29 August),
    ///   `intercession` (1 October = 14 October). The Gregorian dates given hold from
    ///   March 1900 to early March 2100 (the calendars drift apart by a day at each
    ///   Julian-only leap day): Epiphany 1900 is 18 January, and the feasts of 2100 after
    ///   14 March are a day later (Annunciation 8 April).
    ///
    /// **Observances**: `old_new_year` (Julian 1 January = 14 January, from 1919, the
    /// first New Year after Russia's switch to the Gregorian calendar), `tatiana_day`
    /// (25 January, Russian Students' Day), `valentines_day` (14 February),
    /// `cosmonautics_day` (12 April, from 1962), `family_day` (8 July, the Day of Family,
    /// Love and Fidelity, the feast of Peter and Fevronia, from 2008), `knowledge_day`
    /// (1 September, from 1984).
    static func russia(_ year: Int) -> [Holiday] {
        var list = HolidayList(year: year)
        list.add("new_year", month: 1, day: 1, .publicHoliday, en: "New Year's Day", ru: "Новый год")
        for day in [2, 3, 4, 5, 6, 8] {
            list.add("new_year_holidays", month: 1, day: day, .publicHoliday, en: "New Year holidays", ru: "Новогодние каникулы")
        }
        list.add("orthodox_christmas", month: 1, day: 7, .publicHoliday, en: "Orthodox Christmas", ru: "Рождество Христово")
        list.add("defender_of_the_fatherland_day", month: 2, day: 23, .publicHoliday,
                 en: "Defender of the Fatherland Day", ru: "День защитника Отечества")
        list.add("international_womens_day", month: 3, day: 8, .publicHoliday,
                 en: "International Women's Day", ru: "Международный женский день")
        list.add("spring_and_labour_day", month: 5, day: 1, .publicHoliday, en: "Spring and Labour Day", ru: "Праздник Весны и Труда")
        list.add("victory_day", month: 5, day: 9, .publicHoliday, since: 1945, en: "Victory Day", ru: "День Победы")
        list.add("russia_day", month: 6, day: 12, .publicHoliday, since: 1992, en: "Russia Day", ru: "День России")
        list.add("unity_day", month: 11, day: 4, .publicHoliday, since: 2005, en: "Unity Day", ru: "День народного единства")

        let easter = Computus.orthodoxEaster(year: year)
        list.add("maslenitsa_forgiveness_sunday", easter.adding(days: -49), .religious,
                 en: "Forgiveness Sunday (end of Maslenitsa)", ru: "Прощёное воскресенье (конец Масленицы)")
        list.add("palm_sunday", easter.adding(days: -7), .religious, en: "Palm Sunday", ru: "Вербное воскресенье")
        list.add("easter", easter, .religious, en: "Orthodox Easter", ru: "Пасха")
        list.add("radonitsa", easter.adding(days: 9), .religious, en: "Radonitsa", ru: "Радоница")
        list.add("ascension", easter.adding(days: 39), .religious, en: "Ascension Day", ru: "Вознесение Господне")
        list.add("trinity", easter.adding(days: 49), .religious, en: "Trinity Sunday (Pentecost)", ru: "Троица")

        func julian(_ month: Int, _ day: Int) -> LocalDate { Computus.gregorian(julianYear: year, month: month, day: day) }
        list.add("epiphany", julian(1, 6), .religious, en: "Epiphany (Theophany)", ru: "Крещение Господне")
        list.add("annunciation", julian(3, 25), .religious, en: "Annunciation", ru: "Благовещение Пресвятой Богородицы")
        list.add("honey_feast_of_the_saviour", julian(8, 1), .religious, en: "Honey Feast of the Saviour", ru: "Медовый Спас")
        list.add("apple_feast_of_the_saviour", julian(8, 6), .religious,
                 en: "Transfiguration (Apple Feast of the Saviour)", ru: "Преображение Господне (Яблочный Спас)")
        list.add("nut_feast_of_the_saviour", julian(8, 16), .religious, en: "Nut Feast of the Saviour", ru: "Ореховый Спас")
        list.add("intercession", julian(10, 1), .religious, en: "Intercession of the Theotokos", ru: "Покров Пресвятой Богородицы")

        list.add("old_new_year", julian(1, 1), .observance, since: 1919, en: "Old New Year", ru: "Старый Новый год")
        list.add("tatiana_day", month: 1, day: 25, .observance,
                 en: "Tatiana Day (Russian Students' Day)", ru: "Татьянин день (День российского студенчества)")
        list.add("valentines_day", month: 2, day: 14, .observance, en: "Valentine's Day", ru: "День святого Валентина")
        list.add("cosmonautics_day", month: 4, day: 12, .observance, since: 1962, en: "Cosmonautics Day", ru: "День космонавтики")
        list.add("family_day", month: 7, day: 8, .observance, since: 2008,
                 en: "Day of Family, Love and Fidelity", ru: "День семьи, любви и верности")
        list.add("knowledge_day", month: 9, day: 1, .observance, since: 1984, en: "Knowledge Day", ru: "День знаний")
        return list.holidays
    }
}

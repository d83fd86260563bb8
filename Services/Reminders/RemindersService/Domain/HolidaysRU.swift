import Platform

extension HolidayCatalog {
    /// Russia.
    ///
    /// **Public** (non-working days of the Labour Code, art. 112, and of the laws before it,
    /// each from the year it was first a day off to the year it stopped being one):
    /// - `new_year` (1 January, from 1948; 1 and 2 January 1993-2004) and
    ///   `new_year_holidays` (2-5 January 2005-2012, 2-6 and 8 January from 2013: one key
    ///   for the days of the New Year break, so hiding "the holidays" is one setting);
    /// - `orthodox_christmas` (7 January, as the Code fixes it in the Gregorian calendar;
    ///   a day off from 1991, a religious feast before);
    /// - `defender_of_the_fatherland_day` (23 February: a day off from 2002, an
    ///   observance from 1922), `international_womens_day` (8 March: a day off from 1966,
    ///   an observance from 1921);
    /// - `spring_and_labour_day` (1 May, from 1918, and 2 May 1928-2004; International
    ///   Workers' Solidarity Day until 1991);
    /// - `victory_day` (9 May: a day off 1945-1947 and from 1965, an observance between);
    /// - `russia_day` (12 June, from 1992; the Day of the Declaration of State
    ///   Sovereignty until 2001), `unity_day` (4 November, from 2005);
    /// - `october_revolution_day` (7 November 1918-1995, and 8 November 1928-1991), then
    ///   `accord_and_reconciliation_day` (7 November 1996-2004);
    /// - `constitution_day`: 5 December 1937-1976, 7 October 1977-1990, 12 December
    ///   1994-2004 (an observance from 2005).
    ///
    /// Before 1918 the catalog lists no public days. Days off moved by the yearly
    /// government decree (a holiday on a weekend gives a working day off, often on a date
    /// the decree chooses; bridge days) are not part of the catalog: they are days off,
    /// not holidays to be reminded of.
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
    ///   `intercession` (1 October = 14 October), and before 1991 `orthodox_christmas`
    ///   (Julian 25 December of the year before). The Gregorian dates given hold from
    ///   March 1900 to early March 2100 (the calendars drift apart by a day at each
    ///   Julian-only leap day): Epiphany 1900 is 18 January, and the feasts of 2100 after
    ///   14 March are a day later (Annunciation 8 April).
    ///
    /// **Observances**: `old_new_year` (Julian 1 January = 14 January, from 1919, the
    /// first New Year after Russia's switch to the Gregorian calendar), `tatiana_day`
    /// (25 January, Russian Students' Day), `valentines_day` (14 February),
    /// `cosmonautics_day` (12 April, from 1962), `family_day` (8 July, the Day of Family,
    /// Love and Fidelity, the feast of Peter and Fevronia, from 2008), `knowledge_day`
    /// (1 September, from 1984); and the public days above in the years they were not
    /// days off.
    static func russia(_ year: Int) -> [Holiday] {
        var list = HolidayList(year: year)
        func kind(dayOff: Bool) -> HolidayKind { dayOff ? .publicHoliday : .observance }
        if year >= 1918 {
            list.add("new_year", month: 1, day: 1, kind(dayOff: year >= 1948), en: "New Year's Day", ru: "Новый год")
        }
        if (1993...2004).contains(year) {
            list.add("new_year", month: 1, day: 2, .publicHoliday, en: "New Year's Day", ru: "Новый год")
        }
        if year >= 2005 {
            for day in year >= 2013 ? [2, 3, 4, 5, 6, 8] : [2, 3, 4, 5] {
                list.add("new_year_holidays", month: 1, day: day, .publicHoliday, en: "New Year holidays", ru: "Новогодние каникулы")
            }
        }
        if year >= 1991 {
            list.add("orthodox_christmas", month: 1, day: 7, .publicHoliday, en: "Orthodox Christmas", ru: "Рождество Христово")
        } else {
            list.add("orthodox_christmas", Computus.gregorian(julianYear: year - 1, month: 12, day: 25), .religious,
                     en: "Orthodox Christmas", ru: "Рождество Христово")
        }
        list.add("defender_of_the_fatherland_day", month: 2, day: 23, kind(dayOff: year >= 2002), since: 1922,
                 en: "Defender of the Fatherland Day", ru: "День защитника Отечества")
        list.add("international_womens_day", month: 3, day: 8, kind(dayOff: year >= 1966), since: 1921,
                 en: "International Women's Day", ru: "Международный женский день")
        let mayDay = year >= 1992
            ? (en: "Spring and Labour Day", ru: "Праздник Весны и Труда")
            : (en: "International Workers' Solidarity Day", ru: "День международной солидарности трудящихся")
        list.add("spring_and_labour_day", month: 5, day: 1, .publicHoliday, since: 1918, en: mayDay.en, ru: mayDay.ru)
        if (1928...2004).contains(year) {
            list.add("spring_and_labour_day", month: 5, day: 2, .publicHoliday, en: mayDay.en, ru: mayDay.ru)
        }
        list.add("victory_day", month: 5, day: 9, kind(dayOff: year <= 1947 || year >= 1965), since: 1945, en: "Victory Day", ru: "День Победы")
        if year >= 2002 {
            list.add("russia_day", month: 6, day: 12, .publicHoliday, en: "Russia Day", ru: "День России")
        } else {
            list.add("russia_day", month: 6, day: 12, .publicHoliday, since: 1992,
                     en: "Day of the Declaration of State Sovereignty", ru: "День принятия Декларации о государственном суверенитете")
        }
        list.add("unity_day", month: 11, day: 4, .publicHoliday, since: 2005, en: "Unity Day", ru: "День народного единства")
        if (1918...1995).contains(year) {
            let en = "Anniversary of the October Revolution", ru = "Годовщина Великой Октябрьской социалистической революции"
            list.add("october_revolution_day", month: 11, day: 7, .publicHoliday, en: en, ru: ru)
            if (1928...1991).contains(year) { list.add("october_revolution_day", month: 11, day: 8, .publicHoliday, en: en, ru: ru) }
        }
        if (1996...2004).contains(year) {
            list.add("accord_and_reconciliation_day", month: 11, day: 7, .publicHoliday,
                     en: "Day of Accord and Reconciliation", ru: "День согласия и примирения")
        }
        switch year {
        case 1937...1976: list.add("constitution_day", month: 12, day: 5, .publicHoliday, en: "Constitution Day", ru: "День Конституции")
        case 1977...1990: list.add("constitution_day", month: 10, day: 7, .publicHoliday, en: "Constitution Day", ru: "День Конституции")
        case 1994...: list.add("constitution_day", month: 12, day: 12, kind(dayOff: year <= 2004), en: "Constitution Day", ru: "День Конституции")
        default: break
        }

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

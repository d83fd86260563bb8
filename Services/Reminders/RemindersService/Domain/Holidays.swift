import Platform

/// What kind of day a holiday is.
enum HolidayKind: String, Sendable, Codable {
    /// A day off by law (a non-working day, a federal holiday, a bank holiday), or its
    /// substitute or observed day.
    case publicHoliday = "public"
    /// A church feast that is not a day off by law (Orthodox feasts in RU, Easter Sunday
    /// everywhere).
    case religious
    /// A day people mark without a day off (Cosmonautics Day, Valentine's Day).
    case observance
}

/// One holiday on one date.
struct Holiday: Sendable, Hashable {
    var date: LocalDate
    /// A stable snake_case id of the holiday (`victory_day`, `easter`,
    /// `christmas_substitute`). It names the holiday, not the day: Russia's
    /// `new_year_holidays` is on six dates; `(date, key)` is unique in a year.
    var key: String
    /// Names by language: `en` and `ru` in every catalog, `de` in Germany's.
    var names: [String: String]
    var kind: HolidayKind

    /// The name in a language: `ru`, or a tag such as `ru-RU` or `de_AT` by its first
    /// part; English when the language has none; the key when nothing else is there.
    func name(_ language: String) -> String {
        if let name = names[language] { return name }
        let primary = String(language.prefix { $0 != "-" && $0 != "_" }).lowercased()
        return names[primary] ?? names["en"] ?? key
    }
}

/// The holidays of a few countries, computed for any year 1900-2100.
///
/// Russia's public holidays follow the law of each year (its file lists the periods).
/// The other catalogs apply today's rules to every year, with two kinds of history: a
/// holiday is not listed before the year it was first kept (German Unity Day 1990,
/// Martin Luther King Jr. Day 1986, Juneteenth 2021, England's New Year's Day bank
/// holiday 1974, ...: each country's file lists them), and the few rule changes named in
/// a country's file are followed. Other history (bank holidays before 1971, one-off days
/// off such as the 2022 Platinum Jubilee or Germany's 2017 Reformation Day, Russia's
/// yearly government decrees that move days off) is not modelled: the catalog is for
/// reminders, not a history book.
enum HolidayCatalog {
    /// The countries with a catalog (ISO 3166-1 alpha-2).
    static let countries = ["RU", "DE", "US", "GB"]
    /// The years the catalogs answer for.
    static let years = 1900...2100

    /// A country's holidays in a year, sorted by date then key; `nil` for a country with
    /// no catalog (the code is case-insensitive: `ru` is `RU`) or a year outside
    /// ``years``. Every date lies in `year`: a US observed day of the next New Year's Day
    /// (December 31st) is in this year's list, not the next one's.
    static func holidays(country: String, year: Int) -> [Holiday]? {
        guard years.contains(year) else { return nil }
        let holidays: [Holiday]
        switch country.uppercased() {
        case "RU": holidays = russia(year)
        case "DE": holidays = germany(year)
        case "US": holidays = unitedStates(year)
        case "GB": holidays = greatBritain(year)
        default: return nil
        }
        return holidays.sorted { ($0.date, $0.key) < ($1.date, $1.key) }
    }
}

/// Collects one year's holidays of a catalog.
struct HolidayList {
    let year: Int
    private(set) var holidays: [Holiday] = []

    init(year: Int) { self.year = year }

    /// Adds a holiday unless `since` is after the year.
    mutating func add(
        _ key: String, _ date: LocalDate, _ kind: HolidayKind, since: Int? = nil, en: String, ru: String, de: String? = nil
    ) {
        if let since, year < since { return }
        var names = ["en": en, "ru": ru]
        if let de { names["de"] = de }
        holidays.append(Holiday(date: date, key: key, names: names, kind: kind))
    }

    /// Adds a holiday on a day of this year's month (a day that does not exist is
    /// skipped; the catalogs use none).
    mutating func add(
        _ key: String, month: Int, day: Int, _ kind: HolidayKind, since: Int? = nil, en: String, ru: String, de: String? = nil
    ) {
        guard let date = LocalDate(validYear: year, month: month, day: day) else { return }
        add(key, date, kind, since: since, en: en, ru: ru, de: de)
    }

    /// Adds a holiday on the `ordinal`-th weekday of a month (`-1` = the last).
    mutating func add(
        _ key: String, weekday: Int, ordinal: Int, month: Int, _ kind: HolidayKind, since: Int? = nil, en: String, ru: String
    ) {
        guard let date = LocalDate.weekday(weekday, ordinal: ordinal, year: year, month: month) else { return }
        add(key, date, kind, since: since, en: en, ru: ru)
    }

    /// Whether a public holiday is already on a date.
    func hasPublicHoliday(on date: LocalDate) -> Bool {
        holidays.contains { $0.date == date && $0.kind == .publicHoliday }
    }
}

extension HolidayCatalog {
    /// ISO weekdays (``LocalDate/isoWeekday``), for readable rules.
    enum Weekday {
        static let monday = 1, thursday = 4, friday = 5, saturday = 6, sunday = 7
    }
}

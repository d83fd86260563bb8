/// An ISO 4217 currency: its three-letter code and its exponent, the number of decimal
/// digits of its minor unit (2 for RUB and USD, 0 for JPY, 3 for KWD).
///
/// Only codes in the standard's current list exist (``init(code:)`` answers `nil` for
/// any other), so an amount always knows how to be written as a decimal.
public struct Currency: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The code, e.g. `BYN`.
    public let code: String
    /// Decimal digits of the minor unit.
    public let exponent: Int

    /// The currency of an ISO 4217 code, or `nil` when the code is not in the list.
    public init?(code: String) {
        guard let exponent = Currency.exponents[code] else { return nil }
        self.code = code
        self.exponent = exponent
    }

    /// A currency written in code (`"BYN"`); an unknown code there is a programming error.
    public init(stringLiteral code: String) {
        guard let currency = Currency(code: code) else { preconditionFailure("\(code) is not an ISO 4217 code") }
        self = currency
    }

    /// The currency of a code read back from our own storage, where only checked codes
    /// are written: an unknown one (a code withdrawn from the list since) keeps its code
    /// and is given two decimals rather than failing the read.
    public init(stored code: String) {
        self.code = code
        self.exponent = Currency.exponents[code] ?? 2
    }

    /// The code, as JSON has it.
    public init(from decoder: any Decoder) throws {
        let code = try decoder.singleValueContainer().decode(String.self)
        guard let currency = Currency(code: code) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 4217 currency code"))
        }
        self = currency
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }

    public var description: String { code }

    public static func == (lhs: Currency, rhs: Currency) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// 10^exponent: minor units in one major unit.
    public var minorPerMajor: Int64 {
        var value: Int64 = 1
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// The currencies of ISO 4217 list one (2024 amendments) with their minor-unit digits.
    /// Funds and units of account (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW, XSU, XUA),
    /// special drawing rights and precious metals (XDR, XAU, ...) are left out: nobody
    /// pays for a wakeboard session in gold.
    static let exponents: [String: Int] = {
        var table: [String: Int] = [:]
        let zero = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF"
        let three = "BHD IQD JOD KWD LYD OMR TND"
        let two = """
            AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF \
            CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF \
            IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR \
            MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD \
            SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD XCG YER \
            ZAR ZMW ZWG
            """
        for (codes, exponent) in [(zero, 0), (two, 2), (three, 3)] {
            for code in codes.split(separator: " ") { table[String(code)] = exponent }
        }
        return table
    }()

    /// Whether `code` is a currency of the list (the schema's `currency` format).
    public static func isKnown(_ code: String) -> Bool { exponents[code] != nil }
}

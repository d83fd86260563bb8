import Foundation
import Platform
import SharedTesting
import Testing

@Suite("Money and currencies")
struct MoneyTests {
    let byn: Currency = "BYN"

    @Test("currencies know their ISO 4217 exponent; unknown codes do not exist")
    func currencies() throws {
        #expect(Currency(code: "RUB")?.exponent == 2)
        #expect(Currency(code: "JPY")?.exponent == 0)
        #expect(Currency(code: "KWD")?.exponent == 3)
        for fund in ["CLF", "UYI", "UYW", "BOV", "USN", "XDR", "XAU"] { #expect(Currency(code: fund) == nil, "\(fund)") }
        #expect(Currency(code: "XYZ") == nil)
        #expect(Currency(code: "rub") == nil)
        #expect(Currency(stored: "XYZ").exponent == 2)
        #expect(StringFormat.currency.accepts("BYN"))
        #expect(!StringFormat.currency.accepts("ABC"))
        let decoded = try JSONDecoder().decode(Money.self, from: Data(#"{"minor":5,"currency":"JPY"}"#.utf8))
        #expect(decoded == Money(minor: 5, currency: "JPY"))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Money.self, from: Data(#"{"minor":5,"currency":"ZZZ"}"#.utf8)) }
        #expect(String(decoding: try JSONEncoder().encode(Currency("EUR")), as: UTF8.self) == #""EUR""#)
    }

    @Test("arithmetic stays in one currency and never wraps")
    func arithmetic() throws {
        let price = Money(minor: 2_500, currency: byn)
        #expect(try price.adding(Money(minor: 500, currency: byn)) == Money(minor: 3_000, currency: byn))
        #expect(try price.subtracting(Money(minor: 3_000, currency: byn)) == Money(minor: -500, currency: byn))
        #expect(try price.multiplied(by: 3) == Money(minor: 7_500, currency: byn))
        #expect(try price.negated() == Money(minor: -2_500, currency: byn))
        #expect(try Money.sum([price, price, price], currency: byn) == Money(minor: 7_500, currency: byn))
        #expect(try Money.sum([], currency: byn) == .zero(byn))
        #expect(try price.isLess(than: Money(minor: 2_501, currency: byn)))
        #expect(throws: MoneyError.currencyMismatch("BYN", "RUB")) { try price.adding(Money(minor: 500, currency: "RUB")) }
        #expect(throws: MoneyError.currencyMismatch("BYN", "RUB")) { try price.isLess(than: Money(minor: 500, currency: "RUB")) }
        #expect(throws: MoneyError.overflow) { try Money(minor: .max, currency: byn).adding(price) }
        #expect(throws: MoneyError.overflow) { try Money(minor: .min, currency: byn).subtracting(price) }
        #expect(throws: MoneyError.overflow) { try Money(minor: .max / 2, currency: byn).multiplied(by: 3) }
        #expect(throws: MoneyError.overflow) { try Money(minor: .min, currency: byn).negated() }
    }

    @Test("allocation: parts sum exactly, leftovers to the largest remainders, earlier first on ties")
    func allocation() throws {
        let hundred = Money(minor: 100, currency: "RUB")
        #expect(try hundred.split(into: 3).map(\.minor) == [34, 33, 33])
        #expect(try hundred.allocated([1, 2]).map(\.minor) == [33, 67])
        #expect(try Money(minor: 5, currency: "RUB").allocated([3, 7]).map(\.minor) == [2, 3])  // 1.5, 3.5: ties go to the first
        #expect(try Money(minor: -100, currency: "RUB").split(into: 3).map(\.minor) == [-34, -33, -33])
        #expect(try hundred.allocated([0, 1]).map(\.minor) == [0, 100])
        #expect(try Money(minor: 2, currency: "RUB").split(into: 5).map(\.minor) == [1, 1, 0, 0, 0])
        #expect(throws: MoneyError.invalidRatios) { try hundred.allocated([]) }
        #expect(throws: MoneyError.invalidRatios) { try hundred.allocated([0, 0]) }
        #expect(throws: MoneyError.invalidRatios) { try hundred.allocated([1, -1, 1]) }
        #expect(throws: MoneyError.invalidRatios) { try hundred.allocated([.max, 1]) }
        #expect(throws: MoneyError.invalidRatios) { try hundred.split(into: 0) }
        // Extremes: the whole Int64 range, ratios that would overflow 64-bit products.
        for amount in [Int64.max, .min, .min + 1] {
            let parts = try Money(minor: amount, currency: "RUB").allocated([.max / 3, .max / 3, 1])
            #expect(parts.reduce(Int64(0)) { $0 &+ $1.minor } == amount)
        }
    }

    @Test("allocation, random cases: exact sum, each part within one unit of its share")
    func allocationProperties() throws {
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<2_000 {
            let amount = Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator)
            let ratios = (0..<Int.random(in: 1...12, using: &generator)).map { _ in Int64.random(in: 0...1_000, using: &generator) }
            guard ratios.reduce(0, +) > 0 else { continue }
            let parts = try Money(minor: amount, currency: "EUR").allocated(ratios)
            #expect(parts.reduce(Int64(0)) { $0 + $1.minor } == amount)
            let total = Double(ratios.reduce(0, +))
            for (part, ratio) in zip(parts, ratios) {
                #expect(abs(Double(part.minor) - Double(amount) * Double(ratio) / total) < 1.001)
                if ratio == 0 { #expect(part.minor == 0) }
            }
        }
    }

    @Test("decimal text is exact both ways with the currency's digits")
    func decimals() throws {
        #expect(Money(minor: 1_250, currency: "RUB").decimalString == "12.50")
        #expect(Money(minor: -5, currency: "RUB").decimalString == "-0.05")
        #expect(Money(minor: 0, currency: "RUB").decimalString == "0.00")
        #expect(Money(minor: 1_500, currency: "JPY").decimalString == "1500")
        #expect(Money(minor: 1_250, currency: "KWD").decimalString == "1.250")
        #expect(Money(minor: .min, currency: "USD").decimalString == "-92233720368547758.08")
        #expect(Money(minor: 1_250, currency: "RUB").description == "12.50 RUB")
        #expect(Money(decimal: "12.5", currency: "RUB") == Money(minor: 1_250, currency: "RUB"))
        #expect(Money(decimal: "-0.05", currency: "RUB") == Money(minor: -5, currency: "RUB"))
        #expect(Money(decimal: "1500", currency: "JPY") == Money(minor: 1_500, currency: "JPY"))
        for bad in ["", "-", ".5", "5.", "1.234", "1,5", "1e3", "--1", "1.2.3", " 1", "92233720368547758.08", "15.0"] {
            #expect(Money(decimal: bad, currency: bad == "15.0" ? "JPY" : "RUB") == nil, "\(bad)")
        }
        var generator = SplitMix64(seed: 7)
        for _ in 0..<1_000 {
            let money = Money(minor: Int64.random(in: -10_000_000_000...10_000_000_000, using: &generator), currency: "KWD")
            #expect(Money(decimal: money.decimalString, currency: "KWD") == money)
        }
    }

    @Test("the wire shape is the contract's")
    func wire() throws {
        let money = Money(minor: 12_345, currency: "RUB")
        var bytes: [UInt8] = []
        money.writeJSON(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"currency":"RUB","minor":12345}"#)
        #expect(money.json == ["minor": .integer(12_345), "currency": .string("RUB")])
        #expect(Money.schema.validate(["minor": 5, "currency": "RUB"]).isEmpty)
        #expect(Money.schema.validate(["minor": 5, "currency": "QQQ"]) == ["currency": "not an ISO 4217 currency code"])
    }
}

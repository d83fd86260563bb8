/// Why an operation on money has no answer.
public enum MoneyError: Error, Sendable, Hashable {
    /// The amounts are in different currencies.
    case currencyMismatch(Currency, Currency)
    /// The result does not fit in 64-bit minor units.
    case overflow
    /// The parts of an allocation are empty, negative or all zero.
    case invalidRatios
}

/// An amount of money in integer minor units with its ISO 4217 currency (CONTRACT.md,
/// "Values"): no floating point anywhere money is stored or computed. Arithmetic is
/// exact and checked: it throws on mixed currencies and on overflow instead of
/// wrapping; splitting an amount gives parts that sum to it exactly.
public struct Money: Codable, Sendable, Hashable, CustomStringConvertible, JSONWritable {
    /// Minor units (kopecks, cents).
    public var minor: Int64
    /// The currency.
    public var currency: Currency

    /// Creates an amount.
    public init(minor: Int64, currency: Currency) {
        self.minor = minor
        self.currency = currency
    }

    /// Zero in `currency`.
    public static func zero(_ currency: Currency) -> Money { Money(minor: 0, currency: currency) }

    /// Whether the amount is zero.
    public var isZero: Bool { minor == 0 }

    // MARK: Arithmetic

    /// The sum.
    public func adding(_ other: Money) throws(MoneyError) -> Money {
        try sameCurrency(other)
        let (sum, overflow) = minor.addingReportingOverflow(other.minor)
        if overflow { throw .overflow }
        return Money(minor: sum, currency: currency)
    }

    /// The difference.
    public func subtracting(_ other: Money) throws(MoneyError) -> Money {
        try sameCurrency(other)
        let (difference, overflow) = minor.subtractingReportingOverflow(other.minor)
        if overflow { throw .overflow }
        return Money(minor: difference, currency: currency)
    }

    /// The amount times a whole number (a price times a quantity).
    public func multiplied(by factor: Int64) throws(MoneyError) -> Money {
        let (product, overflow) = minor.multipliedReportingOverflow(by: factor)
        if overflow { throw .overflow }
        return Money(minor: product, currency: currency)
    }

    /// The opposite amount (a refund of a charge).
    public func negated() throws(MoneyError) -> Money {
        guard minor != .min else { throw .overflow }
        return Money(minor: -minor, currency: currency)
    }

    /// The sum of amounts in `currency` (zero for none).
    public static func sum(_ amounts: some Sequence<Money>, currency: Currency) throws(MoneyError) -> Money {
        var total = Money.zero(currency)
        for amount in amounts { total = try total.adding(amount) }
        return total
    }

    /// Compares two amounts of one currency.
    public func isLess(than other: Money) throws(MoneyError) -> Bool {
        try sameCurrency(other)
        return minor < other.minor
    }

    private func sameCurrency(_ other: Money) throws(MoneyError) {
        guard currency == other.currency else { throw .currencyMismatch(currency, other.currency) }
    }

    // MARK: Allocation

    /// Splits the amount in proportion to `ratios` so that the parts sum to it exactly
    /// (largest remainder: each part gets its floor, and the minor units left over go
    /// one each to the parts with the largest fractions, earlier parts first on ties).
    /// A negative amount is split as its absolute value, each part negated.
    ///
    /// `Money(minor: 100, currency: "RUB").allocated([1, 1, 1])` is 34, 33, 33 kopecks.
    public func allocated(_ ratios: [Int64]) throws(MoneyError) -> [Money] {
        guard !ratios.isEmpty, ratios.allSatisfy({ $0 >= 0 }) else { throw .invalidRatios }
        var total: Int64 = 0
        for ratio in ratios {
            let (sum, overflow) = total.addingReportingOverflow(ratio)
            if overflow { throw .invalidRatios }
            total = sum
        }
        guard total > 0 else { throw .invalidRatios }
        // |minor| as UInt64 so Int64.min splits too.
        let magnitude = minor.magnitude
        var parts: [UInt64] = []
        var remainders: [(index: Int, remainder: UInt64)] = []
        parts.reserveCapacity(ratios.count)
        var allocated: UInt64 = 0
        for (index, ratio) in ratios.enumerated() {
            // magnitude * ratio / total in 128 bits: the quotient is at most magnitude.
            let product = magnitude.multipliedFullWidth(by: UInt64(ratio))
            let (quotient, remainder) = UInt64(total).dividingFullWidth(product)
            parts.append(quotient)
            remainders.append((index, remainder))
            allocated += quotient
        }
        // Fewer than `ratios.count` units are left: one each to the largest remainders.
        var left = magnitude - allocated
        remainders.sort { $0.remainder != $1.remainder ? $0.remainder > $1.remainder : $0.index < $1.index }
        var position = 0
        while left > 0 {
            parts[remainders[position].index] += 1
            left -= 1
            position += 1
        }
        return parts.map { part in
            // Each part is at most |minor|, so it fits again once signed.
            let signed = minor < 0 ? Int64(truncatingIfNeeded: 0 &- part) : Int64(part)
            return Money(minor: signed, currency: currency)
        }
    }

    /// Splits the amount into `count` parts as equal as can be, summing to it exactly
    /// (the first parts are one minor unit larger).
    public func split(into count: Int) throws(MoneyError) -> [Money] {
        guard count > 0 else { throw .invalidRatios }
        return try allocated(Array(repeating: 1, count: count))
    }

    // MARK: Decimal text

    /// The amount as a decimal in major units with the currency's digits: `12.50`,
    /// `-0.05`, `1500` (JPY), `1.250` (KWD). For people and providers, never for storage.
    public var decimalString: String {
        let exponent = currency.exponent
        var digits = String(minor.magnitude)
        guard exponent > 0 else { return (minor < 0 ? "-" : "") + digits }
        if digits.count <= exponent { digits = String(repeating: "0", count: exponent - digits.count + 1) + digits }
        let split = digits.index(digits.endIndex, offsetBy: -exponent)
        return (minor < 0 ? "-" : "") + digits[..<split] + "." + digits[split...]
    }

    /// Reads a decimal in major units (`12.5`, `-0.05`, `1500`) exactly; `nil` when it
    /// has more fraction digits than the currency, is not a plain decimal, or overflows.
    public init?(decimal text: String, currency: Currency) {
        var bytes = Substring(text).utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        var value: Int64 = 0
        var fractionDigits = 0
        var seenPoint = false, seenDigit = false
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard !seenPoint, seenDigit else { return nil }
                seenPoint = true
                continue
            }
            guard byte >= 48, byte <= 57 else { return nil }
            if seenPoint { fractionDigits += 1 }
            guard fractionDigits <= currency.exponent else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (plus, overflow2) = times.addingReportingOverflow(Int64(byte - 48))
            guard !overflow1, !overflow2 else { return nil }
            value = plus
            seenDigit = true
        }
        guard seenDigit, bytes.last != UInt8(ascii: ".") else { return nil }
        for _ in fractionDigits..<currency.exponent {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = times
        }
        self.init(minor: negative ? -value : value, currency: currency)
    }

    public var description: String { "\(decimalString) \(currency.code)" }

    // MARK: Wire

    /// `{"minor": ..., "currency": ...}`.
    public var json: JSONValue { ["minor": .integer(minor), "currency": .string(currency.code)] }

    /// `{"currency":...,"minor":...}`, as ``json`` serializes.
    public func writeJSON(to output: inout [UInt8]) {
        // In place: a reply writes several amounts, none needs a buffer of its own.
        var object = JSONObjectWriter(taking: &output)
        object.field("currency", currency.code)
        object.field("minor", minor)
        object.finish(returningTo: &output)
    }

    /// The schema of a money value: the contract's shape, amounts within ±10^12 minor
    /// units, a currency of the ISO 4217 list.
    public static let schema = JSONSchema.object(
        ["minor": .integer(minimum: -1_000_000_000_000, maximum: 1_000_000_000_000), "currency": .string(format: .currency)],
        required: ["minor", "currency"])

    /// A money value whose amount must lie in `minor` (a price, a target), so `describe`
    /// states the bound the handler keeps.
    public static func schema(minor range: ClosedRange<Int64>) -> JSONSchema {
        .object(["minor": .integer(minimum: range.lowerBound, maximum: range.upperBound), "currency": .string(format: .currency)],
            required: ["minor", "currency"])
    }
}

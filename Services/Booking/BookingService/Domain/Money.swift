import Platform

/// An amount of money in integer minor units with its ISO 4217 currency (CONTRACT.md,
/// "Values"): no floating point anywhere money is stored or computed.
public struct Money: Codable, Sendable, Hashable, CustomStringConvertible, JSONWritable {
    /// Minor units (kopecks, cents).
    public var minor: Int64
    /// ISO 4217 code, e.g. `BYN`.
    public var currency: String

    /// Creates an amount.
    public init(minor: Int64, currency: String) {
        self.minor = minor
        self.currency = currency
    }

    /// Zero in `currency`.
    public static func zero(_ currency: String) -> Money { Money(minor: 0, currency: currency) }

    /// The sum, or `nil` when the currencies differ or the sum overflows.
    public func adding(_ other: Money) -> Money? {
        guard currency == other.currency else { return nil }
        let (sum, overflow) = minor.addingReportingOverflow(other.minor)
        return overflow ? nil : Money(minor: sum, currency: currency)
    }

    public var description: String { "\(minor) \(currency) (minor units)" }

    /// `{"minor": ..., "currency": ...}`.
    public var json: JSONValue { ["minor": .integer(minor), "currency": .string(currency)] }

    /// `{"currency":...,"minor":...}`, as ``json`` serializes.
    public func writeJSON(to output: inout [UInt8]) {
        var object = JSONObjectWriter(capacity: 40)
        object.field("currency", currency)
        object.field("minor", minor)
        object.finish(into: &output)
    }

    /// The schema of a money value.
    public static let schema = JSONSchema.object(
        ["minor": .integer(minimum: -1_000_000_000_000, maximum: 1_000_000_000_000), "currency": .string(format: .currency)],
        required: ["minor", "currency"])
}

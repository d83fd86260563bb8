/// A height, kept in whole millimetres (SI, section 5.3), entered in metric or imperial units.
public struct Height: Sendable, Hashable {
    /// Millimetres.
    public let millimetres: Int

    /// Heights people have: 50 cm to 272 cm.
    public static let range = 500...2_720

    /// Units a height may be entered in.
    public enum Unit: String, Codable, Sendable, CaseIterable {
        case cm, m, `in`
    }

    /// A height from stored millimetres.
    public init?(millimetres: Int) {
        guard Self.range.contains(millimetres) else { return nil }
        self.millimetres = millimetres
    }

    /// A height entered as `value` `unit`, rounded to the millimetre; `nil` outside ``range``.
    public init?(_ value: Double, _ unit: Unit) {
        guard value.isFinite else { return nil }
        let millimetres =
            switch unit {
            case .cm: value * 10
            case .m: value * 1_000
            case .in: value * 25.4
            }
        guard millimetres >= Double(Self.range.lowerBound) - 0.5, millimetres <= Double(Self.range.upperBound) + 0.5 else { return nil }
        self.init(millimetres: Int(millimetres.rounded()))
    }

    /// Centimetres with one decimal.
    public var centimetres: Double { Double(millimetres) / 10 }
    /// Inches with one decimal.
    public var inches: Double { (Double(millimetres) / 25.4 * 10).rounded() / 10 }
}

/// A weight, kept in whole grams (SI, section 5.3), entered in kilograms or pounds.
public struct Weight: Sendable, Hashable {
    /// Grams.
    public let grams: Int

    /// Weights people have: 2 kg to 650 kg.
    public static let range = 2_000...650_000

    /// Units a weight may be entered in.
    public enum Unit: String, Codable, Sendable, CaseIterable {
        case kg, lb
    }

    /// A weight from stored grams.
    public init?(grams: Int) {
        guard Self.range.contains(grams) else { return nil }
        self.grams = grams
    }

    /// A weight entered as `value` `unit`, rounded to the gram; `nil` outside ``range``.
    public init?(_ value: Double, _ unit: Unit) {
        guard value.isFinite else { return nil }
        // The international pound is exactly 453.59237 g.
        let grams = unit == .kg ? value * 1_000 : value * 453.592_37
        guard grams >= Double(Self.range.lowerBound) - 0.5, grams <= Double(Self.range.upperBound) + 0.5 else { return nil }
        self.init(grams: Int(grams.rounded()))
    }

    /// Kilograms with one decimal.
    public var kilograms: Double { (Double(grams) / 100).rounded() / 10 }
    /// Pounds with one decimal.
    public var pounds: Double { (Double(grams) / 453.592_37 * 10).rounded() / 10 }
}

/// The body-mass index, weight (kg) over height (m) squared, with its WHO category
/// (WHO's adult classification; the spec asks for the index, the category goes beyond it).
public struct BodyMassIndex: Sendable, Hashable {
    /// The WHO adult categories, by their lower bounds in hundredths of kg/m².
    public enum Category: String, Codable, Sendable, CaseIterable {
        case severeThinness = "severe_thinness"
        case moderateThinness = "moderate_thinness"
        case mildThinness = "mild_thinness"
        case normal
        case preObese = "pre_obese"
        case obeseClass1 = "obese_class_1"
        case obeseClass2 = "obese_class_2"
        case obeseClass3 = "obese_class_3"

        /// Each category's lower bound in hundredths of kg/m² (severe thinness has none).
        static let lowerBounds: [(Category, Int)] = [
            (.obeseClass3, 4_000), (.obeseClass2, 3_500), (.obeseClass1, 3_000), (.preObese, 2_500), (.normal, 1_850),
            (.mildThinness, 1_700), (.moderateThinness, 1_600),
        ]
    }

    /// The index rounded to one decimal, as people read it.
    public let value: Double
    /// Its category, decided on the exact ratio (never on the rounded value: 18.496 is
    /// still thinness).
    public let category: Category

    /// The index of `weight` at `height`.
    public init(weight: Weight, height: Height) {
        // kg/m² = (g / 1000) / (mm / 1000)² = g × 1000 / mm²; compared in integers, exactly.
        let numerator = weight.grams * 1_000 * 100, denominator = height.millimetres * height.millimetres
        category = Category.lowerBounds.first { numerator >= $0.1 * denominator }?.0 ?? .severeThinness
        value = (Double(weight.grams) * 1_000 / Double(denominator) * 10).rounded() / 10
    }
}

import Foundation

/// A charge for a pass top-up.
public struct PaymentRequest: Sendable {
    public var id: String
    public var user: String
    public var amount: Money
    public var description: String
}

/// What the provider answered.
public struct PaymentOutcome: Sendable {
    /// Settled now (the pass is credited in the same transaction as the payment row).
    public var settled: Bool
    /// The provider's reference.
    public var providerReference: String?
}

/// Takes payments for pass top-ups.
public protocol PaymentProvider: Sendable {
    /// Creates (and, if the provider can, settles) a payment.
    func charge(_ request: PaymentRequest) async throws -> PaymentOutcome
}

/// The local default: every payment settles at once. For development and tests only;
/// production configures a real provider.
public struct DevPaymentProvider: PaymentProvider {
    public init() {}
    public func charge(_ request: PaymentRequest) async throws -> PaymentOutcome {
        PaymentOutcome(settled: true, providerReference: "dev-\(request.id)")
    }
}

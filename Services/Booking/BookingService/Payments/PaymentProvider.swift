import Foundation
import Platform
import Synchronization

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
    /// Where the rider confirms the payment, for providers that settle later.
    public var confirmationURL: String?

    public init(settled: Bool, providerReference: String?, confirmationURL: String? = nil) {
        self.settled = settled
        self.providerReference = providerReference
        self.confirmationURL = confirmationURL
    }
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

/// A payment provider over HTTP: `POST <endpoint>/payments` creates a payment
/// (`{"id", "amount": {"minor", "currency"}, "description", "callbackUrl"}` → `{"id",
/// "status": "pending", "confirmationUrl"}`), and the provider later calls
/// `callbackUrl` with the outcome, signed with HMAC-SHA256 (see ``PaymentCallbacks``).
public struct HTTPPaymentProvider: PaymentProvider {
    let endpoint: String
    let callbackURL: String
    let token: String?

    /// Creates a provider client.
    public init(endpoint: String, callbackURL: String, token: String?) {
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.callbackURL = callbackURL
        self.token = token
    }

    public func charge(_ request: PaymentRequest) async throws -> PaymentOutcome {
        let body: JSONValue = [
            "id": .string(request.id), "amount": request.amount.json,
            "description": .string(request.description), "callbackUrl": .string(callbackURL),
        ]
        var headers = ["Content-Type": "application/json", "Idempotency-Key": request.id]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let response: HTTPResponse
        do {
            response = try await Curl.send(HTTPRequest(method: "POST", url: "\(endpoint)/payments", headers: headers, body: body.serialized))
        } catch {
            throw ServiceError.unavailable("the payment provider could not be reached; nothing was charged")
        }
        guard (200..<300).contains(response.status), let reply = try? JSONParser.parse(response.body) else {
            throw ServiceError.unavailable("the payment provider refused the payment (HTTP \(response.status))")
        }
        return PaymentOutcome(
            settled: reply["status"] == "succeeded", providerReference: reply["id"]?.stringValue,
            confirmationURL: reply["confirmationUrl"]?.stringValue)
    }
}

/// The provider calls in flight in this process, by payment id: a retry of a top-up that
/// arrives while the first attempt is still with the provider (its reply not yet stored
/// for `idem`) waits for that attempt's answer instead of asking the provider again.
/// (Retries after it ended ask again under the same payment id and `Idempotency-Key`,
/// which the provider answers once.)
final class PaymentCharges: Sendable {
    static let shared = PaymentCharges()

    private let inFlight = Mutex<[String: Task<PaymentOutcome, any Error>]>([:])

    func charge(_ request: PaymentRequest, with provider: any PaymentProvider) async throws -> PaymentOutcome {
        let task = inFlight.withLock { calls in
            if let running = calls[request.id] { return running }
            let started = Task { try await provider.charge(request) }
            calls[request.id] = started
            return started
        }
        defer { inFlight.withLock { calls in if calls[request.id] == task { calls[request.id] = nil } } }
        return try await task.value
    }
}

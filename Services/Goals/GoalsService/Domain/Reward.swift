import Foundation
import Platform

/// What a sponsor promises for a reached goal: money (the contract's Money, exact minor
/// units) or something in words ("a weekend in the mountains"). The service records the
/// promise and its status; it moves no money.
public enum Reward: Sendable, Equatable {
    case money(Money)
    case text(String)

    /// Longest text reward.
    public static let maxText = 500

    /// The reward from its wire form `{money}` or `{text}` (exactly one), or the problems
    /// keyed by field under `field`.
    public static func parse(money: Money?, text: String?, field: String) -> Result<Reward, ServiceError> {
        switch (money, text?.trimmingCharacters(in: .whitespacesAndNewlines)) {
        case (let money?, nil):
            guard money.minor > 0 else { return .failure(.invalid("\(field).money.minor", "must be more than zero")) }
            return .success(.money(money))
        case (nil, let text?):
            guard !text.isEmpty else { return .failure(.invalid("\(field).text", "must not be blank")) }
            return .success(.text(text))
        case (nil, nil):
            return .failure(.validationFailed(["\(field).money": "give money or text", "\(field).text": "give money or text"]))
        case (.some, .some):
            return .failure(.validationFailed(["\(field).money": "give money or text, not both", "\(field).text": "give money or text, not both"]))
        }
    }
}

/// Where a promised reward stands.
public enum RewardStatus: String, Codable, Sendable, CaseIterable {
    /// The sponsor accepted the goal; the reward is due if the goal is reached.
    case promised
    /// The goal was reached; the sponsor owes the reward.
    case earned
    /// The sponsor says they handed it over.
    case paid
    /// The goal failed or was given up.
    case forfeited

    /// The status once the goal ends as `outcome` (a promise follows the goal; what is
    /// already settled stays).
    public func after(goal outcome: GoalState) -> RewardStatus {
        guard self == .promised else { return self }
        switch outcome {
        case .completed: return .earned
        case .failed, .withdrawn: return .forfeited
        default: return self
        }
    }

    /// The status after the sponsor marks it paid, or why not.
    public func markedPaid() -> Result<RewardStatus, LifecycleError> {
        self == .earned
            ? .success(.paid)
            : .failure(LifecycleError(message: "the reward is \(rawValue); only an earned reward can be marked paid", currentState: rawValue))
    }
}

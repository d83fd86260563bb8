import Platform

/// Where a goal is in its life (sections 3.3, 3.10 of the spec).
///
/// A recipient has at most one open goal (`draft`, `proposed`, `active`); the finished ones
/// stay as the dashboard's earlier "Goal X" tabs.
public enum GoalState: String, Codable, Sendable, CaseIterable {
    /// Created from a type and its settings, offered to no sponsor yet.
    case draft
    /// Offered to at least one sponsor, accepted by none yet.
    case proposed
    /// Accepted by at least one sponsor: plans are written and followed.
    case active
    /// Reached (progress 100 %): promised rewards are earned.
    case completed
    /// Not reached, as an admin decided: promised rewards are forfeited.
    case failed
    /// Given up by the recipient: promised rewards are forfeited.
    case withdrawn

    /// The states in which the goal counts as the recipient's one open goal.
    public static let open: [GoalState] = [.draft, .proposed, .active]

    /// Whether the goal is still open.
    public var isOpen: Bool { Self.open.contains(self) }
}

/// One sponsor's side of a goal: the offer the recipient made them and where it stands.
public enum SponsorshipState: String, Codable, Sendable, CaseIterable {
    /// Waiting for the sponsor's answer.
    case proposed
    /// The sponsor said no, with a counter-proposal or a request for a new goal; waiting
    /// for the recipient to revise.
    case rejected
    /// The sponsor sponsors the goal; the reward is promised.
    case accepted
    /// The recipient took the offer back (or gave the goal up) before acceptance.
    case withdrawn

    /// Offers still being negotiated.
    public static let negotiating: [SponsorshipState] = [.proposed, .rejected]
}

/// How a sponsor said no (table 9 of the spec).
public enum Rejection: String, Codable, Sendable, CaseIterable {
    /// "Suggest another goal": a type from the catalog plus a comment.
    case counterGoal = "counter_goal"
    /// "Ask the recipient to choose a new goal": a comment.
    case askNewGoal = "ask_new_goal"
}

/// What someone does to a sponsorship.
public enum SponsorshipAction: Sendable, Equatable {
    /// The recipient offers the goal to a sponsor (again, after withdrawing, too).
    case propose
    /// The sponsor accepts.
    case accept
    /// The sponsor rejects.
    case reject(Rejection)
    /// The recipient revises the offer (goal and/or reward) and proposes it again.
    case revise
    /// The recipient takes the offer back.
    case withdraw

    /// The past participle, for messages ("can be accepted").
    var participle: String {
        switch self {
        case .propose: "proposed"
        case .accept: "accepted"
        case .reject: "rejected"
        case .revise: "revised"
        case .withdraw: "withdrawn"
        }
    }
}

/// A transition refused because of the current state; its message names that state.
public struct LifecycleError: Error, Sendable, Equatable {
    /// For people: what is wrong, with the current state.
    public let message: String
    /// The state the object is in.
    public let currentState: String

    /// The wire error: `conflict` with reason `wrong_state`.
    public var serviceError: ServiceError {
        var error = ServiceError.conflict(message, reason: "wrong_state")
        error.details["state"] = .string(currentState)
        return error
    }
}

/// The goal's and its sponsorships' state machine, as pure functions: the handlers load the
/// current states, ask here, and write the answer with a compare-and-swap on the state they
/// loaded.
public enum GoalLifecycle {
    /// The sponsorship's state after `action`, or why it cannot happen now.
    ///
    /// - Parameters:
    ///   - current: the sponsorship's state; `nil` when the recipient never offered this goal
    ///     to this sponsor.
    ///   - goal: the goal's state.
    public static func next(
        after action: SponsorshipAction, from current: SponsorshipState?, goal: GoalState
    ) -> Result<SponsorshipState, LifecycleError> {
        guard goal.isOpen else {
            return .failure(
                LifecycleError(message: "the goal is \(goal.rawValue); a finished goal cannot be offered or answered", currentState: goal.rawValue))
        }
        func refuse(_ expected: String) -> Result<SponsorshipState, LifecycleError> {
            let state = current?.rawValue ?? "not offered"
            return .failure(LifecycleError(message: "the offer is \(state); only \(expected) can be \(action.participle)", currentState: state))
        }
        switch (action, current) {
        case (.propose, nil), (.propose, .withdrawn?): return .success(.proposed)
        case (.propose, _): return refuse("an offer never made or withdrawn")
        case (.accept, .proposed?): return .success(.accepted)
        case (.accept, _): return refuse("a proposed offer")
        case (.reject, .proposed?): return .success(.rejected)
        case (.reject, _): return refuse("a proposed offer")
        case (.revise, .proposed?), (.revise, .rejected?): return .success(.proposed)
        case (.revise, _): return refuse("a proposed or rejected offer")
        case (.withdraw, .proposed?), (.withdraw, .rejected?): return .success(.withdrawn)
        case (.withdraw, _): return refuse("a proposed or rejected offer")
        }
    }

    /// The state an open goal is in given its sponsorships: `active` once any sponsor
    /// accepted (acceptance is never undone), `proposed` while any offer is negotiated,
    /// else `draft`. A finished goal keeps its state.
    public static func goalState(_ current: GoalState, sponsorships: [SponsorshipState]) -> GoalState {
        guard current.isOpen else { return current }
        if current == .active || sponsorships.contains(.accepted) { return .active }
        if sponsorships.contains(where: SponsorshipState.negotiating.contains) { return .proposed }
        return .draft
    }

    /// Whether the goal itself (its type and settings) may still change in a revision:
    /// only before any sponsor accepted it, since accepted sponsors agreed to this goal.
    public static func goalIsRevisable(_ goal: GoalState) -> Bool { goal == .draft || goal == .proposed }

    /// How the goal ends, from where it is: `completed` and `failed` only from `active`,
    /// `withdrawn` from any open state.
    public static func finish(_ goal: GoalState, as outcome: GoalState) -> Result<GoalState, LifecycleError> {
        switch (goal, outcome) {
        case (.active, .completed), (.active, .failed): return .success(outcome)
        case (_, .withdrawn) where goal.isOpen: return .success(.withdrawn)
        case (_, .completed), (_, .failed):
            return .failure(
                LifecycleError(message: "the goal is \(goal.rawValue); only an active goal can be \(outcome.rawValue)", currentState: goal.rawValue))
        default:
            return .failure(LifecycleError(message: "the goal is \(goal.rawValue); it is already finished", currentState: goal.rawValue))
        }
    }
}

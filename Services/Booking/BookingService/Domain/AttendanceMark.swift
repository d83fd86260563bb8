import Foundation

/// Marking attendance, and correcting a mark, as one pure rule: what a booking's status
/// and sanction become and what moves on the pass.
///
/// A booking took a session (or its price) when it was made. Attended: it stays taken. A
/// no-show follows the sanction copied onto the booking: `forfeit` keeps it, `none` gives
/// it back; staff may later waive a forfeit (given back) or apply one (taken back). A
/// correction (attended ↔ no-show) moves the pass by the difference between what the old
/// mark had given back and what the new one gives back.
enum AttendanceMark {
    enum Outcome: String, Sendable, CaseIterable {
        case attended
        case noShow = "no_show"
    }

    /// A booking's status and sanction.
    struct State: Sendable, Equatable {
        var status: BookingStatus
        var sanction: String?
    }

    /// What a mark does.
    struct Change: Sendable, Equatable {
        var status: BookingStatus
        var sanction: String?
        /// +1: the booking's cost goes back to the pass; -1: it is taken back; 0: nothing moves.
        var movement: Int
        /// Whether the booking was marked before (a correction).
        var correction: Bool
    }

    enum Refusal: Error, Equatable {
        /// Cancelled in one way or another: nothing to mark.
        case notActive
        /// Already marked so.
        case unchanged
    }

    /// Whether the pass got back what the booking took.
    static func returned(_ state: State) -> Bool {
        state.status == .noShow && (state.sanction == "none" || state.sanction == "waived")
    }

    static func apply(_ outcome: Outcome, to current: State, policy: LateCancellationPolicy.Sanction) -> Result<Change, Refusal> {
        let correction: Bool
        switch current.status {
        case .booked: correction = false
        case .attended, .noShow: correction = true
        case .cancelled, .lateCancelled, .cancelledByPark: return .failure(.notActive)
        }
        let target: State =
            switch outcome {
            case .attended: State(status: .attended, sanction: nil)
            case .noShow: State(status: .noShow, sanction: policy == .forfeit ? "forfeit" : "none")
            }
        if current.status.rawValue == outcome.rawValue { return .failure(.unchanged) }
        let movement = (returned(target) ? 1 : 0) - (returned(current) ? 1 : 0)
        return .success(Change(status: target.status, sanction: target.sanction, movement: movement, correction: correction))
    }
}

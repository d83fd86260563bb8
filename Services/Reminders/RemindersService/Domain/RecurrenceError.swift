/// Why a recurrence rule or series was refused.
///
/// `reason` is one sentence a user can act on, naming the rule part at fault, for example
/// `BYMONTHDAY: 32 is not a day of a month (1 to 31 or -31 to -1)`. It goes into an API
/// error as it is, so it never quotes more than a short piece of the input.
struct RecurrenceError: Error, Hashable, Sendable, CustomStringConvertible {
    var reason: String
    /// The request field at fault: the rule's, unless the start itself is refused.
    var field = "rrule"

    var description: String { reason }
}

extension RecurrenceError {
    init(_ reason: String) { self.init(reason: reason) }

    /// A piece of user input for a message: at most 24 characters, so a long or hostile
    /// value cannot flood an error response.
    static func quote(_ input: some StringProtocol) -> String {
        input.count <= 24 ? String(input) : String(input.prefix(21)) + "..."
    }
}

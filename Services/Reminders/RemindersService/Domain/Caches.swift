import Foundation
import Platform
import Synchronization

/// Rules by their text, parsed once: every reminder read from the database carries its
/// rule as text. At most `capacity` rules are kept (emptied when full).
enum RuleCache {
    static let capacity = 10_000
    private static let rules = Mutex<[String: RecurrenceRule]>([:])

    static func rule(_ text: String) throws(RecurrenceError) -> RecurrenceRule {
        if let known = rules.withLock({ $0[text] }) { return known }
        let rule = try RecurrenceRule.parse(text)
        rules.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[text] = rule
        }
        return rule
    }
}

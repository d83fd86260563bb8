import Foundation
import Platform
import Synchronization

/// Zone clocks by IANA name, made once: a list of reminders reads a zone per row, and
/// `TimeZone(identifier:)` looks the zone's rules up every time.
enum ZoneCache {
    private static let clocks = Mutex<[String: ZoneClock]>([:])

    static func clock(_ identifier: String) -> ZoneClock? {
        if let known = clocks.withLock({ $0[identifier] }) { return known }
        guard let clock = ZoneClock(identifier: identifier) else { return nil }
        // There are a few hundred zone names; the cache cannot grow past them.
        clocks.withLock { $0[identifier] = clock }
        return clock
    }
}

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

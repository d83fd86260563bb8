import Foundation
import GRDB
import Platform

/// Caps on SMS, shared by every operation that sends one (sign-in codes, number
/// changes and their notices, deletion codes): per destination number, per account and
/// per client address, each per hour and per day. An SMS costs money, so whoever asks
/// cannot make auth send more than these whatever the operation or the account.
///
/// Settings (`BACKEND_AUTH_SMS_CAPS`): `number=5/10,account=5/10,client=10/30` (per hour /
/// per day); riders behind a carrier NAT or an HTTP front share one address, so the
/// client caps may be raised alone.
public struct SMSCaps: Sendable, Equatable {
    public var perNumber = (hour: 5, day: 10)
    public var perAccount = (hour: 5, day: 10)
    public var perClient = (hour: 10, day: 30)

    public init() {}

    public static func == (lhs: SMSCaps, rhs: SMSCaps) -> Bool {
        lhs.perNumber == rhs.perNumber && lhs.perAccount == rhs.perAccount && lhs.perClient == rhs.perClient
    }

    /// Reads `number=5/10,account=5/10,client=10/30` (any subset) over the defaults.
    public static func parse(_ text: String) -> SMSCaps? {
        var caps = SMSCaps()
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=")
            guard parts.count == 2 else { return nil }
            let numbers = parts[1].split(separator: "/").compactMap { Int($0) }
            guard numbers.count == 2, numbers.allSatisfy({ $0 >= 1 }), numbers[0] <= numbers[1] else { return nil }
            switch parts[0].trimmingCharacters(in: .whitespaces) {
            case "number": caps.perNumber = (numbers[0], numbers[1])
            case "account": caps.perAccount = (numbers[0], numbers[1])
            case "client": caps.perClient = (numbers[0], numbers[1])
            default: return nil
            }
        }
        return caps
    }

    /// Counts one SMS to `number` asked by `account` (if signed in) from `client` (if
    /// known), or throws `rate_limited` without counting when any cap is reached.
    func spend(_ db: Database, to number: String, account: String?, client: String?) throws {
        var keys: [(String, (hour: Int, day: Int))] = [("sms:" + number, perNumber)]
        if let account { keys.append(("sms-account:" + account, perAccount)) }
        if let client { keys.append(("sms-client:" + client, perClient)) }
        for (key, cap) in keys {
            try AttemptLimiter.check(db, key: key, limit: cap.hour, window: 3_600)
            try AttemptLimiter.check(db, key: key, limit: cap.day, window: 86_400)
        }
        for (key, _) in keys { try AttemptLimiter.record(db, key: key) }
    }
}

import Foundation
import Platform

/// The five apps that share this backend. Each has its id (what devices register with)
/// and its push topic, its bundle id: a notification goes only to the devices of the
/// app it concerns.
enum PushApp: String, CaseIterable, Sendable, Codable {
    /// The sponsored fitness goals app (seed 000).
    case goals
    /// BuckStash, saving money (seed 001).
    case buckstash
    /// WAKEPARKBY, the wake park's booking (seed 002).
    case wakepark
    /// Reminder, beautiful dates and holidays (seed 003).
    case reminder
    /// The fitness assistant (seed 004).
    case fitness

    /// The bundle id APNs expects as the topic (`BACKEND_REMINDERS_PUSH_TOPICS` overrides).
    var defaultTopic: String {
        switch self {
        case .goals: "com.sponsoredgoals.app"
        case .buckstash: "com.buckstash.app"
        case .wakepark: "by.wakepark.app"
        case .reminder: "com.beautifuldates.reminder"
        case .fitness: "com.fitnessassistant.app"
        }
    }
}

/// What a user may switch off per app (Preferences): each notification kind belongs to
/// one. Account notices (a sign-in, a changed email) cannot be switched off.
enum NotificationCategory: String, CaseIterable, Sendable, Codable {
    case goals, bookings, savings, reminders, announcements, account

    /// The categories a user chooses among.
    static let optional: [NotificationCategory] = [.goals, .bookings, .savings, .reminders, .announcements]
}

/// Every notification the backend sends: its template, category, app and urgency.
enum PushKind: String, CaseIterable, Sendable, Codable {
    case reminderDue = "reminder.due"
    case workoutDue = "workout.due"
    case goalProposed = "goals.proposed"
    case goalAccepted = "goals.accepted"
    case goalRejected = "goals.rejected"
    case goalRevised = "goals.revised"
    case goalOfferWithdrawn = "goals.offer_withdrawn"
    case itemChecked = "goals.item.checked"
    case itemUnchecked = "goals.item.unchecked"
    case commentAdded = "goals.comment.added"
    case commentLiked = "goals.comment.liked"
    case goalProgress = "goals.progress"
    case goalCompleted = "goals.completed"
    case bookingCreated = "booking.created"
    case bookingCancelledByPark = "booking.cancelled_by_park"
    case bookingSoon = "booking.soon"
    case bookingSanction = "booking.sanction"
    case installmentDue = "savings.installment.due"
    case planCompleted = "savings.plan.completed"
    case signedIn = "account.signed_in"
    case contactChanged = "account.contact_changed"
    /// An admin's broadcast: its title and text are the admin's, not a template.
    case announcement

    var category: NotificationCategory {
        switch self {
        case .reminderDue, .workoutDue: .reminders
        case .goalProposed, .goalAccepted, .goalRejected, .goalRevised, .goalOfferWithdrawn, .itemChecked, .itemUnchecked, .commentAdded, .commentLiked,
            .goalProgress, .goalCompleted:
            .goals
        case .bookingCreated, .bookingCancelledByPark, .bookingSoon, .bookingSanction: .bookings
        case .installmentDue, .planCompleted: .savings
        case .signedIn, .contactChanged: .account
        case .announcement: .announcements
        }
    }

    /// Which queue position its pushes take: what is due now first, a broadcast last.
    var priority: DeliveryPriority {
        switch self {
        case .reminderDue, .workoutDue, .bookingSoon, .installmentDue: .urgent
        case .announcement: .bulk
        default: .normal
        }
    }

    /// The values its templates may use (`{name}`).
    var placeholders: [String] {
        switch self {
        case .reminderDue, .workoutDue: ["title", "when"]
        case .goalProposed, .goalAccepted, .goalRejected, .goalRevised, .goalOfferWithdrawn: ["reward"]
        case .itemChecked, .itemUnchecked: ["item"]
        case .commentAdded, .commentLiked: []
        case .goalProgress: ["percent"]
        case .goalCompleted: []
        case .bookingCreated, .bookingCancelledByPark, .bookingSoon, .bookingSanction: ["cable", "date", "time"]
        case .installmentDue: ["plan", "amount", "date"]
        case .planCompleted: ["plan", "target"]
        case .signedIn: ["method"]
        case .contactChanged: ["field"]
        case .announcement: []
        }
    }

    /// Kinds with templates (an announcement's words are the admin's own).
    static let templated = allCases.filter { $0 != .announcement }
}

/// The kinds of an admin's broadcast in the goals app (seed 000, 8.3).
enum BroadcastKind: String, CaseIterable, Sendable, Codable {
    case updates, promotions, offers, congratulations, news
}

/// The platforms a device registers for (Gorush's numbers: 1 iOS, 2 Android).
enum DevicePlatform: String, CaseIterable, Sendable, Codable {
    case ios, android

    var gorushNumber: Int64 { self == .ios ? 1 : 2 }
}

/// Registration's rules for what a device sends.
enum DeviceRules {
    /// APNs tokens are 64 hex digits; FCM's about 150-250 characters.
    static let tokenLength = 16...512
    static let maxDevicesPerApp = 20

    /// A push token: visible ASCII with no spaces, of a plausible length.
    static func isPlausibleToken(_ token: String) -> Bool {
        tokenLength.contains(token.utf8.count) && token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// A BCP 47 tag as devices report it (`en`, `ru-RU`, `zh-Hant-TW`): a 2-3 letter
    /// language, then subtags of 2-8 letters or digits.
    static func isPlausibleLocale(_ locale: String) -> Bool {
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false)
        guard locale.utf8.count <= 35, let language = parts.first, (2...3).contains(language.count),
            language.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) })
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (2...8).contains(part.count) && part.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) }
        }
    }

    /// The form a token is kept in: APNs tokens are hex, and iOS sends them in either
    /// case (one phone, one row); FCM tokens are case-sensitive and kept as sent.
    static func normalized(_ token: String, platform: DevicePlatform) -> String {
        guard platform == .ios, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) }) else {
            return token
        }
        return token.lowercased()
    }

    /// A sound name a device can play from its bundle: ASCII letters, digits, `-`, `_`
    /// and `.`, at most 64, not starting with `.`.
    static func isPlausibleSound(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && !name.hasPrefix(".")
            && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }
    }

    /// The template language of a locale: `ru` for `ru-RU`, else English.
    static func language(of locale: String?) -> String {
        guard let locale, locale.lowercased().hasPrefix("ru") else { return "en" }
        return "ru"
    }
}

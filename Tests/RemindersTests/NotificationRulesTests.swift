import Foundation
import Platform
import Testing

@testable import RemindersService

/// The rules of push notifications, apart from sockets and SQL: quiet hours across
/// midnight and DST, templates and their placeholders, what registration accepts, and
/// how pushes become Gorush requests and its answers outcomes.
@Suite("Notification rules")
struct NotificationRulesTests {
    static let minsk = ZoneClock(identifier: "Europe/Minsk")!
    static let berlin = ZoneClock(identifier: "Europe/Berlin")!

    static func instant(_ zone: ZoneClock, _ text: String) -> Date {
        let local = LocalText.occurrence(text)!
        return zone.instant(local.date, local.time)!
    }

    @Test("quiet hours across midnight hold a notification until their end, in the user's zone")
    func quietHoursAcrossMidnight() {
        let quiet = QuietHours(start: LocalTime("22:00")!, end: LocalTime("07:00")!)
        // 23:30 in Minsk: released at 07:00 the next morning, Minsk time.
        #expect(quiet.release(after: Self.instant(Self.minsk, "2026-11-23T23:30"), in: Self.minsk) == Self.instant(Self.minsk, "2026-11-24T07:00"))
        // 03:00: the same morning.
        #expect(quiet.release(after: Self.instant(Self.minsk, "2026-11-24T03:00"), in: Self.minsk) == Self.instant(Self.minsk, "2026-11-24T07:00"))
        // 07:00 sharp and 21:59 are outside; 22:00 sharp inside.
        #expect(quiet.release(after: Self.instant(Self.minsk, "2026-11-24T07:00"), in: Self.minsk) == nil)
        #expect(quiet.release(after: Self.instant(Self.minsk, "2026-11-24T21:59"), in: Self.minsk) == nil)
        #expect(quiet.release(after: Self.instant(Self.minsk, "2026-11-24T22:00"), in: Self.minsk) != nil)
        // The same instant is not quiet for a user three hours west.
        #expect(quiet.release(after: Self.instant(Self.minsk, "2026-11-23T23:30"), in: ZoneClock(identifier: "Atlantic/Reykjavik")!) == nil)
    }

    @Test("quiet hours within one day, equal start and end, and a DST night")
    func quietHoursSameDayAndDaylightSaving() {
        let afternoon = QuietHours(start: LocalTime("13:00")!, end: LocalTime("15:00")!)
        #expect(afternoon.release(after: Self.instant(Self.minsk, "2026-11-24T14:10"), in: Self.minsk) == Self.instant(Self.minsk, "2026-11-24T15:00"))
        #expect(afternoon.release(after: Self.instant(Self.minsk, "2026-11-24T15:10"), in: Self.minsk) == nil)
        #expect(QuietHours(start: LocalTime("10:00")!, end: LocalTime("10:00")!).release(after: Date(), in: Self.minsk) == nil)
        // Berlin springs forward on 29 March 2026: quiet until 03:00 (02:00-03:00 does not exist).
        let night = QuietHours(start: LocalTime("23:00")!, end: LocalTime("03:00")!)
        let released = night.release(after: Self.instant(Self.berlin, "2026-03-28T23:30"), in: Self.berlin)
        #expect(released == Self.instant(Self.berlin, "2026-03-29T03:00"))
        #expect(released.map { $0.timeIntervalSince(Self.instant(Self.berlin, "2026-03-28T23:30")) } == 2.5 * 3_600)
    }

    @Test("templates fill their placeholders; unknown braces stay, missing values empty")
    func templates() {
        let template = NotificationTemplate(title: "{title}", body: "Due {when} {x y} {")
        let filled = template.render(["title": "Gym", "when": "07:30"])
        #expect(filled.title == "Gym" && filled.body == "Due 07:30 {x y} {")
        #expect(NotificationTemplate.fill("{missing}!", [:]) == "!")
        #expect(NotificationTemplate.placeholders(in: "{a} and {b}, {not one} {}") == ["a", "b"])
        // Found exactly where fill replaces: a brace inside another's text, `{}` literal.
        #expect(NotificationTemplate.placeholders(in: "Hi {x{field} {{method}} {}") == ["field", "method"])
        #expect(NotificationTemplate.fill("Hi {x{field} {{method}} {}", ["field": "email", "method": "sms"]) == "Hi {xemail {sms} {}")
    }

    @Test("every kind ships English and Russian words that use only its own placeholders")
    func shippedTemplates() {
        for kind in PushKind.templated {
            for language in NotificationTemplate.languages {
                let template = NotificationTemplate.standard(kind, language: language)
                #expect(!template.title.isEmpty && !template.body.isEmpty, "\(kind) \(language)")
                let used = NotificationTemplate.placeholders(in: template.title).union(NotificationTemplate.placeholders(in: template.body))
                #expect(used.isSubset(of: Set(kind.placeholders)), "\(kind) \(language) uses \(used)")
                #expect(template.title.count <= NotificationTemplate.maxTitle && template.body.count <= NotificationTemplate.maxBody)
            }
        }
        #expect(NotificationTemplate.standard(.goalAccepted, language: "ru").title == "Цель принята")
    }

    @Test("kinds belong to categories; due reminders go first, broadcasts last; account notices cannot be switched off")
    func kinds() {
        #expect(PushKind.reminderDue.priority == .urgent && PushKind.announcement.priority == .bulk && PushKind.goalAccepted.priority == .normal)
        #expect(PushKind.bookingSoon.category == .bookings && PushKind.installmentDue.category == .savings && PushKind.itemChecked.category == .goals)
        var preferences = NotificationPreferences()
        preferences.disabled = Set(NotificationCategory.optional)
        #expect(!preferences.wants(.goalAccepted) && !preferences.wants(.announcement))
        #expect(preferences.wants(.signedIn) && preferences.wants(.contactChanged))
    }

    @Test("registration accepts plausible tokens and BCP 47 locales only")
    func registrationRules() {
        #expect(DeviceRules.isPlausibleToken(String(repeating: "a1", count: 32)))
        #expect(!DeviceRules.isPlausibleToken("short"))
        #expect(!DeviceRules.isPlausibleToken(String(repeating: "x", count: 513)))
        #expect(!DeviceRules.isPlausibleToken("has a space in the middle of it"))
        #expect(!DeviceRules.isPlausibleToken("токен-не-ascii-символы-здесь"))
        for good in ["en", "ru-RU", "zh-Hant-TW", "de-DE"] { #expect(DeviceRules.isPlausibleLocale(good), "\(good)") }
        for bad in ["", "e", "english", "ru_RU", "ru-", "-RU", "ru-R", String(repeating: "a", count: 36), "ру"] {
            #expect(!DeviceRules.isPlausibleLocale(bad), "\(bad)")
        }
        #expect(DeviceRules.normalized("ABCDEF0123456789ABCD", platform: .ios) == "abcdef0123456789abcd")
        #expect(DeviceRules.normalized("AbC:APA91b-xyzXYZ", platform: .ios) == "AbC:APA91b-xyzXYZ")
        #expect(DeviceRules.normalized("ABCDEF0123456789ABCD", platform: .android) == "ABCDEF0123456789ABCD")
        for good in ["default", "chime.caf", "bell_2-long"] { #expect(DeviceRules.isPlausibleSound(good)) }
        for bad in ["", ".hidden", "../../etc/passwd", "a b", "звук", String(repeating: "a", count: 65)] { #expect(!DeviceRules.isPlausibleSound(bad), "\(bad)") }
        #expect(DeviceRules.language(of: "ru-BY") == "ru" && DeviceRules.language(of: "de-DE") == "en" && DeviceRules.language(of: nil) == "en")
    }

    static func message(_ id: String, token: String, platform: String = "ios", title: String = "Hello") -> DeliveryMessage {
        DeliveryMessage(
            id: id, channel: "push", destination: token,
            payload: [
                "notificationId": .string("ntf.\(title)"), "app": "goals", "platform": .string(platform), "kind": "announcement", "title": .string(title),
                "body": "Body", "sound": "default", "data": ["goalId": "g1"],
            ], createdAt: "2026-11-23T10:00:00Z")
    }

    @Test("pushes with the same content share one Gorush notification with all their tokens; the topic is the app's bundle id")
    func gorushNotification() {
        let ios = GorushTransport.notification(Self.message("1", token: "t1").payload, topic: "com.sponsoredgoals.app")
        #expect(ios["platform"] == 1 && ios["topic"] == "com.sponsoredgoals.app" && ios["message"] == "Body" && ios["title"] == "Hello")
        #expect(ios["alert"]?["title"] == "Hello" && ios["sound"]?["name"] == "default" && ios["collapse_id"] == "ntf.Hello")
        #expect(ios["data"]?["goalId"] == "g1" && ios["data"]?["notificationId"] == "ntf.Hello" && ios["priority"] == "normal")
        let android = GorushTransport.notification(Self.message("2", token: "t2", platform: "android").payload, topic: "x")
        #expect(android["platform"] == 2 && android["topic"] == nil && android["sound"] == "default" && android["collapse_key"] == "ntf.Hello")
    }

    @Test("Gorush's sync answer: invalid tokens are permanent failures, other failures retried, the rest delivered")
    func gorushAnswers() {
        let answer = Data(#"""
            {"counts": 3, "success": "ok", "logs": [
              {"type": "failed-push", "platform": "ios", "token": "bad", "message": "m", "error": "BadDeviceToken"},
              {"type": "failed-push", "platform": "android", "token": "gone", "message": "m", "error": "NotRegistered"},
              {"type": "failed-push", "platform": "ios", "token": "busy", "message": "m", "error": "Post https://api.push.apple.com: timeout"}]}
            """#.utf8)
        let failures = GorushTransport.failures(in: answer)
        #expect(failures.count == 3)
        #expect(GorushTransport.isInvalidToken(failures["bad"]!) && GorushTransport.isInvalidToken(failures["gone"]!))
        #expect(!GorushTransport.isInvalidToken(failures["busy"]!))
        #expect(GorushTransport.failures(in: Data("not json".utf8)).isEmpty)
    }
}

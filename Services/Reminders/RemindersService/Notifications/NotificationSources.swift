import Foundation
import GRDB
import Platform

/// Where notifications come from: other services' events, through the platform's
/// subscriber (each applied exactly once, in the transaction that moves its cursor), the
/// scheduler's own alerts (in the transaction that publishes `reminders.due`), and
/// durable timers (a booking's two-hour reminder, a broadcast's fan-out).
enum NotificationSources {
    static var subscriptions: [EventSubscription] { [goals, booking, savings, account] }

    /// A notification's id from its cause: the event, and which of its recipients.
    static func id(_ event: Event, _ recipient: Int = 0) -> String { "ntf.\(event.source).\(event.seq).\(recipient)" }

    static func text(_ event: Event, _ name: String) -> String? { event.data[name]?.stringValue }

    /// Money as people read it (`12.50 EUR`), from the contract's `{minor, currency}`.
    static func money(_ value: JSONValue?) -> String {
        guard let value, let money = try? JSONValueDecoder().decode(Money.self, from: value) else { return "" }
        return money.description
    }

    static func reward(_ value: JSONValue?) -> String {
        if let money = value?["money"], money != .null { return Self.money(money) }
        return value?["text"]?.stringValue ?? ""
    }

    // MARK: goals

    static let goals = EventSubscription(
        source: "goals",
        types: [
            "goals.proposed", "goals.accepted", "goals.rejected", "goals.revised", "goals.offer_withdrawn", "goals.item.checked", "goals.item.unchecked",
            "goals.comment.added", "goals.comment.liked", "goals.progress.changed", "goals.completed", "goals.broadcast",
        ]
    ) { db, event in
        let now = Date()
        let goalID = text(event, "goalId")
        var data: [String: JSONValue] = [:]
        if let goalID { data["goalId"] = .string(goalID) }
        // `once`: a notification id of the fact rather than of the event, so toggling a
        // like or a check back and forth tells nobody twice.
        func tell(_ users: [String], _ kind: PushKind, _ values: [String: String] = [:], once: String? = nil) throws {
            for (index, user) in users.enumerated() {
                try Notifier.notify(
                    db, Notice(id: once.map { "ntf.goals.\($0)" } ?? id(event, index), user: user, app: .goals, kind: kind, values: values, data: data), now: now)
            }
        }
        let sponsors = event.data["sponsorIds"]?.arrayValue?.compactMap(\.stringValue) ?? []
        switch event.type {
        case "goals.proposed", "goals.revised", "goals.offer_withdrawn":
            let kind: PushKind = event.type == "goals.proposed" ? .goalProposed : event.type == "goals.revised" ? .goalRevised : .goalOfferWithdrawn
            try tell([text(event, "sponsorId")].compactMap { $0 }, kind, ["reward": reward(event.data["reward"])])
        case "goals.accepted", "goals.rejected":
            try tell([text(event, "recipientId")].compactMap { $0 }, event.type == "goals.accepted" ? .goalAccepted : .goalRejected,
                ["reward": reward(event.data["reward"])])
        case "goals.item.checked", "goals.item.unchecked":
            data["itemId"] = event.data["itemId"]
            let checked = event.type == "goals.item.checked"
            try tell(
                sponsors, checked ? .itemChecked : .itemUnchecked, ["item": text(event, "text") ?? ""],
                once: text(event, "itemId").map { "item.\($0).\(checked ? "checked" : "unchecked")" })
        case "goals.comment.added":
            data["entryId"] = event.data["entryId"]
            try tell([text(event, "toId")].compactMap { $0 }, .commentAdded)
        case "goals.comment.liked":
            data["entryId"] = event.data["entryId"]
            let entry = event.data["entryId"]?.integerValue.map(String.init)
            try tell([text(event, "authorId")].compactMap { $0 }, .commentLiked, once: entry.map { "liked.\($0).\(text(event, "byId") ?? "")" })
        case "goals.progress.changed":
            // Sponsors hear of each quarter passed (25, 50, 75 %); 100 % is goals.completed.
            guard let goalID, let progress = event.data["progress"]?.integerValue.map(Int.init), progress < 100 else { return }
            let milestone = min(75, progress / 25 * 25)
            let told = try Int.fetchOne(db.cachedStatement(sql: "SELECT milestone FROM push_goal_milestone WHERE goal_id = ?"), arguments: [goalID]) ?? 0
            guard milestone > told else { return }
            try db.cachedStatement(sql: "INSERT INTO push_goal_milestone (goal_id, milestone) VALUES (?, ?) ON CONFLICT (goal_id) DO UPDATE SET milestone = excluded.milestone")
                .execute(arguments: [goalID, milestone])
            try tell(sponsors, .goalProgress, ["percent": String(milestone)])
        case "goals.completed":
            try tell([text(event, "recipientId")].compactMap { $0 } + sponsors, .goalCompleted)
        case "goals.broadcast":
            guard let broadcastID = text(event, "broadcastId") else { return }
            // Nothing blank goes to every device (goals refuses it too).
            guard let title = text(event, "title"), let body = text(event, "text"), Formats.isName(title), Formats.isName(body)
            else { return }
            let kind = BroadcastKind(rawValue: text(event, "kind") ?? "") ?? .news
            let userIDs = event.data["userIds"]?.arrayValue?.compactMap(\.stringValue)
            try Broadcasts.start(
                db, id: broadcastID, app: .goals, kind: kind, title: title, body: body, imageURL: nil,
                audience: text(event, "audience") ?? "everyone", role: text(event, "role"), userIDs: userIDs, by: "goals", now: now)
        default:
            break
        }
    }

    // MARK: booking

    static let bookingSoonKind = "notifications.booking.soon"
    /// How long before a slot the rider is reminded.
    static let bookingLead: TimeInterval = 2 * 3_600

    struct BookingSoon: Codable, Sendable {
        var userId: String
        var bookingId: String
        var cable: String
        var date: String
        var time: String
    }

    static let booking = EventSubscription(
        source: "booking", types: ["booking.created", "booking.cancelled", "booking.late_cancelled", "booking.cancelled_by_park", "booking.no_show"]
    ) { db, event in
        let now = Date()
        guard let user = text(event, "userId"), let bookingID = text(event, "bookingId") else { return }
        let values = ["cable": text(event, "cable") ?? "", "date": text(event, "date") ?? "", "time": text(event, "localStart") ?? ""]
        func tell(_ kind: PushKind) throws {
            try Notifier.notify(
                db, Notice(id: id(event), user: user, app: .wakepark, kind: kind, values: values, data: ["bookingId": .string(bookingID)]), now: now)
        }
        switch event.type {
        case "booking.created":
            try tell(.bookingCreated)
            // Two hours before the slot, on a durable timer (unless that is past already).
            if let start = text(event, "start").flatMap(Instant.parse), start.addingTimeInterval(-bookingLead) > now {
                try DurableTimers.schedule(
                    db, kind: bookingSoonKind, at: start.addingTimeInterval(-bookingLead), key: bookingID,
                    payload: BookingSoon(userId: user, bookingId: bookingID, cable: values["cable"]!, date: values["date"]!, time: values["time"]!))
            }
        case "booking.cancelled":
            try DurableTimers.cancel(db, kind: bookingSoonKind, key: bookingID)
        case "booking.late_cancelled", "booking.no_show":
            try DurableTimers.cancel(db, kind: bookingSoonKind, key: bookingID)
            try tell(.bookingSanction)
        case "booking.cancelled_by_park":
            try DurableTimers.cancel(db, kind: bookingSoonKind, key: bookingID)
            try tell(.bookingCancelledByPark)
        default:
            break
        }
    }

    static let bookingSoonHandler = TimerHandler(kind: bookingSoonKind) { db, timer in
        let soon = try timer.payload(as: BookingSoon.self)
        try Notifier.notify(
            db,
            Notice(
                id: "ntf.booking.soon.\(soon.bookingId)", user: soon.userId, app: .wakepark, kind: .bookingSoon,
                values: ["cable": soon.cable, "date": soon.date, "time": soon.time], data: ["bookingId": .string(soon.bookingId)]),
            now: timer.firedAt)
    }

    // MARK: savings

    static let savings = EventSubscription(source: "savings", types: ["savings.installment.due", "savings.plan.completed"]) { db, event in
        guard let user = text(event, "userId"), let plan = text(event, "planId") else { return }
        let name = text(event, "name") ?? ""
        let notice =
            event.type == "savings.installment.due"
            ? Notice(
                id: id(event), user: user, app: .buckstash, kind: .installmentDue,
                values: ["plan": name, "amount": money(event.data["amount"]), "date": text(event, "date") ?? ""], data: ["planId": .string(plan)])
            // Congratulated once per plan, however often a deposit is undone and made again.
            : Notice(
                id: "ntf.savings.completed.\(plan)", user: user, app: .buckstash, kind: .planCompleted, values: ["plan": name, "target": money(event.data["target"])],
                data: ["planId": .string(plan)])
        try Notifier.notify(db, notice, now: Date())
    }

    // MARK: auth

    /// A sign-in or a changed email or phone goes to every app the user has devices in;
    /// roles are kept for broadcasts to a role.
    static let account = EventSubscription(
        source: "auth", types: ["auth.user.signed_in", "auth.user.contact_changed", "auth.user.registered", "auth.user.roles_changed"]
    ) { db, event in
        guard let user = text(event, "userId") else { return }
        switch event.type {
        case "auth.user.registered", "auth.user.roles_changed":
            try db.cachedStatement(sql: "DELETE FROM push_role WHERE user_id = ?").execute(arguments: [user])
            for role in event.data["roles"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO push_role (user_id, role) VALUES (?, ?)").execute(arguments: [user, role])
            }
        default:
            let apps = try String.fetchAll(
                db.cachedStatement(sql: "SELECT DISTINCT app_id FROM push_device WHERE user_id = ? AND disabled_at IS NULL ORDER BY app_id"), arguments: [user]
            ).compactMap(PushApp.init(rawValue:))
            let signedIn = event.type == "auth.user.signed_in"
            for (index, app) in apps.enumerated() {
                try Notifier.notify(
                    db,
                    Notice(
                        id: id(event, index), user: user, app: app, kind: signedIn ? .signedIn : .contactChanged,
                        values: signedIn ? ["method": text(event, "method") ?? ""] : ["field": text(event, "field") ?? ""],
                        // Security notices are not held by quiet hours: they matter now or never.
                        urgent: true),
                    now: Date())
            }
        }
    }

    // MARK: reminders

    /// A reminder's alert, made in the transaction that publishes `reminders.due`: the
    /// Reminder app's, or the fitness assistant's for the training schedule. A reminder
    /// of high importance is urgent (it ignores quiet hours); its actions are snooze and done.
    /// (`again` tells a snoozed alert's push from its first.)
    static func reminderDue(
        _ db: Database, _ row: ReminderRow, alertID: String, occurrenceLocal: String, now: Date, clock: UserClock, again: String? = nil
    ) throws {
        let content = row.content
        let workout = content.category == .workout
        let app: PushApp = workout ? .fitness : .reminder
        // Most alerts go to users without a device of the app: asked first, the notice is
        // made only for those with one (a tenth of a firing's time in a burst).
        let devices = try Notifier.devices(db, user: row.userID, app: app)
        guard !devices.isEmpty else { return }
        var data: [String: JSONValue] = ["reminderId": .string(row.id), "alertId": .string(alertID), "occurrence": .string(occurrenceLocal)]
        data["category"] = .string(content.category.rawValue)
        let when = String(occurrenceLocal.map { $0 == "T" ? " " : $0 })
        try Notifier.notify(
            db,
            Notice(
                id: "ntf.alert.\(alertID)" + (again.map { ".\($0)" } ?? ""), user: row.userID, app: app, kind: workout ? .workoutDue : .reminderDue,
                values: ["title": content.title, "when": workout ? String(when.suffix(5)) : when], urgent: content.importance == .high, data: data,
                imageURL: content.imageID.map { "\(Notifier.publicURL)/v1/media/reminders/\($0)" },
                sound: content.notificationKind == .vibration ? nil : content.sound, actions: ["snooze", "done"]),
            devices: devices, now: now, clock: clock)
    }
}

import Foundation
import GRDB
import Platform

/// What admins do with notifications: edit the templates, broadcast to an app, and see
/// delivery counts per kind and day. Dead letters (pushes given up, tokens the gateway
/// refused) are the platform's `reminders.delivery.dead.list` and `.retry`.
struct NotificationAdminOperations: Sendable {
    static let admin = AuthRule.anyRole(["admin"])

    var all: [ServiceOperation] { [templates, setTemplate, broadcast, stats] }

    static let templateSchema = JSONSchema.object(
        [
            "kind": .oneOf(PushKind.templated.map(\.rawValue)), "language": .oneOf(NotificationTemplate.languages),
            "title": .string(), "text": .text(), "placeholders": .array(of: .string()),
            "edited": JSONSchema.boolean.described("an admin's text (false: the shipped one)"),
        ], required: ["kind", "language", "title", "text", "placeholders", "edited"])

    static func templateView(_ kind: PushKind, _ language: String, _ template: NotificationTemplate, edited: Bool) -> JSONValue {
        [
            "kind": .string(kind.rawValue), "language": .string(language), "title": .string(template.title), "text": .string(template.body),
            "placeholders": .array(kind.placeholders.map(JSONValue.string)), "edited": .bool(edited),
        ]
    }

    var templates: ServiceOperation {
        .read(
            "reminders.admin.templates.list", summary: "Every notification text per kind and language (English, Russian), the admins' where edited; admins only.",
            auth: Self.admin, request: .empty,
            response: .object(["items": .array(of: Self.templateSchema, maxItems: 200)], required: ["items"])
        ) { (_, _: Empty, db: Database) -> JSONValue in
            var edited: [String: NotificationTemplate] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT kind, language, title, body FROM push_template") {
                edited["\(row[0] as String)|\(row[1] as String)"] = NotificationTemplate(title: row[2], body: row[3])
            }
            var items: [JSONValue] = []
            for kind in PushKind.templated {
                for language in NotificationTemplate.languages {
                    let stored = edited["\(kind.rawValue)|\(language)"]
                    items.append(Self.templateView(kind, language, stored ?? NotificationTemplate.standard(kind, language: language), edited: stored != nil))
                }
            }
            return ["items": .array(items)]
        }
    }

    struct TemplateRequest: Codable, Sendable {
        var kind: String
        var language: String
        var title: String?
        var text: String?
        var reset: Bool?
    }

    var setTemplate: ServiceOperation {
        .write(
            "reminders.admin.templates.set",
            summary: "Changes one kind's text in one language (placeholders `{name}` from the kind's list only), or `reset: true` back to the shipped one; admins only. Notifications made afterwards use it.",
            auth: Self.admin,
            request: .object(
                [
                    "kind": .oneOf(PushKind.templated.map(\.rawValue)), "language": .oneOf(NotificationTemplate.languages),
                    "title": .name(maxLength: NotificationTemplate.maxTitle), "text": .text(minLength: 1, maxLength: NotificationTemplate.maxBody),
                    "reset": .boolean,
                ], required: ["kind", "language"]),
            response: Self.templateSchema
        ) { (context, input: TemplateRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            guard let kind = PushKind(rawValue: input.kind), kind != .announcement else { throw ServiceError.invalid("kind", "not a templated kind") }
            Notifier.forgetTemplates(db)
            if input.reset == true {
                guard input.title == nil, input.text == nil else { throw ServiceError.invalid("reset", "reset takes no title or text") }
                try db.execute(sql: "DELETE FROM push_template WHERE kind = ? AND language = ?", arguments: [kind.rawValue, input.language])
            } else {
                guard let title = input.title, let text = input.text else { throw ServiceError.invalid("text", "send title and text, or reset: true") }
                guard Formats.isName(text) else { throw ServiceError.invalid("text", "must show something") }
                for (field, value) in [("title", title), ("text", text)] {
                    let unknown = NotificationTemplate.placeholders(in: value).subtracting(kind.placeholders)
                    if let name = unknown.sorted().first {
                        throw ServiceError.invalid(field, "{\(name)} is not a placeholder of \(kind.rawValue) (it has: \(kind.placeholders.joined(separator: ", ")))")
                    }
                }
                try db.execute(
                    sql: """
                        INSERT INTO push_template (kind, language, title, body, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT (kind, language) DO UPDATE SET title = excluded.title, body = excluded.body,
                            updated_at = excluded.updated_at, updated_by = excluded.updated_by
                        """, arguments: [kind.rawValue, input.language, title, text, Instant.format(context.receivedAt), admin])
            }
            context.logger.notice("notification template changed", metadata: ["kind": "\(kind.rawValue)", "language": "\(input.language)"])
            let stored = try Row.fetchOne(db, sql: "SELECT title, body FROM push_template WHERE kind = ? AND language = ?", arguments: [kind.rawValue, input.language])
            let template = stored.map { NotificationTemplate(title: $0[0], body: $0[1]) } ?? NotificationTemplate.standard(kind, language: input.language)
            return Self.templateView(kind, input.language, template, edited: stored != nil)
        }
    }

    struct BroadcastRequest: Codable, Sendable {
        var appId: PushApp
        var kind: BroadcastKind?
        var title: String
        var text: String
        var imageId: String?
        var role: String?
    }

    var broadcast: ServiceOperation {
        .write(
            "reminders.admin.broadcast",
            summary: "Sends an announcement (updates, promotions, offers, congratulations, news) to every device of one app, or of one role's users; admins only. Users who switched announcements off are skipped; quiet hours hold it back. It fans out in the background behind anything due; send idem so a retry broadcasts once.",
            auth: Self.admin,
            request: .object(
                [
                    "appId": NotificationOperations.appSchema, "kind": .oneOf(BroadcastKind.allCases.map(\.rawValue)),
                    "title": .name(maxLength: NotificationTemplate.maxTitle), "text": .text(minLength: 1, maxLength: NotificationTemplate.maxBody),
                    "imageId": JSONSchema.string(minLength: 1, maxLength: 100).described("an image of reminders' media, sent as its URL through the edge"),
                    "role": .oneOf(["recipient", "sponsor", "staff", "admin"]),
                ], required: ["appId", "title", "text"]),
            response: .object(["broadcastId": .string(), "devices": JSONSchema.integer(minimum: 0).described("devices of the app now enabled (the audience's upper bound)")],
                required: ["broadcastId", "devices"])
        ) { (context, input: BroadcastRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            guard Formats.isName(input.text) else {
                throw ServiceError.invalid("text", "must show something: not only spaces or invisible characters, no direction overrides")
            }
            try MediaCatalog.requireUpload(db, input.imageId, field: "imageId")
            let id = RecordID.make(prefix: "bcs", at: context.receivedAt)
            // The broadcast shows the image (in every push and in the history) until it is
            // pruned: a user attaching and releasing the same id, or the sweep of images
            // nothing uses, removed it within a day.
            if let image = input.imageId { try MediaCatalog.reference(db, image, by: Broadcasts.imageOwner(id)) }
            try Broadcasts.start(
                db, id: id, app: input.appId, kind: input.kind ?? .news, title: input.title, body: input.text,
                imageURL: input.imageId.map { "\(Notifier.publicURL)/v1/media/reminders/\($0)" }, audience: input.role == nil ? "everyone" : "role",
                role: input.role, userIDs: nil, by: admin, now: context.receivedAt)
            let devices = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM push_device WHERE app_id = ? AND disabled_at IS NULL"), arguments: [input.appId.rawValue]) ?? 0
            context.logger.notice("broadcast started", metadata: ["broadcast": "\(id)", "app": "\(input.appId.rawValue)"])
            return ["broadcastId": .string(id), "devices": .integer(Int64(devices))]
        }
    }

    struct StatsRequest: Codable, Sendable {
        var from: LocalDate?
        var to: LocalDate?
    }

    var stats: ServiceOperation {
        .read(
            "reminders.admin.notifications.stats",
            summary: "Notifications made, pushes queued, sent and failed per kind and day (UTC) from `from` to `to` (default: the last 7 days); admins only.",
            auth: Self.admin, request: .object(["from": .string(format: .date), "to": .string(format: .date)]),
            response: .object(
                [
                    "items": .array(
                        of: .object(
                            [
                                "day": .string(format: .date), "kind": .string(), "notifications": .integer(minimum: 0), "queued": .integer(minimum: 0),
                                "sent": .integer(minimum: 0), "failed": .integer(minimum: 0),
                            ], required: ["day", "kind", "notifications", "queued", "sent", "failed"]), maxItems: 10_000)
                ], required: ["items"])
        ) { (context, input: StatsRequest, db: Database) -> JSONValue in
            let today = LocalDate(String(Instant.format(context.receivedAt).prefix(10)))!
            let to = input.to ?? today
            let from = input.from ?? to.adding(days: -6)
            guard from <= to, from.days(until: to) <= 366 else { throw ServiceError.invalid("from", "from is on or before to, at most a year apart") }
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM push_daily WHERE day BETWEEN ? AND ? ORDER BY day, kind", arguments: [from.description, to.description])
            return [
                "items": .array(rows.map { row in
                    [
                        "day": .string(row["day"]), "kind": .string(row["kind"]), "notifications": .integer(row["notifications"]),
                        "queued": .integer(row["queued"]), "sent": .integer(row["sent"]), "failed": .integer(row["failed"]),
                    ]
                })
            ]
        }
    }
}

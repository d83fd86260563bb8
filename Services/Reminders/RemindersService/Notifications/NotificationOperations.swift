import Foundation
import GRDB
import Platform

/// What users do with push notifications: register their devices, choose what they hear,
/// read their history. Each sees and changes only their own.
struct NotificationOperations: Sendable {
    static let user = AuthRule.authenticated

    var all: [ServiceOperation] { [register, unregister, devices, preferencesGet, preferencesSet, list, read] }

    static let appSchema = JSONSchema.oneOf(PushApp.allCases.map(\.rawValue))

    static let deviceSchema = JSONSchema.object(
        [
            "id": .integer(minimum: 1), "platform": .oneOf(DevicePlatform.allCases.map(\.rawValue)), "appId": appSchema,
            "token": JSONSchema.string().described("the token's last 4 characters, to tell devices apart"), "locale": .string(maxLength: 35),
            "registeredAt": .string(format: .dateTime), "enabled": .boolean,
            "disabledReason": JSONSchema.string().nullable().described("why the push gateway refused it"),
        ], required: ["id", "platform", "appId", "token", "locale", "registeredAt", "enabled"])

    static func deviceView(_ row: Row) -> JSONValue {
        let token: String = row["token"]
        return [
            "id": .integer(row["id"]), "platform": .string(row["platform"]), "appId": .string(row["app_id"]),
            "token": .string("…" + String(token.suffix(4))), "locale": .string(row["locale"]),
            "registeredAt": .string(row["registered_at"]), "enabled": .bool((row["disabled_at"] as String?) == nil),
            "disabledReason": (row["disabled_reason"] as String?).map(JSONValue.string) ?? .null,
        ]
    }

    struct RegisterRequest: Codable, Sendable {
        var platform: DevicePlatform
        var token: String
        var locale: String
        var appId: PushApp
    }

    var register: ServiceOperation {
        .write(
            "reminders.devices.register",
            summary: "Registers the caller's device for pushes of one app (ios or android, its push token, its locale). A token belongs to one user and app at a time: registering it again moves it (and enables it again). At most 20 devices per app.",
            auth: Self.user,
            request: .object(
                [
                    "platform": .oneOf(DevicePlatform.allCases.map(\.rawValue)), "token": .string(minLength: 16, maxLength: 512),
                    "locale": JSONSchema.string(minLength: 2, maxLength: 35).described("BCP 47: en, ru-RU"), "appId": Self.appSchema,
                ], required: ["platform", "token", "locale", "appId"]),
            response: Self.deviceSchema
        ) { (context, input: RegisterRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            guard DeviceRules.isPlausibleToken(input.token) else { throw ServiceError.invalid("token", "a push token is visible ASCII without spaces") }
            guard DeviceRules.isPlausibleLocale(input.locale) else { throw ServiceError.invalid("locale", "not a BCP 47 locale (en, ru-RU)") }
            let token = DeviceRules.normalized(input.token, platform: input.platform)
            let owned = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM push_device WHERE user_id = ? AND app_id = ? AND token <> ?"),
                arguments: [user, input.appId.rawValue, token]) ?? 0
            guard owned < DeviceRules.maxDevicesPerApp else {
                throw ServiceError.conflict("at most \(DeviceRules.maxDevicesPerApp) devices per app: unregister one first", reason: "too_many_devices")
            }
            // A token that changes hands (another user, another app) takes nothing with it:
            // what was queued for it, even held back by quiet hours, or given up, is the old
            // owner's and goes.
            let before = try Row.fetchOne(db.cachedStatement(sql: "SELECT user_id, app_id FROM push_device WHERE token = ?"), arguments: [token])
            if let before, (before[0] as String) != user || (before[1] as String) != input.appId.rawValue {
                try DeliveryOutbox.forget(db, destination: token)
            }
            try db.cachedStatement(sql: """
                INSERT INTO push_device (token, user_id, app_id, platform, locale, registered_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, app_id = excluded.app_id, platform = excluded.platform,
                    locale = excluded.locale, registered_at = excluded.registered_at, disabled_at = NULL, disabled_reason = NULL
                """).execute(arguments: [token, user, input.appId.rawValue, input.platform.rawValue, input.locale, Instant.format(context.receivedAt)])
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM push_device WHERE token = ?"), arguments: [token]) else {
                throw ServiceError.internal(ref: "device-vanished")
            }
            return Self.deviceView(row)
        }
    }

    struct TokenRequest: Codable, Sendable {
        var token: String
    }

    var unregister: ServiceOperation {
        .write(
            "reminders.devices.unregister",
            summary: "Stops pushes to one of the caller's devices (signing out, switching notifications off in the system). Another user's token is not_found.",
            auth: Self.user,
            request: .object(["token": .string(minLength: 1, maxLength: 512)], required: ["token"]),
            response: .object(["removed": .boolean], required: ["removed"])
        ) { (context, input: TokenRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let tokens = [input.token, DeviceRules.normalized(input.token, platform: .ios)]
            var removed: String?
            for token in Set(tokens) where removed == nil {
                try db.cachedStatement(sql: "DELETE FROM push_device WHERE token = ? AND user_id = ?").execute(arguments: [token, user])
                if db.changesCount > 0 { removed = token }
            }
            guard let removed else { throw ServiceError.notFound("no such device of yours") }
            // Nothing queued for it is sent any more, and no dead letter can be retried to it.
            try DeliveryOutbox.forget(db, destination: removed)
            return ["removed": true]
        }
    }

    struct AppFilter: Codable, Sendable {
        var appId: PushApp?
    }

    var devices: ServiceOperation {
        .read(
            "reminders.devices.list", summary: "The caller's registered devices (of one app, or all), tokens shortened.",
            auth: Self.user, request: .object(["appId": Self.appSchema]),
            response: .object(["items": .array(of: Self.deviceSchema, maxItems: 100)], required: ["items"])
        ) { (context, input: AppFilter, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM push_device WHERE user_id = ? AND (? IS NULL OR app_id = ?) ORDER BY id LIMIT 100"),
                arguments: [user, input.appId?.rawValue, input.appId?.rawValue])
            return ["items": .array(rows.map(Self.deviceView))]
        }
    }

    // MARK: Preferences

    static let quietSchema = JSONSchema.object(
        ["start": .string(format: .time), "end": .string(format: .time)], required: ["start", "end"]
    ).described("local times in the user's zone; across midnight when end is earlier (22:00-07:00)")

    static let preferencesSchema = JSONSchema.object(
        [
            "appId": appSchema,
            "categories": JSONSchema.object(
                Dictionary(uniqueKeysWithValues: NotificationCategory.optional.map { ($0.rawValue, JSONSchema.boolean) }),
                required: NotificationCategory.optional.map(\.rawValue)
            ).described("which kinds of notification are wanted (account notices always are)"),
            "sound": JSONSchema.string(maxLength: 64).nullable().described("a sound name; null: silent"),
            "vibration": .boolean, "alertStyle": .oneOf(NotificationPreferences.AlertStyle.allCases.map(\.rawValue)),
            "quietHours": quietSchema.nullable(),
        ], required: ["appId", "categories", "sound", "vibration", "alertStyle", "quietHours"])

    static func preferencesView(_ preferences: NotificationPreferences, app: PushApp) -> JSONValue {
        [
            "appId": .string(app.rawValue),
            "categories": .object(Dictionary(uniqueKeysWithValues: NotificationCategory.optional.map { ($0.rawValue, JSONValue.bool(!preferences.disabled.contains($0))) })),
            "sound": preferences.sound.map(JSONValue.string) ?? .null, "vibration": .bool(preferences.vibration),
            "alertStyle": .string(preferences.alertStyle.rawValue),
            "quietHours": preferences.quietHours.map { ["start": .string($0.start.description), "end": .string($0.end.description)] } ?? .null,
        ]
    }

    struct AppRequest: Codable, Sendable {
        var appId: PushApp
    }

    var preferencesGet: ServiceOperation {
        .read(
            "reminders.notifications.preferences.get", summary: "How the caller wants one app to notify them (the defaults where never set).",
            auth: Self.user, request: .object(["appId": Self.appSchema], required: ["appId"]), response: Self.preferencesSchema
        ) { (context, input: AppRequest, db: Database) -> JSONValue in
            Self.preferencesView(try Notifier.loadPreferences(db, user: try context.requirePrincipal().userID, app: input.appId), app: input.appId)
        }
    }

    struct Quiet: Codable, Sendable {
        var start: LocalTime
        var end: LocalTime
    }

    struct PreferencesRequest: Codable, Sendable {
        var appId: PushApp
        var categories: [String: Bool]?
        var sound: String??
        var vibration: Bool?
        var alertStyle: NotificationPreferences.AlertStyle?
        var quietHours: Quiet??

        enum CodingKeys: String, CodingKey { case appId, categories, sound, vibration, alertStyle, quietHours }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            appId = try container.decode(PushApp.self, forKey: .appId)
            categories = try container.decodeIfPresent([String: Bool].self, forKey: .categories)
            vibration = try container.decodeIfPresent(Bool.self, forKey: .vibration)
            alertStyle = try container.decodeIfPresent(NotificationPreferences.AlertStyle.self, forKey: .alertStyle)
            // Present and null (silent, no quiet hours) differs from absent (unchanged).
            sound = container.contains(.sound) ? .some(try container.decodeIfPresent(String.self, forKey: .sound)) : nil
            quietHours = container.contains(.quietHours) ? .some(try container.decodeIfPresent(Quiet.self, forKey: .quietHours)) : nil
        }
    }

    var preferencesSet: ServiceOperation {
        .write(
            "reminders.notifications.preferences.set",
            summary: "Changes what is sent (the rest stays): categories wanted (goals, bookings, savings, reminders, announcements), sound (null: silent), vibration, alert style, quiet hours in the user's zone (null: none). During quiet hours notifications wait for their end, except urgent ones (reminders of high importance).",
            auth: Self.user,
            request: .object(
                [
                    "appId": Self.appSchema,
                    "categories": JSONSchema.object(Dictionary(uniqueKeysWithValues: NotificationCategory.optional.map { ($0.rawValue, JSONSchema.boolean) })),
                    "sound": JSONSchema.string(minLength: 1, maxLength: 64).nullable(), "vibration": .boolean,
                    "alertStyle": .oneOf(NotificationPreferences.AlertStyle.allCases.map(\.rawValue)), "quietHours": Self.quietSchema.nullable(),
                ], required: ["appId"]),
            response: Self.preferencesSchema
        ) { (context, input: PreferencesRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            var preferences = try Notifier.loadPreferences(db, user: user, app: input.appId)
            for (name, wanted) in input.categories ?? [:] {
                guard let category = NotificationCategory(rawValue: name), NotificationCategory.optional.contains(category) else {
                    throw ServiceError.invalid("categories.\(name)", "not a category")
                }
                if wanted { preferences.disabled.remove(category) } else { preferences.disabled.insert(category) }
            }
            if let sound = input.sound {
                if let name = sound, !DeviceRules.isPlausibleSound(name) {
                    throw ServiceError.invalid("sound", "a sound name is ASCII letters, digits, '-', '_' and '.' (not starting with '.')")
                }
                preferences.sound = sound
            }
            if let vibration = input.vibration { preferences.vibration = vibration }
            if let style = input.alertStyle { preferences.alertStyle = style }
            if let quiet = input.quietHours {
                if let quiet, quiet.start == quiet.end { throw ServiceError.invalid("quietHours", "start and end must differ") }
                preferences.quietHours = quiet.map { QuietHours(start: $0.start, end: $0.end) }
            }
            try db.cachedStatement(sql: """
                INSERT INTO push_preference (user_id, app_id, disabled, sound, vibration, alert_style, quiet_start, quiet_end, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_id, app_id) DO UPDATE SET disabled = excluded.disabled, sound = excluded.sound, vibration = excluded.vibration,
                    alert_style = excluded.alert_style, quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end, updated_at = excluded.updated_at
                """).execute(arguments: [
                    user, input.appId.rawValue, preferences.disabled.map(\.rawValue).sorted().joined(separator: ","), preferences.sound, preferences.vibration,
                    preferences.alertStyle.rawValue, preferences.quietHours?.start.description, preferences.quietHours?.end.description,
                    Instant.format(context.receivedAt),
                ])
            return Self.preferencesView(preferences, app: input.appId)
        }
    }

    // MARK: History

    static let notificationSchema = JSONSchema.object(
        [
            "id": .string(), "appId": appSchema, "kind": .oneOf(PushKind.allCases.map(\.rawValue)), "title": .string(), "text": .text(),
            "imageUrl": JSONSchema.string().nullable(), "data": JSONSchema.object([:], additional: JSONSchema.any).described("ids the app opens it at"),
            "urgent": .boolean, "createdAt": .string(format: .dateTime),
            "deliverAt": JSONSchema.string(format: .dateTime).described("later than createdAt when quiet hours held it back"),
            "read": .boolean,
        ], required: ["id", "appId", "kind", "title", "text", "imageUrl", "data", "urgent", "createdAt", "deliverAt", "read"])

    struct ListRequest: Codable, Sendable {
        var appId: PushApp?
        var unreadOnly: Bool?
        var limit: Int?
        var cursor: String?
    }

    var list: ServiceOperation {
        .read(
            "reminders.notifications.list",
            summary: "The caller's recent notifications, newest first (of one app, or all; unread only if asked), with the unread count; page with `next`.",
            auth: Self.user,
            request: .object([
                "appId": Self.appSchema, "unreadOnly": .boolean, "limit": .integer(minimum: 1, maximum: 100), "cursor": .string(maxLength: 200),
            ]),
            response: .object(
                ["items": .array(of: Self.notificationSchema, maxItems: 100), "unread": .integer(minimum: 0), "next": JSONSchema.string().nullable()],
                required: ["items", "unread", "next"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let limit = input.limit ?? 30
            var after = (ms: Int64.max, id: "")
            if let cursor = input.cursor {
                let parts = cursor.split(separator: "|", maxSplits: 1)
                guard parts.count == 2, let ms = Int64(parts[0]) else { throw ServiceError.invalid("cursor", "not a cursor from this list") }
                after = (ms, String(parts[1]))
            }
            let app = input.appId?.rawValue
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT * FROM notification WHERE user_id = ? AND (? IS NULL OR app_id = ?) AND (? = 0 OR read_at IS NULL)
                      AND (created_ms, id) < (?, ?) ORDER BY created_ms DESC, id DESC LIMIT ?
                    """), arguments: [user, app, app, input.unreadOnly == true, after.ms, after.id, limit + 1])
            let unread = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM notification WHERE user_id = ? AND (? IS NULL OR app_id = ?) AND read_at IS NULL"),
                arguments: [user, app, app]) ?? 0
            let items = rows.prefix(limit).map { row -> JSONValue in
                [
                    "id": .string(row["id"]), "appId": .string(row["app_id"]), "kind": .string(row["kind"]), "title": .string(row["title"]),
                    "text": .string(row["body"]), "imageUrl": (row["image_url"] as String?).map(JSONValue.string) ?? .null,
                    "data": (try? JSONParser.parse(Data((row["data"] as String).utf8))) ?? .object([:]), "urgent": .bool(row["urgent"]),
                    "createdAt": .string(Instant.format(epochMilliseconds: row["created_ms"])),
                    "deliverAt": .string(Instant.format(epochMilliseconds: row["deliver_ms"])), "read": .bool((row["read_at"] as String?) != nil),
                ]
            }
            let next = rows.count > limit ? rows[limit - 1] : nil
            return [
                "items": .array(items), "unread": .integer(Int64(unread)),
                "next": next.map { .string("\($0["created_ms"] as Int64)|\($0["id"] as String)") } ?? .null,
            ]
        }
    }

    struct ReadRequest: Codable, Sendable {
        var ids: [String]?
        var all: Bool?
        var appId: PushApp?
    }

    var read: ServiceOperation {
        .write(
            "reminders.notifications.read",
            summary: "Marks the caller's notifications read: the ids given, or `all` (of one app, or every app). Ids that are not the caller's are ignored. Answers the unread count left (of `appId` when given).",
            auth: Self.user,
            request: .object(["ids": .array(of: .string(minLength: 1, maxLength: 300), maxItems: 100), "all": .boolean, "appId": Self.appSchema]),
            response: .object(["marked": .integer(minimum: 0), "unread": .integer(minimum: 0)], required: ["marked", "unread"])
        ) { (context, input: ReadRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            guard (input.ids != nil) != (input.all == true) else {
                throw ServiceError.invalid("ids", "send ids, or all: true")
            }
            let now = Instant.format(context.receivedAt)
            var marked = 0
            if input.all == true {
                try db.cachedStatement(sql: "UPDATE notification SET read_at = ? WHERE user_id = ? AND read_at IS NULL AND (? IS NULL OR app_id = ?)")
                    .execute(arguments: [now, user, input.appId?.rawValue, input.appId?.rawValue])
                marked = db.changesCount
            } else {
                for id in Set(input.ids ?? []) {
                    try db.cachedStatement(sql: "UPDATE notification SET read_at = ? WHERE id = ? AND user_id = ? AND read_at IS NULL")
                        .execute(arguments: [now, id, user])
                    marked += db.changesCount
                }
            }
            let app = input.appId?.rawValue
            let unread = try Int.fetchOne(
                db.cachedStatement(sql: "SELECT count(*) FROM notification WHERE user_id = ? AND (? IS NULL OR app_id = ?) AND read_at IS NULL"),
                arguments: [user, app, app]) ?? 0
            return ["marked": .integer(Int64(marked)), "unread": .integer(Int64(unread))]
        }
    }
}

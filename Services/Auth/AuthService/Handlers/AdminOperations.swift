import Foundation
import GRDB
import Platform

/// Administration: users, roles, the audit log and signing keys.
struct AdminOperations: Sendable {
    let issuer: SessionIssuer
    let keys: SigningKeys

    var all: [ServiceOperation] { [usersList, usersCount, rolesGrant, rolesRevoke, auditList, keysDocument, rotateKeys, retireKey, bootstrapAdmin, usersGet, usersByPhone] }

    static let admin = AuthRule.anyRole([Role.admin.rawValue])

    struct Page<Item: Codable & Sendable>: Codable, Sendable {
        var items: [Item]
        var next: String?
    }

    struct UserQuery: Codable, Sendable {
        var query: String?
        var role: String?
        var limit: Int?
        var cursor: String?
    }

    var usersList: ServiceOperation {
        .read(
            "auth.admin.users.list",
            summary: "Users, newest first; `query` matches email, phone or names (case-insensitive), `role` filters.",
            auth: Self.admin,
            request: .object(
                ["query": .string(maxLength: 100), "role": AuthSchemas.role].merging(AuthSchemas.page) { first, _ in first }),
            response: .object(["items": .array(of: AuthSchemas.profile), "next": JSONSchema.string().nullable()], required: ["items"])
        ) { (_, input: UserQuery, db: Database) in
            let limit = input.limit ?? 50
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let query = input.query, !query.isEmpty {
                let escaped = query.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
                let pattern = "%" + escaped + "%"
                conditions.append(
                    "(lower(email) LIKE ? ESCAPE '\\' OR phone LIKE ? ESCAPE '\\' OR lower(first_name) LIKE ? ESCAPE '\\' OR lower(last_name) LIKE ? ESCAPE '\\')")
                arguments += [pattern, pattern, pattern, pattern]
            }
            if let role = input.role {
                conditions.append("id IN (SELECT user_id FROM user_role WHERE role = ?)")
                arguments.append(role)
            }
            if let cursor = input.cursor {
                guard let bytes = Base64URL.decode(cursor), let text = String(bytes: bytes, encoding: .utf8),
                    let separator = text.firstIndex(of: "|")
                else { throw ServiceError.invalid("cursor", "not a cursor from this list") }
                conditions.append("(created_at, id) < (?, ?)")
                arguments += [String(text[..<separator]), String(text[text.index(after: separator)...])]
            }
            let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let ids = try Row.fetchAll(
                db, sql: "SELECT id, created_at FROM user \(whereClause) ORDER BY created_at DESC, id DESC LIMIT ?",
                arguments: StatementArguments(arguments + [limit + 1]) ?? [])
            let items = try ids.prefix(limit).compactMap { try ProfileOperations.Profile.load(db, id: $0["id"]) }
            let next = ids.count > limit ? ids[limit - 1] : nil
            return Page(
                items: items,
                next: next.map { Base64URL.encode(Array("\($0["created_at"] as String)|\($0["id"] as String)".utf8)) })
        }
    }

    struct CountQuery: Codable, Sendable {
        var from: String?
        var to: String?
    }

    struct Counts: Codable, Sendable {
        var total: Int
        var byRole: [String: Int]
        var byDay: [DayCount]
    }

    struct DayCount: Codable, Sendable {
        var date: String
        var count: Int
    }

    var usersCount: ServiceOperation {
        .read(
            "auth.admin.users.count",
            summary: "How many users: in total, by role, and registered per UTC day between `from` and `to` (inclusive, default the last 30 days).",
            auth: Self.admin, request: .object(["from": .string(format: .date), "to": .string(format: .date)]),
            response: .object(
                [
                    "total": .integer(minimum: 0), "byRole": .object([:], additional: .integer(minimum: 0)),
                    "byDay": .array(of: .object(["date": .string(format: .date), "count": .integer(minimum: 0)], required: ["date", "count"]), maxItems: 10_000),
                ], required: ["total", "byRole", "byDay"])
        ) { (_, input: CountQuery, db: Database) in
            let today = String(Instant.format(Date()).prefix(10))
            let to = input.to ?? today
            let from = input.from ?? String(Instant.format(Date().addingTimeInterval(-29 * 86_400)).prefix(10))
            guard from <= to else { throw ServiceError.invalid("from", "must not be after `to`") }
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user") ?? 0
            var byRole: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT role, COUNT(*) AS n FROM user_role GROUP BY role") {
                byRole[row["role"]] = row["n"]
            }
            let days = try Row.fetchAll(
                db,
                sql: "SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS n FROM user WHERE substr(created_at, 1, 10) BETWEEN ? AND ? GROUP BY day ORDER BY day",
                arguments: [from, to])
            return Counts(total: total, byRole: byRole, byDay: days.map { DayCount(date: $0["day"], count: $0["n"]) })
        }
    }

    struct RoleChange: Codable, Sendable {
        var userId: String
        var role: String
    }

    private func changeRole(_ name: String, grant: Bool) -> ServiceOperation {
        let issuer = self.issuer
        return .write(
            name,
            summary: grant
                ? "Grants a role (staff, admin, ...) to a user."
                : "Removes a role from a user; their sessions are revoked so no token keeps the old role.",
            auth: Self.admin, request: .object(["userId": .string(maxLength: 100), "role": AuthSchemas.role], required: ["userId", "role"]),
            response: AuthSchemas.account
        ) { (context, input: RoleChange, db: Database) in
            let admin = try context.requirePrincipal()
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM user WHERE id = ?", arguments: [input.userId]) == true else {
                throw ServiceError.notFound("no such user")
            }
            if grant {
                try db.execute(sql: "INSERT OR IGNORE INTO user_role (user_id, role) VALUES (?, ?)", arguments: [input.userId, input.role])
            } else {
                if input.userId == admin.userID && input.role == Role.admin.rawValue {
                    throw ServiceError.conflict("an admin cannot remove their own admin role", reason: "self_demotion")
                }
                try db.execute(sql: "DELETE FROM user_role WHERE user_id = ? AND role = ?", arguments: [input.userId, input.role])
                try db.execute(
                    sql: "UPDATE user SET active_role = NULL WHERE id = ? AND active_role = ?", arguments: [input.userId, input.role])
                try issuer.revoke(db, sessions: try SessionIssuer.live(db, userID: input.userId), userID: input.userId, reason: "roles_changed")
            }
            let account = try AccountSummary.load(db, id: input.userId)
            try AuditLog.record(
                db, .rolesChanged, user: input.userId, actor: admin.userID,
                detail: [grant ? "granted" : "removed": .string(input.role)], client: context.clientAddress)
            try Outbox.append(
                db, type: "auth.user.roles_changed",
                data: ["userId": .string(input.userId), "roles": .array(account.roles.map { .string($0) })] as JSONValue)
            return account
        }
    }

    var rolesGrant: ServiceOperation { changeRole("auth.admin.roles.grant", grant: true) }
    var rolesRevoke: ServiceOperation { changeRole("auth.admin.roles.revoke", grant: false) }

    struct AuditQuery: Codable, Sendable {
        var userId: String?
        var action: String?
        var limit: Int?
        var cursor: String?
    }

    struct AuditEntry: Codable, Sendable {
        var id: Int64
        var at: String
        var action: String
        var userId: String?
        var actorId: String?
        var detail: JSONValue
        var client: String?
    }

    var auditList: ServiceOperation {
        .read(
            "auth.audit.list", summary: "Security events, newest first (admins only).", auth: Self.admin,
            request: .object(
                ["userId": .string(maxLength: 100), "action": .string(maxLength: 50)].merging(AuthSchemas.page) { first, _ in first }),
            response: .object(
                [
                    "items": .array(
                        of: .object(
                            [
                                "id": .integer(minimum: 1), "at": .string(format: .dateTime), "action": .string(), "userId": JSONSchema.string().nullable(),
                                "actorId": JSONSchema.string().nullable(), "detail": .object([:], additional: .any).described("what happened, by action"),
                                "client": JSONSchema.string().nullable().described("the client address, through the gateway"),
                            ], required: ["id", "at", "action", "detail"]), maxItems: 200),
                    "next": JSONSchema.string().nullable(),
                ], required: ["items"])
        ) { (_, input: AuditQuery, db: Database) in
            let limit = input.limit ?? 50
            var conditions: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let userId = input.userId { conditions.append("user_id = ?"); arguments.append(userId) }
            if let action = input.action { conditions.append("action = ?"); arguments.append(action) }
            if let cursor = input.cursor {
                guard let before = Int64(cursor) else { throw ServiceError.invalid("cursor", "not a cursor from this list") }
                conditions.append("id < ?")
                arguments.append(before)
            }
            let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM audit \(whereClause) ORDER BY id DESC LIMIT ?",
                arguments: StatementArguments(arguments + [limit + 1]) ?? [])
            let items = try rows.prefix(limit).map { row in
                AuditEntry(
                    id: row["id"], at: row["at"], action: row["action"], userId: row["user_id"], actorId: row["actor_id"],
                    detail: try JSONParser.parse(Data((row["detail"] as String).utf8)), client: row["client"])
            }
            return Page(items: items, next: rows.count > limit ? String(items.last?.id ?? 0) : nil)
        }
    }

    var keysDocument: ServiceOperation {
        let keys = self.keys
        return .inline(
            "auth.keys",
            summary: "Auth's public signing keys as a JWK set (RFC 8037 OKP/Ed25519), for verifying access tokens anywhere.",
            response: JSONWebKeySet.schema
        ) { (_, _: Empty) in keys.document }
    }

    struct Rotated: Codable, Sendable {
        var kid: String
    }

    var rotateKeys: ServiceOperation {
        let keys = self.keys
        return .task(
            "auth.internal.keys.rotate", summary: "Adds a new signing key; tokens signed with older keys stay valid until they expire. Ignores idem: each call adds a key.",
            auth: .operatorOnly, request: .empty, response: .object(["kid": .string()], required: ["kid"])
        ) { (context, _: Empty) in
            let pool = try context.database()
            return Rotated(kid: try keys.rotate(pool: pool))
        }.ignoringIdem()
    }

    struct Retire: Codable, Sendable {
        var kid: String
    }

    var retireKey: ServiceOperation {
        let keys = self.keys
        return .task(
            "auth.internal.keys.retire",
            summary: "Withdraws a signing key (e.g. leaked): it is no longer published, and tokens signed with it are refused once services refresh their keys (within a minute).",
            auth: .operatorOnly, request: .object(["kid": .string(maxLength: 50)], required: ["kid"]), response: .empty
        ) { (context, input: Retire) in
            try keys.retire(input.kid, pool: try context.database())
            return Empty()
        }
    }

    struct BootstrapAdmin: Codable, Sendable {
        var email: String
    }

    var bootstrapAdmin: ServiceOperation {
        .write(
            "auth.internal.admin.grant",
            summary: "Makes the account with this email an admin: how the first admin is created (`ctl call --direct`).",
            auth: .operatorOnly, request: .object(["email": AuthSchemas.email], required: ["email"]), response: AuthSchemas.account
        ) { (_, input: BootstrapAdmin, db: Database) in
            guard let id = try String.fetchOne(db, sql: "SELECT id FROM user WHERE email = ?", arguments: [Identifiers.email(input.email)]) else {
                throw ServiceError.notFound("no account with this email")
            }
            try db.execute(sql: "INSERT OR IGNORE INTO user_role (user_id, role) VALUES (?, 'admin')", arguments: [id])
            try AuditLog.record(db, .rolesChanged, user: id, actor: "operator", detail: ["granted": "admin"])
            let account = try AccountSummary.load(db, id: id)
            try Outbox.append(
                db, type: "auth.user.roles_changed", data: ["userId": .string(id), "roles": .array(account.roles.map { .string($0) })] as JSONValue)
            return account
        }
    }

    struct UsersGet: Codable, Sendable {
        var ids: [String]
    }

    struct Contact: Codable, Sendable {
        var id: String
        var firstName: String
        var lastName: String
        var phone: String?
    }

    var usersGet: ServiceOperation {
        .read(
            "auth.internal.users.get", summary: "Names and phones of users by id, for other services' staff views (e.g. the wake park's day).",
            auth: .internal, request: .object(["ids": .array(of: .string(maxLength: 100), maxItems: 500)], required: ["ids"]),
            response: .object(
                [
                    "users": .array(
                        of: .object(
                            ["id": .string(), "firstName": .string(), "lastName": .string(), "phone": JSONSchema.string(format: .e164).nullable()],
                            required: ["id", "firstName", "lastName"]), maxItems: 500)
                ], required: ["users"])
        ) { (_, input: UsersGet, db: Database) in
            var users: [Contact] = []
            for id in Set(input.ids) {
                guard let row = try Row.fetchOne(db, sql: "SELECT id, first_name, last_name, phone FROM user WHERE id = ?", arguments: [id]) else {
                    continue
                }
                users.append(Contact(id: row["id"], firstName: row["first_name"], lastName: row["last_name"], phone: row["phone"]))
            }
            return ["users": try WireJSON.value(of: users.sorted { $0.id < $1.id })] as JSONValue
        }
    }
    struct ByPhone: Codable, Sendable {
        var phone: String
        var firstName: String?
        var lastName: String?
        var actor: String?
    }

    struct FoundRider: Codable, Sendable {
        var id: String
        var firstName: String
        var lastName: String
        var phone: String
        var created: Bool
    }

    /// A rider by phone number, for a service's desk (the wake park books a rider who
    /// phoned or walked in): the account with that number, or with `firstName` and
    /// `lastName` given and none found, a new phone-only account the rider later signs in
    /// to with an SMS code (audited as registered by `desk`, with the staff member).
    var usersByPhone: ServiceOperation {
        .write(
            "auth.internal.users.by_phone",
            summary: "The account with a phone number; with firstName and lastName and no such account, creates a phone-only one (the rider signs in later with an SMS code). not_found when there is none and no names are given.",
            auth: .internal,
            request: .object(
                ["phone": AuthSchemas.phone, "firstName": AuthSchemas.name, "lastName": AuthSchemas.name, "actor": .string(maxLength: 100)],
                required: ["phone"]),
            response: .object(
                ["id": .string(), "firstName": .string(), "lastName": .string(), "phone": .string(format: .e164), "created": .boolean],
                required: ["id", "firstName", "lastName", "phone", "created"])
        ) { (_, input: ByPhone, db: Database) in
            if let row = try Row.fetchOne(db, sql: "SELECT id, first_name, last_name FROM user WHERE phone = ?", arguments: [input.phone]) {
                return FoundRider(id: row["id"], firstName: row["first_name"], lastName: row["last_name"], phone: input.phone, created: false)
            }
            guard let firstName = input.firstName, let lastName = input.lastName else {
                throw ServiceError.notFound("no account has this phone number; give firstName and lastName to create one")
            }
            let id = try Accounts.create(
                db, email: nil, phone: input.phone, passwordHash: nil, firstName: firstName, lastName: lastName, patronymic: nil, birthDate: nil,
                termsVersion: nil, method: input.actor.map { "desk:\($0)" } ?? "desk", client: nil)
            return FoundRider(id: id, firstName: firstName, lastName: lastName, phone: input.phone, created: true)
        }
    }
}

import Foundation
import GRDB
import Platform

/// Reading and changing one's own profile (admins: anyone's).
struct ProfileOperations: Sendable {
    var all: [ServiceOperation] { [get, update] }

    struct Profile: Codable, Sendable {
        var id: String
        var email: String?
        var phone: String?
        var firstName: String
        var lastName: String
        var patronymic: String?
        var birthDate: String?
        var roles: [String]
        var activeRole: String?
        var createdAt: String
        var termsVersion: String?
        var termsAcceptedAt: String?
        var locale: String?
        var timeZone: String?

        static func load(_ db: Database, id: String) throws -> Profile? {
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM user WHERE id = ?", arguments: [id]) else { return nil }
            return Profile(
                id: row["id"], email: row["email"], phone: row["phone"], firstName: row["first_name"], lastName: row["last_name"],
                patronymic: row["patronymic"], birthDate: row["birth_date"],
                roles: try String.fetchAll(db, sql: "SELECT role FROM user_role WHERE user_id = ? ORDER BY role", arguments: [id]),
                activeRole: row["active_role"], createdAt: row["created_at"], termsVersion: row["terms_version"],
                termsAcceptedAt: row["terms_accepted_at"], locale: row["locale"], timeZone: row["time_zone"])
        }
    }

    /// `auth.user.profile_changed`: what other services may keep of a profile (first
    /// name, birth date, locale, time zone), published on registration and on every
    /// change, so reminders greet on a birthday and stats and savings count days in the
    /// user's zone without asking auth per request.
    static let changedEvent = "auth.user.profile_changed"

    static func publishChange(_ db: Database, userID: String) throws {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT first_name, birth_date, locale, time_zone FROM user WHERE id = ?", arguments: [userID])
        else { return }
        func text(_ column: String) -> JSONValue { (row[column] as String?).map(JSONValue.string) ?? .null }
        try Outbox.append(
            db, type: changedEvent,
            data: [
                "userId": .string(userID), "firstName": text("first_name"), "birthDate": text("birth_date"), "locale": text("locale"),
                "timeZone": text("time_zone"),
            ] as JSONValue)
    }

    /// The user a request is about: the caller, or (admins only) `userId`. Anyone else's
    /// id is `not_found`, so the caller cannot learn which ids exist.
    static func subject(_ context: RequestContext, _ requested: String?, _ db: Database) throws -> String {
        let principal = try context.requirePrincipal()
        guard let requested, requested != principal.userID else { return principal.userID }
        guard principal.has(Role.admin.rawValue),
            try Bool.fetchOne(db, sql: "SELECT 1 FROM user WHERE id = ?", arguments: [requested]) == true
        else { throw ServiceError.notFound("no such user") }
        return requested
    }

    struct GetRequest: Codable, Sendable {
        var userId: String?
    }

    var get: ServiceOperation {
        .read(
            "auth.profile.get", summary: "The caller's profile; admins may name another user.", auth: .authenticated,
            request: .object(["userId": .string(maxLength: 100)]), response: AuthSchemas.profile
        ) { (context, input: GetRequest, db: Database) in
            let id = try Self.subject(context, input.userId, db)
            guard let profile = try Profile.load(db, id: id) else { throw ServiceError.notFound("no such user") }
            return profile
        }
    }

    struct Update: Codable, Sendable {
        var userId: String?
        var firstName: String?
        var lastName: String?
        var patronymic: String?
        var birthDate: String?
        var locale: String?
        var timeZone: String?
    }

    var update: ServiceOperation {
        .write(
            "auth.profile.update",
            summary: "Changes names, birth date, locale or time zone (absent fields stay; null clears patronymic, locale, timeZone); publishes auth.user.profile_changed. Email and phone change with a code (auth.email.change.*, auth.phone.change.*). Admins may name another user.",
            auth: .authenticated,
            request: .object([
                "userId": .string(maxLength: 100), "firstName": AuthSchemas.name, "lastName": AuthSchemas.name,
                "patronymic": AuthSchemas.name.nullable(), "birthDate": AuthSchemas.birthDate,
                "locale": AuthSchemas.locale.nullable(), "timeZone": AuthSchemas.timeZone.nullable(),
            ]),
            response: AuthSchemas.profile
        ) { (context, input: Update, db: Database) in
            let id = try Self.subject(context, input.userId, db)
            if let birthDate = input.birthDate, let problem = ProfileRules.birthDateProblem(birthDate) {
                throw ServiceError.invalid("birthDate", problem)
            }
            if let locale = input.locale, let problem = ProfileRules.localeProblem(locale) { throw ServiceError.invalid("locale", problem) }
            try db.execute(
                sql: """
                    UPDATE user SET first_name = COALESCE(?, first_name), last_name = COALESCE(?, last_name),
                        birth_date = COALESCE(?, birth_date) WHERE id = ?
                    """, arguments: [input.firstName, input.lastName, input.birthDate, id])
            // Absent keeps locale and time zone; null clears them.
            let nullable = [("patronymic", "patronymic"), ("locale", "locale"), ("timeZone", "time_zone")]
            for (field, column) in nullable {
                if let value = context.data[field] {
                    try db.execute(sql: "UPDATE user SET \(column) = ? WHERE id = ?", arguments: [value.stringValue, id])
                }
            }
            let changed = [
                input.firstName.map { _ in "firstName" }, input.lastName.map { _ in "lastName" }, input.birthDate.map { _ in "birthDate" },
            ].compactMap { $0 } + nullable.map(\.0).filter { context.data[$0] != nil }
            if !changed.isEmpty { try Self.publishChange(db, userID: id) }
            try AuditLog.record(
                db, .profileUpdated, user: id, actor: try context.requirePrincipal().userID,
                detail: ["fields": .array(changed.map { .string($0) })], client: context.clientAddress)
            guard let profile = try Profile.load(db, id: id) else { throw ServiceError.notFound("no such user") }
            return profile
        }
    }
}

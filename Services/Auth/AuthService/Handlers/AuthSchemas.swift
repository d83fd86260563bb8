import Platform

/// Schemas shared by auth's operations.
enum AuthSchemas {
    static let name = JSONSchema.name(maxLength: 100)
    static let email = JSONSchema.string(minLength: 3, maxLength: 254, format: .email)
    static let password = JSONSchema.string(minLength: 1, maxLength: 1_000)
        .described("8 to 128 printable characters")
    static let birthDate = JSONSchema.string(format: .date).described("YYYY-MM-DD, not in the future")
    static let phone = JSONSchema.string(format: .e164)
    static let role = JSONSchema.oneOf(Role.allCases.map(\.rawValue))
    static let locale = JSONSchema.string(minLength: 2, maxLength: 35).described("a BCP 47 language tag: ru, ru-RU, en-GB")
    static let timeZone = JSONSchema.string(format: .timeZone).described("an IANA time zone: Europe/Minsk")

    static let account = JSONSchema.object(
        ["id": .string(), "roles": .array(of: role), "activeRole": role.nullable()], required: ["id", "roles"])

    static let tokens = JSONSchema.object(
        [
            "accessToken": .string().described("JWT, EdDSA (Ed25519), 5 minutes"),
            "accessTokenExpiresAt": .string(format: .dateTime),
            "refreshToken": .string().described("opaque, single use: refresh returns a new one"),
            "sessionId": .string(), "user": account,
        ], required: ["accessToken", "accessTokenExpiresAt", "refreshToken", "sessionId", "user"])

    static let profile = JSONSchema.object(
        [
            "id": .string(), "email": .string().nullable(), "phone": .string().nullable(), "firstName": .string(),
            "lastName": .string(), "patronymic": .string().nullable(), "birthDate": .string(format: .date).nullable(),
            "roles": .array(of: role), "activeRole": role.nullable(), "createdAt": .string(format: .dateTime),
            "termsVersion": .string().nullable(), "termsAcceptedAt": .string().nullable(), "locale": locale.nullable(),
            "timeZone": timeZone.nullable(),
        ], required: ["id", "firstName", "lastName", "roles", "createdAt"])

    /// `{"limit": 1..200, "cursor": "..."}`.
    static let page: [String: JSONSchema] = [
        "limit": .integer(minimum: 1, maximum: 200).described("default 50"), "cursor": .string(maxLength: 100),
    ]
}

/// Rules a schema cannot express, shared by registration and profile updates.
enum ProfileRules {
    /// The problem with a birth date, given it has the date format.
    static func birthDateProblem(_ text: String, today: String = String(Instant.format(.now).prefix(10))) -> String? {
        if text > today { return "must not be in the future" }
        if text < "1900-01-01" { return "must be after 1900-01-01" }
        return nil
    }

    /// The problem with a language tag: a 2-3 letter language, then subtags of 2-8
    /// letters or digits (`ru`, `ru-RU`, `sr-Latn-RS`).
    static func localeProblem(_ text: String) -> String? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let language = parts.first, (2...3).contains(language.count), language.utf8.allSatisfy({ $0 >= 97 && $0 <= 122 }),
            parts.dropFirst().allSatisfy({ (2...8).contains($0.count) && $0.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) } })
        else { return "not a BCP 47 language tag (ru, ru-RU)" }
        return nil
    }
}

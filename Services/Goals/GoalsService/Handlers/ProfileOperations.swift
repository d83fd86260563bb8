import Foundation
import GRDB
import Platform

/// A recipient's fitness profile (3.5.1): stored in SI, shown in both unit systems with the
/// body-mass index and its WHO category.
struct RecipientProfile: Codable, Sendable {
    struct Length: Codable, Sendable {
        var millimetres: Int
        var centimetres: Double
        var inches: Double
    }

    struct Mass: Codable, Sendable {
        var grams: Int
        var kilograms: Double
        var pounds: Double
    }

    struct Index: Codable, Sendable {
        var value: Double
        var category: String
    }

    var age: Int?
    var height: Length?
    var weight: Mass?
    var sex: String?
    var figure: String?
    var bodyType: String?
    var shape: String?
    var units: String
    var bmi: Index?
    var updatedAt: String

    init(row: Row) {
        age = row["age"]
        let height = (row["height_mm"] as Int?).flatMap(Height.init(millimetres:))
        let weight = (row["weight_g"] as Int?).flatMap(Weight.init(grams:))
        self.height = height.map { Length(millimetres: $0.millimetres, centimetres: $0.centimetres, inches: $0.inches) }
        self.weight = weight.map { Mass(grams: $0.grams, kilograms: $0.kilograms, pounds: $0.pounds) }
        if let height, let weight {
            let index = BodyMassIndex(weight: weight, height: height)
            bmi = Index(value: index.value, category: index.category.rawValue)
        }
        sex = row["sex"]
        figure = row["figure_id"]
        bodyType = row["body_type"]
        shape = row["shape_id"]
        units = row["units"]
        updatedAt = row["updated_at"]
    }

    static let schema = JSONSchema.object(
        [
            "age": .integer(minimum: 1, maximum: 150),
            "height": .object(["millimetres": .integer(), "centimetres": .number, "inches": .number], required: ["millimetres", "centimetres", "inches"]),
            "weight": .object(["grams": .integer(), "kilograms": .number, "pounds": .number], required: ["grams", "kilograms", "pounds"]),
            "sex": .oneOf(["male", "female"]), "figure": .string(), "bodyType": .oneOf(["asthenic", "normosthenic", "hypersthenic"]),
            "shape": .string(), "units": JSONSchema.oneOf(["metric", "imperial"]).described("how the app shows height and weight"),
            "bmi": JSONSchema.object(
                ["value": .number, "category": .oneOf(BodyMassIndex.Category.allCases.map(\.rawValue))], required: ["value", "category"]
            ).described("weight / height²; the category is WHO's adult classification (beyond the spec)"),
            "updatedAt": .string(format: .dateTime),
        ], required: ["units", "updatedAt"])
}

/// Profiles: the recipient's (saved per tab: Personal, Figure, ExtraPounds) and the
/// sponsor's (type and group, 3.5.2); the sponsor directory recipients pick from (3.4).
struct ProfileOperations: Sendable {
    var all: [ServiceOperation] { [recipientGet, recipientSave, sponsorGet, sponsorSave, sponsors] }

    // MARK: Recipient

    var recipientGet: ServiceOperation {
        .read(
            "goals.profile.get", summary: "The caller's fitness profile (null until first saved).", auth: GoalOperations.recipient, request: .empty,
            response: .object(["profile": RecipientProfile.schema.nullable()], required: ["profile"])
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM recipient_profile WHERE user_id = ?"), arguments: [try context.requirePrincipal().userID])
            return ["profile": try row.map { try WireJSON.value(of: RecipientProfile(row: $0)) } ?? .null]
        }
    }

    struct Measure<Unit: Codable & Sendable>: Codable, Sendable {
        var value: Double
        var unit: Unit
    }

    struct SaveRequest: Codable, Sendable {
        struct Personal: Codable, Sendable {
            var age: Int?
            var height: Measure<Height.Unit>?
            var weight: Measure<Weight.Unit>?
            var sex: String?
            var units: String?
        }

        struct Figure: Codable, Sendable {
            var figure: String?
            var bodyType: String?
        }

        struct ExtraPounds: Codable, Sendable {
            var shape: String?
        }

        var personal: Personal?
        var figure: Figure?
        var extraPounds: ExtraPounds?
    }

    static func measure(_ units: [String]) -> JSONSchema {
        .object(["value": .number, "unit": .oneOf(units)], required: ["value", "unit"])
    }

    var recipientSave: ServiceOperation {
        .write(
            "goals.profile.save",
            summary: "Saves one or more tabs of the caller's fitness profile (each tab's SAVE): `personal` (age, a natural number; height in cm, m or in; weight in kg or lb; sex; the units the app shows), `figure` (figure type from goals.body_options for the caller's sex, and body type), `extraPounds` (body shape from goals.body_options). Stored in SI (millimetres, grams); each field is checked on its own and named in validation_failed. Answers the profile with the BMI.",
            auth: GoalOperations.recipient,
            request: .object([
                "personal": .object([
                    "age": .integer(minimum: 1, maximum: 150), "height": Self.measure(Height.Unit.allCases.map(\.rawValue)),
                    "weight": Self.measure(Weight.Unit.allCases.map(\.rawValue)), "sex": .oneOf(["male", "female"]), "units": .oneOf(["metric", "imperial"]),
                ]),
                "figure": .object(["figure": .string(minLength: 1, maxLength: 100), "bodyType": .oneOf(["asthenic", "normosthenic", "hypersthenic"])]),
                "extraPounds": .object(["shape": .string(minLength: 1, maxLength: 100)]),
            ]),
            response: RecipientProfile.schema
        ) { (context, input: SaveRequest, db: Database) -> RecipientProfile in
            let user = try context.requirePrincipal().userID
            guard input.personal != nil || input.figure != nil || input.extraPounds != nil else {
                throw ServiceError.invalid("data", "give personal, figure or extraPounds")
            }
            var problems: [String: String] = [:]
            var height: Height?, weight: Weight?
            if let value = input.personal?.height {
                height = Height(value.value, value.unit)
                if height == nil { problems["personal.height.value"] = "must be between 50 and 272 cm" }
            }
            if let value = input.personal?.weight {
                weight = Weight(value.value, value.unit)
                if weight == nil { problems["personal.weight.value"] = "must be between 2 and 650 kg" }
            }
            let existing = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM recipient_profile WHERE user_id = ?"), arguments: [user])
            let sex = input.personal?.sex ?? existing?["sex"]
            func option(_ id: String?, kind: String, field: String) throws {
                guard let id else { return }
                guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT sex FROM body_option WHERE id = ? AND kind = ? AND active = 1"), arguments: [id, kind])
                else {
                    problems[field] = "no such \(kind) option"
                    return
                }
                if let sex, (row["sex"] as String) != sex { problems[field] = "is an option for \(row["sex"] as String)s; choose one for your sex" }
            }
            try option(input.figure?.figure, kind: "figure", field: "figure.figure")
            try option(input.extraPounds?.shape, kind: "shape", field: "extraPounds.shape")
            guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
            let now = Instant.format(context.receivedAt)
            if existing == nil {
                try db.cachedStatement(sql: "INSERT INTO recipient_profile (user_id, updated_at, change_version) VALUES (?, ?, 0)").execute(arguments: [user, now])
            }
            try db.cachedStatement(sql: """
                    UPDATE recipient_profile SET age = COALESCE(?, age), height_mm = COALESCE(?, height_mm), weight_g = COALESCE(?, weight_g),
                        sex = COALESCE(?, sex), units = COALESCE(?, units), figure_id = COALESCE(?, figure_id), body_type = COALESCE(?, body_type),
                        shape_id = COALESCE(?, shape_id), updated_at = ?, change_version = ?
                    WHERE user_id = ?
                    """).execute(arguments: [
                    input.personal?.age, height?.millimetres, weight?.grams, input.personal?.sex, input.personal?.units, input.figure?.figure,
                    input.figure?.bodyType, input.extraPounds?.shape, now, try ChangeFeed.stamp(db), user,
                ])
            // A change of sex lets go of figure and shape options drawn for the other sex.
            try db.cachedStatement(
                sql: """
                    UPDATE recipient_profile SET
                        figure_id = CASE WHEN (SELECT sex FROM body_option WHERE id = figure_id) IS NOT sex THEN NULL ELSE figure_id END,
                        shape_id = CASE WHEN (SELECT sex FROM body_option WHERE id = shape_id) IS NOT sex THEN NULL ELSE shape_id END
                    WHERE user_id = ? AND sex IS NOT NULL
                    """
            ).execute(arguments: [user])
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM recipient_profile WHERE user_id = ?"), arguments: [user]) else {
                throw ServiceError.internal(ref: context.requestID)
            }
            return RecipientProfile(row: row)
        }
    }

    // MARK: Sponsor

    static let sponsorSchema = JSONSchema.object(
        [
            "id": .string(), "name": .string(), "kind": .oneOf(["insurer", "employer", "person"]), "group": TypeRef.schema,
            "avatar": JSONSchema.string().nullable(), "about": JSONSchema.text().nullable(),
        ], required: ["id", "name", "kind", "group", "avatar", "about"])

    static func sponsorView(_ db: Database, _ row: Row) throws -> JSONValue {
        let group = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, title, icon_id FROM sponsor_group WHERE id = ?"), arguments: [row["group_id"] as String])
        return [
            "id": .string(row["user_id"]), "name": .string(row["display_name"]), "kind": .string(row["kind"]),
            "group": try WireJSON.value(of: TypeRef(id: row["group_id"], title: group?["title"] ?? "", icon: group?["icon_id"])),
            "avatar": (row["avatar_id"] as String?).map(JSONValue.string) ?? .null, "about": (row["about"] as String?).map(JSONValue.string) ?? .null,
        ]
    }

    var sponsorGet: ServiceOperation {
        .read(
            "goals.sponsor.profile.get", summary: "The caller's sponsor profile (null until saved: until then recipients cannot find them).",
            auth: GoalOperations.sponsor, request: .empty, response: .object(["profile": Self.sponsorSchema.nullable()], required: ["profile"])
        ) { (context, _: Empty, db: Database) -> JSONValue in
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM sponsor_profile WHERE user_id = ?"), arguments: [try context.requirePrincipal().userID])
            return ["profile": try row.map { try Self.sponsorView(db, $0) } ?? .null]
        }
    }

    struct SponsorSaveRequest: Codable, Sendable {
        var name: String
        var kind: String
        var group: String
        var avatar: String?
        var about: String?
    }

    var sponsorSave: ServiceOperation {
        .write(
            "goals.sponsor.profile.save",
            summary: "Saves the caller's sponsor profile (3.5.2): the name recipients see, the type (insurer, employer, person), the sponsor group, an avatar (an id from goals.media.put; null clears it) and a short text. Saved, the caller is listed in the group for recipients to pick.",
            auth: GoalOperations.sponsor,
            request: .object(
                [
                    "name": .string(minLength: 1, maxLength: 100), "kind": .oneOf(["insurer", "employer", "person"]),
                    "group": .string(minLength: 1, maxLength: 100), "avatar": JSONSchema.string(minLength: 1, maxLength: 100).nullable(),
                    "about": JSONSchema.text(maxLength: 1_000).nullable(),
                ], required: ["name", "kind", "group"]),
            response: Self.sponsorSchema
        ) { (context, input: SponsorSaveRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            guard !input.name.trimmingCharacters(in: .whitespaces).isEmpty else { throw ServiceError.invalid("name", "must not be blank") }
            // A retired group takes no new sponsors; its members may still save their profile.
            guard try Bool.fetchOne(
                db.cachedStatement(
                    sql: "SELECT 1 FROM sponsor_group WHERE id = ? AND (active = 1 OR id = (SELECT group_id FROM sponsor_profile WHERE user_id = ?))"),
                arguments: [input.group, user]) == true
            else {
                throw ServiceError.invalid("group", "no such sponsor group")
            }
            let current = try String.fetchOne(db.cachedStatement(sql: "SELECT avatar_id FROM sponsor_profile WHERE user_id = ?"), arguments: [user])
            try MediaCatalog.replace(
                db, owner: "sponsor:\(user)", current, with: input.avatar, field: "avatar", store: try context.mediaStore(), uploadedBy: user)
            let now = Instant.format(context.receivedAt)
            try db.cachedStatement(sql: """
                    INSERT INTO sponsor_profile (user_id, display_name, kind, group_id, avatar_id, about, updated_at, change_version)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, kind = excluded.kind, group_id = excluded.group_id,
                        avatar_id = excluded.avatar_id, about = excluded.about, updated_at = excluded.updated_at, change_version = excluded.change_version
                    """).execute(arguments: [user, input.name, input.kind, input.group, input.avatar, input.about, now, try ChangeFeed.stamp(db)])
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM sponsor_profile WHERE user_id = ?"), arguments: [user]) else {
                throw ServiceError.internal(ref: context.requestID)
            }
            return try Self.sponsorView(db, row)
        }
    }

    struct SponsorsRequest: Codable, Sendable {
        var group: String
        var after: String?
        var limit: Int?
    }

    var sponsors: ServiceOperation {
        .read(
            "goals.sponsors",
            summary: "The sponsors of a group for the recipient to scroll (◀ ▶) and pick: name, type, avatar, by name; paged with `after` (the last sponsor id seen).",
            auth: .authenticated,
            request: .object(
                ["group": .string(minLength: 1, maxLength: 100), "after": .string(minLength: 1, maxLength: 100), "limit": .integer(minimum: 1, maximum: 100)],
                required: ["group"]),
            response: .object(["sponsors": .array(of: Self.sponsorSchema), "more": .boolean], required: ["sponsors", "more"])
        ) { (context, input: SponsorsRequest, db: Database) -> JSONValue in
            _ = try context.requirePrincipal()
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sponsor_group WHERE id = ? AND active = 1"), arguments: [input.group]) == true else {
                throw ServiceError.notFound("no such sponsor group")
            }
            var after: (String, String)? = nil
            if let id = input.after {
                guard let name = try String.fetchOne(db.cachedStatement(sql: "SELECT display_name FROM sponsor_profile WHERE user_id = ? AND group_id = ?"), arguments: [id, input.group])
                else { throw ServiceError.invalid("after", "not a sponsor of this group") }
                after = (name, id)
            }
            let limit = input.limit ?? 20
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT * FROM sponsor_profile WHERE group_id = ? AND (? IS NULL OR (display_name, user_id) > (?, ?))
                    ORDER BY display_name, user_id LIMIT ?
                    """), arguments: [input.group, after?.0, after?.0, after?.1, limit + 1])
            return ["sponsors": .array(try rows.prefix(limit).map { try Self.sponsorView(db, $0) }), "more": .bool(rows.count > limit)]
        }
    }
}

import Foundation
import GRDB
import Platform

/// The exercise catalog (read by every signed-in user, written by admins) and the
/// motivational slogans of Home.
struct CatalogOperations: Sendable {
    static let admin = AuthRule.anyRole(["admin"])

    var all: [ServiceOperation] { [list, get, save, slogan, slogans, saveSlogan] }

    static let exerciseSchema = JSONSchema.object(
        [
            "id": .string(), "name": .string(), "names": .object(["de": .string(), "en": .string()], required: ["de", "en"]),
            "bodyPart": .oneOf(BodyPart.allCases.map(\.rawValue)), "motorAbility": .oneOf(MotorAbility.allCases.map(\.rawValue)),
            "baseRepetitions": .object(
                ["beginner": .integer(minimum: 1), "intermediate": .integer(minimum: 1), "advanced": .integer(minimum: 1)],
                required: ["beginner", "intermediate", "advanced"]),
            "imageId": JSONSchema.string().nullable().described("the instruction graphic (stats.media.get)"),
            "videoUrl": JSONSchema.string().nullable().described("a training video hosted elsewhere"), "active": .boolean,
        ], required: ["id", "name", "names", "bodyPart", "motorAbility", "baseRepetitions", "imageId", "videoUrl", "active"])

    /// An exercise on the wire, named in `language` (`de`, else English).
    static func view(_ exercise: Exercise, language: String?) -> JSONValue {
        [
            "id": .string(exercise.id), "name": .string(exercise.name.text(language)),
            "names": ["de": .string(exercise.name.de), "en": .string(exercise.name.en)], "bodyPart": .string(exercise.bodyPart.rawValue),
            "motorAbility": .string(exercise.motorAbility.rawValue),
            "baseRepetitions": [
                "beginner": .integer(Int64(exercise.baseRepetitions.beginner)), "intermediate": .integer(Int64(exercise.baseRepetitions.intermediate)),
                "advanced": .integer(Int64(exercise.baseRepetitions.advanced)),
            ],
            "imageId": exercise.imageID.map(JSONValue.string) ?? .null, "videoUrl": exercise.videoURL.map(JSONValue.string) ?? .null,
            "active": .bool(exercise.active),
        ]
    }

    struct ListRequest: Codable, Sendable {
        var bodyPart: BodyPart?
        var motorAbility: MotorAbility?
        var includeWithdrawn: Bool?
    }

    var list: ServiceOperation {
        .read(
            "stats.exercises.list",
            summary: "The exercise catalog in its order, named in the caller's language (preferences; `de` or English): body part, motor ability, base repetitions per level (seconds for held exercises), the instruction image and video link. Filters: `bodyPart`, `motorAbility`; withdrawn ones only for admins with `includeWithdrawn`.",
            auth: .authenticated,
            request: .object([
                "bodyPart": .oneOf(BodyPart.allCases.map(\.rawValue)), "motorAbility": .oneOf(MotorAbility.allCases.map(\.rawValue)),
                "includeWithdrawn": .boolean,
            ]),
            response: .object(["items": .array(of: Self.exerciseSchema)], required: ["items"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            let principal = try context.requirePrincipal()
            let withdrawn = input.includeWithdrawn == true && principal.roles.contains("admin")
            let language = try UserPreferences.load(db, user: principal.userID).language
            let items = try ExerciseRecords.all(db, activeOnly: !withdrawn).filter { exercise in
                input.bodyPart.map { exercise.bodyPart == $0 } ?? true
            }.filter { exercise in
                input.motorAbility.map { exercise.motorAbility == $0 } ?? true
            }
            return ["items": .array(items.map { Self.view($0, language: language) })]
        }
    }

    struct IDRequest: Codable, Sendable {
        var id: String
    }

    var get: ServiceOperation {
        .read(
            "stats.exercises.get", summary: "One exercise of the catalog (withdrawn ones too: past workouts name them).", auth: .authenticated,
            request: .object(["id": .string(minLength: 1, maxLength: 100)], required: ["id"]), response: Self.exerciseSchema
        ) { (context, input: IDRequest, db: Database) -> JSONValue in
            let principal = try context.requirePrincipal()
            guard let exercise = try ExerciseRecords.find(db, id: input.id) else { throw ServiceError.notFound("no such exercise") }
            return Self.view(exercise, language: try UserPreferences.load(db, user: principal.userID).language)
        }
    }

    struct SaveRequest: Codable, Sendable {
        var id: String
        var nameDe: String
        var nameEn: String
        var bodyPart: BodyPart
        var motorAbility: MotorAbility
        var beginner: Int
        var intermediate: Int
        var advanced: Int
        var imageId: String?
        var videoUrl: String?
        var active: Bool?
        var position: Int?
    }

    var save: ServiceOperation {
        .write(
            "stats.admin.exercises.save",
            summary: "An admin adds or changes an exercise (by its slug id): names in German and English, body part, motor ability, base repetitions per level (non-decreasing), an instruction image (stats.media.put), a video link (https, hosted elsewhere), `active: false` to withdraw it (past workouts keep it).",
            auth: Self.admin,
            request: .object(
                [
                    "id": .string(minLength: 2, maxLength: 60, format: .key), "nameDe": .name(maxLength: 100), "nameEn": .name(maxLength: 100),
                    "bodyPart": .oneOf(BodyPart.allCases.map(\.rawValue)), "motorAbility": .oneOf(MotorAbility.allCases.map(\.rawValue)),
                    "beginner": .integer(minimum: 1, maximum: 500), "intermediate": .integer(minimum: 1, maximum: 500),
                    "advanced": .integer(minimum: 1, maximum: 500), "imageId": JSONSchema.string(minLength: 1, maxLength: 100).nullable(),
                    "videoUrl": JSONSchema.string(minLength: 12, maxLength: 500).nullable().described("https only"), "active": .boolean,
                    "position": .integer(minimum: 0, maximum: 10_000),
                ], required: ["id", "nameDe", "nameEn", "bodyPart", "motorAbility", "beginner", "intermediate", "advanced"]),
            response: Self.exerciseSchema
        ) { (context, input: SaveRequest, db: Database) -> JSONValue in
            _ = try context.requirePrincipal()
            guard input.beginner <= input.intermediate, input.intermediate <= input.advanced else {
                throw ServiceError.invalid("intermediate", "base repetitions must not fall from beginner to intermediate to advanced")
            }
            if let url = input.videoUrl, !url.hasPrefix("https://") || url.contains(where: \.isWhitespace) {
                throw ServiceError.invalid("videoUrl", "an https link without spaces")
            }
            let previous = try ExerciseRecords.find(db, id: input.id)
            try MediaCatalog.replace(db, owner: "exercise:\(input.id)", previous?.imageID, with: input.imageId, field: "imageId", store: try context.mediaStore())
            let exercise = Exercise(
                id: input.id, name: LocalizedName(de: input.nameDe, en: input.nameEn), bodyPart: input.bodyPart, motorAbility: input.motorAbility,
                baseRepetitions: BaseRepetitions(beginner: input.beginner, intermediate: input.intermediate, advanced: input.advanced),
                imageID: input.imageId, videoURL: input.videoUrl, active: input.active ?? true)
            let stored = try Int.fetchOne(db, sql: "SELECT position FROM exercise WHERE id = ?", arguments: [input.id])
            let position = try input.position ?? stored ?? Int.fetchOne(db, sql: "SELECT COALESCE(MAX(position), -1) + 1 FROM exercise") ?? 0
            try ExerciseRecords.save(db, exercise, position: position, now: Instant.format(context.receivedAt))
            return Self.view(exercise, language: nil)
        }
    }

    struct SloganRequest: Codable, Sendable {
        var language: String?
    }

    var slogan: ServiceOperation {
        .read(
            "stats.slogan",
            summary: "A motivational slogan for Home, picked at random from the admin-managed list in `language` (default the caller's, else German; English when there is none in that language).",
            auth: .authenticated, request: .object(["language": .string(minLength: 2, maxLength: 8)]),
            response: .object(["text": JSONSchema.string().nullable(), "language": .string()], required: ["text", "language"])
        ) { (context, input: SloganRequest, db: Database) -> JSONValue in
            let principal = try context.requirePrincipal()
            let preferred = try UserPreferences.load(db, user: principal.userID).language
            let wanted = input.language ?? preferred ?? "de"
            for language in [wanted, "en"] {
                let texts = try String.fetchAll(
                    db.cachedStatement(sql: "SELECT text FROM slogan WHERE language = ? AND active = 1 ORDER BY id"), arguments: [language])
                if let text = texts.randomElement() { return ["text": .string(text), "language": .string(language)] }
            }
            return ["text": .null, "language": .string(wanted)]
        }
    }

    static let sloganSchema = JSONSchema.object(
        ["id": .integer(), "language": .string(), "text": .string(), "active": .boolean], required: ["id", "language", "text", "active"])

    var slogans: ServiceOperation {
        .read(
            "stats.admin.slogans.list", summary: "Every slogan, withdrawn ones too, for admins.", auth: Self.admin, request: .empty,
            response: .object(["items": .array(of: Self.sloganSchema)], required: ["items"])
        ) { (_, _: Empty, db: Database) -> JSONValue in
            let rows = try Row.fetchAll(db, sql: "SELECT id, language, text, active FROM slogan ORDER BY language, id")
            return ["items": .array(rows.map { ["id": .integer($0[0]), "language": .string($0[1]), "text": .string($0[2]), "active": .bool($0[3])] })]
        }
    }

    struct SaveSloganRequest: Codable, Sendable {
        var id: Int64?
        var language: String
        var text: String
        var active: Bool?
    }

    var saveSlogan: ServiceOperation {
        .write(
            "stats.admin.slogans.save", summary: "An admin adds a slogan (no `id`) or changes one; `active: false` withdraws it.", auth: Self.admin,
            request: .object(
                [
                    "id": .integer(minimum: 1), "language": .string(minLength: 2, maxLength: 2, format: .key).described("two lowercase letters: de, en, ru"),
                    "text": .name(maxLength: 200), "active": .boolean,
                ], required: ["language", "text"]),
            response: Self.sloganSchema
        ) { (context, input: SaveSloganRequest, db: Database) -> JSONValue in
            _ = try context.requirePrincipal()
            let active = input.active ?? true
            var id = input.id ?? 0
            if let existing = input.id {
                try db.execute(sql: "UPDATE slogan SET language = ?, text = ?, active = ? WHERE id = ?", arguments: [input.language, input.text, active, existing])
                guard db.changesCount == 1 else { throw ServiceError.notFound("no such slogan") }
            } else {
                try db.execute(sql: "INSERT INTO slogan (language, text, active) VALUES (?, ?, ?)", arguments: [input.language, input.text, active])
                id = db.lastInsertedRowID
            }
            return ["id": .integer(id), "language": .string(input.language), "text": .string(input.text), "active": .bool(active)]
        }
    }
}

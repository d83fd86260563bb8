import Foundation
import GRDB
import Platform

/// The content admins manage (section 9) and apps download weekly (7.1): goal types with
/// their versioned settings forms, sponsor groups, the illustrated body options, the texts
/// of pop-up and information windows by locale, and the two questionnaires. Every change
/// bumps the content version (`goals.content`) and is logged with the admin.
struct CatalogOperations: Sendable {
    var all: [ServiceOperation] {
        [types, typeForm, groups, bodyOptions, texts, content, saveType, retire("types", table: "goal_type"), saveGroup, retire("groups", table: "sponsor_group"),
         saveBodyOption, retire("body_options", table: "body_option"), setText, setQuestionnaire]
    }

    static let formSchema = JSONSchema.object(
        [
            "info": JSONSchema.text(maxLength: 4_000).nullable(),
            "fields": .array(
                of: .object(
                    [
                        "key": .string(minLength: 1, maxLength: 40), "kind": .oneOf(GoalForm.Kind.allCases.map(\.rawValue)),
                        "label": .string(minLength: 1, maxLength: 200), "help": JSONSchema.text(maxLength: 1_000).nullable(), "required": .boolean,
                        "options": JSONSchema.array(
                            of: .object(["value": .string(minLength: 1, maxLength: 60), "label": .string(minLength: 1, maxLength: 200)], required: ["value", "label"]),
                            maxItems: GoalForm.maxOptions
                        ).nullable(),
                        "minimum": JSONSchema.integer(minimum: 1).nullable(), "maximum": JSONSchema.integer(minimum: 1).nullable(),
                        "maxLength": JSONSchema.integer(minimum: 1, maximum: Int64(GoalForm.maxTextLength)).nullable(),
                    ], required: ["key", "kind", "label", "required"]), maxItems: GoalForm.maxFields),
        ], required: ["fields"])

    static let typeSchema = JSONSchema.object(
        [
            "id": .string(), "title": .string(), "icon": JSONSchema.string().nullable(), "active": .boolean, "formVersion": .integer(minimum: 1),
            "form": Self.formSchema,
        ], required: ["id", "title", "icon", "active", "formVersion", "form"])
    static let groupSchema = JSONSchema.object(
        ["id": .string(), "title": .string(), "icon": JSONSchema.string().nullable(), "active": .boolean], required: ["id", "title", "icon", "active"])
    static let bodyOptionSchema = JSONSchema.object(
        [
            "id": .string(), "kind": .oneOf(["figure", "shape"]), "sex": .oneOf(["male", "female"]), "title": .string(),
            "image": JSONSchema.string().nullable(), "active": .boolean,
        ], required: ["id", "kind", "sex", "title", "image", "active"])
    static let questionSchema = JSONSchema.object(
        [
            "id": .string(), "text": .text(), "section": JSONSchema.oneOf(["work_days", "weekend_days"]).nullable(),
            "options": .array(of: .object(["value": .string(), "label": .string()], required: ["value", "label"])),
        ], required: ["id", "text", "options"])

    // MARK: Loading

    static func typeList(_ db: Database, includeRetired: Bool) throws -> [JSONValue] {
        try Row.fetchAll(db.cachedStatement(sql: """
                SELECT t.*, f.form FROM goal_type t JOIN goal_type_form f ON f.type_id = t.id AND f.version = t.form_version
                WHERE ? OR t.active = 1 ORDER BY t.position, t.id
                """), arguments: [includeRetired]
        ).map { row in
            [
                "id": .string(row["id"]), "title": .string(row["title"]), "icon": (row["icon_id"] as String?).map(JSONValue.string) ?? .null,
                "active": .bool(row["active"]), "formVersion": .integer(row["form_version"]), "form": try JSONParser.parse(Data((row["form"] as String).utf8)),
            ]
        }
    }

    static func groupList(_ db: Database, includeRetired: Bool) throws -> [JSONValue] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM sponsor_group WHERE ? OR active = 1 ORDER BY position, id"), arguments: [includeRetired]).map { row in
            [
                "id": .string(row["id"]), "title": .string(row["title"]), "icon": (row["icon_id"] as String?).map(JSONValue.string) ?? .null,
                "active": .bool(row["active"]),
            ]
        }
    }

    static func bodyOptionList(_ db: Database, sex: String?, includeRetired: Bool) throws -> [JSONValue] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM body_option WHERE (? IS NULL OR sex = ?) AND (? OR active = 1) ORDER BY kind, sex, position, id"),
            arguments: [sex, sex, includeRetired]
        ).map { row in
            [
                "id": .string(row["id"]), "kind": .string(row["kind"]), "sex": .string(row["sex"]), "title": .string(row["title"]),
                "image": (row["image_id"] as String?).map(JSONValue.string) ?? .null, "active": .bool(row["active"]),
            ]
        }
    }

    /// Texts of `locale`, each key falling back to English (section 5.4: English now,
    /// Spanish to follow).
    static func textMap(_ db: Database, locale: String) throws -> JSONValue {
        var texts: [String: JSONValue] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT key, locale, text FROM text_entry WHERE locale IN ('en', ?) ORDER BY locale = ?"), arguments: [locale, locale]) {
            texts[row["key"]] = .string(row["text"])
        }
        return .object(texts)
    }

    static func questionnaire(_ db: Database, _ name: String) throws -> Questionnaire {
        Questionnaire(
            questions: try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM question WHERE questionnaire = ? AND active = 1 ORDER BY position, id"), arguments: [name]
            ).map { row in
                Questionnaire.Question(
                    id: row["id"], text: row["text"], section: row["section"],
                    options: try WireJSON.decode([GoalForm.Option].self, from: Data((row["options"] as String).utf8)))
            })
    }

    static func isAdmin(_ context: RequestContext) -> Bool { context.principal.map(GoalAccess.isAdmin) ?? false }

    // MARK: Reading

    struct ListRequest: Codable, Sendable {
        var includeRetired: Bool?
        var sex: String?
    }

    var types: ServiceOperation {
        .read(
            "goals.types",
            summary: "The goal types on offer (3.3) with their icons and current settings forms; admins may ask `includeRetired`.",
            auth: .authenticated, request: .object(["includeRetired": .boolean]),
            response: .object(["types": .array(of: Self.typeSchema)], required: ["types"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            ["types": .array(try Self.typeList(db, includeRetired: input.includeRetired == true && Self.isAdmin(context)))]
        }
    }

    struct FormRequest: Codable, Sendable {
        var type: String
        var version: Int
    }

    var typeForm: ServiceOperation {
        .read(
            "goals.types.form",
            summary: "One version of a goal type's settings form (a goal keeps the version it was created with; retired types stay readable).",
            auth: .authenticated, request: .object(["type": GoalOperations.id, "version": .integer(minimum: 1)], required: ["type", "version"]),
            response: Self.formSchema
        ) { (_, input: FormRequest, db: Database) -> GoalForm in
            guard let form = try GoalTypeRow.form(db, type: input.type, version: input.version) else { throw ServiceError.notFound("no such form") }
            return form
        }
    }

    var groups: ServiceOperation {
        .read(
            "goals.sponsor_groups", summary: "The sponsor groups (3.4) with their title icons; admins may ask `includeRetired`.",
            auth: .authenticated, request: .object(["includeRetired": .boolean]),
            response: .object(["groups": .array(of: Self.groupSchema)], required: ["groups"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            ["groups": .array(try Self.groupList(db, includeRetired: input.includeRetired == true && Self.isAdmin(context)))]
        }
    }

    var bodyOptions: ServiceOperation {
        .read(
            "goals.body_options",
            summary: "The illustrated options of the profile's Figure (figure types) and ExtraPounds (body shapes) tabs, different for men and women; `sex` filters.",
            auth: .authenticated, request: .object(["sex": .oneOf(["male", "female"]), "includeRetired": .boolean]),
            response: .object(["options": .array(of: Self.bodyOptionSchema)], required: ["options"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            ["options": .array(try Self.bodyOptionList(db, sex: input.sex, includeRetired: input.includeRetired == true && Self.isAdmin(context)))]
        }
    }

    struct TextsRequest: Codable, Sendable {
        var locale: String?
    }

    static let locale = JSONSchema.string(minLength: 2, maxLength: 10).described("a language tag, e.g. en, es")

    var texts: ServiceOperation {
        .read(
            "goals.texts", summary: "The texts of pop-up and information windows by key, in `locale` (default en; a key missing there comes in English).",
            auth: .public, request: .object(["locale": Self.locale]),
            response: .object(["locale": .string(), "texts": .object([:], additional: .text())], required: ["locale", "texts"])
        ) { (_, input: TextsRequest, db: Database) -> JSONValue in
            let locale = input.locale ?? "en"
            return ["locale": .string(locale), "texts": try Self.textMap(db, locale: locale)]
        }
    }

    struct ContentRequest: Codable, Sendable {
        var version: Int64?
        var locale: String?
    }

    var content: ServiceOperation {
        .read(
            "goals.content",
            summary: "Everything admins write that the app keeps offline (types, groups, body options, texts, questionnaires) with its version. Send the version you hold: when nothing changed the answer is `changed: false` without the content, so a weekly refresh costs one small reply.",
            auth: .authenticated, request: .object(["version": .integer(minimum: 0), "locale": Self.locale]),
            response: .object(
                [
                    "version": .integer(minimum: 1), "changed": .boolean,
                    "content": .object(
                        [
                            "types": .array(of: Self.typeSchema), "groups": .array(of: Self.groupSchema), "bodyOptions": .array(of: Self.bodyOptionSchema),
                            "texts": .object([:], additional: .text()), "questionnaires": .object([:], additional: .array(of: Self.questionSchema)),
                        ], required: ["types", "groups", "bodyOptions", "texts", "questionnaires"]),
                ], required: ["version", "changed"])
        ) { (_, input: ContentRequest, db: Database) -> JSONValue in
            let version = try Int64.fetchOne(db.cachedStatement(sql: "SELECT version FROM content_state WHERE id = 1")) ?? 1
            guard input.version != version else { return ["version": .integer(version), "changed": false] }
            var questionnaires: [String: JSONValue] = [:]
            for name in ["recommendations", "nutrition"] {
                questionnaires[name] = try WireJSON.value(of: Self.questionnaire(db, name).questions)
            }
            return [
                "version": .integer(version), "changed": true,
                "content": [
                    "types": .array(try Self.typeList(db, includeRetired: false)), "groups": .array(try Self.groupList(db, includeRetired: false)),
                    "bodyOptions": .array(try Self.bodyOptionList(db, sex: nil, includeRetired: false)),
                    "texts": try Self.textMap(db, locale: input.locale ?? "en"), "questionnaires": .object(questionnaires),
                ],
            ]
        }
    }

    // MARK: Admins write

    struct SaveTypeRequest: Codable, Sendable {
        var id: String?
        var title: String?
        var icon: String?
        var form: GoalForm?
        var position: Int?
    }

    var saveType: ServiceOperation {
        .write(
            "goals.admin.types.save",
            summary: "Adds a goal type (no `id`: `title` and `form` required) or changes one (`id`): title, icon (an id from goals.media.put; null clears), position, and the settings form — a changed form is a new version; goals keep theirs.",
            auth: GoalOperations.admin,
            request: .object(
                [
                    "id": GoalOperations.id, "title": .string(minLength: 1, maxLength: 200), "icon": JSONSchema.string(minLength: 1, maxLength: 100).nullable(),
                    "form": Self.formSchema, "position": .integer(minimum: 0, maximum: 10_000),
                ]),
            response: Self.typeSchema
        ) { (context, input: SaveTypeRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            if let form = input.form {
                let problems = form.problems(field: "form")
                guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
            }
            let now = Instant.format(context.receivedAt)
            let store = try context.mediaStore()
            let id: String
            if let existing = input.id {
                guard let type = try GoalTypeRow.load(db, id: existing) else { throw ServiceError.notFound("no such goal type") }
                id = type.id
                if context.data["icon"] != nil {
                    try MediaCatalog.replace(db, owner: "type:\(id)", type.icon, with: input.icon, field: "icon", store: store)
                }
                var version = type.formVersion
                if let form = input.form, try GoalTypeRow.form(db, type: id, version: version) != form {
                    version += 1
                    try db.cachedStatement(sql: "INSERT INTO goal_type_form (type_id, version, form, created_at) VALUES (?, ?, ?, ?)").execute(arguments: [id, version, String(decoding: try WireJSON.encode(form), as: UTF8.self), now])
                }
                try db.cachedStatement(sql: """
                        UPDATE goal_type SET title = COALESCE(?, title), icon_id = CASE WHEN ? THEN ? ELSE icon_id END, form_version = ?,
                            position = COALESCE(?, position), updated_at = ? WHERE id = ?
                        """).execute(arguments: [input.title, context.data["icon"] != nil, input.icon, version, input.position, now, id])
            } else {
                guard let title = input.title, let form = input.form else {
                    throw ServiceError.validationFailed(["title": "a new type needs a title and a form", "form": "a new type needs a title and a form"])
                }
                id = RecordID.make(prefix: "gtp", at: context.receivedAt)
                let position = try input.position ?? ((Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(position) FROM goal_type")) ?? 0) + 1)
                try db.cachedStatement(sql: "INSERT INTO goal_type (id, title, icon_id, form_version, position, created_at, updated_at) VALUES (?, ?, NULL, 1, ?, ?, ?)").execute(arguments: [id, title, position, now, now])
                try db.cachedStatement(sql: "INSERT INTO goal_type_form (type_id, version, form, created_at) VALUES (?, 1, ?, ?)").execute(arguments: [id, String(decoding: try WireJSON.encode(form), as: UTF8.self), now])
                try MediaCatalog.replace(db, owner: "type:\(id)", nil, with: input.icon, field: "icon", store: store)
                try db.cachedStatement(sql: "UPDATE goal_type SET icon_id = ? WHERE id = ?").execute(arguments: [input.icon, id])
            }
            try AdminLog.record(db, admin: admin, action: "types.save", target: id, detail: nil, at: now)
            try AdminLog.contentChanged(db)
            guard let type = try Self.typeList(db, includeRetired: true).first(where: { $0["id"]?.stringValue == id }) else {
                throw ServiceError.internal(ref: context.requestID)
            }
            return type
        }
    }

    struct SaveGroupRequest: Codable, Sendable {
        var id: String?
        var title: String?
        var icon: String?
        var position: Int?
    }

    var saveGroup: ServiceOperation {
        .write(
            "goals.admin.groups.save",
            summary: "Adds a sponsor group (no `id`: `title` required) or changes one: title, title icon (an id from goals.media.put; null clears), position.",
            auth: GoalOperations.admin,
            request: .object([
                "id": GoalOperations.id, "title": .string(minLength: 1, maxLength: 200), "icon": JSONSchema.string(minLength: 1, maxLength: 100).nullable(),
                "position": .integer(minimum: 0, maximum: 10_000),
            ]),
            response: Self.groupSchema
        ) { (context, input: SaveGroupRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            let now = Instant.format(context.receivedAt)
            let store = try context.mediaStore()
            let id: String
            if let existing = input.id {
                guard let current = try Row.fetchOne(db.cachedStatement(sql: "SELECT icon_id FROM sponsor_group WHERE id = ?"), arguments: [existing]) else {
                    throw ServiceError.notFound("no such sponsor group")
                }
                id = existing
                if context.data["icon"] != nil {
                    try MediaCatalog.replace(db, owner: "group:\(id)", current["icon_id"], with: input.icon, field: "icon", store: store)
                }
                try db.cachedStatement(sql: """
                        UPDATE sponsor_group SET title = COALESCE(?, title), icon_id = CASE WHEN ? THEN ? ELSE icon_id END,
                            position = COALESCE(?, position), updated_at = ? WHERE id = ?
                        """).execute(arguments: [input.title, context.data["icon"] != nil, input.icon, input.position, now, id])
            } else {
                guard let title = input.title else { throw ServiceError.invalid("title", "a new group needs a title") }
                id = RecordID.make(prefix: "grp", at: context.receivedAt)
                try MediaCatalog.replace(db, owner: "group:\(id)", nil, with: input.icon, field: "icon", store: store)
                let position = try input.position ?? ((Int.fetchOne(db.cachedStatement(sql: "SELECT MAX(position) FROM sponsor_group")) ?? 0) + 1)
                try db.cachedStatement(sql: "INSERT INTO sponsor_group (id, title, icon_id, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)").execute(arguments: [id, title, input.icon, position, now, now])
            }
            try AdminLog.record(db, admin: admin, action: "groups.save", target: id, detail: nil, at: now)
            try AdminLog.contentChanged(db)
            guard let group = try Self.groupList(db, includeRetired: true).first(where: { $0["id"]?.stringValue == id }) else {
                throw ServiceError.internal(ref: context.requestID)
            }
            return group
        }
    }

    struct SaveBodyOptionRequest: Codable, Sendable {
        var id: String?
        var kind: String?
        var sex: String?
        var title: String?
        var image: String?
        var position: Int?
    }

    var saveBodyOption: ServiceOperation {
        .write(
            "goals.admin.body_options.save",
            summary: "Adds an illustrated profile option (no `id`: `kind` figure or shape, `sex`, `title` required) or changes one: title, image (an id from goals.media.put; null clears), position.",
            auth: GoalOperations.admin,
            request: .object([
                "id": GoalOperations.id, "kind": .oneOf(["figure", "shape"]), "sex": .oneOf(["male", "female"]),
                "title": .string(minLength: 1, maxLength: 200), "image": JSONSchema.string(minLength: 1, maxLength: 100).nullable(),
                "position": .integer(minimum: 0, maximum: 10_000),
            ]),
            response: Self.bodyOptionSchema
        ) { (context, input: SaveBodyOptionRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            let now = Instant.format(context.receivedAt)
            let store = try context.mediaStore()
            let id: String
            if let existing = input.id {
                guard let current = try Row.fetchOne(db.cachedStatement(sql: "SELECT image_id FROM body_option WHERE id = ?"), arguments: [existing]) else {
                    throw ServiceError.notFound("no such option")
                }
                guard input.kind == nil && input.sex == nil else {
                    throw ServiceError.validationFailed(["kind": "an option keeps its kind and sex", "sex": "an option keeps its kind and sex"])
                }
                id = existing
                if context.data["image"] != nil {
                    try MediaCatalog.replace(db, owner: "body:\(id)", current["image_id"], with: input.image, field: "image", store: store)
                }
                try db.cachedStatement(sql: """
                        UPDATE body_option SET title = COALESCE(?, title), image_id = CASE WHEN ? THEN ? ELSE image_id END,
                            position = COALESCE(?, position) WHERE id = ?
                        """).execute(arguments: [input.title, context.data["image"] != nil, input.image, input.position, id])
            } else {
                guard let kind = input.kind, let sex = input.sex, let title = input.title else {
                    throw ServiceError.validationFailed(["kind": "required for a new option", "sex": "required for a new option", "title": "required for a new option"])
                }
                id = RecordID.make(prefix: "bod", at: context.receivedAt)
                try MediaCatalog.replace(db, owner: "body:\(id)", nil, with: input.image, field: "image", store: store)
                try db.cachedStatement(sql: "INSERT INTO body_option (id, kind, sex, title, image_id, position) VALUES (?, ?, ?, ?, ?, ?)").execute(arguments: [id, kind, sex, title, input.image, input.position ?? 0])
            }
            try AdminLog.record(db, admin: admin, action: "body_options.save", target: id, detail: nil, at: now)
            try AdminLog.contentChanged(db)
            guard let option = try Self.bodyOptionList(db, sex: nil, includeRetired: true).first(where: { $0["id"]?.stringValue == id }) else {
                throw ServiceError.internal(ref: context.requestID)
            }
            return option
        }
    }

    struct RetireRequest: Codable, Sendable {
        var id: String
        var retired: Bool
    }

    /// `goals.admin.<name>.retire`: takes an item off offer (or back); what uses it keeps it.
    func retire(_ name: String, table: String) -> ServiceOperation {
        .write(
            "goals.admin.\(name).retire",
            summary: "Takes an item off offer (`retired: true`) or puts it back. Goals, profiles and sponsors that use it keep it and still read it.",
            auth: GoalOperations.admin, request: .object(["id": GoalOperations.id, "retired": .boolean], required: ["id", "retired"]),
            response: .object(["id": .string(), "active": .boolean], required: ["id", "active"])
        ) { (context, input: RetireRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            try db.cachedStatement(sql: "UPDATE \(table) SET active = ? WHERE id = ?").execute(arguments: [!input.retired, input.id])
            guard db.changesCount == 1 else { throw ServiceError.notFound("no such item") }
            try AdminLog.record(
                db, admin: admin, action: "\(name).retire", target: input.id, detail: ["retired": .bool(input.retired)], at: Instant.format(context.receivedAt))
            try AdminLog.contentChanged(db)
            return ["id": .string(input.id), "active": .bool(!input.retired)]
        }
    }

    struct SetTextRequest: Codable, Sendable {
        var key: String
        var locale: String
        var text: String?
    }

    var setText: ServiceOperation {
        .write(
            "goals.admin.texts.set",
            summary: "Sets (or with null removes) the text of a pop-up or information window: `key` (a-z, 0-9, `.` and `_`), `locale` (en now; es can follow).",
            auth: GoalOperations.admin,
            request: .object(
                ["key": .string(minLength: 1, maxLength: 100), "locale": Self.locale, "text": JSONSchema.text(maxLength: 8_000).nullable()],
                required: ["key", "locale", "text"]),
            response: .object(["key": .string(), "locale": .string(), "text": JSONSchema.text().nullable()], required: ["key", "locale", "text"])
        ) { (context, input: SetTextRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            guard input.key.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "." || $0 == "_") }) else {
                throw ServiceError.invalid("key", "only a-z, 0-9, . and _")
            }
            guard input.locale.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-") }) else { throw ServiceError.invalid("locale", "not a language tag") }
            let now = Instant.format(context.receivedAt)
            if let text = input.text {
                try db.cachedStatement(sql: """
                        INSERT INTO text_entry (key, locale, text, updated_at) VALUES (?, ?, ?, ?)
                        ON CONFLICT (key, locale) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at
                        """).execute(arguments: [input.key, input.locale, text, now])
            } else {
                try db.cachedStatement(sql: "DELETE FROM text_entry WHERE key = ? AND locale = ?").execute(arguments: [input.key, input.locale])
            }
            try AdminLog.record(db, admin: admin, action: "texts.set", target: "\(input.key)/\(input.locale)", detail: nil, at: now)
            try AdminLog.contentChanged(db)
            return ["key": .string(input.key), "locale": .string(input.locale), "text": input.text.map(JSONValue.string) ?? .null]
        }
    }

    struct SetQuestionnaireRequest: Codable, Sendable {
        struct QuestionInput: Codable, Sendable {
            var id: String?
            var text: String
            var section: String?
            var options: [GoalForm.Option]
        }

        var questionnaire: String
        var questions: [QuestionInput]
    }

    var setQuestionnaire: ServiceOperation {
        .write(
            "goals.admin.questionnaire.set",
            summary: "Replaces the questions of a questionnaire (`recommendations`, or `nutrition` with `section` work_days/weekend_days), in order; a question keeps its `id` (and its answers) when sent with it. Questions left out are retired; their old answers no longer show.",
            auth: GoalOperations.admin,
            request: .object(
                [
                    "questionnaire": .oneOf(["recommendations", "nutrition"]),
                    "questions": .array(
                        of: .object(
                            [
                                "id": .string(minLength: 1, maxLength: 60), "text": .text(minLength: 1, maxLength: 1_000),
                                "section": .oneOf(["work_days", "weekend_days"]),
                                "options": .array(
                                    of: .object(
                                        ["value": .string(minLength: 1, maxLength: 60), "label": .string(minLength: 1, maxLength: 200)], required: ["value", "label"]),
                                    minItems: 2, maxItems: 30),
                            ], required: ["text", "options"]), minItems: 1, maxItems: 100),
                ], required: ["questionnaire", "questions"]),
            response: .object(["questions": .array(of: Self.questionSchema)], required: ["questions"])
        ) { (context, input: SetQuestionnaireRequest, db: Database) -> JSONValue in
            let admin = try context.requirePrincipal().userID
            var problems: [String: String] = [:]
            var ids = Set<String>()
            for (index, question) in input.questions.enumerated() {
                if let id = question.id, !ids.insert(id).inserted { problems["questions[\(index)].id"] = "appears twice" }
                let values = question.options.map(\.value)
                if Set(values).count != values.count { problems["questions[\(index)].options"] = "option values must be unique" }
                if (question.section == nil) != (input.questionnaire == "recommendations") {
                    problems["questions[\(index)].section"] =
                        input.questionnaire == "nutrition" ? "a nutrition question is for work_days or weekend_days" : "only nutrition questions have a section"
                }
            }
            guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
            if let taken = try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM question WHERE questionnaire != ? AND id IN (SELECT value FROM json_each(?))"),
                arguments: [input.questionnaire, String(decoding: try WireJSON.encode(Array(ids)), as: UTF8.self)])
            {
                throw ServiceError.invalid("questions", "question id \(taken) belongs to the other questionnaire")
            }
            try db.cachedStatement(sql: "UPDATE question SET active = 0 WHERE questionnaire = ?").execute(arguments: [input.questionnaire])
            for (position, question) in input.questions.enumerated() {
                try db.cachedStatement(sql: """
                        INSERT INTO question (id, questionnaire, section, text, options, position, active) VALUES (?, ?, ?, ?, ?, ?, 1)
                        ON CONFLICT (id) DO UPDATE SET section = excluded.section, text = excluded.text, options = excluded.options,
                            position = excluded.position, active = 1
                        """).execute(arguments: [
                        question.id ?? RecordID.make(prefix: "q", at: context.receivedAt), input.questionnaire, question.section, question.text,
                        String(decoding: try WireJSON.encode(question.options), as: UTF8.self), position,
                    ])
            }
            try AdminLog.record(db, admin: admin, action: "questionnaire.set", target: input.questionnaire, detail: nil, at: Instant.format(context.receivedAt))
            try AdminLog.contentChanged(db)
            return ["questions": try WireJSON.value(of: Self.questionnaire(db, input.questionnaire).questions)]
        }
    }
}

import Foundation
import GRDB
import Platform

/// The method catalog: each saving method's presentation (ordered slides: title, text,
/// image), read by anyone, written by admins. The algorithms are code
/// (``SavingsSchedule``); admins edit how they are told.
struct MethodOperations: Sendable {
    static let admin = AuthRule.anyRole(["admin"])

    var all: [ServiceOperation] { [list, get, save] }

    static let slideSchema = JSONSchema.object(
        [
            "title": .name(maxLength: 200), "text": .text(minLength: 1, maxLength: 4_000),
            "imageId": JSONSchema.string(minLength: 1, maxLength: 100).nullable().described("an id from savings.media.put"),
        ], required: ["title", "text"])

    static let methodSchema = JSONSchema.object(
        [
            "id": .oneOf(SavingMethod.allCases.map(\.rawValue)), "title": .string(), "summary": .string(), "position": .integer(),
            "needs": JSONSchema.array(of: .string()).described("the terms the method needs besides target, startDate and interval"),
            "optional": JSONSchema.array(of: .string()).described("the terms it may take"),
            "slides": JSONSchema.array(of: slideSchema, maxItems: 20).described("the presentation, in order (savings.methods.get)"),
            "slideCount": .integer(minimum: 0), "updatedAt": .string(format: .dateTime),
        ], required: ["id", "title", "summary", "position", "needs", "optional", "slideCount", "updatedAt"])

    /// What each method needs from the user beyond the target, start and interval.
    static func terms(of method: SavingMethod) -> (needs: [String], optional: [String]) {
        switch method {
        case .equal: (["deadline"], [])
        case .fiftyTwoWeek, .fiftyTwoWeekReverse: ([], ["deadline"])
        case .incomePercent: (["params.income", "params.percent"], ["deadline"])
        case .fixedAmount: (["params.amount"], ["deadline"])
        }
    }

    static func method(_ db: Database, _ row: Row, slides: Bool) throws -> JSONValue {
        let id: String = row["id"]
        let slideRows = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT title, text, image_id FROM method_slide WHERE method_id = ? ORDER BY position"), arguments: [id])
        var view: [String: JSONValue] = [
            "id": .string(id), "title": .string(row["title"]), "summary": .string(row["summary"]), "position": .integer(row["position"]),
            "slideCount": .integer(Int64(slideRows.count)), "updatedAt": .string(row["updated_at"]),
        ]
        if let method = SavingMethod(rawValue: id) {
            let (needs, optional) = Self.terms(of: method)
            view["needs"] = .array(needs.map(JSONValue.string))
            view["optional"] = .array(optional.map(JSONValue.string))
        }
        if slides {
            view["slides"] = .array(
                slideRows.map { slide in
                    ["title": .string(slide["title"]), "text": .string(slide["text"]), "imageId": (slide["image_id"] as String?).map(JSONValue.string) ?? .null]
                })
        }
        return .object(view)
    }

    var list: ServiceOperation {
        .read(
            "savings.methods.list",
            summary: "The saving methods in the catalog's order: title, summary, what terms each needs, how many slides its presentation has.",
            auth: .public, request: .empty,
            response: .object(["items": .array(of: Self.methodSchema), "next": JSONSchema.string().nullable()], required: ["items", "next"])
        ) { (_, _: Empty, db: Database) -> JSONValue in
            let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM method ORDER BY position, id"))
            return ["items": .array(try rows.map { try Self.method(db, $0, slides: false) }), "next": .null]
        }
    }

    struct MethodRequest: Codable, Sendable {
        var id: SavingMethod
    }

    var get: ServiceOperation {
        .read(
            "savings.methods.get",
            summary: "One method with its presentation: the slides in order (title, text, image id for savings.media.get); the app offers the method on the last one.",
            auth: .public, request: .object(["id": .oneOf(SavingMethod.allCases.map(\.rawValue))], required: ["id"]), response: Self.methodSchema
        ) { (_, input: MethodRequest, db: Database) -> JSONValue in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM method WHERE id = ?"), arguments: [input.id.rawValue]) else {
                throw ServiceError.notFound("no such method")
            }
            return try Self.method(db, row, slides: true)
        }
    }

    struct SlideInput: Codable, Sendable {
        var title: String
        var text: String
        var imageId: String?
    }

    struct SaveRequest: Codable, Sendable {
        var id: SavingMethod
        var title: String?
        var summary: String?
        var position: Int?
        var slides: [SlideInput]?
    }

    var save: ServiceOperation {
        .write(
            "savings.admin.methods.save",
            summary: "An admin edits a method's presentation: title, summary, position in the list, and the slides (given whole, in order; images from savings.media.put). Plans are not affected.",
            auth: Self.admin,
            request: .object(
                [
                    "id": .oneOf(SavingMethod.allCases.map(\.rawValue)), "title": .name(maxLength: 200), "summary": .text(minLength: 1, maxLength: 1_000),
                    "position": .integer(minimum: 0, maximum: 1_000), "slides": .array(of: Self.slideSchema, minItems: 1, maxItems: 20),
                ], required: ["id"]),
            response: Self.methodSchema
        ) { (context, input: SaveRequest, db: Database) -> JSONValue in
            _ = try context.requirePrincipal()
            let id = input.id.rawValue
            let now = Instant.format(context.receivedAt)
            if let slides = input.slides {
                let owner = "method:\(id)"
                let old = Set(try String.fetchAll(db.cachedStatement(sql: "SELECT image_id FROM method_slide WHERE method_id = ? AND image_id IS NOT NULL"), arguments: [id]))
                let new = Set(slides.compactMap(\.imageId))
                let store = try context.mediaStore()
                for (index, slide) in slides.enumerated() where slide.imageId.map({ !old.contains($0) }) == true {
                    try MediaCatalog.replace(db, owner: owner, nil, with: slide.imageId, field: "slides[\(index)].imageId", store: store)
                }
                try db.cachedStatement(sql: "DELETE FROM method_slide WHERE method_id = ?").execute(arguments: [id])
                for (index, slide) in slides.enumerated() {
                    try db.cachedStatement(sql: "INSERT INTO method_slide (method_id, position, title, text, image_id) VALUES (?, ?, ?, ?, ?)")
                        .execute(arguments: [id, index + 1, slide.title, slide.text, slide.imageId])
                }
                for image in old.subtracting(new) { try MediaCatalog.release(db, image, by: owner, store: store) }
            }
            try db.cachedStatement(sql: """
                    UPDATE method SET title = COALESCE(?, title), summary = COALESCE(?, summary), position = COALESCE(?, position), updated_at = ?
                    WHERE id = ?
                    """).execute(arguments: [input.title, input.summary, input.position, now, id])
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM method WHERE id = ?"), arguments: [id]) else {
                throw ServiceError.notFound("no such method")
            }
            return try Self.method(db, row, slides: true)
        }
    }
}

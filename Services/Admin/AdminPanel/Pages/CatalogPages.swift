import Foundation
import Platform

/// BuckStash's method presentations and the fitness assistant's exercises and slogans.
enum CatalogPages {
    @Sendable static func savings(_ kit: PageKit) async -> PageResult {
        let answer: JSONValue
        switch await kit.call("savings.methods.list") {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let rows = (answer["items"]?.arrayValue ?? []).map { method -> [Cell] in
            let id = method["id"]?.stringValue ?? ""
            return [
                Cell(method["title"]?.stringValue ?? id, href: "/savings/\(id)", small: id), Cell(method["summary"]?.stringValue ?? ""),
                Cell("\(method["slideCount"]?.integerValue ?? 0)", numeric: true), Cell(kit.format.dateTime(method["updatedAt"]?.stringValue)),
            ]
        }
        return PageKit.page(
            "Saving methods", [Block(text: "How each method is presented in BuckStash.", html: kit.table(["Method", "Summary", "Slides", "Changed"], rows), wide: true)])
    }

    @Sendable static func savingsMethod(_ kit: PageKit) async -> PageResult {
        let id = kit.visit.query[":id"] ?? ""
        let method: JSONValue
        switch await kit.call("savings.methods.get", ["id": .string(id)]) {
        case .success(let value): method = value
        case .failure(let error): return .failure(error)
        }
        let slides = (method["slides"]?.arrayValue ?? []).enumerated().map { index, slide -> [Cell] in
            [
                Cell("\(index + 1)", numeric: true), Cell(image: kit.mediaURL("savings", slide["imageId"]?.stringValue)),
                Cell(slide["title"]?.stringValue ?? "", small: slide["text"]?.stringValue),
            ]
        }
        return PageKit.page(
            method["title"]?.stringValue ?? id,
            [
                Block(heading: "Slides", html: kit.table(["#", "Image", "Slide"], slides, empty: "No slides yet.")),
                Block(html: kit.form("savings-image")),
                Block(html: kit.form("savings-method", values: kit.values("savings-method", from: method)), wide: true, links: [("All methods", "/savings")]),
            ])
    }

    @Sendable static func fitness(_ kit: PageKit) async -> PageResult {
        let exercises: JSONValue
        switch await kit.call("stats.exercises.list", ["includeWithdrawn": true]) {
        case .success(let value): exercises = value
        case .failure(let error): return .failure(error)
        }
        let slogans: JSONValue
        switch await kit.call("stats.admin.slogans.list") {
        case .success(let value): slogans = value
        case .failure(let error): return .failure(error)
        }
        let exerciseRows = (exercises["items"]?.arrayValue ?? []).map { exercise -> [Cell] in
            let id = exercise["id"]?.stringValue ?? ""
            let repetitions = exercise["baseRepetitions"]
            return [
                Cell(image: kit.mediaURL("stats", exercise["imageId"]?.stringValue)),
                Cell(exercise["names"]?["en"]?.stringValue ?? id, href: "/fitness/exercises/\(id)", small: exercise["names"]?["de"]?.stringValue),
                Cell("\(exercise["bodyPart"]?.stringValue ?? ""), \(exercise["motorAbility"]?.stringValue ?? "")"),
                Cell("\(repetitions?["beginner"]?.integerValue ?? 0) / \(repetitions?["intermediate"]?.integerValue ?? 0) / \(repetitions?["advanced"]?.integerValue ?? 0)"),
                Cell(exercise["active"] == .bool(true) ? "offered" : "withdrawn", badge: exercise["active"] == .bool(true) ? "ok" : "warn"),
            ]
        }
        let sloganRows = (slogans["items"]?.arrayValue ?? []).map { slogan -> [Cell] in
            let id = slogan["id"]?.integerValue.map(String.init) ?? ""
            let active = slogan["active"] == .bool(true)
            var values = ["id": id, "language": slogan["language"]?.stringValue ?? "", "text": slogan["text"]?.stringValue ?? ""]
            values["active"] = active ? "" : "on"
            return [
                Cell(slogan["language"]?.stringValue ?? ""), Cell(slogan["text"]?.stringValue ?? ""),
                Cell(active ? "shown" : "withdrawn", badge: active ? "ok" : "warn"),
                Cell(actions: [kit.action("slogan-save", active ? "Withdraw" : "Show again", values, danger: active)]),
            ]
        }
        let exercisePage = kit.paged(exerciseRows, parameter: "exercises"), sloganPage = kit.paged(sloganRows, parameter: "slogans")
        return PageKit.page(
            "Fitness catalog",
            [
                Block(
                    heading: "Exercises", text: "\(exerciseRows.count) in the catalog.",
                    html: kit.table(["", "Exercise", "Body part, ability", "Repetitions", ""], exercisePage.items), wide: true, links: exercisePage.links),
                Block(html: kit.form("exercise-save", values: ["active": "on"], title: "New exercise")),
                Block(
                    heading: "Slogans", text: "\(sloganRows.count) in all languages.",
                    html: kit.table(["Language", "Slogan", "", ""], sloganPage.items) + kit.form("slogan-save", values: ["active": "on"], title: "New slogan"),
                    links: sloganPage.links),
            ])
    }

    @Sendable static func exercise(_ kit: PageKit) async -> PageResult {
        let id = kit.visit.query[":id"] ?? ""
        let answer: JSONValue
        switch await kit.call("stats.exercises.list", ["includeWithdrawn": true]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        guard let exercise = answer["items"]?.arrayValue?.first(where: { $0["id"]?.stringValue == id }) else {
            return .failure(.notFound("no exercise \(id)"))
        }
        var current = exercise.objectValue ?? [:]
        current["nameEn"] = exercise["names"]?["en"]
        current["nameDe"] = exercise["names"]?["de"]
        for level in ["beginner", "intermediate", "advanced"] { current[level] = exercise["baseRepetitions"]?[level] }
        return PageKit.page(
            exercise["names"]?["en"]?.stringValue ?? id,
            [Block(html: kit.form("exercise-save", values: kit.values("exercise-save", from: .object(current)), then: "/fitness"), links: [("Fitness catalog", "/fitness")])])
    }
}

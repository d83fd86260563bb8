import Foundation
import Platform

/// The goals app's content: goal types with their forms and icons, sponsor groups, texts,
/// questionnaires, the inbox of new goals and each goal's plan and progress.
enum GoalPages {
    static let exampleForm: JSONValue = [
        "info": "What the recipient should know before choosing this goal.",
        "fields": [["key": "target", "label": "Target", "kind": "integer", "required": true, "minimum": 1, "maximum": 100]],
    ]

    @Sendable static func types(_ kit: PageKit) async -> PageResult {
        let answer: JSONValue
        switch await kit.call("goals.types", ["includeRetired": true]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let rows = (answer["types"]?.arrayValue ?? []).map { type -> [Cell] in
            let id = type["id"]?.stringValue ?? ""
            let active = type["active"] == .bool(true)
            return [
                Cell(image: kit.mediaURL("goals", type["icon"]?.stringValue)),
                Cell(type["title"]?.stringValue ?? id, href: "/goals/types/\(id)"),
                Cell("v\(type["formVersion"]?.integerValue ?? 1), \(type["form"]?["fields"]?.arrayValue?.count ?? 0) fields"),
                Cell(active ? "on offer" : "off offer", badge: active ? "ok" : "warn"),
                Cell(actions: [active ? kit.action("goal-type-retire", "Take off offer", ["id": id], danger: true) : kit.action("goal-type-restore", "Offer again", ["id": id])]),
            ]
        }
        return PageKit.page(
            "Goal types",
            [
                Block(html: kit.table(["Icon", "Type", "Settings form", "", ""], rows, empty: "No goal types yet."), wide: true),
                Block(html: kit.form("goal-type-new", values: ["form": exampleForm.prettyPrinted]), wide: true),
            ])
    }

    @Sendable static func type(_ kit: PageKit) async -> PageResult {
        let id = kit.visit.query[":id"] ?? ""
        let answer: JSONValue
        switch await kit.call("goals.types", ["includeRetired": true]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        guard let type = answer["types"]?.arrayValue?.first(where: { $0["id"]?.stringValue == id }) else {
            return .failure(.notFound("no goal type \(id)"))
        }
        return PageKit.page(
            type["title"]?.stringValue ?? "Goal type",
            [
                Block(
                    text: "A changed settings form becomes version \((type["formVersion"]?.integerValue ?? 1) + 1); goals already made keep theirs.",
                    html: kit.form("goal-type-edit", values: kit.values("goal-type-edit", from: type), then: "/goals/types"), wide: true, links: [("All goal types", "/goals/types")])
            ])
    }

    @Sendable static func groups(_ kit: PageKit) async -> PageResult {
        let answer: JSONValue
        switch await kit.call("goals.sponsor_groups", ["includeRetired": true]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let rows = (answer["groups"]?.arrayValue ?? []).map { group -> [Cell] in
            let id = group["id"]?.stringValue ?? ""
            let active = group["active"] == .bool(true)
            return [
                Cell(image: kit.mediaURL("goals", group["icon"]?.stringValue)),
                Cell(group["title"]?.stringValue ?? id, href: "/goals/groups/\(id)", small: id),
                Cell(active ? "on offer" : "off offer", badge: active ? "ok" : "warn"),
                Cell(actions: [active ? kit.action("group-retire", "Take off offer", ["id": id], danger: true) : kit.action("group-restore", "Offer again", ["id": id])]),
            ]
        }
        return PageKit.page(
            "Sponsor groups",
            [
                Block(html: kit.table(["Icon", "Group", "", ""], rows, empty: "No sponsor groups yet.")),
                Block(html: kit.form("group-new")),
            ])
    }

    @Sendable static func group(_ kit: PageKit) async -> PageResult {
        let id = kit.visit.query[":id"] ?? ""
        let answer: JSONValue
        switch await kit.call("goals.sponsor_groups", ["includeRetired": true]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        guard let group = answer["groups"]?.arrayValue?.first(where: { $0["id"]?.stringValue == id }) else {
            return .failure(.notFound("no sponsor group \(id)"))
        }
        return PageKit.page(
            group["title"]?.stringValue ?? "Sponsor group",
            [Block(html: kit.form("group-edit", values: kit.values("group-edit", from: group), then: "/goals/groups"), links: [("All sponsor groups", "/goals/groups")])])
    }

    @Sendable static func texts(_ kit: PageKit) async -> PageResult {
        let locale = kit.visit.query("locale").map { String($0.prefix(10)) } ?? "en"
        let answer: JSONValue
        switch await kit.call("goals.texts", ["locale": .string(locale)]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        // goals answers a key missing in `locale` in English: the English texts say which.
        var english: [String: JSONValue] = [:]
        if locale != "en", case .success(let value) = await kit.call("goals.texts", ["locale": "en"]) {
            english = value["texts"]?.objectValue ?? [:]
        }
        let texts = (answer["texts"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
        let rows = texts.map { key, text -> [Cell] in
            let value = text.stringValue ?? ""
            let fallback = locale != "en" && english[key]?.stringValue == value
            let edit = "/goals/texts?locale=\(PageKit.queryEscape(locale))&key=\(PageKit.queryEscape(key))"
            return [
                Cell(key, href: edit), Cell(value, badge: fallback ? "warn" : nil, small: fallback ? "English: no text in \(locale) yet" : nil),
            ]
        }
        // A key picked from the list comes into the form with its text (empty when it is
        // still the English fallback).
        var values = ["locale": locale]
        if let key = kit.visit.query("key").map({ String($0.prefix(100)) }) {
            values["key"] = key
            if let text = answer["texts"]?[key]?.stringValue, !(locale != "en" && english[key]?.stringValue == text) { values["text"] = text }
        }
        let picker = """
            <form method="get" action="/goals/texts"><label for="locale">Language</label> <input id="locale" name="locale" value="\(SVGChart.escape(locale))" size="6"> <button type="submit">Show</button></form>
            """
        return PageKit.page(
            "Pop-up and information texts",
            [
                Block(heading: "Texts in \(locale)", html: picker + kit.table(["Key", "Text"], rows, empty: "No texts in this language yet.")),
                Block(
                    text: "Pick a key above to change its text, or give a new key; an empty text removes it.",
                    html: kit.form("goals-text", values: values)),
            ])
    }

    @Sendable static func questionnaires(_ kit: PageKit) async -> PageResult {
        var blocks: [Block] = []
        for (name, title) in [("recommendations", "Recommendations questionnaire"), ("nutrition", "Nutrition questionnaire")] {
            let questions: JSONValue
            switch await kit.call("goals.questionnaire", ["questionnaire": .string(name)]) {
            case .success(let value): questions = value["questions"] ?? .array([])
            case .failure(let error): return .failure(error)
            }
            blocks.append(
                Block(
                    heading: title,
                    html: kit.form("questionnaire-set", values: ["questionnaire": name, "questions": questions.prettyPrinted], title: "Questions")))
            let results: JSONValue
            switch await kit.call("goals.admin.questionnaire.results", ["questionnaire": .string(name), "limit": 20]) {
            case .success(let value): results = value
            case .failure(let error): return .failure(error)
            }
            let rows = (results["results"]?.arrayValue ?? []).map { result -> [Cell] in
                let answers = (result["answers"]?.arrayValue ?? []).map { "\($0["question"]?.stringValue ?? ""): \($0["answer"]?.stringValue ?? "")" }
                return [
                    Cell(result["user"]?["name"]?.stringValue ?? result["user"]?["id"]?.stringValue ?? "", href: "/users/\(result["user"]?["id"]?.stringValue ?? "")"),
                    Cell(kit.format.dateTime(result["submittedAt"]?.stringValue)), Cell(answers.joined(separator: " · ")),
                ]
            }
            blocks.append(Block(heading: "Latest answers: \(name)", html: kit.table(["Recipient", "Sent", "Answers"], rows, empty: "No answers yet.")))
        }
        return PageKit.page("Questionnaires", blocks)
    }

    /// What the inbox says above its list: goals answers its unseen count after marking
    /// this page seen, so the page's new ones are counted from the page itself.
    static func inboxSummary(newOnPage: Int, unseenLeft: Int64) -> String {
        let here = newOnPage == 0 ? "Nothing new on this page" : "\(newOnPage) new on this page (highlighted; marked seen now)"
        return unseenLeft == 0 ? "\(here); no other goal waits to be seen." : "\(here); \(unseenLeft) more not seen yet on other pages."
    }

    @Sendable static func inbox(_ kit: PageKit) async -> PageResult {
        var request: [String: JSONValue] = ["limit": 25, "markSeen": true]
        if let before = kit.visit.query("before") { request["before"] = .string(String(before.prefix(100))) }
        if kit.visit.query("unseen") == "1" { request["unseenOnly"] = true }
        let answer: JSONValue
        switch await kit.call("goals.admin.inbox", .object(request)) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let goals = answer["goals"]?.arrayValue ?? []
        let rows = goals.map { goal -> [Cell] in
            let id = goal["id"]?.stringValue ?? ""
            return [
                Cell(goal["title"]?.stringValue ?? id, href: "/goals/goal/\(id)", badge: nil, small: goal["type"]?["title"]?.stringValue),
                Cell(goal["recipient"]?["name"]?.stringValue ?? "—"),
                Cell(goal["state"]?.stringValue ?? "", badge: goal["seen"] == .bool(false) ? "warn" : "ok"),
                Cell(goal["progress"]?.integerValue.map { "\($0) %" } ?? "—", numeric: true),
                Cell(kit.format.dateTime(goal["createdAt"]?.stringValue)),
            ]
        }
        let more = answer["more"] == .bool(true) ? goals.last?["id"]?.stringValue : nil
        return PageKit.page(
            "Inbox of new goals",
            [
                Block(
                    text: Self.inboxSummary(newOnPage: goals.filter { $0["seen"] == .bool(false) }.count, unseenLeft: answer["unseen"]?.integerValue ?? 0),
                    html: kit.table(["Goal", "Recipient", "State", "Progress", "Created"], rows, empty: "No goals yet."), wide: true,
                    links: kit.nextLink("before", more))
            ])
    }

    @Sendable static func goal(_ kit: PageKit) async -> PageResult {
        let id = kit.visit.query[":id"] ?? ""
        let answer: JSONValue
        switch await kit.call("goals.get", ["goalId": .string(id)]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let goal = answer["goal"] ?? [:]
        let items: JSONValue
        switch await kit.call("goals.items.list", ["goalId": .string(id), "limit": 200]) {
        case .success(let value): items = value
        case .failure(let error): return .failure(error)
        }
        let plan = goal["plan"] ?? [:]
        let facts: [[Cell]] = [
            [Cell("Recipient"), Cell(goal["recipient"]?["name"]?.stringValue ?? "—", href: "/users/\(goal["recipient"]?["id"]?.stringValue ?? "")")],
            [Cell("Type"), Cell(goal["type"]?["title"]?.stringValue ?? "—")], [Cell("State"), Cell(goal["state"]?.stringValue ?? "—")],
            [Cell("Progress (admin)"), Cell(goal["progress"]?.integerValue.map { "\($0) %" } ?? "not set")],
            [Cell("Plan done"), Cell("\(plan["done"]?.integerValue ?? 0) of \(plan["total"]?.integerValue ?? 0) (\(plan["sharePercent"]?.integerValue ?? 0) %), \(plan["pace"]?.stringValue ?? "")")],
            [Cell("Settings"), Cell((goal["settings"] ?? .null).prettyPrinted)], [Cell("Created"), Cell(kit.format.dateTime(goal["createdAt"]?.stringValue))],
        ]
        let sponsors = (goal["sponsorships"]?.arrayValue ?? []).map { sponsorship -> [Cell] in
            let reward = sponsorship["reward"]
            return [
                Cell(sponsorship["sponsor"]?["name"]?.stringValue ?? "—", small: sponsorship["sponsor"]?["group"]?["title"]?.stringValue),
                Cell(sponsorship["state"]?.stringValue ?? ""),
                Cell(reward?["money"].map { kit.format.money($0) } ?? reward?["text"]?.stringValue ?? "—", small: sponsorship["rewardStatus"]?.stringValue),
            ]
        }
        let itemRows = (items["items"]?.arrayValue ?? []).map { item -> [Cell] in
            [
                Cell(item["kind"]?.stringValue ?? ""), Cell(kit.format.date(item["date"]?.stringValue)),
                Cell(item["text"]?.stringValue ?? "", small: item["requirement"]?.stringValue),
                Cell(item["done"] == .bool(true) ? "done" : (item["checkable"] == .bool(true) ? "open" : "—"), badge: item["done"] == .bool(true) ? "ok" : nil),
                Cell(actions: [kit.action("goal-item-remove", "Remove", ["itemId": item["id"]?.stringValue ?? ""], danger: true)]),
            ]
        }
        var blocks = [
            Block(heading: "Goal", html: kit.table(["", ""], facts)),
            Block(heading: "Sponsors", html: kit.table(["Sponsor", "Offer", "Reward"], sponsors, empty: "No sponsors yet.")),
            Block(heading: "Plan", html: kit.table(["Kind", "Date", "Text", "Done", ""], itemRows, empty: "The plan is empty."), wide: true),
        ]
        if goal["state"]?.stringValue == "active" || goal["state"]?.stringValue == "proposed" || goal["state"]?.stringValue == "draft" {
            blocks.append(Block(html: kit.form("goal-item-add", values: ["goalId": id])))
        }
        if goal["state"]?.stringValue == "active" {
            blocks.append(Block(html: kit.form("goal-progress", values: ["goalId": id, "percent": goal["progress"]?.integerValue.map(String.init) ?? ""])
                + kit.form("goal-fail", values: ["goalId": id])))
        }
        return PageKit.page(goal["title"]?.stringValue ?? "Goal", blocks)
    }
}

import Foundation
import Platform

/// Push broadcasts with a preview, and the notification texts.
enum NotificationPages {
    @Sendable static func broadcasts(_ kit: PageKit) async -> PageResult {
        let groups: [FormField.Choice]
        switch await kit.call("goals.sponsor_groups") {
        case .success(let value):
            groups = (value["groups"]?.arrayValue ?? []).compactMap { group in
                group["id"]?.stringValue.map { FormField.Choice($0, group["title"]?.stringValue ?? $0) }
            }
        case .failure(let error): return .failure(error)
        }
        return PageKit.page(
            "Broadcasts",
            [
                Block(
                    text: "To everyone in the goals app, to one role, or to one sponsor group's sponsors. Preview shows the push before it is sent.",
                    html: kit.form("goals-broadcast", values: ["kind": "news", "audience": "everyone"], choices: ["groupId": groups])),
                Block(
                    text: "To every device of one app (those who switched announcements off are skipped; quiet hours hold it back).",
                    html: kit.form("push-broadcast", values: ["kind": "news"])),
            ])
    }

    @Sendable static func templates(_ kit: PageKit) async -> PageResult {
        let answer: JSONValue
        switch await kit.call("reminders.admin.templates.list") {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let items = answer["items"]?.arrayValue ?? []
        var blocks: [Block] = []
        if let kind = kit.visit.query("kind"), let language = kit.visit.query("language"),
            let item = items.first(where: { $0["kind"]?.stringValue == kind && $0["language"]?.stringValue == language })
        {
            let placeholders = (item["placeholders"]?.arrayValue ?? []).compactMap(\.stringValue).map { "{\($0)}" }.joined(separator: " ")
            var html = kit.form("template-set", values: kit.values("template-set", from: item), title: "\(kind) (\(language))")
            if item["edited"] == .bool(true) {
                html += kit.table([], [[Cell(actions: [kit.action("template-reset", "Back to the shipped text", ["kind": kind, "language": language])])]])
            }
            blocks.append(Block(heading: "Edit", text: placeholders.isEmpty ? "No placeholders." : "Placeholders: \(placeholders)", html: html))
        }
        let rows = items.map { item -> [Cell] in
            let kind = item["kind"]?.stringValue ?? ""
            let language = item["language"]?.stringValue ?? ""
            return [
                Cell(kind, href: "/notifications?kind=\(kind)&language=\(language)"), Cell(language),
                Cell(item["title"]?.stringValue ?? "", small: item["text"]?.stringValue), Cell(item["edited"] == .bool(true) ? "edited" : "shipped"),
            ]
        }
        blocks.append(Block(heading: "Texts", html: kit.table(["Kind", "Language", "Title and text", ""], rows), wide: true))
        let today = LocalDate(daysSinceEpoch: Int64(Date().timeIntervalSince1970 / 86_400))
        let from = LocalDate(daysSinceEpoch: today.daysSinceEpoch - 6)
        if case .success(let stats) = await kit.call("reminders.admin.notifications.stats", ["from": .string(from.description), "to": .string(today.description)]) {
            var totals: [String: (made: Int64, queued: Int64, sent: Int64, failed: Int64)] = [:]
            for item in stats["items"]?.arrayValue ?? [] {
                let kind = item["kind"]?.stringValue ?? ""
                var total = totals[kind] ?? (0, 0, 0, 0)
                total.made += item["notifications"]?.integerValue ?? 0
                total.queued += item["queued"]?.integerValue ?? 0
                total.sent += item["sent"]?.integerValue ?? 0
                total.failed += item["failed"]?.integerValue ?? 0
                totals[kind] = total
            }
            let rows = totals.sorted { $0.key < $1.key }.map { kind, total in
                [Cell(kind), Cell.number(total.made, kit.format), Cell.number(total.queued, kit.format), Cell.number(total.sent, kit.format), Cell.number(total.failed, kit.format)]
            }
            blocks.append(
                Block(heading: "The last 7 days", html: kit.table(["Kind", "Made", "Queued", "Sent", "Failed"], rows, empty: "No notifications in the last 7 days.")))
        }
        return PageKit.page("Notifications", blocks)
    }
}

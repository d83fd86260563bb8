import Foundation
import Platform

/// What people did (auth's audit log, the goals admins' and the park staff's actions),
/// top-up payments to settle by hand, messages given up, and the goals app's body options.
enum OperationsPages {
    static func string(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: text
        case .integer(let number)?: String(number)
        case .bool(let flag)?: flag ? "yes" : "no"
        case .null?, nil: "—"
        case let value?: String(decoding: value.serialized, as: UTF8.self)
        }
    }

    /// `{"a": 1, "b": "x"}` as `a: 1 · b: x`, for details in a table.
    static func details(_ value: JSONValue?) -> String {
        guard let members = value?.objectValue, !members.isEmpty else { return "" }
        return members.sorted { $0.key < $1.key }.map { "\($0.key): \(string($0.value))" }.joined(separator: " · ")
    }

    @Sendable static func activity(_ kit: PageKit) async -> PageResult {
        var request: [String: JSONValue] = ["limit": 50]
        if let user = kit.visit.query("user") { request["userId"] = .string(String(user.prefix(100))) }
        if let cursor = kit.visit.query("cursor") { request["cursor"] = .string(String(cursor.prefix(100))) }
        async let auditCall = kit.call("auth.audit.list", .object(request))
        async let goalsCall = kit.call("goals.admin.actions", ["limit": 20])
        async let deskCall = kit.call("booking.staff.actions", ["limit": 20])
        let (audit, goals, desk) = await (auditCall, goalsCall, deskCall)
        var blocks: [Block] = []
        switch audit {
        case .success(let answer):
            let rows = (answer["items"]?.arrayValue ?? []).map { item -> [Cell] in
                let user = item["userId"]?.stringValue
                return [
                    Cell(kit.format.dateTime(item["at"]?.stringValue)), Cell(item["action"]?.stringValue ?? ""),
                    Cell(user ?? "—", href: user.map { "/users/\($0)" }), Cell(item["actorId"]?.stringValue ?? "—"),
                    Cell(item["client"]?.stringValue ?? "—"), Cell(details(item["detail"])),
                ]
            }
            blocks.append(
                Block(
                    heading: "Security log (auth)", text: "Sign-ins, failures, password and role changes, deletions, admin actions; newest first.",
                    html: kit.table(["When", "What", "User", "By", "From", "Details"], rows, empty: "Nothing logged."), wide: true,
                    links: kit.nextLink("cursor", answer["next"]?.stringValue)))
        case .failure(let error): blocks.append(MonitoringPages.unavailable("Security log", error))
        }
        switch goals {
        case .success(let answer):
            let rows = (answer["actions"]?.arrayValue ?? []).map { item -> [Cell] in
                [
                    Cell(kit.format.dateTime(item["at"]?.stringValue)), Cell(item["action"]?.stringValue ?? ""), Cell(item["target"]?.stringValue ?? "—"),
                    Cell(item["admin"]?.stringValue ?? ""),
                ]
            }
            blocks.append(Block(heading: "Goals: what admins did", html: kit.table(["When", "What", "On", "Admin"], rows, empty: "Nothing yet.")))
        case .failure(let error): blocks.append(MonitoringPages.unavailable("Goals", error))
        }
        switch desk {
        case .success(let answer):
            let rows = (answer["items"]?.arrayValue ?? []).map { item -> [Cell] in
                [
                    Cell(kit.format.dateTime(item["at"]?.stringValue)), Cell(item["action"]?.stringValue ?? ""),
                    Cell(item["userId"]?.stringValue ?? "—", href: item["userId"]?.stringValue.map { "/riders/\($0)" }),
                    Cell(item["reason"]?.stringValue ?? "—"), Cell(item["actor"]?.stringValue ?? ""),
                ]
            }
            blocks.append(Block(heading: "The park: what staff did", html: kit.table(["When", "What", "Rider", "Reason", "Staff"], rows, empty: "Nothing yet.")))
        case .failure(let error): blocks.append(MonitoringPages.unavailable("The park", error))
        }
        return PageKit.page("Activity", blocks)
    }

    @Sendable static func payments(_ kit: PageKit) async -> PageResult {
        var request: [String: JSONValue] = ["limit": 50]
        let statuses = ["pending", "settled", "failed", "expired", "unclaimed"]
        if let status = kit.visit.query("status"), statuses.contains(status) { request["status"] = .string(status) }
        if let cursor = kit.visit.query("cursor") { request["cursor"] = .string(String(cursor.prefix(100))) }
        let answer: JSONValue
        switch await kit.call("booking.admin.payments.list", .object(request)) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let rows = (answer["items"]?.arrayValue ?? []).map { payment -> [Cell] in
            let id = payment["id"]?.stringValue ?? ""
            let status = payment["status"]?.stringValue ?? ""
            var cell = Cell()
            if status == "pending" || status == "expired" || status == "failed" {
                cell = Cell(href: "/payments?settle=\(id)")
                cell.text = "Settle…"
            }
            return [
                Cell(kit.format.dateTime(payment["createdAt"]?.stringValue), small: id),
                Cell(payment["userId"]?.stringValue ?? "", href: "/riders/\(payment["userId"]?.stringValue ?? "")"),
                Cell(payment["package"]?.stringValue ?? ""), Cell(kit.format.money(payment["amount"]), numeric: true),
                Cell(status, badge: status == "settled" ? "ok" : status == "pending" ? "warn" : "bad", small: payment["reason"]?.stringValue), cell,
            ]
        }
        let filter = "<p class=\"links\">" + (["all"] + statuses).map { status in
            "<a href=\"/payments\(status == "all" ? "" : "?status=\(status)")\">\(status)</a>"
        }.joined(separator: " ") + "</p>"
        var blocks = [
            Block(
                heading: "Top-up payments", text: "Newest first. Settle one by hand after checking it with the provider.",
                html: filter + kit.table(["Created", "Rider", "Package", "Amount", "Status", ""], rows, empty: "No payments."), wide: true,
                links: kit.nextLink("cursor", answer["next"]?.stringValue))
        ]
        if let settle = kit.visit.query("settle") {
            blocks.insert(Block(html: kit.form("payment-reconcile", values: ["payment": settle], title: "Settle \(settle)", then: "/payments")), at: 0)
        }
        return PageKit.page("Payments", blocks)
    }

    @Sendable static func deliveries(_ kit: PageKit) async -> PageResult {
        var blocks: [Block] = []
        for (service, form, title) in [("auth", "auth-retry", "Emails and SMS (auth)"), ("reminders", "push-retry", "Pushes (reminders)")] {
            switch await kit.call("\(service).delivery.dead.list", ["limit": 50]) {
            case .success(let answer):
                let rows = (answer["items"]?.arrayValue ?? []).map { item -> [Cell] in
                    [
                        Cell(kit.format.dateTime(item["deadAt"]?.stringValue), small: item["id"]?.stringValue), Cell(item["channel"]?.stringValue ?? ""),
                        Cell(item["destination"]?.stringValue ?? ""), Cell(String(item["attempts"]?.integerValue ?? 0), numeric: true),
                        Cell(item["lastError"]?.stringValue ?? "—"),
                        Cell(actions: [kit.action(form, "Send again", ["id": item["id"]?.stringValue ?? ""])]),
                    ]
                }
                blocks.append(
                    Block(
                        heading: title, text: "Messages given up after too many failed attempts, or refused for good. Destinations are masked; texts are never shown.",
                        html: kit.table(["Given up", "Channel", "To", "Attempts", "Last error", ""], rows, empty: "None: everything was delivered."), wide: true))
            case .failure(let error): blocks.append(MonitoringPages.unavailable(title, error))
            }
        }
        return PageKit.page("Deliveries", blocks)
    }

    @Sendable static func bodyOptions(_ kit: PageKit) async -> PageResult {
        let answer: JSONValue
        switch await kit.call("goals.body_options", ["includeRetired": true]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let options = answer["options"]?.arrayValue ?? []
        let rows = options.map { option -> [Cell] in
            let id = option["id"]?.stringValue ?? ""
            let active = option["active"] == .bool(true)
            return [
                Cell(image: kit.mediaURL("goals", option["image"]?.stringValue)),
                Cell(option["title"]?.stringValue ?? id, href: "/goals/body-options?edit=\(id)", small: "\(option["kind"]?.stringValue ?? ""), \(option["sex"]?.stringValue ?? "")"),
                Cell(active ? "on offer" : "off offer", badge: active ? "ok" : "warn"),
                Cell(actions: [active ? kit.action("body-option-retire", "Take off offer", ["id": id], danger: true) : kit.action("body-option-restore", "Offer again", ["id": id])]),
            ]
        }
        var blocks = [Block(heading: "Figures and shapes", text: "The illustrated choices of the fitness profile.", html: kit.table(["", "Option", "", ""], rows, empty: "No options yet."))]
        if let id = kit.visit.query("edit"), let option = options.first(where: { $0["id"]?.stringValue == id }) {
            blocks.append(Block(html: kit.form("body-option-edit", values: kit.values("body-option-edit", from: option), title: "Edit \(option["title"]?.stringValue ?? id)", then: "/goals/body-options")))
        } else {
            blocks.append(Block(html: kit.form("body-option-new")))
        }
        return PageKit.page("Body options", blocks)
    }
}

import Foundation
import Platform

/// Users: search, roles, deletion (auth's admin operations).
enum UserPages {
    @Sendable static func list(_ kit: PageKit) async -> PageResult {
        var request: [String: JSONValue] = ["limit": 25]
        if let query = kit.visit.query("q") { request["query"] = .string(String(query.prefix(100))) }
        if let role = kit.visit.query("role"), FormCatalog.roles.contains(where: { $0.value == role }) { request["role"] = .string(role) }
        if let cursor = kit.visit.query("cursor") { request["cursor"] = .string(String(cursor.prefix(100))) }
        let answer: JSONValue
        switch await kit.call("auth.admin.users.list", .object(request)) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let rows = (answer["items"]?.arrayValue ?? []).map { user -> [Cell] in
            let id = user["id"]?.stringValue ?? ""
            let name = [user["firstName"]?.stringValue, user["lastName"]?.stringValue].compactMap { $0 }.joined(separator: " ")
            return [
                Cell(name.isEmpty ? "(no name)" : name, href: "/users/\(id)", small: user["email"]?.stringValue ?? user["phone"]?.stringValue),
                Cell((user["roles"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")),
                Cell(kit.format.dateTime(user["createdAt"]?.stringValue)),
            ]
        }
        let search = """
            <form class="inline-search" method="get" action="/users">
            <label for="q">Search</label> <input id="q" name="q" value="\(SVGChart.escape(kit.visit.query("q") ?? ""))" placeholder="email, phone or name">
            <label for="role">Role</label> <select id="role" name="role"><option value="">any</option>\(FormCatalog.roles.map { "<option\($0.value == kit.visit.query("role") ? " selected" : "")>\($0.value)</option>" }.joined())</select>
            <button type="submit">Search</button></form>
            """
        return PageKit.page(
            "Users",
            [
                Block(
                    html: search + kit.table(["Name", "Roles", "Registered"], rows, empty: "No user matches."), wide: true,
                    links: kit.nextLink("cursor", answer["next"]?.stringValue))
            ])
    }

    @Sendable static func detail(_ kit: PageKit) async -> PageResult {
        let id = kit.visit.query[":id"] ?? ""
        let user: JSONValue
        switch await kit.call("auth.profile.get", ["userId": .string(id)]) {
        case .success(let value): user = value
        case .failure(let error): return .failure(error)
        }
        let roles = (user["roles"]?.arrayValue ?? []).compactMap(\.stringValue)
        let name = [user["firstName"]?.stringValue, user["patronymic"]?.stringValue, user["lastName"]?.stringValue].compactMap { $0 }.joined(separator: " ")
        let facts: [[Cell]] = [
            [Cell("Name"), Cell(name)], [Cell("Email"), Cell(user["email"]?.stringValue ?? "—")], [Cell("Phone"), Cell(user["phone"]?.stringValue ?? "—")],
            [Cell("Birth date"), Cell(kit.format.date(user["birthDate"]?.stringValue))],
            [Cell("Language, time zone"), Cell("\(user["locale"]?.stringValue ?? "—"), \(user["timeZone"]?.stringValue ?? "—")")],
            [Cell("Registered"), Cell(kit.format.dateTime(user["createdAt"]?.stringValue))],
            [Cell("Terms"), Cell("\(user["termsVersion"]?.stringValue ?? "—") \(kit.format.dateTime(user["termsAcceptedAt"]?.stringValue))")],
            [Cell("Id"), Cell(id)],
        ]
        let roleRows = roles.map { role in
            [Cell(role), Cell(actions: [kit.action("user-revoke", "Take away", ["userId": id, "role": role], danger: true)])]
        }
        var blocks = [
            Block(heading: "Account", html: kit.table(["", ""], facts)),
            Block(
                heading: "Roles",
                html: kit.table(["Role", ""], roleRows, empty: "No roles.") + kit.form("user-grant", values: ["userId": id])),
        ]
        if user["roles"] != nil {
            blocks.append(
                Block(
                    heading: "Riding at the park", text: "Bookings, pass and ledger at the wake park.",
                    links: [("Open at the desk", "/riders/\(id)")]))
        }
        blocks.append(
            Block(
                heading: "Delete the account", text: "Removes the account and every app's data about this person (a confirmation follows).",
                html: kit.table([], [[Cell(actions: [kit.action("user-delete", "Delete the account…", ["userId": id], danger: true, returnTo: "/users")])]])))
        return PageKit.page(name.isEmpty ? "User" : name, blocks)
    }
}

import Foundation
import Platform

/// What a page handler works with: calls as the signed-in person, and the pieces to show.
struct PageKit: Sendable {
    let panel: AdminPanel
    let visit: Visit

    var format: Formatting { visit.format }
    var csrf: String { visit.session.csrf }

    /// The page's own address with its query, where forms come back to.
    var returnTo: String {
        let query = visit.query.filter { !$0.key.hasPrefix(":") }.sorted { $0.key < $1.key }
        guard !query.isEmpty else { return visit.path }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_.~:"))
        return visit.path + "?"
            + query.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    func call(_ op: String, _ data: JSONValue = [:]) async -> Result<JSONValue, ServiceError> {
        await panel.gateway.call(op, data, token: visit.session.accessToken, client: visit.clientAddress)
    }

    func table(_ headers: [String], _ rows: [[Cell]], empty: String = "Nothing here yet.") -> String {
        panel.renderer.table(headers: headers, rows: rows, empty: empty, csrf: csrf, returnTo: returnTo)
    }

    func form(
        _ id: String, values: [String: String] = [:], zone: TimeZone? = nil, title: String? = nil, choices: [String: [FormField.Choice]] = [:],
        then: String? = nil
    ) -> String {
        guard let form = panel.forms[id], visit.session.role.allows(form.role) else { return "" }
        return panel.renderer.form(
            form, values: values, csrf: csrf, returnTo: then ?? returnTo, zone: zone, titleOverride: title, choices: choices)
    }

    /// Current values for a form from an answer of the services.
    func values(_ id: String, from current: JSONValue, zone: TimeZone? = nil, currency: Currency? = nil) -> [String: String] {
        panel.forms[id]?.values(from: current, zone: zone, currency: currency) ?? [:]
    }

    func action(_ formID: String, _ label: String, _ hidden: [String: String], danger: Bool = false, returnTo: String? = nil) -> ActionButton {
        ActionButton(formID: formID, label: label, hidden: hidden, danger: danger, returnTo: returnTo)
    }

    /// A link to the next page of a list, keeping the other query parameters.
    /// A value escaped for a link's query.
    static func queryEscape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_.~:"))) ?? ""
    }

    /// One page of a list the panel holds whole (`parameter` in the query: the page's
    /// number, from 1), with links to the pages before and after it.
    func paged<Item>(_ items: [Item], parameter: String, size: Int = 25) -> (items: [Item], links: [(label: String, href: String)]) {
        let (page, pages) = Self.page(of: items.count, size: size, asked: visit.query(parameter))
        let slice = Array(items.dropFirst((page - 1) * size).prefix(size))
        guard pages > 1 else { return (slice, []) }
        func link(_ number: Int) -> String {
            var query = visit.query.filter { !$0.key.hasPrefix(":") }
            query[parameter] = String(number)
            return visit.path + "?" + query.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.queryEscape($0.value))" }.joined(separator: "&")
        }
        var links: [(label: String, href: String)] = []
        if page > 1 { links.append(("← Previous page", link(page - 1))) }
        links.append(("Page \(page) of \(pages)", link(page)))
        if page < pages { links.append(("Next page →", link(page + 1))) }
        return (slice, links)
    }

    /// The page to show of `count` items (asked as text: anything else is page 1, past
    /// the end the last page) and how many there are.
    static func page(of count: Int, size: Int, asked: String?) -> (page: Int, pages: Int) {
        let pages = max(1, (count + size - 1) / size)
        return (min(max(1, Int(asked ?? "") ?? 1), pages), pages)
    }

    func nextLink(_ parameter: String, _ value: String?) -> [(label: String, href: String)] {
        guard let value, !value.isEmpty else { return [] }
        var query = visit.query.filter { !$0.key.hasPrefix(":") }
        query[parameter] = value
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_.~:"))
        let text = query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&")
        return [("Next page →", "\(visit.path)?\(text)")]
    }

    func mediaURL(_ service: String, _ id: String?) -> String? {
        guard let id, !id.isEmpty else { return nil }
        return "/media/\(service)/\(id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "_-"))) ?? "")"
    }

    /// A page made of blocks, or the first failure among the calls it needed.
    static func page(_ title: String, _ blocks: [Block]) -> PageResult { .page(title: title, blocks: blocks) }
}

/// One page: its path (with `:parameters`), who may open it, and how it is made.
struct PageRoute: Sendable {
    var path: String
    var role: PanelRole
    var parameters: [String] = []
    var handler: @Sendable (PageKit) async -> PageResult
}

/// Every page, and the navigation each role sees.
enum PageCatalog {
    static let routes: [PageRoute] = [
        PageRoute(path: "/", role: .staff, handler: { kit in kit.visit.session.role == .admin ? await MonitoringPages.overview(kit) : .redirect("/desk") }),
        PageRoute(path: "/users", role: .admin, handler: UserPages.list),
        PageRoute(path: "/users/:id", role: .admin, parameters: ["id"], handler: UserPages.detail),
        PageRoute(path: "/goals/types", role: .admin, handler: GoalPages.types),
        PageRoute(path: "/goals/types/:id", role: .admin, parameters: ["id"], handler: GoalPages.type),
        PageRoute(path: "/goals/groups", role: .admin, handler: GoalPages.groups),
        PageRoute(path: "/goals/groups/:id", role: .admin, parameters: ["id"], handler: GoalPages.group),
        PageRoute(path: "/goals/texts", role: .admin, handler: GoalPages.texts),
        PageRoute(path: "/goals/questionnaires", role: .admin, handler: GoalPages.questionnaires),
        PageRoute(path: "/goals/inbox", role: .admin, handler: GoalPages.inbox),
        PageRoute(path: "/goals/goal/:id", role: .admin, parameters: ["id"], handler: GoalPages.goal),
        PageRoute(path: "/broadcasts", role: .admin, handler: NotificationPages.broadcasts),
        PageRoute(path: "/notifications", role: .admin, handler: NotificationPages.templates),
        PageRoute(path: "/savings", role: .admin, handler: CatalogPages.savings),
        PageRoute(path: "/savings/:id", role: .admin, parameters: ["id"], handler: CatalogPages.savingsMethod),
        PageRoute(path: "/fitness", role: .admin, handler: CatalogPages.fitness),
        PageRoute(path: "/fitness/exercises/:id", role: .admin, parameters: ["id"], handler: CatalogPages.exercise),
        PageRoute(path: "/park", role: .admin, handler: ParkPages.settings),
        PageRoute(path: "/desk", role: .staff, handler: DeskPages.day),
        PageRoute(path: "/riders", role: .staff, handler: DeskPages.findRider),
        PageRoute(path: "/riders/:id", role: .staff, parameters: ["id"], handler: DeskPages.rider),
        PageRoute(path: "/monitoring", role: .admin, handler: MonitoringPages.services),
        PageRoute(path: "/activity", role: .admin, handler: OperationsPages.activity),
        PageRoute(path: "/payments", role: .admin, handler: OperationsPages.payments),
        PageRoute(path: "/deliveries", role: .admin, handler: OperationsPages.deliveries),
        PageRoute(path: "/goals/body-options", role: .admin, handler: OperationsPages.bodyOptions),
    ]

    static func nav(for role: PanelRole) -> [(label: String, href: String)] {
        switch role {
        case .staff: [("Desk", "/desk")]
        case .admin:
            [
                ("Overview", "/"), ("Monitoring", "/monitoring"), ("Activity", "/activity"), ("Users", "/users"), ("Goal types", "/goals/types"),
                ("Groups", "/goals/groups"), ("Body options", "/goals/body-options"), ("Texts", "/goals/texts"),
                ("Questionnaires", "/goals/questionnaires"), ("Inbox", "/goals/inbox"), ("Broadcasts", "/broadcasts"),
                ("Notifications", "/notifications"), ("Deliveries", "/deliveries"), ("Savings", "/savings"), ("Fitness", "/fitness"),
                ("Park", "/park"), ("Payments", "/payments"), ("Desk", "/desk"),
            ]
        }
    }
}

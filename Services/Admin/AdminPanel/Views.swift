import Foundation
import Mustache
import Platform

/// A cell of a table on a page.
struct Cell {
    var text = ""
    var href: String?
    var image: String?
    var badge: String?
    var small: String?
    var numeric = false
    var actions: [ActionButton] = []

    init(_ text: String = "", href: String? = nil, image: String? = nil, badge: String? = nil, small: String? = nil, numeric: Bool = false, actions: [ActionButton] = []) {
        self.text = text
        self.href = href
        self.image = image
        self.badge = badge
        self.small = small
        self.numeric = numeric
        self.actions = actions
    }

    static func number(_ value: Int64?, _ format: Formatting) -> Cell { Cell(value.map(format.number) ?? "—", numeric: true) }
}

/// A one-click form in a table cell (mark attended, retire, revoke a role). It posts to a
/// declared ``AdminForm``; its fields are hidden.
struct ActionButton {
    var formID: String
    var label: String
    var hidden: [String: String]
    var danger = false
    /// Where to go after it is done, when not back to this page (a deleted thing's page).
    var returnTo: String?
}

/// A section of a page.
struct Block {
    var heading: String?
    var text: String?
    var html = ""
    var wide = false
    var links: [(label: String, href: String)] = []
}

/// Renders the panel's pieces with its templates.
struct Renderer: Sendable {
    let library: MustacheLibrary

    func table(headers: [String], rows: [[Cell]], empty: String = "Nothing here yet.", csrf: String, returnTo: String) -> String {
        let context: [String: Any] = [
            "hasRows": !rows.isEmpty, "headers": headers, "empty": empty,
            "rows": rows.map { cells in
                [
                    "cells": cells.map { cell -> [String: Any] in
                        var item: [String: Any] = ["text": cell.text, "numeric": cell.numeric]
                        if let href = cell.href { item["href"] = href }
                        if let image = cell.image { item["image"] = image }
                        if let badge = cell.badge { item["badge"] = badge }
                        if let small = cell.small { item["small"] = small }
                        item["actions"] = cell.actions.map { action -> [String: Any] in
                            [
                                "formID": action.formID, "label": action.label, "danger": action.danger, "csrf": csrf, "returnTo": action.returnTo ?? returnTo,
                                "idem": SessionStore.randomToken(),
                                "hidden": action.hidden.sorted { $0.key < $1.key }.map { ["name": $0.key, "value": $0.value] },
                            ]
                        }
                        return item
                    }
                ]
            },
        ]
        return library.render(context, withTemplate: "table") ?? ""
    }

    /// A form with its current values and problems.
    func form(
        _ form: AdminForm, values: [String: String] = [:], errors: [String: String] = [:], general: [String] = [], csrf: String,
        returnTo: String, zone: TimeZone? = nil, idem: String? = nil, titleOverride: String? = nil,
        choices: [String: [FormField.Choice]] = [:]
    ) -> String {
        let fields = form.fields.map { field -> [String: Any] in
            var field = field
            if let options = choices[field.name] {
                field.kind = .choice(options)
            } else if form.pickedOnPage.contains(field.name), let picked = values[field.name], !picked.isEmpty {
                field.kind = .choice([FormField.Choice(picked, Self.pickedLabel(picked, zone: zone))])
                field.help = "as picked on the page before; go Back to pick another"
            }
            var item: [String: Any] = [
                "name": field.name, "label": field.label, "value": values[field.name] ?? "", "required": field.required,
                "inputID": "\(form.id)-\(field.name)".replacingOccurrences(of: ".", with: "-"),
            ]
            if let help = field.help { item["help"] = help }
            if let error = errors[field.name] { item["error"] = error }
            switch field.kind {
            case .hidden, .hiddenInteger: item["isHidden"] = true
            case .boolean:
                item["isCheckbox"] = true
                item["checked"] = values[field.name] == "on"
            case .multiline: (item["isTextarea"], item["rows"]) = (true, 4)
            case .json: (item["isTextarea"], item["rows"]) = (true, 14)
            case .choice(let choices):
                item["isSelect"] = true
                item["options"] = choices.map { ["value": $0.value, "label": $0.label, "selected": $0.value == values[field.name]] }
            case .image(let service):
                item["isFile"] = true
                if let current = values[field.name], !current.isEmpty {
                    item["current"] = true
                    item["currentSrc"] = "/media/\(service)/\(current)"
                }
            case .integer: (item["isInput"], item["inputType"], item["step"]) = (true, "number", "1")
            case .money:
                (item["isInput"], item["inputType"]) = (true, "text")
                item["help"] = field.help ?? "in the park's currency, e.g. 12.50"
            case .date: (item["isInput"], item["inputType"]) = (true, "date")
            case .time: (item["isInput"], item["inputType"]) = (true, "time")
            case .localDateTime: (item["isInput"], item["inputType"]) = (true, "datetime-local")
            case .password: (item["isInput"], item["inputType"]) = (true, "password")
            case .text: (item["isInput"], item["inputType"]) = (true, "text")
            }
            return item
        }
        var context: [String: Any] = [
            "formID": form.id, "title": titleOverride ?? form.title, "submit": form.submit, "danger": form.danger, "csrf": csrf,
            "returnTo": returnTo, "idem": idem ?? SessionStore.randomToken(), "fields": fields, "general": general,
            "multipart": !form.imageFields.isEmpty, "previewable": form.previewable,
        ]
        if let zone { context["zone"] = zone.identifier }
        return library.render(context, withTemplate: "form") ?? ""
    }

    /// A picked value shown on its own: an instant as a local date and time (in `zone`,
    /// else UTC, said so), anything else as it is.
    static func pickedLabel(_ value: String, zone: TimeZone?) -> String {
        guard let instant = Instant.parse(value) else { return value }
        let zone = zone ?? TimeZone(identifier: "UTC")!
        return LocalDateTimeText.text(instant, zone: zone).replacingOccurrences(of: "T", with: " ") + " (\(zone.identifier))"
    }

    func confirm(_ form: AdminForm, hidden: [String: String], csrf: String, returnTo: String, idem: String) -> String {
        let context: [String: Any] = [
            "formID": form.id, "question": form.confirm ?? "Are you sure?", "submit": form.submit, "csrf": csrf, "returnTo": returnTo,
            "idem": idem, "hidden": hidden.sorted { $0.key < $1.key }.map { ["name": $0.key, "value": $0.value] },
        ]
        return library.render(context, withTemplate: "confirm") ?? ""
    }

    func blocks(_ blocks: [Block]) -> String {
        let context: [String: Any] = [
            "blocks": blocks.map { block -> [String: Any] in
                var item: [String: Any] = ["html": block.html, "wide": block.wide]
                if let heading = block.heading { item["heading"] = heading }
                if let text = block.text { item["text"] = text }
                if !block.links.isEmpty { item["links"] = ["items": block.links.map { ["label": $0.label, "href": $0.href] }] }
                return item
            }
        ]
        return library.render(context, withTemplate: "page") ?? ""
    }

    func message(_ text: String, link: (label: String, href: String)? = nil) -> String {
        var context: [String: Any] = ["message": text]
        if let link { (context["link"], context["linkLabel"]) = (link.href, link.label) }
        return library.render(context, withTemplate: "message") ?? ""
    }

    func layout(title: String, body: String, session: AdminSession?, nav: [(label: String, href: String)], current: String, flash: String?) -> String {
        var context: [String: Any] = ["title": title, "body": body, "language": session.map { Formatting.language(of: $0.locale) } ?? "en"]
        if let flash { context["flash"] = flash }
        if let session {
            context["user"] = [
                "name": session.name, "role": session.role.rawValue, "csrf": session.csrf,
                "nav": nav.map { item in ["label": item.label, "href": item.href, "current": item.href == current || (item.href != "/" && current.hasPrefix(item.href + "/"))] },
            ]
        }
        return library.render(context, withTemplate: "layout") ?? ""
    }

    func login(error: String?, email: String, next: String, loginToken: String) -> String {
        var context: [String: Any] = ["email": email, "next": next, "loginToken": loginToken]
        if let error { context["error"] = error }
        return library.render(context, withTemplate: "login") ?? ""
    }
}

/// Dates and numbers in the admin's locale (their profile's, else the browser's).
struct Formatting: Sendable {
    let locale: Locale
    let zone: TimeZone

    init(locale: String, zone: TimeZone = TimeZone(identifier: "UTC")!) {
        self.locale = Locale(identifier: locale)
        self.zone = zone
    }

    static func language(of locale: String) -> String {
        String(locale.prefix { $0 != "-" && $0 != "_" }).lowercased()
    }

    func number(_ value: Int64) -> String {
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.numberStyle = .decimal
        return formatter.string(from: NSNumber(value: value)) ?? String(value)
    }

    /// An amount in its currency's decimals (none for JPY, three for KWD), grouped as the
    /// locale writes numbers; integer arithmetic throughout.
    func money(_ value: JSONValue?) -> String {
        guard let minor = value?["minor"]?.integerValue else { return "—" }
        let code = value?["currency"]?.stringValue ?? ""
        let parts = MoneyText.parts(minor, exponent: Currency(stored: code).exponent)
        let formatter = NumberFormatter()
        formatter.locale = locale
        formatter.numberStyle = .decimal
        let major = formatter.string(from: NSNumber(value: parts.major)) ?? String(parts.major)
        let fraction = parts.fraction.isEmpty ? "" : (formatter.decimalSeparator ?? ".") + parts.fraction
        return (parts.negative ? "-" : "") + major + fraction + " " + code
    }

    /// "23 Nov 2026, 18:30" for an instant (the zone's wall clock).
    func dateTime(_ text: String?) -> String {
        guard let text, let date = Instant.parse(text) else { return text ?? "—" }
        let formatter = DateFormatter()
        formatter.locale = locale
        formatter.timeZone = zone
        formatter.dateStyle = .medium
        formatter.timeStyle = .short
        return formatter.string(from: date)
    }

    /// "23 Nov 2026" for a calendar date.
    func date(_ text: String?) -> String {
        guard let text, let date = LocalDate(text) else { return text ?? "—" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let instant = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day)) else { return text }
        let formatter = DateFormatter()
        formatter.locale = locale
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateStyle = .medium
        formatter.timeStyle = .none
        return formatter.string(from: instant)
    }

    /// "23.11" or "11/23": a day's short label for charts.
    func shortDate(_ text: String) -> String {
        guard let date = LocalDate(text) else { return text }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let instant = calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day)) else { return text }
        let formatter = DateFormatter()
        formatter.locale = locale
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.setLocalizedDateFormatFromTemplate("dMMM")
        return formatter.string(from: instant)
    }
}

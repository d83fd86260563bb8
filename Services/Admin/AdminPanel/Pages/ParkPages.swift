import Foundation
import Platform

/// The wake park's settings, cables, hours, prices and packages.
enum ParkPages {
    @Sendable static func settings(_ kit: PageKit) async -> PageResult {
        let park: JSONValue
        switch await kit.call("booking.park.get") {
        case .success(let value): park = value
        case .failure(let error): return .failure(error)
        }
        let cables = park["cables"]?.arrayValue ?? []
        let packages = park["packages"]?.arrayValue ?? []
        let cableRows = cables.map { cable -> [Cell] in
            let id = cable["id"]?.stringValue ?? ""
            let active = cable["active"] == .bool(true)
            return [
                Cell(image: kit.mediaURL("booking", cable["image"]?.stringValue)), Cell(cable["name"]?.stringValue ?? id, href: "/park?cable=\(id)", small: id),
                Cell(active ? "in service" : "out of service", badge: active ? "ok" : "warn"),
            ]
        }
        let packageRows = packages.map { package -> [Cell] in
            let id = package["id"]?.stringValue ?? ""
            return [
                Cell(image: kit.mediaURL("booking", package["image"]?.stringValue)), Cell(package["name"]?.stringValue ?? id, href: "/park?package=\(id)", small: id),
                Cell("\(package["sessions"]?.integerValue ?? 0)", numeric: true), Cell(kit.format.money(package["credit"]), numeric: true),
                Cell(kit.format.money(package["price"]), numeric: true),
            ]
        }
        var cableValues = ["active": "on"]
        if let id = kit.visit.query("cable"), let cable = cables.first(where: { $0["id"]?.stringValue == id }) {
            cableValues = kit.values("park-cable", from: cable)
        }
        var packageValues = ["active": "on"]
        if let id = kit.visit.query("package"), let package = packages.first(where: { $0["id"]?.stringValue == id }) {
            var current = package.objectValue ?? [:]
            current["credit"] = package["credit"]?["minor"]
            current["price"] = package["price"]?["minor"]
            current["active"] = true
            packageValues = kit.values("park-package", from: .object(current))
        }
        return PageKit.page(
            "The park",
            [
                Block(heading: "Settings", html: kit.form("park-settings", values: kit.values("park-settings", from: park), title: "Settings")),
                Block(
                    heading: "Opening hours", text: "Per weekday, or for one date (a holiday). Times in the park's zone (\(park["timeZone"]?.stringValue ?? "")).",
                    html: kit.form("park-hours", title: "Set the hours")),
                Block(
                    heading: "Cables", html: kit.table(["", "Cable", ""], cableRows, empty: "No cables.")
                        + kit.form("park-cable", values: cableValues, title: kit.visit.query("cable").map { "Edit \($0)" } ?? "Add or change a cable")),
                Block(
                    heading: "Pass packages", text: "Withdrawn packages are not listed; give a withdrawn package's id to bring it back.",
                    html: kit.table(["", "Package", "Sessions", "Credit", "Price"], packageRows, empty: "No packages on sale.")
                        + kit.form("park-package", values: packageValues, title: kit.visit.query("package").map { "Edit \($0)" } ?? "Add or change a package")),
            ])
    }
}

import Foundation
import Platform

/// The wake park's settings, cables, hours, prices and packages.
enum ParkPages {
    /// The weekly hours, then the dates from today on with other hours (closed said so).
    static func hoursRows(_ park: JSONValue, kit: PageKit) -> [[Cell]] {
        let names = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        var weekly: [Int: String] = [:]
        for day in park["hours"]?.arrayValue ?? [] {
            guard let weekday = day["weekday"]?.integerValue else { continue }
            weekly[Int(weekday)] = "\(day["open"]?.stringValue ?? "")–\(day["close"]?.stringValue ?? "")"
        }
        let rows = (1...7).map { weekday in [Cell(names[weekday - 1]), weekly[weekday].map { Cell($0) } ?? Cell("closed", badge: "warn")] }
        let exceptions = (park["exceptions"]?.arrayValue ?? []).map { date -> [Cell] in
            let day = Cell(kit.format.date(date["date"]?.stringValue), small: "this date only")
            guard let open = date["open"]?.stringValue, let close = date["close"]?.stringValue else { return [day, Cell("closed", badge: "warn")] }
            return [day, Cell("\(open)–\(close)")]
        }
        return rows + exceptions
    }

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
        // Amounts are typed in the park's currency's decimals.
        let currency = park["price"]?["currency"]?.stringValue.flatMap { Currency(code: $0) }
        var packageValues = ["active": "on"]
        if let id = kit.visit.query("package"), let package = packages.first(where: { $0["id"]?.stringValue == id }) {
            var current = package.objectValue ?? [:]
            current["credit"] = package["credit"]?["minor"]
            current["price"] = package["price"]?["minor"]
            current["active"] = true
            packageValues = kit.values("park-package", from: .object(current), currency: currency)
        }
        return PageKit.page(
            "The park",
            [
                Block(heading: "Settings", html: kit.form("park-settings", values: kit.values("park-settings", from: park, currency: currency), title: "Settings")),
                Block(
                    heading: "Opening hours", text: "Per weekday, or for one date (a holiday). Times in the park's zone (\(park["timeZone"]?.stringValue ?? "")).",
                    html: kit.table(["Day", "Hours"], hoursRows(park, kit: kit), empty: "The park is closed every day: set some hours.")
                        + kit.form("park-hours", title: "Set the hours")),
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

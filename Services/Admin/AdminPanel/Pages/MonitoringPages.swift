import Foundation
import Platform

/// The report form of the goals spec (users by role, registrations per day), activity,
/// goals by state, bookings per day, and each service's requests, errors and latency:
/// charts drawn on the server, with the numbers beside them.
enum MonitoringPages {
    static let services = ["auth", "goals", "reminders", "savings", "booking", "stats"]

    static func days(_ kit: PageKit) -> Int {
        let days = Int(kit.visit.query("days") ?? "") ?? 30
        return [7, 30, 90].contains(days) ? days : 30
    }

    @Sendable static func overview(_ kit: PageKit) async -> PageResult {
        let days = days(kit)
        let today = LocalDate(daysSinceEpoch: Int64(Date().timeIntervalSince1970 / 86_400))
        let from = LocalDate(daysSinceEpoch: today.daysSinceEpoch - Int64(days - 1))
        let range: JSONValue = ["from": .string(from.description), "to": .string(today.description)]
        async let usersCall = kit.call("auth.admin.users.count", range)
        async let activityCall = kit.call("stats.admin.overview", range)
        async let goalsCall = kit.call("goals.admin.stats", range)
        async let bookingsCall = bookingsPerDay(kit, from: LocalDate(daysSinceEpoch: today.daysSinceEpoch - 13), count: 21)
        let (users, activity, goals, bookings) = await (usersCall, activityCall, goalsCall, bookingsCall)
        var blocks: [Block] = []
        let periods = [7, 30, 90].map { (label: "\($0) days", href: "/?days=\($0)") }

        switch users {
        case .success(let answer):
            let byRole = (answer["byRole"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
            // auth lists only the days with registrations: the chart shows every day.
            var counts: [String: Int64] = [:]
            for day in answer["byDay"]?.arrayValue ?? [] { counts[day["date"]?.stringValue ?? ""] = day["count"]?.integerValue ?? 0 }
            let registrations = (0..<days).map { offset -> SVGChart.Point in
                let date = LocalDate(daysSinceEpoch: from.daysSinceEpoch + Int64(offset)).description
                return SVGChart.Point(kit.format.shortDate(date), Double(counts[date] ?? 0))
            }
            let rows = byRole.map { [Cell($0.key), Cell.number($0.value.integerValue, kit.format)] } + [[Cell("all users"), Cell.number(answer["total"]?.integerValue, kit.format)]]
            blocks.append(
                Block(
                    heading: "Users by role", text: "An account holds several roles, so the roles add up to more than all users.",
                    html: SVGChart.bars(byRole.map { SVGChart.Point($0.key, Double($0.value.integerValue ?? 0)) }, title: "Users by role")
                        + kit.table(["Role", "Users"], rows)))
            blocks.append(
                Block(
                    heading: "Registrations per day", text: "The last \(days) days (UTC); \(kit.format.number(Int64(registrations.reduce(0) { $0 + $1.value }))) in all.",
                    html: SVGChart.bars(registrations, title: "Registrations per day") + dailyTable(registrations, kit: kit), links: periods))
        case .failure(let error): blocks.append(unavailable("Users", error))
        }
        switch activity {
        case .success(let answer):
            let active = (answer["days"]?.arrayValue ?? []).map {
                SVGChart.Point(kit.format.shortDate($0["day"]?.stringValue ?? ""), Double($0["activeUsers"]?.integerValue ?? 0))
            }
            blocks.append(
                Block(
                    heading: "Active users per day", text: "People who did something in any of the apps that day (UTC): anyone an app's event names.",
                    html: SVGChart.bars(active, title: "Active users per day", color: "#3b8a5a") + dailyTable(active, kit: kit)))
        case .failure(let error): blocks.append(unavailable("Activity", error))
        }
        switch goals {
        case .success(let answer):
            let states = ["draft", "proposed", "active", "completed", "failed", "withdrawn"]
            let byState = answer["byState"]?.objectValue ?? [:]
            let points = states.map { SVGChart.Point($0, Double(byState[$0]?.integerValue ?? 0)) }
            blocks.append(
                Block(
                    heading: "Goals by state", html: SVGChart.bars(points, title: "Goals by state", color: "#8a5a3b")
                        + kit.table(["State", "Goals"], points.map { [Cell($0.label), Cell.number(Int64($0.value), kit.format)] })))
        case .failure(let error): blocks.append(unavailable("Goals", error))
        }
        switch bookings {
        case .success(let points):
            blocks.append(
                Block(
                    heading: "Bookings per day", text: "Trainings booked, attended or missed, two weeks back and a week ahead (the park's days).",
                    html: SVGChart.bars(points, title: "Bookings per day", color: "#6a4fb0") + dailyTable(points, kit: kit)))
        case .failure(let error): blocks.append(unavailable("Bookings", error))
        }
        return PageKit.page("Overview", blocks)
    }

    static func unavailable(_ heading: String, _ error: ServiceError) -> Block {
        Block(heading: heading, text: AdminPanel.explain(error))
    }

    static func dailyTable(_ points: [SVGChart.Point], kit: PageKit) -> String {
        "<details><summary>The numbers</summary>" + kit.table(["Day", "Count"], points.reversed().map { [Cell($0.label), Cell.number(Int64($0.value), kit.format)] })
            + "</details>"
    }

    /// Trainings per day from the desk's day view (booked, attended, no-show), days in parallel.
    static func bookingsPerDay(_ kit: PageKit, from: LocalDate, count: Int) async -> Result<[SVGChart.Point], ServiceError> {
        let answers = await withTaskGroup(of: (Int, Result<JSONValue, ServiceError>).self) { group in
            for offset in 0..<count {
                let date = LocalDate(daysSinceEpoch: from.daysSinceEpoch + Int64(offset))
                group.addTask { (offset, await kit.call("booking.staff.day", ["date": .string(date.description)])) }
            }
            var answers: [Int: Result<JSONValue, ServiceError>] = [:]
            for await (offset, answer) in group { answers[offset] = answer }
            return answers
        }
        var points: [SVGChart.Point] = []
        for offset in 0..<count {
            let date = LocalDate(daysSinceEpoch: from.daysSinceEpoch + Int64(offset))
            switch answers[offset] {
            case .success(let day):
                let counted = (day["bookings"]?.arrayValue ?? []).filter { ["booked", "attended", "no_show"].contains($0["status"]?.stringValue ?? "") }.count
                points.append(SVGChart.Point(kit.format.shortDate(date.description), Double(counted)))
            case .failure(let error): return .failure(error)
            case nil: return .failure(.unavailable("no answer"))
            }
        }
        return .success(points)
    }

    @Sendable static func services(_ kit: PageKit) async -> PageResult {
        let answers = await withTaskGroup(of: (String, Result<JSONValue, ServiceError>).self) { group in
            for service in services { group.addTask { (service, await kit.call("\(service).metrics")) } }
            group.addTask { ("gateway", await kit.call("gateway.health")) }
            var answers: [String: Result<JSONValue, ServiceError>] = [:]
            for await (name, answer) in group { answers[name] = answer }
            return answers
        }
        func milliseconds(_ value: JSONValue?) -> String {
            switch value {
            case .number(let number)?: number < 1 ? String(format: "%.2f ms", number) : String(format: "%.0f ms", number)
            case .integer(let number)?: "\(number) ms"
            default: "—"
            }
        }
        var rows: [[Cell]] = []
        var blocks: [Block] = []
        var latency: [(service: String, p50: Double, p99: Double)] = []
        let health = (try? answers["gateway"]?.get()) ?? [:]
        // The gateway answers its own health (and each service's as it last saw it).
        let gatewayStatus = health["status"]?.stringValue ?? "unreachable"
        rows.append([
            Cell("gateway", small: "forwards every request; its own figures are on /metrics"),
            Cell(gatewayStatus, badge: gatewayStatus == "ok" ? "ok" : "bad"), Cell("—"), Cell("—"), Cell("—"), Cell("—"), Cell("—"),
        ])
        for service in services {
            let status = health["services"]?[service]?["status"]?.stringValue ?? "unknown"
            guard case .success(let metrics)? = answers[service] else {
                rows.append([Cell(service), Cell(status, badge: "bad"), Cell("—"), Cell("—"), Cell("—"), Cell("—"), Cell("—")])
                continue
            }
            let hour = metrics["lastHour"] ?? [:]
            let requests = hour["requests"]?.integerValue ?? 0
            let errors = hour["errors"]?.integerValue ?? 0
            let codes = (hour["errorsByCode"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.integerValue ?? 0)" }
            rows.append([
                Cell(service), Cell(status, badge: status == "ok" ? "ok" : "bad"), Cell.number(requests, kit.format),
                Cell(kit.format.number(errors), small: codes.isEmpty ? nil : codes.joined(separator: ", "), numeric: true),
                Cell(milliseconds(hour["p50Ms"]), numeric: true), Cell(milliseconds(hour["p90Ms"]), numeric: true), Cell(milliseconds(hour["p99Ms"]), numeric: true),
            ])
            if requests > 0 { latency.append((service, Self.milliseconds(hour["p50Ms"]), Self.milliseconds(hour["p99Ms"]))) }
            let minutes = metrics["minutes"]?.arrayValue ?? []
            let format = Formatting(locale: kit.visit.session.locale)
            let points = minutes.map { minute -> SVGChart.Point in
                let label = format.dateTime(minute["start"]?.stringValue).split(separator: " ").last.map(String.init) ?? ""
                return SVGChart.Point(label, Double(minute["requests"]?.integerValue ?? 0))
            }
            let errorPoints = zip(minutes, points).map { minute, point in SVGChart.Point(point.label, Double(minute["errors"]?.integerValue ?? 0)) }
            let totalErrors = errorPoints.reduce(0) { $0 + $1.value }
            // The per-operation figures Prometheus and `ctl top` read too.
            let operations = (metrics["operations"]?.arrayValue ?? []).map { op in
                [
                    Cell(op["op"]?.stringValue ?? ""), Cell.number(op["requests"]?.integerValue, kit.format),
                    Cell.number(op["errors"]?.integerValue, kit.format), Cell(milliseconds(op["p50Ms"]), numeric: true),
                    Cell(milliseconds(op["p99Ms"]), numeric: true),
                ]
            }
            let byOperation =
                operations.isEmpty
                ? ""
                : "<details><summary>By operation, since the start</summary>"
                    + kit.table(["Operation", "Requests", "Errors", "p50", "p99"], operations) + "</details>"
            blocks.append(
                Block(
                    heading: "\(service): requests per minute",
                    text: "Since \(kit.format.dateTime(metrics["since"]?.stringValue)): \(kit.format.number(metrics["total"]?["requests"]?.integerValue ?? 0)) requests, \(kit.format.number(metrics["total"]?["errors"]?.integerValue ?? 0)) errors.",
                    html: SVGChart.bars(points, title: "\(service): requests per minute, last hour", height: 150)
                        + (totalErrors > 0 ? SVGChart.bars(errorPoints, title: "\(service): errors per minute", height: 90, color: "#b3261e") : "")
                        + byOperation))
        }
        let table = Block(
            heading: "Services, the last hour",
            text: "Requests answered by each service (health checks left out), errors by code, and latency inside the service: p99 means 99 % took at most that long.",
            html: kit.table(["Service", "Health", "Requests", "Errors", "p50", "p90", "p99"], rows), wide: true)
        let latencyBlock = Block(
            heading: "Latency by service, the last hour",
            text: latency.isEmpty ? "No requests in the last hour." : "Half of the requests took at most the first figure, 99 % at most the second.",
            html: latency.isEmpty
                ? ""
                : SVGChart.bars(latency.map { SVGChart.Point($0.service, $0.p50) }, title: "p50 latency by service (ms)", unit: " ms", height: 150)
                    + SVGChart.bars(latency.map { SVGChart.Point($0.service, $0.p99) }, title: "p99 latency by service (ms)", unit: " ms", height: 150, color: "#b06a2f"))
        return PageKit.page("Monitoring", [table, latencyBlock] + blocks)
    }

    /// A figure in milliseconds as a number (0 when missing).
    static func milliseconds(_ value: JSONValue?) -> Double {
        switch value {
        case .number(let number)?: number
        case .integer(let number)?: Double(number)
        default: 0
        }
    }
}

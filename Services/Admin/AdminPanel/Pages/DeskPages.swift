import Foundation
import Platform

/// The park's desk: the day across all cables, marks, sanctions, walk-ins, closing a
/// period; a rider's bookings, pass and ledger.
enum DeskPages {
    static func badge(_ status: String) -> String {
        switch status {
        case "attended", "booked": "ok"
        case "no_show", "late_cancelled": "bad"
        default: "warn"
        }
    }

    /// The actions the desk may take on a booking in its state.
    static func actions(_ booking: JSONValue, kit: PageKit, started: Bool) -> [ActionButton] {
        let id = booking["id"]?.stringValue ?? ""
        let status = booking["status"]?.stringValue ?? ""
        var actions: [ActionButton] = []
        switch status {
        case "booked":
            if started {
                actions += [kit.action("desk-attended", "Attended", ["booking": id]), kit.action("desk-no-show", "No-show", ["booking": id], danger: true)]
            }
            actions.append(kit.action("desk-cancel", "Cancel", ["booking": id, "reason": "cancelled at the desk"], danger: true))
        case "attended": actions.append(kit.action("desk-no-show", "Correct: no-show", ["booking": id], danger: true))
        case "no_show": actions.append(kit.action("desk-attended", "Correct: attended", ["booking": id]))
        default: break
        }
        if status == "no_show" || status == "late_cancelled" {
            switch booking["sanction"]?.stringValue {
            case "forfeit": actions.append(kit.action("desk-waive", "Waive sanction", ["booking": id]))
            case "waived", "none": actions.append(kit.action("desk-forfeit", "Apply sanction", ["booking": id], danger: true))
            default: break
            }
        }
        return actions
    }

    /// Every booking of `booking.staff.day`'s answer, from its full list, each marked when
    /// it is not on one of the day's slots (the per-slot lists leave those out).
    static func bookingsOfDay(_ answer: JSONValue) -> [(booking: JSONValue, offGrid: Bool)] {
        func key(_ value: JSONValue) -> String { "\(value["cable"]?.stringValue ?? "")|\(value["start"]?.stringValue ?? "")" }
        let onGrid = Set((answer["items"]?.arrayValue ?? []).map(key))
        return (answer["bookings"]?.arrayValue ?? []).map { ($0, !onGrid.contains(key($0))) }
    }

    /// The slots the desk can book a walk-in on: those riders can book, and those within
    /// the riders' minimum notice (the rider is at the counter) that have not started, have
    /// a free place and are not in a closed period.
    static func walkInStarts(_ answer: JSONValue, now: Date) -> [FormField.Choice] {
        let blocks = (answer["blocks"]?.arrayValue ?? []).compactMap { block -> (cable: String?, start: Date, end: Date)? in
            guard let start = block["start"]?.stringValue.flatMap(Instant.parse), let end = block["end"]?.stringValue.flatMap(Instant.parse) else { return nil }
            return (block["cable"]?.stringValue, start, end)
        }
        var starts: [FormField.Choice] = []
        for slot in answer["items"]?.arrayValue ?? [] {
            guard let start = slot["start"]?.stringValue, let begins = Instant.parse(start), !starts.contains(where: { $0.value == start }) else { continue }
            let ends = slot["end"]?.stringValue.flatMap(Instant.parse) ?? begins
            let cable = slot["cable"]?.stringValue
            let blocked = blocks.contains { ($0.cable == nil || $0.cable == cable) && $0.start < ends && $0.end > begins }
            let open = slot["bookable"] == .bool(true) || (begins > now && (slot["free"]?.integerValue ?? 0) > 0 && !blocked)
            guard open else { continue }
            starts.append(FormField.Choice(start, "\(slot["localStart"]?.stringValue ?? "")–\(slot["localEnd"]?.stringValue ?? "")"))
        }
        return starts
    }

    @Sendable static func day(_ kit: PageKit) async -> PageResult {
        let park: JSONValue
        switch await kit.call("booking.park.get") {
        case .success(let value): park = value
        case .failure(let error): return .failure(error)
        }
        let zone = park["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC")!
        let today = LocalDateTimeText.text(Date(), zone: zone).prefix(10)
        let asked = kit.visit.query("date")
        let date = asked.flatMap(LocalDate.init) ?? LocalDate(String(today))!
        let answer: JSONValue
        switch await kit.call("booking.staff.day", ["date": .string(date.description)]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let now = Date()
        let slots = answer["items"]?.arrayValue ?? []
        // Every booking of the day, from the day's full list: also those off today's slots
        // (opening hours or the slot length changed after they were made), which the
        // per-slot lists do not hold.
        var rows: [[Cell]] = []
        for (booking, offGrid) in bookingsOfDay(answer) {
            let started = (booking["start"]?.stringValue.flatMap(Instant.parse)).map { $0 <= now } ?? false
            let status = booking["status"]?.stringValue ?? ""
            let rider = booking["rider"]
            rows.append([
                Cell(
                    "\(booking["localStart"]?.stringValue ?? "")–\(booking["localEnd"]?.stringValue ?? "")",
                    small: offGrid ? "not one of the day's slots" : nil),
                Cell(booking["cable"]?.stringValue ?? ""),
                Cell(rider?["name"]?.stringValue ?? "—", href: "/riders/\(booking["userId"]?.stringValue ?? "")", small: rider?["phone"]?.stringValue ?? "no phone"),
                Cell(status.replacingOccurrences(of: "_", with: " "), badge: badge(status), small: booking["sanction"]?.stringValue.map { "sanction: \($0)" }),
                Cell(booking["paidWith"]?.stringValue ?? ""), Cell(actions: actions(booking, kit: kit, started: started)),
            ])
        }
        // One row per time, one column per cable: "1 of 4" booked, marked closed when it cannot be booked.
        var cableOrder: [String] = []
        var byTime: [(time: String, cells: [String: JSONValue])] = []
        for slot in slots {
            let cable = slot["cable"]?.stringValue ?? ""
            if !cableOrder.contains(cable) { cableOrder.append(cable) }
            let time = "\(slot["localStart"]?.stringValue ?? "")–\(slot["localEnd"]?.stringValue ?? "")"
            if byTime.last?.time == time { byTime[byTime.count - 1].cells[cable] = slot } else { byTime.append((time, [cable: slot])) }
        }
        let slotRows = byTime.map { row -> [Cell] in
            [Cell(row.time)] + cableOrder.map { cable -> Cell in
                guard let slot = row.cells[cable] else { return Cell("—") }
                let capacity = slot["capacity"]?.integerValue ?? 0
                let taken = capacity - (slot["free"]?.integerValue ?? 0)
                let open = slot["bookable"] == .bool(true)
                return Cell("\(taken) of \(capacity)", badge: open ? (taken > 0 ? "ok" : nil) : "warn", small: open ? nil : "closed")
            }
        }
        let previous = LocalDate(daysSinceEpoch: date.daysSinceEpoch - 1)
        let next = LocalDate(daysSinceEpoch: date.daysSinceEpoch + 1)
        let picker = """
            <form method="get" action="/desk"><label for="date">Day</label> <input id="date" type="date" name="date" value="\(date.description)"> <button type="submit">Show</button>
            <a href="/desk?date=\(previous.description)">← \(kit.format.date(previous.description))</a> · <a href="/desk">today</a> · <a href="/desk?date=\(next.description)">\(kit.format.date(next.description)) →</a></form>
            """
        let cables = (park["cables"]?.arrayValue ?? []).filter { $0["active"] == .bool(true) }.compactMap { cable in
            cable["id"]?.stringValue.map { FormField.Choice($0, cable["name"]?.stringValue ?? $0) }
        }
        let starts = walkInStarts(answer, now: now)
        let dayStart = "\(date.description)T\(String(today) == date.description ? LocalDateTimeText.text(now, zone: zone).suffix(5) : "00:00")"
        return PageKit.page(
            "The day at the park: \(kit.format.date(date.description))",
            [
                Block(
                    heading: "Bookings",
                    text: (asked != nil && LocalDate(asked!) == nil ? "“\(asked!.prefix(40))” is not a date (YYYY-MM-DD): today is shown. " : "")
                        + "Times in the park's zone (\(zone.identifier)). Marks are possible once a training has started.",
                    html: picker + kit.table(["Time", "Cable", "Rider", "Status", "Paid with", ""], rows, empty: "No bookings this day.") + findForm(),
                    wide: true),
                Block(
                    heading: "Slots", text: "Places booked per slot and cable; closed: past, blocked or full.",
                    html: "<details\(byTime.count <= 16 ? " open" : "")><summary>\(byTime.count) slots</summary>"
                        + kit.table(["Time"] + cableOrder, slotRows, empty: "The park is closed this day.") + "</details>"),
                Block(
                    html: starts.isEmpty
                        ? "<p class=\"empty\">No slot can be booked this day.</p>"
                        : kit.form("desk-walk-in", values: ["payWith": "cash"], zone: zone, choices: ["cable": cables, "start": starts])),
                Block(
                    heading: "Closed periods",
                    html: kit.table(
                        ["From", "Until", "Cable", "Reason", ""],
                        (answer["blocks"]?.arrayValue ?? []).map { block in
                            [
                                Cell(LocalDateTimeText.text(Instant.parse(block["start"]?.stringValue ?? "") ?? now, zone: zone).replacingOccurrences(of: "T", with: " ")),
                                Cell(LocalDateTimeText.text(Instant.parse(block["end"]?.stringValue ?? "") ?? now, zone: zone).replacingOccurrences(of: "T", with: " ")),
                                Cell(block["cable"]?.stringValue ?? "every cable"), Cell(block["reason"]?.stringValue ?? ""),
                                Cell(actions: [kit.action("desk-unblock", "Open again", ["id": block["id"]?.stringValue ?? "", "reason": "opened at the desk"])]),
                            ]
                        }, empty: "Nothing is closed this day.")
                        + kit.form("desk-block", values: ["start": dayStart, "end": "\(date.description)T23:59"], zone: zone, choices: ["cable": cables])),
            ])
    }

    /// The form that finds a rider at the counter by phone (`/riders?phone=`).
    static func findForm(_ phone: String = "") -> String {
        """
        <form method="get" action="/riders"><label for="find-phone">Find a rider by phone</label> <input id="find-phone" name="phone" type="tel" value="\(SVGChart.escape(phone))" placeholder="+375…" size="16"> <button type="submit">Find</button></form>
        """
    }

    /// A rider found by phone: their page; else the form again, saying why.
    @Sendable static func findRider(_ kit: PageKit) async -> PageResult {
        let phone = String((kit.visit.query("phone") ?? "").prefix(40)).filter { !$0.isWhitespace }
        var problem = ""
        if !phone.isEmpty {
            switch await kit.call("booking.staff.rider", ["phone": .string(phone)]) {
            case .success(let answer):
                if let id = answer["rider"]?["id"]?.stringValue { return .redirect("/riders/\(PageKit.queryEscape(id))") }
                problem = "No rider has this phone number."
            case .failure(let error) where error.code == .notFound: problem = "No rider has this phone number: book a walk-in with names to make one."
            case .failure(let error) where error.code == .validationFailed: problem = "“\(phone)” is not a phone number in international form (+375…)."
            case .failure(let error): return .failure(error)
            }
        }
        return PageKit.page("Find a rider", [Block(text: problem.isEmpty ? "A rider's pass, ledger and bookings, by their phone number." : problem, html: findForm(phone))])
    }

    @Sendable static func rider(_ kit: PageKit) async -> PageResult {
        let id = kit.visit.query[":id"] ?? ""
        let answer: JSONValue
        switch await kit.call("booking.staff.rider", ["user": .string(id)]) {
        case .success(let value): answer = value
        case .failure(let error): return .failure(error)
        }
        let pass = answer["pass"] ?? [:]
        let now = Date()
        // Times at the desk are the park's, as the bookings' are.
        var atPark = kit.format
        if case .success(let park) = await kit.call("booking.park.get"), let zone = park["timeZone"]?.stringValue.flatMap(TimeZone.init(identifier:)) {
            atPark = Formatting(locale: kit.visit.session.locale, zone: zone)
        }
        let bookings = (answer["bookings"]?.arrayValue ?? []).map { booking -> [Cell] in
            let status = booking["status"]?.stringValue ?? ""
            let started = (booking["start"]?.stringValue.flatMap(Instant.parse)).map { $0 <= now } ?? false
            return [
                Cell(kit.format.date(booking["date"]?.stringValue), small: "\(booking["localStart"]?.stringValue ?? "")–\(booking["localEnd"]?.stringValue ?? "")"),
                Cell(booking["cable"]?.stringValue ?? ""), Cell(status.replacingOccurrences(of: "_", with: " "), badge: badge(status), small: booking["sanction"]?.stringValue.map { "sanction: \($0)" }),
                Cell(kit.format.money(booking["price"]), numeric: true), Cell(actions: actions(booking, kit: kit, started: started)),
            ]
        }
        let ledger = (pass["recent"]?.arrayValue ?? []).map { entry -> [Cell] in
            [
                Cell(atPark.dateTime(entry["at"]?.stringValue)),
                Cell(
                    entry["kind"]?.stringValue ?? "",
                    small: [entry["reason"]?.stringValue, entry["actor"]?.stringValue.map { "by \(staffName($0))" }].compactMap { $0 }.joined(separator: " · ")),
                Cell(String(entry["sessions"]?.integerValue ?? 0), numeric: true), Cell(kit.format.money(entry["amount"]), numeric: true),
            ]
        }
        // Staff by name where auth gave one, else by id.
        func staffName(_ id: String?) -> String {
            guard let id else { return "" }
            let name = answer["staff"]?[id]?.stringValue ?? ""
            return name.trimmingCharacters(in: .whitespaces).isEmpty ? id : name
        }
        let staffActions = (answer["actions"]?.arrayValue ?? []).map { action -> [Cell] in
            [
                Cell(atPark.dateTime(action["at"]?.stringValue)), Cell(action["action"]?.stringValue ?? ""),
                Cell(action["reason"]?.stringValue ?? "—"), Cell(staffName(action["actor"]?.stringValue)),
            ]
        }
        let rider = answer["rider"] ?? [:]
        return PageKit.page(
            rider["name"]?.stringValue ?? "Rider",
            [
                Block(
                    heading: "Pass",
                    html: kit.table(
                        ["", ""],
                        [
                            [Cell("Phone"), Cell(rider["phone"]?.stringValue ?? "—")], [Cell("Sessions left"), Cell.number(pass["sessions"]?.integerValue, kit.format)],
                            [Cell("Balance"), Cell(kit.format.money(pass["balance"]), numeric: true)],
                        ]) + kit.form("rider-credit", values: ["user": id])),
                Block(
                    heading: "Ledger", text: "The latest 50 movements; times in the park's zone (\(atPark.zone.identifier)).",
                    html: kit.table(["When", "What", "Sessions", "Money"], ledger, empty: "No movements yet.")),
                Block(heading: "Bookings", html: kit.table(["Day", "Cable", "Status", "Price", ""], bookings, empty: "No bookings yet."), wide: true),
                Block(heading: "What the staff did", html: kit.table(["When", "Action", "Reason", "Staff"], staffActions, empty: "Nothing yet."), wide: true),
            ])
    }
}

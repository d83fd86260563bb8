import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Platform
import Testing

@testable import AdminPanel

/// The panel's rules apart from HTTP: how posted text becomes an operation's data, where
/// the services' problems are shown, amounts, safe return paths, charts, sessions.
@Suite("Admin panel rules")
struct AdminRulesTests {
    @Test("the desk lists every booking of the day, also one off today's slots (hours changed after it was made), marked so")
    func deskListsOffGridBookings() {
        let answer: JSONValue = [
            "items": [["cable": "main", "start": "2026-11-27T10:00:00.000Z", "bookings": [["id": "b1"]]]],
            "bookings": [
                ["id": "b1", "cable": "main", "start": "2026-11-27T10:00:00.000Z"],
                ["id": "b2", "cable": "main", "start": "2026-11-27T11:00:00.000Z"],
            ],
        ]
        let listed = DeskPages.bookingsOfDay(answer)
        #expect(listed.map { $0.booking["id"] } == ["b1", "b2"])
        #expect(listed.map(\.offGrid) == [false, true])
    }

    @Test("the inbox counts the new goals of its page, not what is left unseen after marking it")
    func inboxSummary() {
        #expect(GoalPages.inboxSummary(newOnPage: 2, unseenLeft: 0).hasPrefix("2 new on this page"))
        #expect(GoalPages.inboxSummary(newOnPage: 0, unseenLeft: 5).contains("5 more not seen yet"))
    }

    @Test("the walk-in form shown again after a problem keeps the cable and slot picked on the desk, readable, not as text boxes")
    func walkInShownAgain() throws {
        let renderer = Renderer(library: try Templates.library())
        let form = try Self.form("desk-walk-in")
        let html = renderer.form(
            form, values: ["cable": "main", "start": "2026-11-27T08:00:00.000Z", "phone": "abc"], errors: ["phone": "not a phone number"],
            csrf: "c", returnTo: "/desk", zone: TimeZone(identifier: "Europe/Minsk"))
        #expect(html.contains("2026-11-27 11:00 (Europe/Minsk)"))
        #expect(html.contains(#"value="2026-11-27T08:00:00.000Z""#))
        #expect(!html.contains(#"type="text" name="start""#) && !html.contains(#"name="start" type="text""#))
        #expect(html.contains("not a phone number"))
    }

    @Test("the desk offers walk-ins the slots within the riders' minimum notice too, not started, not full, not closed")
    func walkInSlots() {
        let now = Instant.parse("2026-11-27T08:00:00.000Z")!
        func slot(_ start: String, _ end: String, cable: String = "main", free: Int64 = 2, bookable: Bool = false) -> JSONValue {
            ["cable": .string(cable), "start": .string(start), "end": .string(end), "localStart": .string(start), "localEnd": .string(end),
             "free": .integer(free), "bookable": .bool(bookable)]
        }
        let answer: JSONValue = [
            "items": [
                slot("2026-11-27T07:30:00.000Z", "2026-11-27T08:00:00.000Z"),  // started
                slot("2026-11-27T08:02:00.000Z", "2026-11-27T08:32:00.000Z"),  // within the notice: offered
                slot("2026-11-27T08:32:00.000Z", "2026-11-27T09:02:00.000Z", free: 0),  // full
                slot("2026-11-27T09:02:00.000Z", "2026-11-27T09:32:00.000Z"),  // closed period
                slot("2026-11-27T10:00:00.000Z", "2026-11-27T10:30:00.000Z", bookable: true),
            ],
            "blocks": [["cable": nil, "start": "2026-11-27T09:00:00.000Z", "end": "2026-11-27T09:30:00.000Z"]],
        ]
        #expect(DeskPages.walkInStarts(answer, now: now).map(\.value) == ["2026-11-27T08:02:00.000Z", "2026-11-27T10:00:00.000Z"])
    }

    @Test("long lists the panel holds whole are shown 25 to a page; a page asked out of range shows the nearest")
    func paging() {
        #expect(PageKit.page(of: 64, size: 25, asked: nil) == (1, 3))
        #expect(PageKit.page(of: 64, size: 25, asked: "3") == (3, 3))
        #expect(PageKit.page(of: 64, size: 25, asked: "9") == (3, 3))
        #expect(PageKit.page(of: 64, size: 25, asked: "-2") == (1, 3))
        #expect(PageKit.page(of: 64, size: 25, asked: "x") == (1, 3))
        #expect(PageKit.page(of: 0, size: 25, asked: nil) == (1, 1))
    }

    static func form(_ id: String) throws -> AdminForm {
        try #require(FormCatalog.all.first { $0.id == id })
    }

    @Test("posted text becomes typed, nested data; problems are per field")
    func formData() throws {
        let settings = try Self.form("park-settings")
        let (data, errors) = settings.data(from: ["capacity": "4", "price.minor": "12.5", "price.currency": "BYN", "lateSanction": "none", "slotMinutes": ""])
        #expect(errors.isEmpty)
        #expect(data["capacity"] == 4)
        #expect(data["price"] == ["minor": 1250, "currency": "BYN"])
        #expect(data["lateSanction"] == "none")
        #expect(data["slotMinutes"] == nil)  // empty and optional: left out, so the service keeps its value

        let (_, bad) = settings.data(from: ["capacity": "four", "price.minor": "1.234", "price.currency": "BYN", "lateSanction": "sometimes"])
        #expect(bad["capacity"] == "a whole number, e.g. 12")
        #expect(bad["price.minor"] != nil)
        #expect(bad["lateSanction"] == "choose one of the options")
        let (_, missing) = settings.data(from: ["price.currency": "BYN"])
        #expect(missing["price.minor"] == "required")
    }

    @Test("checkboxes are always sent; empty nullable fields clear; fixed members cannot be overridden")
    func checkboxesAndFixed() throws {
        let exercise = try Self.form("exercise-save")
        let (data, _) = exercise.data(from: ["id": "push_up", "videoUrl": "", "active": ""])
        #expect(data["active"] == false)
        #expect(data["videoUrl"] == .null)
        let retire = try Self.form("goal-type-retire")
        let (retired, _) = retire.data(from: ["id": "swim", "retired": "false"])
        #expect(retired["retired"] == true)
        let mark = try Self.form("desk-no-show")
        #expect(mark.data(from: ["booking": "b1", "outcome": "attended"]).data["outcome"] == "no_show")
    }

    @Test("a plan item is sent as the only element of items, with the goal outside")
    func itemsWrapping() throws {
        let add = try Self.form("goal-item-add")
        let (data, errors) = add.data(from: ["goalId": "g1", "kind": "workout", "date": "2026-11-30", "text": "Swim 1 km", "checkable": ""])
        #expect(errors.isEmpty)
        #expect(data["goalId"] == "g1")
        // An unticked "checkable" is left out: the service derives it from the kind (a workout is always checkable).
        #expect(data["items"] == [["kind": "workout", "date": "2026-11-30", "text": "Swim 1 km"]])
        #expect(add.data(from: ["goalId": "g1", "kind": "recommendation", "text": "Walk", "checkable": "on"]).data["items"]?[0]?["checkable"] == true)
        // The service's problem on items[0].text shows beside the text field.
        let placed = add.placing(["items[0].text": "too long"])
        #expect(placed.byField["text"] == "too long")
        #expect(placed.general.isEmpty)
    }

    @Test("the services' problems go beside their field, nested paths included; unknown ones go on top")
    func placingProblems() throws {
        let type = try Self.form("goal-type-edit")
        let placed = type.placing(["form.fields[0].key": "must be unique", "title": "required", "id": "unknown type", "other": "odd"])
        #expect(placed.byField["form"] == ".fields[0].key: must be unique")
        #expect(placed.byField["title"] == "required")
        // A hidden field's problem cannot be shown beside it: it goes on top.
        #expect(placed.general.contains("id: unknown type"))
        #expect(placed.general.contains("other: odd"))
    }

    @Test("JSON fields must parse; dates, times and local date-times are checked and converted in the form's zone")
    func jsonAndTimes() throws {
        let questions = try Self.form("questionnaire-set")
        #expect(questions.data(from: ["questionnaire": "nutrition", "questions": "[{\"text\": \"x\""]).errors["questions"] != nil)
        #expect(questions.data(from: ["questionnaire": "nutrition", "questions": "[]"]).data["questions"] == [])
        let block = try Self.form("desk-block")
        let minsk = try #require(TimeZone(identifier: "Europe/Minsk"))
        let (data, errors) = block.data(from: ["start": "2026-11-23T18:30", "end": "2026-11-23T20:00"], zone: minsk)
        #expect(errors.isEmpty)
        #expect(data["start"] == "2026-11-23T15:30:00.000Z")
        #expect(block.data(from: ["start": "tomorrow", "end": "2026-11-23T20:00"], zone: minsk).errors["start"] != nil)
        let hours = try Self.form("park-hours")
        #expect(hours.data(from: ["open": "25:00"]).errors["open"] == "a time such as 09:30")
        #expect(hours.data(from: ["date": "2026-02-30"]).errors["date"] != nil)
        // Shown back as the person typed it, in the same zone.
        #expect(block.values(from: ["start": "2026-11-23T15:30:00.000Z"], zone: minsk)["start"] == "2026-11-23T18:30")
    }

    @Test("amounts in major units, exactly, both ways")
    func money() {
        #expect(MoneyText.minorUnits("12.5", exponent: 2) == 1250)
        #expect(MoneyText.minorUnits("12,05", exponent: 2) == 1205)
        #expect(MoneyText.minorUnits("-5", exponent: 2) == -500)
        #expect(MoneyText.minorUnits("0.01", exponent: 2) == 1)
        for bad in ["1.234", "abc", "--1", "1.", ".5", "1e3", "", "١٢", "99999999999999999999"] {
            #expect(MoneyText.minorUnits(bad, exponent: 2) == nil, "\(bad)")
        }
        #expect(MoneyText.majorUnits(1250, exponent: 2) == "12.50")
        #expect(MoneyText.majorUnits(-5, exponent: 2) == "-0.05")
        #expect(MoneyText.majorUnits(7, exponent: 0) == "7")
        for minor: Int64 in [0, 1, 99, 100, 123_456, -1_001] {
            #expect(MoneyText.minorUnits(MoneyText.majorUnits(minor, exponent: 2), exponent: 2) == minor)
        }
    }

    @Test("amounts are typed, shown back and listed in the park's currency's decimals: none for JPY, three for KWD")
    func moneyInItsCurrency() throws {
        let credit = try Self.form("rider-credit")
        #expect(credit.data(from: ["user": "u", "amount": "3000", "reason": "cash"], currency: "JPY").data["amount"] == 3000)
        #expect(credit.data(from: ["user": "u", "amount": "30.00", "reason": "cash"], currency: "JPY").errors["amount"] != nil)
        #expect(credit.data(from: ["user": "u", "amount": "1.5", "reason": "cash"], currency: "KWD").data["amount"] == 1500)
        #expect(credit.data(from: ["user": "u", "amount": "12.50", "reason": "cash"], currency: "BYN").data["amount"] == 1250)
        // The settings form reads its price in the currency it sets.
        let settings = try Self.form("park-settings")
        #expect(settings.values(from: ["price": ["minor": 3000, "currency": "JPY"]], currency: "JPY")["price.minor"] == "3000")
        #expect(settings.values(from: ["price": ["minor": 21000, "currency": "BYN"]], currency: "BYN")["price.minor"] == "210.00")
        let format = Formatting(locale: "en_US")
        #expect(format.money(["minor": 300_000, "currency": "JPY"]) == "300,000 JPY")
        #expect(format.money(["minor": 1_500, "currency": "KWD"]) == "1.500 KWD")
        #expect(format.money(["minor": -5, "currency": "BYN"]) == "-0.05 BYN")
        // Integers throughout: no rounding through a Double for large amounts.
        #expect(format.money(["minor": 9_007_199_254_740_993, "currency": "USD"]) == "90,071,992,547,409.93 USD")
    }

    @Test("forms come back only to a path on this panel")
    func localPaths() {
        #expect(AdminPanel.localPath("/desk?date=2026-11-23") == "/desk?date=2026-11-23")
        for bad in ["//evil.example", "/\\evil.example", "https://evil.example", "javascript:alert(1)", "desk", "/a b", nil] {
            #expect(AdminPanel.localPath(bad) == nil, "\(bad ?? "nil")")
        }
    }

    @Test("every form has its own id, names an operation, and only the desk's are for staff")
    func catalog() {
        let ids = FormCatalog.all.map(\.id)
        #expect(Set(ids).count == ids.count)
        for form in FormCatalog.all {
            #expect(form.op.isEmpty || form.op.split(separator: ".").count >= 3, "\(form.id)")
            let staff = form.role == .staff
            #expect(staff == (form.op.hasPrefix("booking.staff.")), "\(form.id): \(form.op)")
            // A destructive form with a file cannot carry the file through its confirmation.
            #expect(form.confirm == nil || form.imageFields.isEmpty, "\(form.id)")
        }
        #expect(PanelRole.staff.allows(.admin) == false)
        #expect(PanelRole.admin.allows(.staff))
        #expect(PanelRole.of(["recipient", "staff"]) == .staff)
        #expect(PanelRole.of(["recipient"]) == nil)
    }

    @Test("charts: one bar per point, labels escaped, a readable scale, no data said so")
    func charts() {
        let svg = SVGChart.bars([.init("<b>&", 3), .init("b", 7)], title: "T \"x\"")
        #expect(svg.components(separatedBy: "<rect ").count - 1 == 2)
        #expect(svg.contains("&lt;b&gt;&amp;"))
        #expect(!svg.contains("<b>&"))
        #expect(svg.contains("aria-label=\"T &quot;x&quot;\""))
        #expect(svg.contains(">10</text>"))  // 7 rounds up to a scale of 10
        #expect(SVGChart.bars([], title: "none").contains("no data"))
        #expect(SVGChart.niceCeiling(0) == 1)
        #expect(SVGChart.niceCeiling(230) == 250)
    }

    @Test("a form body over the limit is too large (413), not unreadable (it was answered 400 \"reload the page\")")
    func formBodyTooLarge() async throws {
        let request = Request(
            head: HTTPRequest(method: .post, scheme: "http", authority: "panel", path: "/act/x"),
            body: RequestBody(buffer: ByteBuffer(repeating: 0x61, count: 2_000)))
        await #expect(throws: FormBody.TooLarge.self) { try await FormBody.read(request, limit: 1_000) }
        let fits = try await FormBody.read(request, limit: 4_000)
        #expect(fits.values.count == 1)
    }

    @Test("form bodies: URL-encoded and multipart with a file")
    func bodies() throws {
        #expect(FormBody.urlEncoded("a=1&b=x+y%26z&a=2&c") == ["a": "1", "b": "x y&z", "c": ""])
        let boundary = "XyZ"
        let text = "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nSwim\r\n--XyZ\r\nContent-Disposition: form-data; name=\"icon__file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\u{1}\u{2}\u{3}\r\n--XyZ\r\nContent-Disposition: form-data; name=\"empty__file\"; filename=\"\"\r\n\r\n\r\n--XyZ--\r\n"
        let body = try FormBody.multipart(ByteBuffer(string: text), boundary: boundary)
        #expect(body.values["title"] == "Swim")
        #expect(body.files["icon__file"] == Data([1, 2, 3]))
        #expect(body.files["empty__file"] == nil)
        #expect(FormBody.boundary(of: "multipart/form-data; boundary=\"XyZ\"") == "XyZ")
    }

    @Test("the session cookie is HttpOnly and SameSite=Strict, and Secure when the panel's public address is https")
    func cookieFlags() async throws {
        var configuration = PlatformConfiguration()
        configuration.adminBind = "127.0.0.1:0"
        for (url, secure) in [("https://admin.park.example", true), ("http://127.0.0.1:8081", false)] {
            let settings = try AdminSettings(configuration: configuration, environment: ["BACKEND_ADMIN_PUBLIC_URL": url])
            let gateway = try GatewayLink(configuration: configuration)
            let panel = try AdminPanel(settings: settings, gateway: gateway, logger: .init(label: "test"))
            let cookie = panel.sessionCookie("abc", maxAge: 60)
            #expect(cookie.hasPrefix("admin_session=abc; Path=/; Max-Age=60; HttpOnly; SameSite=Strict"))
            #expect(cookie.hasSuffix("; Secure") == secure)
            #expect(panel.loginCookie("x", maxAge: 60).contains("HttpOnly; SameSite=Strict"))
            // Only sign-in tokens the panel issued pass: not a planted value, not a changed one.
            let token = panel.loginToken()
            #expect(panel.isIssued(token))
            #expect(!panel.isIssued("x") && !panel.isIssued(String(repeating: "a", count: 64) + "." + String(repeating: "b", count: 64)))
            #expect(!panel.isIssued(String(token.dropLast()) + (token.last == "0" ? "1" : "0")))
            await gateway.close()
        }
        #expect(throws: ConfigurationError.self) {
            var bad = PlatformConfiguration()
            bad.adminBind = "nowhere"
            _ = try AdminSettings(configuration: bad)
        }
    }

    @Test("a session is confirmed with auth at most every 15 s; one auth refuses ends (an admin deleted or demoted meanwhile)")
    func sessionsConfirmed() async throws {
        let store = SessionStore()
        let start = Date()
        let tokens = SessionStore.Tokens(access: "a", accessExpiresAt: start.addingTimeInterval(300), refresh: "r")
        var session = store.create(userID: "u1", name: "Anna", roles: ["admin"], locale: "en", tokens: tokens, now: start)
        let asked = Counter()
        // Within 15 s of sign-in: not asked.
        #expect(await store.confirmed(session, now: start.addingTimeInterval(10)) { _ in asked.increment(); return false } != nil)
        #expect(asked.value == 0)
        // Later: asked once, accepted, then not again for 15 s.
        session = try #require(await store.confirmed(session, now: start.addingTimeInterval(20)) { _ in asked.increment(); return true })
        #expect(asked.value == 1)
        #expect(await store.confirmed(session, now: start.addingTimeInterval(30)) { _ in asked.increment(); return false } != nil)
        #expect(asked.value == 1)
        // Refused: the session is gone.
        #expect(await store.confirmed(session, now: start.addingTimeInterval(40)) { _ in asked.increment(); return false } == nil)
        #expect(store.session(id: session.id, now: start.addingTimeInterval(41)) == nil)
    }

    @Test("sessions end after the idle time; concurrent requests share one refresh")
    func sessions() async throws {
        let store = SessionStore(idleTimeout: 60, absoluteTimeout: 3_600)
        let start = Date()
        let tokens = SessionStore.Tokens(access: "a1", accessExpiresAt: start.addingTimeInterval(10), refresh: "r1")
        let session = store.create(userID: "u", name: "Anna", roles: ["admin"], locale: "en", tokens: tokens, now: start)
        #expect(session.id.count == 64 && session.csrf.count == 64 && session.id != session.csrf)
        #expect(store.session(id: session.id, now: start.addingTimeInterval(59)) != nil)
        #expect(store.session(id: session.id, now: start.addingTimeInterval(59 + 61)) == nil)

        let live = store.create(userID: "u", name: "Anna", roles: ["admin"], locale: "en", tokens: tokens)
        let calls = Counter()
        let refreshed = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await store.fresh(live) { refresh in
                        calls.increment()
                        try? await Task.sleep(for: .milliseconds(50))
                        return SessionStore.Tokens(access: "a2", accessExpiresAt: Date().addingTimeInterval(300), refresh: refresh + "+")
                    }?.accessToken
                }
            }
            var tokens: [String?] = []
            for await token in group { tokens.append(token) }
            return tokens
        }
        #expect(refreshed.allSatisfy { $0 == "a2" })
        #expect(calls.value == 1)
        #expect(store.session(id: live.id)?.refreshToken == "r1+")
        // A refused refresh ends the session.
        store.update(live.id) { $0.accessExpiresAt = Date() }
        let gone = await store.fresh(store.session(id: live.id)!) { _ in nil }
        #expect(gone == nil && store.session(id: live.id) == nil)
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

import Synchronization

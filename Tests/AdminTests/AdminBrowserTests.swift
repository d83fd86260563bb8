import Foundation
import Platform
import SharedTesting
import Testing

/// The admin panel in a real headless browser (Chromium driven by Selenium) against a whole
/// stack started by the stack runner: an admin uploads an icon, previews and sends a
/// broadcast; staff book a walk-in and mark a no-show; the session cookie's flags, a form
/// without its CSRF token and a staff session on admin pages are checked. Screenshots of
/// the main pages stay in `.build/test-output/admin-panel/` for a person to look at.
@Suite("Admin panel in a browser", .serialized)
struct AdminBrowserTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fastAuth = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "4"]

    @Test("an admin and a staff member do their tasks in Chromium; cookies, CSRF and roles hold")
    func browser() async throws {
        let stack = try TestStack()
        try await stack.withRunner(environment: Self.fastAuth) { _, output in
            #expect(output.contains("all 9 processes are healthy"))
            // The runner names the panel's address on a line of its own.
            let line = try #require(output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("admin ") })
            let url = try #require(line.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
            #expect(url == "http://\(stack.configuration.adminBind)")

            // An admin (granted on auth's own socket) and a staff member (granted by the admin).
            let client = stack.client
            let operatorClient = ServiceClient(link: try stack.configuration.operatorLink(to: "auth"), name: "operator")
            let password = "secret-pass-1"
            let admin = try await AuthFixtures.signUpAdmin(client, direct: operatorClient, email: "admin@park.example", password: password)
            await operatorClient.close()
            _ = try await AuthFixtures.signUp(client, email: "desk@park.example", password: password)
            let found = try await client.ok("auth.admin.users.list", ["query": "desk@park.example"], token: admin)
            let staffID = try #require(found["items"]?[0]?["id"]?.stringValue)
            try await client.ok("auth.admin.roles.grant", ["userId": .string(staffID), "role": "staff"], token: admin)
            let staff = try #require(try await AuthFixtures.signIn(client, email: "desk@park.example", password: password).data?["accessToken"]?.stringValue)

            // Today the park opens at the next whole minute (at least 50 s away), in a zone
            // where that is well inside the day; a rider is booked on the first slot, so it
            // starts while the browser does the admin's tasks.
            let now = Date()
            // (By name: Foundation calls TimeZone(identifier: "UTC") "GMT".)
            let zoneName = try #require(
                ["Europe/London", "Asia/Tokyo", "America/New_York"].first { name in
                    var calendar = Calendar(identifier: .gregorian)
                    calendar.timeZone = TimeZone(identifier: name)!
                    return (1..<21).contains(calendar.component(.hour, from: now))
                })
            let zone = TimeZone(identifier: zoneName)!
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            // A whole minute (the zones are whole hours from UTC). Not Calendar's
            // `date(bySetting: .second, value: 0, of:)`: a date already in second 0 comes back
            // with its fraction, a start off the slot grid (once a minute's worth of runs).
            let opening = Date(timeIntervalSince1970: ((now.timeIntervalSince1970 + 50) / 60).rounded(.up) * 60)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: opening)
            let date = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
            let open = String(format: "%02d:%02d", parts.hour!, parts.minute!)
            try await client.ok(
                "booking.admin.park.update",
                ["timeZone": .string(zoneName), "slotMinutes": 15, "capacity": 4, "minimumNoticeMinutes": 0], token: admin)
            try await client.ok("booking.admin.hours.set", ["date": .string(date), "open": .string(open), "close": "00:00"], token: admin)
            let booked = try await client.ok(
                "booking.staff.book",
                [
                    "cable": "reverse-1", "start": .string(Instant.format(opening)), "phone": "+375291112233", "firstName": "Late",
                    "lastName": "Rider", "payWith": "cash",
                ], token: staff, idem: "browser-first-slot")
            #expect(booked["booking"]?["status"] == "booked")

            let icon = stack.directory.url.appendingPathComponent("icon.png")
            try TestImages.png(width: 64, height: 64, seed: 7).write(to: icon)
            let screenshots = Self.root.appendingPathComponent(".build/test-output/admin-panel")
            try? FileManager.default.removeItem(at: screenshots)
            let script = Self.root.appendingPathComponent("Tests/AdminTests/Fixtures/panel_browser.py")
            let browser = try ChildProcess(
                executable: URL(fileURLWithPath: "/usr/bin/env"),
                arguments: [
                    "python3", script.path, "--url", url, "--admin", "admin@park.example", "--staff", "desk@park.example", "--password", password,
                    "--icon", icon.path, "--out", screenshots.path, "--booked-rider", "Late Rider", "--walk-in-phone", "+375293334455",
                ], environment: ProcessInfo.processInfo.environment, logFile: stack.directory.url.appendingPathComponent("browser.log"))
            let status = await browser.waitForExit(timeout: .seconds(300))
            if status == nil { await browser.stop(grace: .seconds(2)) }
            #expect(status == 0, "\(browser.output)")
            #expect(browser.output.contains("ALL PASSED"))
            for page in ["login", "overview", "users", "goal-types", "broadcast-preview", "park", "monitoring", "desk", "rider"] {
                #expect(FileManager.default.fileExists(atPath: screenshots.appendingPathComponent("\(page).png").path), "no screenshot of \(page)")
            }
        }
    }
}

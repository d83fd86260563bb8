import ArgumentParser
import Foundation
import LoadKit
import Histogram
import Platform
import SharedTesting

/// Booking's figures: `booking.slots` latency at 64 in flight, durable `booking.create`
/// throughput on distinct slots, and 200 riders racing for 10 places.
struct BookingBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "booking", abstract: "booking.slots latency, booking.create throughput, the 200-for-10 race.")

    @Option(help: "Seconds per measurement.")
    var seconds: Double = 5
    @Option(help: "Log level of the measured processes (their default is info: one line per request).")
    var serviceLogLevel: String = "info"

    func run() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-booking")
        let configuration = try BenchStack.configuration(in: directory.url, logLevel: serviceLogLevel)
        // Sign-ups are set-up here, not measured: cheap hashing keeps them quick.
        let environment = configuration.environment.merging(["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0"]) { _, new in new }
        let processes = try BenchStack.start(["auth", "booking", "gateway"], environment: environment, in: directory.url)
        defer { for process in processes { process.kill(signal: SIGKILL) } }
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "bench")
        try await BenchStack.waitUntilHealthy(["auth", "booking"], client: client)

        // An admin, and a park open around the clock where bookings are free of charge.
        // Accounts are made at auth directly: through the gateway, one client would soon
        // meet the per-client limits meant for bots.
        let direct = ServiceClient(link: try configuration.operatorLink(to: "auth"))
        let admin = try await signUp(direct, "admin@bench.example")
        _ = try await direct.call("auth.internal.admin.grant", data: ["email": "admin@bench.example"])
        let adminToken = try await token(client, "admin@bench.example")
        _ = admin
        _ = try await client.call(
            "booking.admin.park.update",
            data: ["minimumNoticeMinutes": 0, "capacity": 1, "horizonDays": 365, "maxBookingsPerDay": 100, "price": ["minor": 0, "currency": "BYN"]],
            token: adminToken)
        for weekday in 1...7 {
            _ = try await client.call(
                "booking.admin.hours.set", data: ["weekday": .integer(Int64(weekday)), "open": "00:00", "close": "00:00"], token: adminToken)
        }
        var riders: [String] = []
        for index in 0..<200 { riders.append(try await signUp(direct, "rider\(index)@bench.example")) }
        await direct.close()

        // (1) booking.slots for a day at 64 in flight, through the gateway.
        let tomorrow = Self.date(daysFromNow: 1)
        let slotsBody = Data(#"{"id":"s","op":"booking.slots","data":{"date":"\#(tomorrow)"}}"#.utf8)
        let processByName = Dictionary(uniqueKeysWithValues: zip(["auth", "booking", "gateway"], processes))
        let slotsCPUBefore = processByName.mapValues { ProcessFigures.cpuSeconds(pid: $0.pid) }
        let slotsSelfBefore = ProcessFigures.cpuSeconds(pid: getpid())
        let slots = try await LoadGenerator.run(
            endpoint: configuration.gatewayEndpoint, body: slotsBody, expected: Data(#""ok":true"#.utf8), inFlight: 64, warmup: 1, seconds: seconds)
        let slotsPerRequest = { (seconds: Double) in seconds / (slots.rate * (self.seconds + 1)) * 1e6 }
        report(String(format: "booking.slots (48 times x 2 cables, about 7 KB), 64 in flight: %.0f req/s, p50 %.2f ms, p99 %.2f ms (target p99 under 3 ms) %@",
            slots.rate, slots.p50 / 1000, slots.p99 / 1000, slots.p99 < 3_000 ? "PASS" : "FAIL"))
        report(String(
            format: "  CPU per request: booking %.0f µs, gateway %.0f µs, load driver %.0f µs",
            slotsPerRequest(ProcessFigures.cpuSeconds(pid: processByName["booking"]?.pid ?? 0) - (slotsCPUBefore["booking"] ?? 0)),
            slotsPerRequest(ProcessFigures.cpuSeconds(pid: processByName["gateway"]?.pid ?? 0) - (slotsCPUBefore["gateway"] ?? 0)),
            slotsPerRequest(ProcessFigures.cpuSeconds(pid: getpid()) - slotsSelfBefore)))

        // (2) booking.create on distinct slots, synchronous=FULL, against SQLite's own
        // durable one-commit-per-write rate on the same disk. Ten-minute slots give enough
        // distinct slots for the run.
        _ = try await client.call("booking.admin.park.update", data: ["slotMinutes": 10], token: adminToken)
        var starts: [(cable: String, start: String)] = []
        for day in 2..<360 {
            let date = Self.date(daysFromNow: day)
            let reply = try await client.call("booking.slots", data: ["date": .string(date)], idempotent: true)
            let cables = (reply.data?["cables"]?.arrayValue ?? []).compactMap(\.stringValue)
            for item in reply.data?["items"]?.arrayValue ?? [] {
                for (index, cable) in cables.enumerated() where item["bookable"]?.arrayValue?[index] == true {
                    starts.append((cable, item["start"]?.stringValue ?? ""))
                }
            }
        }
        // The last slot is kept free for the race below.
        let raceSlot = try require(starts.last)
        let targets = Array(starts.dropLast())
        let reference = try SQLiteReference.measure(directory: directory.url, seconds: seconds)
        report(String(format: "SQLite reference: one small row per transaction, WAL, synchronous=FULL, same disk: %.0f commits/s", reference))
        let tokens = riders
        var offset = 0
        for inFlight in [64, 1] {
            let first = offset
            let bodies: @Sendable (Int) -> Data? = { number in
                let index = first + number
                guard index < targets.count else { return nil }
                let target = targets[index]
                let token = tokens[index % tokens.count]
                return Data(
                    #"{"id":"b\#(index)","op":"booking.create","token":"\#(token)","idem":"b\#(index)","data":{"cable":"\#(target.cable)","start":"\#(target.start)"}}"#.utf8)
            }
            let cpuBefore = processByName.mapValues { ProcessFigures.cpuSeconds(pid: $0.pid) }
            let selfBefore = ProcessFigures.cpuSeconds(pid: getpid())
            let result = try await LoadGenerator.run(
                endpoint: configuration.gatewayEndpoint, bodies: bodies, expected: Data(#""ok":true"#.utf8), inFlight: inFlight, warmup: 0,
                seconds: seconds)
            let made = result.completed - result.errors
            offset += result.completed + inFlight
            let perBooking = { (seconds: Double) in made > 0 ? seconds / Double(made) * 1e6 : 0 }
            let cpu = processByName.mapValues { perBooking(ProcessFigures.cpuSeconds(pid: $0.pid) - (cpuBefore[$0.name] ?? 0)) }
            let ratio = result.rate / reference
            var line = String(
                format: "booking.create, distinct slots, %d in flight: %.0f durable bookings/s (%d made, %d refused), p50 %.2f ms, p99 %.2f ms; %.2fx the SQLite reference",
                inFlight, result.rate, made, result.errors, result.p50 / 1000, result.p99 / 1000, ratio)
            if inFlight == 64 {
                line += String(format: " (floor 1.5x, p99 under 10 ms) %@", ratio >= 1.5 && result.p99 < 10_000 ? "PASS" : "FAIL")
            }
            report(line)
            report(String(
                format: "  CPU per booking: booking %.0f µs, gateway %.0f µs, auth %.0f µs, load driver %.0f µs",
                cpu["booking"] ?? 0, cpu["gateway"] ?? 0, cpu["auth"] ?? 0, perBooking(ProcessFigures.cpuSeconds(pid: getpid()) - selfBefore)))
        }
        // (3) 200 riders race for the 10 places of one slot.
        _ = try await client.call("booking.admin.park.update", data: ["capacity": 10], token: adminToken)
        let won = Counter()
        await withTaskGroup(of: Void.self) { group in
            for token in riders {
                group.addTask {
                    let reply = try? await client.call(
                        "booking.create", data: ["cable": .string(raceSlot.cable), "start": .string(raceSlot.start)], token: token, timeout: .seconds(30))
                    if reply?.ok == true { won.increment() }
                }
            }
        }
        report("200 riders for 10 places: \(won.value) booked \(won.value == 10 ? "PASS" : "FAIL")")
        await client.close()
        for process in processes { await process.stop() }
    }

    static func date(daysFromNow days: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Minsk")!
        let parts = calendar.dateComponents([.year, .month, .day], from: Date().addingTimeInterval(Double(days) * 86_400))
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    func signUp(_ client: ServiceClient, _ email: String) async throws -> String {
        try await AuthFixtures.signUp(client, email: email, password: "bench-password")
    }
    func token(_ client: ServiceClient, _ email: String) async throws -> String {
        let reply = try await client.call("auth.login", data: ["email": .string(email), "password": "bench-password"])
        guard let token = reply.data?["accessToken"]?.stringValue else { throw ValidationError("sign-in failed") }
        return token
    }
}

func require<T>(_ value: T?) throws -> T {
    guard let value else { throw ValidationError("missing value") }
    return value
}

import ArgumentParser
import Foundation
import LoadKit
import Platform

/// `loadgen targets`: the Load and reliability issue's figures in one run against a
/// running stack: the limits, the read path and the durable write path at 64 in flight,
/// event lag, reminders due under load, read-your-write of reminders, and memory.
struct TargetsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "targets",
        abstract: "Measure the read path, the write path, event lag, reminders due under load and memory against the limits, in one run.")

    @OptionGroup var options: LoadOptions
    @Option(help: "Seconds per phase (limits, reads, writes).")
    var seconds: Double = 10
    @Option(help: "Requests in flight in the read and write phases.")
    var inFlight = 64
    @Option(help: "Reminders due at one instant in the middle of the write phase.")
    var dueReminders = 50

    static let services = ["auth", "booking", "goals", "savings", "reminders", "stats"]

    func validate() throws {
        guard seconds.isFinite, seconds >= 1, seconds <= 3_600 else { throw ValidationError("--seconds must be 1 to 3600") }
        guard inFlight > 0, inFlight <= 10_000, dueReminders >= 0, dueReminders <= 1_000 else {
            throw ValidationError("--in-flight must be 1 to 10000, --due-reminders 0 to 1000")
        }
    }

    func run() async throws {
        let configuration = try options.configuration
        try options.checkLoopback(configuration)
        let stack = try LoadStack(configuration: configuration)
        let population = try await Population.make(
            count: options.users, services: ["booking", "goals", "savings", "reminders", "stats"], gateway: stack.gateway, auth: stack.auth, say: options.say)
        let refresher = stack.refresher(population)
        defer { refresher.cancel() }
        var report = LoadReport(
            machine: ProcessFigures.machine(), target: options.target, mix: "targets", users: options.users, loop: "closed loop, \(inFlight) in flight",
            warmupSeconds: options.warmup)

        options.say("limits: raw echo and SQLite commits, \(seconds) s each")
        let limits = try await Limits.measure(inFlight: inFlight, seconds: seconds, directory: configuration.dataDirectoryURL, say: options.say)
        report.limits = limits

        // Idle memory, after a pause with nothing sent.
        try await Task.sleep(for: .seconds(2))
        let idle = await scrape(stack)

        options.say("reads: booking.slots, reminders.list, stats.keyFacts")
        let reads = try await stack.run(
            shape: shape(), workload: try MixWorkload(population: population, weights: MixOperation.mix(named: "reads")!), target: options.target,
            edge: options.edgeAddress(configuration), quiet: options.quiet)
        report.phases["reads"] = reads.summaries() + [reads.total.summary(op: "(reads)", seconds: reads.measuredSeconds)]

        // Reminders due at one whole minute that falls in the middle of the write phase.
        let probeUser = 0
        let due = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 + options.warmup + seconds / 2 + 10) / 60).rounded(.up) * 60)
        let probes = try await makeDueReminders(stack, population, user: probeUser, at: due)
        let tap = BusTap(bus: try stack.links.busOut, prefix: "reminders.due")
        for _ in 0..<100 where !tap.isReady { try await Task.sleep(for: .milliseconds(20)) }
        // Start so that the due minute falls halfway through the measured time.
        let startAt = due.addingTimeInterval(-(options.warmup + seconds / 2))
        if startAt > Date() { try await Task.sleep(for: .seconds(startAt.timeIntervalSinceNow)) }

        options.say("writes: booking.create, savings.deposits.record, goals.items.check (reminders due at \(Instant.format(due)))")
        let before = await scrape(stack)
        let visibility = Task { try await visibilityProbe(stack, population, user: min(1, population.users.count - 1), for: options.warmup + seconds) }
        let peakTask = Task { () -> [String: Double] in
            try? await Task.sleep(for: .seconds(options.warmup + seconds * 0.8))
            return await scrape(stack).mapValues { $0.resident }
        }
        let writes = try await stack.run(
            shape: shape(), workload: try MixWorkload(population: population, weights: MixOperation.mix(named: "writes")!), target: options.target,
            edge: options.edgeAddress(configuration), quiet: options.quiet)
        let after = await scrape(stack)
        let loaded = await peakTask.value
        let visible = try await visibility.value
        try await Task.sleep(for: .seconds(max(0, due.timeIntervalSinceNow + 2)))
        let arrivals = await tap.stop()
        report.phases["writes"] = writes.summaries() + [writes.total.summary(op: "(writes)", seconds: writes.measuredSeconds)]

        // Figures next to their targets.
        let readTotal = reads.total.summary(op: "reads", seconds: reads.measuredSeconds)
        // Only answered requests count: refusals are not throughput.
        let readRate = Double(reads.total.ok) / reads.measuredSeconds
        let readShare = readRate / max(limits.echoRatePerSecond, 1)
        report.comparisons.append(
            Comparison(
                measure: "read path (booking.slots, reminders.list, stats.keyFacts) via \(options.target), \(inFlight) in flight",
                figure: String(
                    format: "%.0f answered req/s = %.0f%% of the raw echo (%.0f); p99 %.2f ms; %d failed", readRate, readShare * 100, limits.echoRatePerSecond,
                    readTotal.p99Ms ?? 0, readTotal.failed),
                target: "at least 40% of the echo, p99 under 5 ms", met: readShare >= 0.4 && (readTotal.p99Ms ?? .infinity) < 5 && readTotal.failed == 0))
        for op in ["booking.create", "savings.deposits.record", "goals.items.check"] {
            guard let statistics = writes.operations[op] else { continue }
            let summary = statistics.summary(op: op, seconds: writes.measuredSeconds)
            report.notes.append(String(format: "  %@: %.0f writes/s, p99 %.2f ms, %d refused, %d failed", op, summary.ratePerSecond, summary.p99Ms ?? 0, summary.refused, summary.failed))
        }
        let writeTotal = writes.total.summary(op: "writes", seconds: writes.measuredSeconds)
        let writeRatio = Double(writes.total.ok) / writes.measuredSeconds / max(limits.sqliteCommitsPerSecond, 1)
        report.comparisons.append(
            Comparison(
                measure: "durable write path (booking.create, savings.deposits.record, goals.items.check) via \(options.target), \(inFlight) in flight",
                figure: String(
                    format: "%.0f durable writes/s = %.2fx SQLite's one-commit rate (%.0f); p99 %.2f ms; %d refused, %d failed",
                    Double(writes.total.ok) / writes.measuredSeconds, writeRatio, limits.sqliteCommitsPerSecond, writeTotal.p99Ms ?? 0, writeTotal.refused,
                    writeTotal.failed),
                target: "at least 2x, p99 under 10 ms", met: writeRatio >= 2 && (writeTotal.p99Ms ?? .infinity) < 10 && writeTotal.failed == 0))
        let lag = PrometheusText.buckets("backend_event_lag_seconds", between: before.values.flatMap(\.samples), and: after.values.flatMap(\.samples))
        report.comparisons.append(
            Comparison(
                measure: "events applied by their subscribers during the write phase",
                figure: lag.count > 0
                    ? String(format: "%.0f events, p99 at most %.0f ms (histogram bucket bound)", lag.count, (lag.quantile(0.99) ?? 0) * 1000) : "no events",
                target: "p99 within 50 ms", met: lag.count > 0 && (lag.quantile(0.99) ?? .infinity) <= 0.05))
        // The lag counts from the event's own time, taken when its write began: it holds the
        // source's queueing and commit (the write path's latency). Delivery counts from the
        // bus message that announced it, just after the commit.
        let delivery = PrometheusText.buckets("backend_event_delivery_seconds", between: before.values.flatMap(\.samples), and: after.values.flatMap(\.samples))
        report.comparisons.append(
            Comparison(
                measure: "the same, from the event's announcement on the bus (just after its source committed it) to the commit of its effects",
                figure: delivery.count > 0
                    ? String(format: "%.0f events, p99 at most %.0f ms (histogram bucket bound)", delivery.count, (delivery.quantile(0.99) ?? 0) * 1000)
                    : "no events",
                target: "p99 within 50 ms", met: delivery.count > 0 && (delivery.quantile(0.99) ?? .infinity) <= 0.05))
        let delays = arrivals.compactMap { arrival -> Double? in
            guard let value = try? JSONParser.parse(arrival.event), let id = value["data"]?["reminderId"]?.stringValue, probes.contains(id),
                let dueAt = value["data"]?["dueAt"]?.stringValue.flatMap(Instant.parse)
            else { return nil }
            return arrival.at.timeIntervalSince(dueAt)
        }.sorted()
        let dueP99 = delays.isEmpty ? nil : delays[min(delays.count - 1, Int((Double(delays.count) * 0.99).rounded(.up)) - 1)]
        report.comparisons.append(
            Comparison(
                measure: "\(probes.count) reminders due at one instant during the write phase",
                figure: "\(delays.count) published; p99 \(dueP99.map { String(format: "%.3f s", $0) } ?? "-") after their instant",
                target: "all published, p99 within 1 s", met: delays.count == probes.count && (dueP99 ?? .infinity) <= 1))
        report.comparisons.append(
            Comparison(
                measure: "a reminder created during the write phase, listed (reminders.list) by its creator",
                figure: visible.isEmpty ? "no probe" : String(format: "%d probes, slowest %.0f ms from the create's reply", visible.count, (visible.max() ?? 0) * 1000),
                target: "within 1 s", met: !visible.isEmpty && (visible.max() ?? .infinity) <= 1))
        let mib = 1_048_576.0
        for service in Self.services {
            let idleFigure = idle[service]?.resident, loadFigure = max(loaded[service] ?? 0, after[service]?.peak ?? 0)
            report.comparisons.append(
                Comparison(
                    measure: "\(service) resident memory",
                    figure: String(
                        format: "idle %.1f MiB, under load (peak since start) %.1f MiB; proportional share (Pss) idle %.1f MiB, after load %.1f MiB",
                        (idleFigure ?? 0) / mib, loadFigure / mib, (idle[service]?.proportional ?? 0) / mib, (after[service]?.proportional ?? 0) / mib),
                    target: "under 40 MiB idle, under 150 MiB at load", met: (idleFigure ?? .infinity) < 40 * mib && loadFigure > 0 && loadFigure < 150 * mib))
        }
        report.measuredSeconds = seconds
        print("Load and reliability targets, \(report.machine), \(report.date)")
        print(OperationSummary.header)
        for (name, rows) in report.phases.sorted(by: { $0.key < $1.key }) {
            print("-- \(name)")
            for row in rows { print(row.row) }
        }
        print(report.table.split(separator: "\n").dropFirst(2).joined(separator: "\n"))
        if let path = options.report { try report.write(to: URL(fileURLWithPath: path)) }
        await population.close(auth: stack.auth)
        await stack.close()
    }

    func shape() -> LoadShape {
        LoadShape(loop: .closed(inFlight: inFlight), users: options.users, seconds: seconds, count: nil, warmupSeconds: options.warmup)
    }

    /// Each service's Prometheus figures (memory, event lag) straight from it.
    struct Scrape: Sendable {
        var samples: [PrometheusText.Sample]
        var resident: Double
        var peak: Double
        var proportional: Double
    }

    func scrape(_ stack: LoadStack) async -> [String: Scrape] {
        var result: [String: Scrape] = [:]
        for service in Self.services {
            guard let link = try? stack.links.service(service) else { continue }
            let client = ServiceClient(link: link, name: "loadgen-metrics")
            if let reply = try? await client.call("\(service).metrics.prometheus", idempotent: true, timeout: .seconds(3), attempts: 1),
                let text = reply.data?["text"]?.stringValue
            {
                let samples = PrometheusText.samples(text)
                result[service] = Scrape(
                    samples: samples, resident: samples.first { $0.name == "process_resident_memory_bytes" }?.value ?? 0,
                    peak: samples.first { $0.name == "process_peak_resident_memory_bytes" }?.value ?? 0,
                    proportional: samples.first { $0.name == "process_proportional_memory_bytes" }?.value ?? 0)
            }
            await client.close()
        }
        return result
    }

    /// Creates `dueReminders` reminders of `user` whose alert is due at `at` (a whole
    /// minute, UTC); returns their ids.
    func makeDueReminders(_ stack: LoadStack, _ population: Population, user: Int, at due: Date) async throws -> Set<String> {
        let local = ZoneClock.utc.local(due)
        let start = "\(local.date)T\(Instant.digits(local.time.hour, width: 2)):\(Instant.digits(local.time.minute, width: 2))"
        var ids: Set<String> = []
        for index in 0..<dueReminders {
            let id = "lg-\(population.runID)-due-\(index)"
            try check(
                try await stack.gateway.call(
                    "reminders.create", data: ["id": .string(id), "title": .string("Due probe \(index)"), "start": .string(start), "zone": "UTC", "alerts": [0]],
                    token: population.tokens[user]), "reminders.create")
            ids.insert(id)
        }
        return ids
    }

    /// Every half second for `seconds`: creates a reminder due soon and asks
    /// `reminders.list` until it is there; returns each one's delay after the create's reply.
    func visibilityProbe(_ stack: LoadStack, _ population: Population, user: Int, for seconds: Double) async throws -> [Double] {
        var delays: [Double] = []
        let end = Date().addingTimeInterval(seconds)
        var number = 0
        while Date() < end {
            number += 1
            let id = "lg-\(population.runID)-visible-\(number)"
            let start = ZoneClock.utc.local(Date().addingTimeInterval(3_600))
            let startText = "\(start.date)T\(Instant.digits(start.time.hour, width: 2)):\(Instant.digits(start.time.minute, width: 2))"
            let created = try await stack.gateway.call(
                "reminders.create", data: ["id": .string(id), "title": .string("Visible probe \(number)"), "start": .string(startText), "zone": "UTC"],
                token: population.tokens[user])
            guard created.ok else { continue }
            let replied = Date()
            for _ in 0..<100 {
                let page = try await stack.gateway.call("reminders.list", data: ["limit": 50], token: population.tokens[user], idempotent: true)
                if (page.data?["items"]?.arrayValue ?? []).contains(where: { $0["id"]?.stringValue == id }) {
                    delays.append(Date().timeIntervalSince(replied))
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        return delays
    }
}

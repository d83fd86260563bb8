import Foundation
import Platform

/// How a load run sends: closed loop (a fixed number of requests in flight, each reply
/// sending the next) or open loop (a fixed rate, each latency measured from the moment
/// the request was due, so a stalled system cannot hide its delay by slowing the
/// sender: coordinated omission), bounded by time or by count.
public struct LoadShape: Sendable {
    public enum Loop: Sendable {
        case closed(inFlight: Int)
        case open(ratePerSecond: Double)
    }

    public var loop: Loop
    public var users: Int
    /// Measured seconds (after the warm-up); with `count`, whichever ends first.
    public var seconds: Double?
    /// Requests to send in all (warm-up included).
    public var count: Int?
    public var warmupSeconds: Double
    /// A request unanswered this long counts as `no_reply`.
    public var requestTimeoutSeconds: Double = 10
    /// Open loop: requests in flight at most; due requests beyond it wait (and their
    /// waiting counts in their latency).
    public var maxInFlight = 4_096

    public init(loop: Loop, users: Int, seconds: Double?, count: Int?, warmupSeconds: Double) {
        self.loop = loop
        self.users = max(1, users)
        self.seconds = seconds
        self.count = count
        self.warmupSeconds = warmupSeconds
    }
}

/// One line of progress, once a second.
public struct LoadProgress: Sendable {
    public var elapsedSeconds: Double
    public var warmingUp: Bool
    public var completed: Int
    public var inFlight: Int
    /// Over the last second.
    public var ratePerSecond: Double
    public var p99Ms: Double?
    public var refused: Int
    public var failed: Int

    public var line: String {
        String(
            format: "%6.1f s%@  %9d done  %7.0f req/s  p99 %@ ms  in flight %5d  refused %d  failed %d", elapsedSeconds, warmingUp ? " (warm-up)" : "",
            completed, ratePerSecond, p99Ms.map { String(format: "%7.2f", $0) } ?? "      -", inFlight, refused, failed)
    }
}

/// What a load run measured.
public struct LoadOutcome: Sendable {
    public var operations: [String: OperationStatistics]
    public var total: OperationStatistics
    public var measuredSeconds: Double
    /// Requests due in an open loop that could not be sent before the run ended.
    public var notSent: Int

    public func summaries() -> [OperationSummary] {
        operations.keys.sorted().map { operations[$0]!.summary(op: $0, seconds: measuredSeconds) }
    }
}

/// Runs a workload against a transport on one thread of its own.
public enum LoadEngine {
    /// Runs `workload` over the transport `makeTransport` creates (on the driver thread,
    /// where its sockets live), calling `progress` once a second.
    public static func run(
        shape: LoadShape, workload: any LoadWorkload, makeTransport: @escaping @Sendable () throws -> any LoadTransport,
        progress: @escaping @Sendable (LoadProgress) -> Void = { _ in }
    ) async throws -> LoadOutcome {
        try await SocketThread.value(name: "load-driver") {
            let transport = try makeTransport()
            defer { transport.close() }
            var driver = Driver(shape: shape, workload: workload, transport: transport, progress: progress)
            return try driver.run()
        }
    }

    private struct Outstanding {
        var request: LoadRequest
        /// When it was due (open loop) or sent (closed loop).
        var from: UInt64
        var sentAt: UInt64
        var slot: Int
    }

    private struct Driver {
        let shape: LoadShape
        let workload: any LoadWorkload
        let transport: any LoadTransport
        let progress: @Sendable (LoadProgress) -> Void

        var operations: [String: OperationStatistics] = [:]
        var total = OperationStatistics()
        var second = OperationStatistics()
        /// The request in flight on each slot (a slot carries one at a time), with its tag:
        /// the slot in the high 32 bits, a sequence number in the low ones.
        var bySlot: [(tag: UInt64, entry: Outstanding)?] = []
        var inFlight = 0
        var nextTag: UInt64 = 1
        var sent = 0
        var exhausted = false
        var firstMeasured: UInt64?
        var lastMeasured: UInt64 = 0

        init(shape: LoadShape, workload: any LoadWorkload, transport: any LoadTransport, progress: @escaping @Sendable (LoadProgress) -> Void) {
            self.shape = shape
            self.workload = workload
            self.transport = transport
            self.progress = progress
        }

        mutating func run() throws -> LoadOutcome {
            let start = ProcessFigures.now()
            let measureFrom = start + UInt64(shape.warmupSeconds * 1e9)
            let end = shape.seconds.map { measureFrom + UInt64($0 * 1e9) } ?? UInt64.max
            let timeout = UInt64(shape.requestTimeoutSeconds * 1e9)
            var nextProgress = start + 1_000_000_000
            var lastTimeoutCheck = start
            var freeSlots: [Int] = []
            var dueQueue: [UInt64] = []
            var dueCursor = 0
            var nextDue = start
            var interval: UInt64 = 0
            var openSequence = 0
            var drainUntil: UInt64?

            switch shape.loop {
            case .closed(let slots):
                bySlot = Array(repeating: nil, count: min(slots, transport.capacity))
                for slot in bySlot.indices { issue(slot: slot, user: slot % shape.users, from: ProcessFigures.now()) }
            case .open(let rate):
                interval = UInt64(max(1, 1e9 / max(rate, 0.001)))
                bySlot = Array(repeating: nil, count: min(shape.maxInFlight, transport.capacity))
                freeSlots = Array(bySlot.indices.reversed())
            }

            while true {
                let now = ProcessFigures.now()
                let running = now < end && !exhausted
                // Open loop: every request due by now joins the queue; free slots send them.
                if case .open = shape.loop {
                    if running {
                        while nextDue <= now {
                            dueQueue.append(nextDue)
                            nextDue += interval
                        }
                    }
                    while dueCursor < dueQueue.count, let slot = freeSlots.popLast() {
                        let due = dueQueue[dueCursor]
                        dueCursor += 1
                        if !issue(slot: slot, user: openSequence % shape.users, from: due) { freeSlots.append(slot); break }
                        openSequence += 1
                    }
                    if dueCursor > 4_096 {
                        dueQueue.removeFirst(dueCursor)
                        dueCursor = 0
                    }
                }
                // Once sending stops, replies still due are awaited up to the request timeout.
                if !running {
                    if drainUntil == nil { drainUntil = now + timeout }
                    if inFlight == 0 || now >= drainUntil! { break }
                }

                var wait = 50
                if case .open = shape.loop, running {
                    wait = Int(max(0, min(Int64(nextDue) - Int64(now), 50_000_000)) / 1_000_000)
                }
                let transport = self.transport
                try transport.receive(timeoutMs: wait) { tag, reply in
                    let slot = Int(tag >> 32)
                    guard slot < bySlot.count, let held = bySlot[slot], held.tag == tag else { return }
                    bySlot[slot] = nil
                    inFlight -= 1
                    let entry = held.entry
                    let at = ProcessFigures.now()
                    complete(entry, reply: reply, at: at, measureFrom: measureFrom)
                    if case .closed = shape.loop, at < end, !exhausted {
                        issue(slot: entry.slot, user: entry.slot % shape.users, from: at)
                    } else if case .open = shape.loop {
                        freeSlots.append(entry.slot)
                    }
                }

                let after = ProcessFigures.now()
                if after - lastTimeoutCheck > 100_000_000 {
                    lastTimeoutCheck = after
                    for slot in bySlot.indices {
                        guard let (tag, entry) = bySlot[slot], after - entry.sentAt > timeout else { continue }
                        bySlot[slot] = nil
                        inFlight -= 1
                        transport.abandon(tag: tag)
                        complete(entry, reply: LoadReply(ok: false, code: "no_reply"), at: after, measureFrom: measureFrom)
                        if case .closed = shape.loop, after < end, !exhausted {
                            issue(slot: entry.slot, user: entry.slot % shape.users, from: after)
                        } else if case .open = shape.loop {
                            freeSlots.append(entry.slot)
                        }
                    }
                }
                if after >= nextProgress {
                    progress(
                        LoadProgress(
                            elapsedSeconds: Double(after - start) / 1e9, warmingUp: after < measureFrom, completed: total.count, inFlight: inFlight,
                            ratePerSecond: Double(second.count), p99Ms: second.percentileMs(99), refused: total.refused, failed: total.failed))
                    second = OperationStatistics()
                    nextProgress += 1_000_000_000
                }
            }
            let notSent = dueQueue.count - dueCursor
            let measured = firstMeasured.map { Double(max(lastMeasured, $0) - $0) / 1e9 } ?? 0
            // Time-bounded runs are measured over the time asked for; count-bounded ones
            // from the first measured reply to the last.
            let seconds = shape.seconds.map { min($0, max(measured, 1e-9)) } ?? max(measured, 1e-9)
            return LoadOutcome(operations: operations, total: total, measuredSeconds: seconds, notSent: notSent)
        }

        /// Sends the next request of `user` on `slot`; false when there is none.
        @discardableResult
        mutating func issue(slot: Int, user: Int, from: UInt64) -> Bool {
            if let count = shape.count, sent >= count {
                exhausted = true
                return false
            }
            guard let request = workload.next(user: user) else {
                exhausted = true
                return false
            }
            let tag = UInt64(slot) << 32 | (nextTag & 0xFFFF_FFFF)
            nextTag += 1
            let now = ProcessFigures.now()
            do {
                try transport.send(request, tag: tag)
            } catch {
                complete(Outstanding(request: request, from: from, sentAt: now, slot: slot), reply: LoadReply(ok: false, code: "send_failed"), at: now, measureFrom: 0)
                return false
            }
            sent += 1
            bySlot[slot] = (tag, Outstanding(request: request, from: from, sentAt: now, slot: slot))
            inFlight += 1
            return true
        }

        mutating func complete(_ entry: Outstanding, reply: LoadReply, at: UInt64, measureFrom: UInt64) {
            workload.completed(entry.request, reply: reply)
            guard entry.sentAt >= measureFrom else { return }
            let micros = (at - min(entry.from, at)) / 1_000
            operations[entry.request.op, default: OperationStatistics()].record(micros: micros, reply: reply)
            total.record(micros: micros, reply: reply)
            second.record(micros: micros, reply: reply)
            if firstMeasured == nil { firstMeasured = entry.sentAt }
            lastMeasured = max(lastMeasured, at)
        }
    }
}

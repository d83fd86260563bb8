import Foundation
import LoadKit
import Platform

/// The operations a mix can send, with the service each belongs to.
enum MixOperation: String, CaseIterable, Sendable {
    case bookingSlots = "booking.slots"
    case bookingCreate = "booking.create"
    case bookingCancel = "booking.cancel"
    case remindersCreate = "reminders.create"
    case remindersList = "reminders.list"
    case remindersSearch = "reminders.search"
    case savingsDeposit = "savings.deposits.record"
    case goalsCheck = "goals.items.check"
    case goalsDashboard = "goals.dashboard"
    case statsKeyFacts = "stats.keyFacts"
    case statsSync = "stats.workouts.sync"

    var service: String { String(rawValue.prefix { $0 != "." }) }

    /// Named mixes: weights per operation.
    static func mix(named name: String) -> [(MixOperation, Int)]? {
        switch name {
        // What the five apps' users do in a day, roughly: mostly reads, a write in four.
        case "realistic":
            return [
                (.bookingSlots, 14), (.bookingCreate, 4), (.bookingCancel, 3), (.remindersCreate, 6), (.remindersList, 12), (.remindersSearch, 6),
                (.savingsDeposit, 6), (.goalsCheck, 6), (.goalsDashboard, 12), (.statsKeyFacts, 12), (.statsSync, 3),
            ]
        // The issue's read path and durable write path.
        case "reads": return [(.bookingSlots, 1), (.remindersList, 1), (.statsKeyFacts, 1)]
        case "writes": return [(.bookingCreate, 1), (.savingsDeposit, 1), (.goalsCheck, 1)]
        default:
            return MixOperation(rawValue: name).map { [($0, 1)] }
        }
    }
}

/// Requests of a mix for the population's users, following up on replies (a booking made
/// can be cancelled, a check is undone next time). Used by the driver's thread only.
final class MixWorkload: LoadWorkload, @unchecked Sendable {
    private let population: Population
    private var table: [MixOperation] = []
    private var random: SplitMix64
    private var bookingCursor: [Int]
    private var bookings: [[String]]
    private var checkCursor: [Int]
    private var sequence: [Int]
    private let today: LocalDate
    private let workoutsFrom: Date
    private let dates: [String]

    /// Marks of requests whose replies matter.
    private enum Kind: Int {
        case plain = 0, created, cancelled
    }

    init(population: Population, weights: [(MixOperation, Int)], seed: UInt64 = 0x5EED) throws {
        self.population = population
        for (op, weight) in weights where population.services.contains(op.service) {
            table += Array(repeating: op, count: max(0, weight))
        }
        guard !table.isEmpty else { throw LoadError("none of the mix's services was prepared: \(Set(weights.map { $0.0.service }).sorted())") }
        random = SplitMix64(seed: seed)
        let count = population.users.count
        bookingCursor = Array(repeating: 0, count: count)
        bookings = Array(repeating: [], count: count)
        checkCursor = Array(repeating: 0, count: count)
        sequence = Array(repeating: 0, count: count)
        today = ZoneClock.utc.localDate(of: Date())
        dates = (1...14).map { ZoneClock.utc.localDate(of: Date()).adding(days: $0).description }
        // Offline workouts are dated from 300 days ago, 20 minutes apart per user: never
        // overlapping, never older than the year the service accepts.
        workoutsFrom = Date().addingTimeInterval(-300 * 86_400)
    }

    /// The operations this workload sends (those of prepared services).
    var operations: Set<String> { Set(table.map(\.rawValue)) }

    private func nextRandom() -> UInt64 { random.next() }

    func next(user: Int) -> LoadRequest? {
        let user = user % population.users.count
        let op = table[Int(nextRandom() % UInt64(table.count))]
        sequence[user] += 1
        let number = sequence[user]
        let token = population.tokens[user]
        let run = population.runID
        func request(_ op: MixOperation, _ data: String, idem: String? = nil, kind: Kind = .plain, wantsReply: Bool = false) -> LoadRequest {
            LoadRequest(op: op.rawValue, token: token, idem: idem, data: Data(data.utf8), user: user, kind: kind.rawValue, wantsReply: wantsReply)
        }
        switch op {
        case .bookingSlots:
            return request(op, #"{"date":"\#(dates[Int(nextRandom() % UInt64(dates.count))])"}"#)
        case .bookingCancel where !bookings[user].isEmpty:
            let booking = bookings[user].removeFirst()
            return request(op, #"{"booking":"\#(booking)"}"#, kind: .cancelled)
        case .bookingCreate, .bookingCancel:
            let slots = population.slots
            // Each user walks the slots from its own offset: never the same slot twice.
            let slot = slots[(user * 7 + bookingCursor[user]) % slots.count]
            bookingCursor[user] += 1
            return request(
                .bookingCreate, #"{"cable":"\#(slot.cable)","start":"\#(slot.start)"}"#, idem: "lg-\(run)-b-\(user)-\(number)", kind: .created,
                wantsReply: true)
        case .remindersCreate:
            let word = Population.words[Int(nextRandom() % UInt64(Population.words.count))]
            let day = today.adding(days: 1 + Int(nextRandom() % 60))
            return request(
                op, #"{"id":"lg-\#(run)-\#(user)-\#(number)","title":"\#(word) \#(number)","start":"\#(day)T18:30","zone":"Europe/Minsk"}"#)
        case .remindersList:
            return request(op, #"{"limit":50}"#)
        case .remindersSearch:
            return request(op, #"{"query":"\#(Population.words[Int(nextRandom() % UInt64(Population.words.count))])","limit":50}"#)
        case .savingsDeposit:
            guard let plan = population.users[user].savingsPlan else { return request(.remindersList, #"{"limit":50}"#) }
            return request(
                op, #"{"planId":"\#(plan)","amount":{"minor":\#(100 + nextRandom() % 900),"currency":"RUB"},"date":"\#(today)"}"#,
                idem: "lg-\(run)-d-\(user)-\(number)")
        case .goalsCheck:
            let items = population.users[user].goalItems
            guard !items.isEmpty else { return request(.goalsDashboard, "{}") }
            let position = checkCursor[user]
            checkCursor[user] += 1
            // Done on the first pass over the items, undone on the next, and so on.
            let done = (position / items.count) % 2 == 0
            return request(op, #"{"itemId":"\#(items[position % items.count])","done":\#(done)}"#)
        case .goalsDashboard:
            return request(op, "{}")
        case .statsKeyFacts:
            return request(op, nextRandom() % 2 == 0 ? #"{"period":"week"}"# : #"{"period":"month"}"#)
        case .statsSync:
            return request(op, workout(user: user, number: number))
        }
    }

    func completed(_ request: LoadRequest, reply: LoadReply) {
        switch Kind(rawValue: request.kind) {
        case .created:
            if reply.ok, let id = reply.data?["id"]?.stringValue { bookings[request.user].append(id) }
        default:
            break
        }
    }

    /// An offline workout of three exercises (each shown, its 30 s countdown run, done 45 s
    /// after it was shown), in the user's own 20-minute window.
    private func workout(user: Int, number: Int) -> String {
        let exercises = population.exercises
        let start = workoutsFrom.addingTimeInterval(Double(number) * 1_200 + Double(user) * 0.001)
        var items: [String] = []
        for step in 0..<3 {
            let shown = start.addingTimeInterval(Double(step) * 60)
            let index = (user + number + step) % exercises.count
            let exercise = exercises[index]
            let base = index < population.exerciseBases.count ? population.exerciseBases[index] : 10
            items.append(
                #"{"exerciseId":"\#(exercise)","shownAt":"\#(Instant.format(shown))","completedAt":"\#(Instant.format(shown.addingTimeInterval(45)))","repetitions":\#(base + 2),"recommended":\#(base)}"#)
        }
        return #"{"workouts":[{"id":"lg-\#(population.runID)-w-\#(user)-\#(number)","countdownSeconds":30,"exercises":[\#(items.joined(separator: ","))]}]}"#
    }
}

import ArgumentParser
import Foundation
import Platform

/// The platform's money and calendar values against what they replace: `ZoneClock`
/// against Foundation's `Calendar` (booking's schedule used the latter), allocation and
/// month arithmetic.
struct ValuesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "values", abstract: "ZoneClock against Calendar; Money allocation; LocalDate months.")

    @Option(help: "Iterations per measurement.")
    var iterations: Int = 200_000

    func run() throws {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let clock = ZoneClock(zone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let instant = Date(timeIntervalSince1970: 1_795_341_600)
        let date = LocalDate(year: 2026, month: 10, day: 25)
        let time = LocalTime(hour: 2, minute: 30)!
        print("values benchmark: \(iterations) iterations each, one thread, zone \(zone.identifier)")
        print("measure                                                       ns/op")
        measureNanoseconds("instant -> local date and time: ZoneClock.local", iterations: iterations) { _ = clock.local(instant) }
        measureNanoseconds("instant -> local date and time: Calendar.dateComponents", iterations: iterations) {
            _ = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
        }
        measureNanoseconds("local -> instant (overlap night): ZoneClock.instant", iterations: iterations) { _ = clock.instant(date, time) }
        measureNanoseconds("local -> instant + round-trip check: Calendar (the old way)", iterations: iterations) {
            let candidate = calendar.date(from: DateComponents(year: 2026, month: 10, day: 25, hour: 2, minute: 30))!
            _ = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: candidate)
        }
        let amount = Money(minor: 1_234_567, currency: "RUB")
        let ratios: [Int64] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]
        try measureNanoseconds("Money.allocated into 12 parts", iterations: iterations) { _ = try amount.allocated(ratios) }
        // Varying inputs and a result kept, so the optimizer cannot fold the call away.
        var months = 0, sink = 0
        measureNanoseconds("LocalDate.adding(months:) (clamped)", iterations: iterations) {
            months &+= 1
            sink &+= LocalDate(year: 2026, month: 1, day: 31).adding(months: months % 120).day
        }
        if sink == 42 { print("") }
    }
}

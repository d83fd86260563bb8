import Foundation
import Platform
import SharedTesting
import Testing

/// The fault suite, reduced for CI (the full one: `bench faults`): SIGKILL of auth,
/// savings, booking, goals, reminders, stats and the gateway (with the bus) under a steady
/// write load, pushes going to a fake Gorush gateway.
@Suite("Fault drill")
struct FaultDrillTests {
    @Test("under write load, killing each process loses, duplicates and strands nothing", .timeLimit(.minutes(5)))
    func killEachProcess() async throws {
        var drill = FaultDrill()
        drill.writers = 4
        drill.pause = .milliseconds(1_500)
        let findings = try await drill.run { print("fault drill: \($0)") }
        #expect(findings.kills == drill.victims)
        #expect(findings.acknowledgedDeposits > 20)
        #expect(findings.acknowledgedTopUps > 0)
        #expect(findings.acknowledgedReminders > 0)
        #expect(findings.dueReminders >= findings.acknowledgedReminders)
        #expect(findings.pushes == findings.acknowledgedReminders)
        #expect(findings.problems.isEmpty, "\(findings)")
    }
}

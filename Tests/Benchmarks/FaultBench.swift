import ArgumentParser
import Foundation
import SharedTesting

/// The full fault suite (README, "Load and reliability"): rounds of SIGKILL of each
/// service and the gateway under a steady write load, then every promise checked.
struct FaultBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults", abstract: "Kill each service and the gateway under write load; check nothing is lost, duplicated or stuck.")

    @Option(help: "Rounds over the processes.")
    var rounds = 3
    @Option(help: "Writers (users writing all the time).")
    var writers = 16
    @Option(help: "Seconds of load between two kills.")
    var pause: Double = 3

    func run() async throws {
        var drill = FaultDrill()
        drill.rounds = rounds
        drill.writers = writers
        drill.pause = .milliseconds(Int(pause * 1000))
        let findings = try await drill.run { report($0) }
        report(findings.problems.isEmpty ? "PASS" : "FAIL")
        if !findings.problems.isEmpty { throw ExitCode(1) }
    }
}

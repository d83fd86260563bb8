import ArgumentParser
import Foundation
import Platform
import SharedTesting
import Synchronization

/// Memory under pipelining (Platform issue, "memory stays bounded under pipelining"):
/// clients pipelining ~1 MB requests through the gateway to auth while one more client
/// makes small `auth.health` calls; reports the peak resident memory of the gateway and
/// of auth and how the requests were answered.
struct PipeliningBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipelining", abstract: "Peak RSS of the gateway and auth under pipelined 1 MB requests.")

    @Option(help: "Clients pipelining large requests.")
    var clients = 6
    @Option(help: "Requests per client.")
    var requests = 3_000
    @Option(help: "Bytes in each request's data.")
    var size = 1_000_000

    func run() async throws {
        // Production deadlines, not the tests' shorter ones.
        let environment = ["BACKEND_GATEWAY_DEADLINE_MS": "5000", "BACKEND_REQUEST_DEADLINE_MS": "4000"]
        try await TestStack.with(services: ["auth"], extraEnvironment: environment) { stack in
            guard let gateway = stack.process("gateway"), let auth = stack.process("auth") else { return }
            let email = String(repeating: "x", count: size)
            let body = Data(#"{"id":"flood","op":"auth.login","data":{"email":"\#(email)","password":"12345678"}}"#.utf8)
            print("pipelining: \(clients) clients x \(requests) requests of \(body.count) bytes, plus one client of small auth.health calls")

            let flooding = Atomic<Bool>(true)
            let smallCalls = Task {
                var latencies: [Duration] = []
                var failures = 0
                while flooding.load(ordering: .relaxed) {
                    let started = ContinuousClock.now
                    let reply = try? await stack.client.call("auth.health", idempotent: true, timeout: .seconds(10), attempts: 1)
                    if reply?.ok == true { latencies.append(.now - started) } else { failures += 1 }
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return (latencies.sorted(), failures)
            }
            let started = ContinuousClock.now
            let outcomes = await withTaskGroup(of: [PipeliningClient.Outcome].self) { group in
                for _ in 0..<clients {
                    group.addTask {
                        await PipeliningClient.run(
                            Array(repeating: body, count: requests), endpoint: stack.configuration.gatewayEndpoint, timeout: .seconds(600))
                    }
                }
                var all: [PipeliningClient.Outcome] = []
                for await outcome in group { all += outcome }
                return all
            }
            let elapsed = ContinuousClock.now - started
            flooding.store(false, ordering: .relaxed)
            let (latencies, failures) = await smallCalls.value

            var codes: [String: Int] = [:]
            for outcome in outcomes {
                codes[outcome.reply.map { $0.error?.code.rawValue ?? "ok" } ?? "no reply", default: 0] += 1
            }
            print(String(format: "%d requests in %.1f s: %@", outcomes.count, elapsed.milliseconds / 1000, codes.description))
            for (name, process) in [("gateway", gateway), ("auth", auth)] {
                guard let memory = process.memory else { continue }
                print("\(name): peak RSS (VmHWM) \(memory.peakResident >> 20) MiB, RSS now \(memory.resident >> 20) MiB")
            }
            let p50 = latencies.isEmpty ? 0 : latencies[latencies.count / 2].wholeMilliseconds
            let worst = latencies.last?.wholeMilliseconds ?? 0
            print("small auth.health calls during the flood: \(latencies.count) ok, \(failures) failed, p50 \(p50) ms, max \(worst) ms")
        }
    }
}

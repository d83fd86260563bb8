import Foundation
import Platform
import SharedTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Healthy means reachable: once the stack says healthy, a request is never answered
/// `unavailable`, and a restarted service is served again right after it binds
/// (Platform issue, "healthy means reachable").
@Suite("Gateway readiness", .serialized)
struct GatewayReadinessTests {
    @Test("right after the stack reports healthy, every service answers through the gateway (4 fresh starts)")
    func healthyMeansReachable() async throws {
        for run in 1...4 {
            let stack = try TestStack()
            let runner = try ChildProcess(
                executable: TestEnvironment.binary("stack"), environment: stack.configuration.environment,
                logFile: stack.directory.url.appendingPathComponent("stack-\(run).log"))
            do {
                try await runner.waitForOutput("all 9 processes are healthy", timeout: .seconds(60))
                // A burst to every service at once, on a fresh connection to the gateway.
                let bodies = PlatformConfiguration.serviceNames.flatMap { service in
                    (0..<8).map { Data(#"{"id":"\#(service)-\#($0)","op":"\#(service).health"}"#.utf8) }
                }
                let outcomes = await PipeliningClient.run(bodies, endpoint: stack.configuration.gatewayEndpoint, timeout: .seconds(10))
                let failures = zip(bodies, outcomes).filter { $0.1.reply?.ok != true }.map {
                    "\(String(decoding: $0.0, as: UTF8.self)) -> \($0.1.reply?.error.map { "\($0.code.rawValue): \($0.message)" } ?? "no reply")"
                }
                #expect(failures.isEmpty, "start \(run): \(failures.count) of \(bodies.count) calls failed: \(failures)")
                let status = await runner.stop(grace: .seconds(20))
                #expect(status == 0)
                await stack.stop()
            } catch {
                await runner.stop()
                await stack.stop()
                throw error
            }
        }
    }

    @Test("a restarted service is served through the gateway within 250 ms of binding its socket")
    func restartedServiceIsReachedQuickly() async throws {
        try await TestStack.with(services: ["auth"]) { stack in
            let port = try #require(stack.configuration.serviceEndpoints["auth"].flatMap(Self.port(of:)))
            // Three restarts: one lucky reconnect timing cannot pass for a short interval.
            for restart in 1...3 {
                let old = try #require(stack.process("auth"))
                old.kill(signal: SIGKILL)
                await old.waitForExit(timeout: .seconds(5))
                // Down for a second, long enough for a reconnect backoff to grow.
                try await Task.sleep(for: .seconds(1))
                try stack.start("auth")

                // The moment the socket is bound: a TCP connection is accepted.
                let bindDeadline = ContinuousClock.now + .seconds(30)
                while !Self.accepts(port: port) {
                    guard ContinuousClock.now < bindDeadline else { throw TestStackError("auth never bound its socket") }
                    try await Task.sleep(for: .milliseconds(1))
                }
                let bound = ContinuousClock.now

                var served: Duration?
                var lastError = "none"
                while ContinuousClock.now - bound < .seconds(5) {
                    let reply = try? await stack.client.call("auth.health", idempotent: true, timeout: .seconds(2), attempts: 1)
                    if reply?.ok == true {
                        served = ContinuousClock.now - bound
                        break
                    }
                    lastError = reply?.error?.code.rawValue ?? "no reply"
                    try await Task.sleep(for: .milliseconds(2))
                }
                let elapsed = try #require(served, "restart \(restart): auth not served 5 s after binding (last: \(lastError))")
                #expect(elapsed < .milliseconds(250), "restart \(restart): served \(elapsed.wholeMilliseconds) ms after binding")
                print("restart \(restart): auth served through the gateway \(elapsed.wholeMilliseconds) ms after binding")
            }
        }
    }

    static func port(of endpoint: String) -> UInt16? {
        endpoint.split(separator: ":").last.flatMap { UInt16($0) }
    }

    /// Whether something listens on 127.0.0.1:`port` (a plain TCP connect, closed at once).
    static func accepts(port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(port.bigEndian)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == 0
    }
}

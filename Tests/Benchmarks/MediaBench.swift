import ArgumentParser
import Foundation
import LoadKit
import Platform
import SharedTesting

/// The media block's figures through the gateway: `booking.media.put` of a 100 KB PNG
/// (each request a different content, so every upload hashes, writes and fsyncs its own
/// file) and `booking.media.get` of it, at 1 and more requests in flight.
struct MediaBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media", abstract: "booking.media.put and booking.media.get of a 100 KB image: latency and throughput.")

    @Option(help: "Seconds per measurement.")
    var seconds: Double = 5
    @Option(help: "Log level of the measured processes (their default is info: one line per request).")
    var serviceLogLevel: String = "info"

    func run() async throws {
        let environment = [
            "BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "0", "BACKEND_LOG_LEVEL": serviceLogLevel,
            "BACKEND_GATEWAY_DEADLINE_MS": "5000", "BACKEND_REQUEST_DEADLINE_MS": "4000",
        ]
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: environment) { stack in
            let admin = try await AuthFixtures.signUpAdmin(stack.client, direct: try stack.directClient("auth"), email: "admin@bench.example")
            let image = TestImages.png(width: 200, height: 166)
            let content = image.base64EncodedString()
            // Ten digits in the pixel data, different for every request: a new content (and
            // hash, and file) per upload. The PNG's CRC no longer matches, which only a full
            // decoder would notice; the service reads headers and framing.
            let template = Data(#"{"id":"p","op":"booking.media.put","token":"\#(admin)","data":{"content":"\#(content)"}}"#.utf8)
            let counterAt = try require(template.range(of: Data(content.utf8))).lowerBound + 1_000
            let run = UInt64(Date().timeIntervalSince1970)
            let putBodies: @Sendable (Int) -> Data? = { number in
                var body = template
                let digits = String(format: "%010llu", (run &* 1_000_003 &+ UInt64(number)) % 10_000_000_000)
                body.replaceSubrange(counterAt..<(counterAt + 10), with: Data(digits.utf8))
                return body
            }
            let processes = ["booking", "gateway"].compactMap { name in stack.process(name).map { (name, $0.pid) } }
            report("media: \(image.count)-byte PNG (\(template.count)-byte request), \(seconds) s per measurement, services logging at \(serviceLogLevel)")
            for inFlight in [1, 16] {
                try await measure("booking.media.put, distinct content", inFlight: inFlight, bytes: image.count, processes: processes) {
                    try await LoadGenerator.run(
                        endpoint: stack.configuration.gatewayEndpoint, bodies: putBodies, expected: Data(#""ok":true"#.utf8), inFlight: inFlight,
                        warmup: 1, seconds: seconds)
                }
            }
            let stored = try await stack.client.call("booking.media.put", data: ["content": .string(content)], token: admin)
            let id = try require(stored.data?["id"]?.stringValue)
            let getBody = Data(#"{"id":"g","op":"booking.media.get","data":{"id":"\#(id)"}}"#.utf8)
            for inFlight in [1, 16] {
                try await measure("booking.media.get", inFlight: inFlight, bytes: image.count, processes: processes) {
                    try await LoadGenerator.run(
                        endpoint: stack.configuration.gatewayEndpoint, body: getBody, expected: Data(#""ok":true"#.utf8), inFlight: inFlight,
                        warmup: 1, seconds: seconds)
                }
            }
        }
    }

    /// Runs one measurement and prints its rate, latency and CPU per request.
    private func measure(
        _ name: String, inFlight: Int, bytes: Int, processes: [(String, Int32)], _ body: () async throws -> LoadResult
    ) async throws {
        let before = processes.map { ProcessFigures.cpuSeconds(pid: $0.1) }
        let selfBefore = ProcessFigures.cpuSeconds(pid: getpid())
        let result = try await body()
        let requests = max(1.0, result.rate * (seconds + 1))
        var line = String(
            format: "%@, %2d in flight: %6.0f req/s (%.1f MB/s), p50 %.2f ms, p99 %.2f ms", name, inFlight, result.rate,
            result.rate * Double(bytes) / 1e6, result.p50 / 1000, result.p99 / 1000)
        if result.errors > 0 { line += ", \(result.errors) errors" }
        report(line)
        let cpu = zip(processes, before).map { process, start in
            String(format: "%@ %.0f µs", process.0, (ProcessFigures.cpuSeconds(pid: process.1) - start) / requests * 1e6)
        }
        report("  CPU per request: " + (cpu + [String(format: "load driver %.0f µs", (ProcessFigures.cpuSeconds(pid: getpid()) - selfBefore) / requests * 1e6)])
            .joined(separator: ", "))
    }
}

import Foundation
import Platform
import SharedTesting

/// The processes a benchmark measures: a configuration on free loopback ports with its
/// data under a temporary folder, the built executables started with it, and a wait until
/// they answer `health` through the gateway.
enum BenchStack {
    /// A configuration on free ports, data in `directory/data`, services logging at `logLevel`.
    static func configuration(in directory: URL, logLevel: String = "info") throws -> PlatformConfiguration {
        var configuration = PlatformConfiguration()
        configuration.gatewayEndpoint = TestEnvironment.freeEndpoint()
        configuration.busInEndpoint = TestEnvironment.freeEndpoint()
        configuration.busOutEndpoint = TestEnvironment.freeEndpoint()
        for name in PlatformConfiguration.serviceNames { configuration.serviceEndpoints[name] = TestEnvironment.freeEndpoint() }
        configuration.dataDirectory = directory.appendingPathComponent("data").path
        configuration.logLevel = try PlatformConfiguration.fromEnvironment(["BACKEND_LOG_LEVEL": logLevel]).logLevel
        // Measured as deployed: encrypted links.
        try configuration.makeCurveKeys(in: directory)
        return configuration
    }

    /// Starts the executables `names` (built beside `bench`), each logging to `directory/<name>.log`.
    static func start(_ names: [String], environment: [String: String], in directory: URL) throws -> [ChildProcess] {
        let binaries = URL(fileURLWithPath: ProcessSetup.executablePath).deletingLastPathComponent()
        return try names.map { name in
            try ChildProcess(
                executable: binaries.appendingPathComponent(name), environment: environment,
                logFile: directory.appendingPathComponent("\(name).log"))
        }
    }

    /// Waits (at most about 10 s each) until every service in `names` answers `health` through `client`.
    static func waitUntilHealthy(_ names: [String], client: ServiceClient) async throws {
        for name in names {
            for _ in 0..<100 {
                if (try? await client.call("\(name).health", idempotent: true, timeout: .milliseconds(300), attempts: 1))?.ok == true { break }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}

import Foundation
import Platform

extension PlatformConfiguration {
    /// The configuration of services run in process by tests: the bus, the six services and
    /// any other `services` on free loopback ports (never the defaults, where a developer's
    /// own stack may be listening), data in `directory`, and a 5 s request deadline (the
    /// suite runs many services at once on few cores; tests of deadlines set their own).
    public static func forTests(directory: TemporaryDirectory, services: [String] = []) -> PlatformConfiguration {
        var configuration = PlatformConfiguration()
        configuration.busInEndpoint = TestEnvironment.freeEndpoint()
        configuration.busOutEndpoint = TestEnvironment.freeEndpoint()
        for service in Set(serviceNames + services) { configuration.serviceEndpoints[service] = TestEnvironment.freeEndpoint() }
        configuration.dataDirectory = directory.path
        configuration.requestDeadlineMs = 5_000
        return configuration
    }
}

extension PlatformConfiguration {
    /// Makes a new CURVE key folder `keys` in `directory` and points the configuration at
    /// it, so the processes started with it link as a deployment does (encrypted, known
    /// keys only).
    public mutating func makeCurveKeys(in directory: URL) throws {
        let folder = directory.appendingPathComponent("keys")
        try CurveKeyring.write(try CurveKeyring.generate(), to: folder)
        curveKeysDirectory = folder.path
    }

    /// The operator's link to `service` (ctl's, a load tool's): CURVE with `operator`'s keys
    /// when the configuration has a key folder.
    public func operatorLink(to service: String) throws -> Link {
        try links(as: "operator").service(service)
    }
}

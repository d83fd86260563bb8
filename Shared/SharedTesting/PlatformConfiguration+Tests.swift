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

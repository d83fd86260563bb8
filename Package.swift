// swift-tools-version:6.1
// The backend: six services and a gateway exchanging JSON over ZeroMQ, each service
// owning its SQLite database. See README.md for the architecture.
import PackageDescription

/// The services of the system: (library module, executable name, folder).
let services: [(module: String, executable: String, folder: String)] = [
    ("AuthService", "auth", "Auth"),
    ("GoalsService", "goals", "Goals"),
    ("RemindersService", "reminders", "Reminders"),
    ("SavingsService", "savings", "Savings"),
    ("BookingService", "booking", "Booking"),
    ("StatsService", "stats", "Stats"),
]

let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let lifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")

var targets: [Target] = [
    // C libraries from Debian, wrapped as system libraries.
    .systemLibrary(
        name: "CZeroMQ", path: "Shared/CZeroMQ", pkgConfig: "libzmq",
        providers: [.apt(["libzmq3-dev"])]),
    .systemLibrary(name: "CBackendSystem", path: "Shared/CBackendSystem"),
    // A SQLite VFS in C that gathers a fully synced database's log writes into one buffer
    // per commit, written at its sync (Shared/SQLiteWALBuffer/wal_buffer.c).
    .target(name: "SQLiteWALBuffer", path: "Shared/SQLiteWALBuffer", linkerSettings: [.linkedLibrary("sqlite3")]),
    // libcurl's headers only: the library is loaded when a provider is first called
    // (Shared/CCurl/shim.h), so processes that never call one do not carry it.
    .systemLibrary(
        name: "CCurl", path: "Shared/CCurl",
        providers: [.apt(["libcurl4-openssl-dev"])]),
    .systemLibrary(
        name: "COpenSSL", path: "Shared/COpenSSL", pkgConfig: "libcrypto",
        providers: [.apt(["libssl-dev"])]),

    // The platform every service stands on.
    .target(name: "ZeroMQ", dependencies: ["CZeroMQ"], path: "Shared/ZeroMQ"),
    .target(
        name: "Platform",
        dependencies: [
            "ZeroMQ", "COpenSSL", "CCurl", "CBackendSystem", "SQLiteWALBuffer", grdb, logging, lifecycle, argumentParser,
            .product(name: "Prometheus", package: "swift-prometheus"), .product(name: "Metrics", package: "swift-metrics"),
        ],
        path: "Shared/Platform"),
    .target(
        name: "SharedTesting", dependencies: ["Platform", "ZeroMQ", "GatewayService", grdb, logging, lifecycle],
        path: "Shared/SharedTesting", exclude: ["Fixtures"]),

    // What every HTTP listener puts first on each connection: bounds on connections and
    // on slow clients, and a budget for bodies held in memory.
    .target(
        name: "HTTPDoor",
        dependencies: [
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ],
        path: "Shared/HTTPDoor"),

    // Gateway, stack runner and operator CLI.
    .target(
        name: "GatewayService",
        dependencies: [
            "Platform", "ZeroMQ", "HTTPDoor", logging, lifecycle, .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Metrics", package: "swift-metrics"),
        ],
        path: "Services/Gateway/GatewayService"),
    .executableTarget(name: "gateway", dependencies: ["GatewayService", "Platform", lifecycle], path: "Services/Gateway/gateway"),
    .executableTarget(
        name: "stack", dependencies: ["Platform", argumentParser, logging], path: "Services/Stack"),
    .executableTarget(
        name: "ctl", dependencies: ["Platform", "ZeroMQ", argumentParser], path: "Services/Ctl"),

    // The HTTPS edge: the apps' front door, one more client of the gateway.
    .target(
        name: "EdgeService",
        dependencies: [
            "Platform", "ZeroMQ", "HTTPDoor", logging, lifecycle,
            .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"), .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"), .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ],
        path: "Services/Edge/EdgeService"),
    .executableTarget(
        name: "edge", dependencies: ["EdgeService", "Platform", lifecycle, .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ],
        path: "Services/Edge/edge"),

    // The admin panel: a web application for administrators and park staff, one more
    // client of the gateway (server-rendered HTML).
    .target(
        name: "AdminPanel",
        dependencies: [
            "Platform", "HTTPDoor", logging, lifecycle,
            .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Mustache", package: "swift-mustache"),
            .product(name: "MultipartKit", package: "multipart-kit"), .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
        ],
        path: "Services/Admin/AdminPanel"),
    .executableTarget(name: "admin", dependencies: ["AdminPanel", "Platform", lifecycle], path: "Services/Admin/admin"),

    // Load runs: the driver, its transports and the limits it measures against.
    .target(
        name: "LoadKit", dependencies: ["Platform", "ZeroMQ", grdb, .product(name: "Histogram", package: "hdrhistogram-swift")],
        path: "Shared/LoadKit"),
    // Message injection against a running stack (README, "Load runs").
    .executableTarget(name: "loadgen", dependencies: ["LoadKit", "Platform", "ZeroMQ", argumentParser], path: "Services/Loadgen"),

    // Benchmarks (a command, not a test).
    .executableTarget(
        name: "bench",
        dependencies: [
            "Platform", "ZeroMQ", "SharedTesting", "LoadKit", "RemindersService", "StatsService", argumentParser, grdb,
            .product(name: "Histogram", package: "hdrhistogram-swift"),
        ],
        path: "Tests/Benchmarks"),

    // Tests.
    .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ"], path: "Tests/ZeroMQTests"),
    .testTarget(
        name: "PlatformTests", dependencies: ["Platform", "ZeroMQ", "SharedTesting", "GatewayService", "LoadKit", "HTTPDoor", "SQLiteWALBuffer", grdb, logging, lifecycle],
        path: "Tests/PlatformTests"),
    .testTarget(
        name: "AuthTests", dependencies: ["AuthService", "Platform", "SharedTesting", grdb, logging, lifecycle],
        path: "Tests/AuthTests", exclude: ["Fixtures"]),
    .testTarget(
        name: "BookingTests", dependencies: ["BookingService", "AuthService", "Platform", "SharedTesting", grdb, logging, lifecycle],
        path: "Tests/BookingTests", exclude: ["Fixtures"]),
    .testTarget(
        name: "GoalsTests", dependencies: ["GoalsService", "Platform", "SharedTesting", grdb, logging, lifecycle],
        path: "Tests/GoalsTests"),
    .testTarget(
        name: "SavingsTests",
        dependencies: ["SavingsService", "Platform", "SharedTesting", grdb, .product(name: "PropertyBased", package: "swift-property-based")],
        path: "Tests/SavingsTests"),
    .testTarget(
        name: "RemindersTests",
        dependencies: ["RemindersService", "Platform", "SharedTesting", grdb, .product(name: "PropertyBased", package: "swift-property-based")],
        path: "Tests/RemindersTests", exclude: ["Fixtures"]),
    .testTarget(
        name: "StatsTests",
        dependencies: ["StatsService", "Platform", "SharedTesting", grdb, .product(name: "PropertyBased", package: "swift-property-based")],
        path: "Tests/StatsTests", exclude: ["Fixtures"]),
    .testTarget(
        name: "EdgeTests",
        dependencies: [
            "EdgeService", "Platform", "SharedTesting", .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ],
        path: "Tests/EdgeTests", exclude: ["Fixtures"]),
    .testTarget(
        name: "AdminTests",
        dependencies: [
            "AdminPanel", "Platform", "SharedTesting", .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Hummingbird", package: "hummingbird"),
        ],
        path: "Tests/AdminTests", exclude: ["Fixtures"]),
    .testTarget(
        name: "IntegrationTests",
        dependencies: ["Platform", "ZeroMQ", "SharedTesting", grdb],
        path: "Tests/IntegrationTests"),
]

/// Services that speak HTTP to the outside (payment callbacks) get Hummingbird.
let httpServices: Set<String> = ["BookingService"]

for service in services {
    var dependencies: [Target.Dependency] = ["Platform", "COpenSSL", grdb, logging, lifecycle]
    if httpServices.contains(service.module) {
        dependencies += [
            "HTTPDoor", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]
    }
    targets.append(
        .target(
            name: service.module, dependencies: dependencies,
            path: "Services/\(service.folder)/\(service.module)"))
    targets.append(
        .executableTarget(
            name: service.executable, dependencies: [.target(name: service.module), "Platform"],
            path: "Services/\(service.folder)/\(service.executable)"))
}

let package = Package(
    name: "Backend",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gateway", targets: ["gateway"]),
        .executable(name: "stack", targets: ["stack"]),
        .executable(name: "ctl", targets: ["ctl"]),
        .executable(name: "edge", targets: ["edge"]),
        .executable(name: "admin", targets: ["admin"]),
        .executable(name: "bench", targets: ["bench"]),
        .executable(name: "loadgen", targets: ["loadgen"]),
    ] + services.map { .executable(name: $0.executable, targets: [$0.executable]) },
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // The admin panel's templates and its file uploads.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        // Property-based tests of the savings arithmetic (no dependencies of its own).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: targets,
    swiftLanguageModes: [.v6]
)

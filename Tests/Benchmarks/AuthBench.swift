import ArgumentParser
import Foundation
import Histogram
import Platform
import SharedTesting
import Synchronization

/// Token verification cost (Shared microbenchmark): fresh tokens (a signature check each)
/// and a repeated token (served by the verifier's cache).
struct TokenBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tokens", abstract: "Access token verification, µs per token.")

    @Option(help: "Distinct tokens to verify.")
    var count = 20_000

    func run() throws {
        let key = try Ed25519PrivateKey()
        let signer = AccessTokenSigner(keyID: "k1", key: key)
        let now = Int64(Date().timeIntervalSince1970)
        let tokens = try (0..<count).map { index in
            try signer.token(
                for: AccessTokenClaims(
                    userID: "usr_\(index)", roles: ["recipient", "sponsor"], activeRole: "recipient", sessionID: "ses_\(index)",
                    issuedAt: now, expiresAt: now + 300))
        }
        // A cache smaller than the set: every fresh token is a real signature check.
        let verifier = AccessTokenVerifier(keys: ["k1": key.publicKey], cacheLimit: 16)
        var started = ContinuousClock.now
        for token in tokens { _ = try verifier.verify(token) }
        let fresh = (ContinuousClock.now - started).milliseconds * 1000 / Double(count)

        let cached = AccessTokenVerifier(keys: ["k1": key.publicKey])
        _ = try cached.verify(tokens[0])
        started = ContinuousClock.now
        for _ in 0..<count { _ = try cached.verify(tokens[0]) }
        let repeated = (ContinuousClock.now - started).milliseconds * 1000 / Double(count)

        // A realistic stream: each client's token is used for 20 requests, interleaved
        // across 1,000 clients, with the default cache.
        let mixed = AccessTokenVerifier(keys: ["k1": key.publicKey])
        let clients = min(1_000, count)
        started = ContinuousClock.now
        for request in 0..<(clients * 20) { _ = try mixed.verify(tokens[request % clients]) }
        let perRequest = (ContinuousClock.now - started).milliseconds * 1000 / Double(clients * 20)

        let signStarted = ContinuousClock.now
        for index in 0..<1000 {
            _ = try signer.token(for: AccessTokenClaims(userID: "u\(index)", roles: [], activeRole: nil, sessionID: "s", issuedAt: now, expiresAt: now + 300))
        }
        let signing = (ContinuousClock.now - signStarted).milliseconds
        print(String(format: "verify, fresh token (Ed25519 signature check): %.1f µs per token (target at most 50 µs) %@", fresh, fresh <= 50 ? "PASS" : "FAIL"))
        print(String(format: "verify, repeated token (cache hit):            %.2f µs per token", repeated))
        print(String(format: "verify, 20 requests per token, 1000 clients:   %.1f µs per request %@", perRequest, perRequest <= 50 ? "PASS" : "FAIL"))
        print(String(format: "sign:                                           %.1f µs per token", signing))
    }
}

/// Sign-in throughput (bounded by scrypt by design) and how `auth.health` and
/// `auth.refresh` answer meanwhile.
struct SignInBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "signin", abstract: "Logins/s with real scrypt, and health/refresh latency under that load.")

    @Option(help: "Seconds of load.")
    var seconds: Double = 10
    @Option(help: "Logins in flight.")
    var inFlight = 8
    @Option(help: "log2 of scrypt's N (production: 17).")
    var scryptLogN = 17

    func run() async throws {
        let directory = try TemporaryDirectory(prefix: "bench-auth")
        var configuration = try BenchStack.configuration(in: directory.url)
        configuration.requestDeadlineMs = 30_000
        configuration.gatewayDeadlineMs = 30_000
        let environment = configuration.environment.merging([
            "BACKEND_AUTH_SCRYPT_LOG_N": String(scryptLogN), "BACKEND_AUTH_POW_DIFFICULTY": "0",
        ]) { _, new in new }
        let binaries = URL(fileURLWithPath: ProcessSetup.executablePath).deletingLastPathComponent()
        let auth = try ChildProcess(
            executable: binaries.appendingPathComponent("auth"), environment: environment,
            logFile: directory.url.appendingPathComponent("auth.log"))
        let gateway = try ChildProcess(
            executable: binaries.appendingPathComponent("gateway"), environment: environment,
            logFile: directory.url.appendingPathComponent("gateway.log"))
        defer {
            auth.kill(signal: SIGKILL)
            gateway.kill(signal: SIGKILL)
        }
        let client = ServiceClient(endpoint: configuration.gatewayEndpoint, name: "bench")
        for _ in 0..<100 {
            if (try? await client.call("auth.health", idempotent: true, timeout: .milliseconds(300), attempts: 1))?.ok == true { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        // Accounts to sign in with.
        var refreshToken: String?
        for index in 0..<inFlight {
            let reply = try await AuthFixtures.register(client, email: "bench\(index)@example.com", password: "bench-password")
            guard reply.ok else { throw ValidationError("registration failed: \(reply.error?.message ?? "")") }
            refreshToken = refreshToken ?? reply.data?["refreshToken"]?.stringValue
        }

        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let logins = Counter()
        let failures = Counter()
        let inFlight = self.inFlight
        async let loginLoad: Void = withTaskGroup(of: Void.self) { group in
            for index in 0..<inFlight {
                group.addTask {
                    while ContinuousClock.now < deadline {
                        let reply = try? await client.call(
                            "auth.login", data: ["email": .string("bench\(index)@example.com"), "password": "bench-password"],
                            timeout: .seconds(30))
                        if reply?.ok == true { logins.increment() } else { failures.increment() }
                    }
                }
            }
        }
        // Let the login queue fill before measuring the others.
        try await Task.sleep(for: .seconds(1))
        var health = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var refresh = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        var token = refreshToken ?? ""
        while ContinuousClock.now < deadline - .milliseconds(200) {
            var started = ContinuousClock.now
            _ = try await client.call("auth.health", idempotent: true)
            health.record(UInt64((ContinuousClock.now - started).wholeMicroseconds))
            started = ContinuousClock.now
            let reply = try await client.call("auth.refresh", data: ["refreshToken": .string(token)])
            refresh.record(UInt64((ContinuousClock.now - started).wholeMicroseconds))
            token = reply.data?["refreshToken"]?.stringValue ?? token
            try await Task.sleep(for: .milliseconds(5))
        }
        await loginLoad
        await client.close()
        let rate = Double(logins.value) / seconds
        print(String(format: "sign-ins: %.1f logins/s with scrypt N=2^%d, r=8, p=1 (%d in flight, %d failed)", rate, scryptLogN, inFlight, failures.value))
        for (name, histogram) in [("auth.health", health), ("auth.refresh", refresh)] {
            let p99 = Double(histogram.valueAtPercentile(99)) / 1000
            print(String(format: "%@ during sign-ins: p50 %.2f ms, p99 %.2f ms over %d calls (target p99 under 10 ms) %@", name,
                Double(histogram.valueAtPercentile(50)) / 1000, p99, Int(histogram.totalCount), p99 < 10 ? "PASS" : "FAIL"))
        }
        await auth.stop()
        await gateway.stop()
    }
}

/// A counter shared by concurrent tasks.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    func incrementAndGet() -> Int { count.add(1, ordering: .relaxed).newValue }
    var value: Int { count.load(ordering: .relaxed) }
}

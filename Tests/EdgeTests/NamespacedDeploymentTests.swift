import Foundation
import Platform
import SharedTesting
import Synchronization
import Testing
import ZeroMQ

/// The deployment's shape for real: the gateway, each service and the edge on a host of
/// their own (a network namespace each, joined by veth pairs to one bridge, as compose
/// places containers on one network), each process holding only its own CURVE secret and
/// the public keys, and an app's booking journey through the edge across them.
@Suite("Namespaced deployment", .serialized)
struct NamespacedDeploymentTests {
    /// Hosts in address order: the gateway at .10, the services at .11 to .16, the edge at .20.
    static let services = PlatformConfiguration.serviceNames

    @Test(
        "one host per process with CURVE on: plaintext and unknown keys are refused across hosts, a booking journey runs through the edge",
        .enabled(if: NetworkNamespaces.available, "needs root and `ip netns` (CAP_SYS_ADMIN, CAP_NET_ADMIN)"))
    func bookingAcrossHosts() async throws {
        let directory = try TemporaryDirectory(prefix: "netns")
        let network = try await NetworkNamespaces.create(hosts: ["gateway"] + Self.services + ["edge"], in: directory)
        var processes: [ChildProcess] = []
        do {
            let gatewayHost = network.address(of: "gateway")
            var configuration = PlatformConfiguration()
            configuration.gatewayEndpoint = "tcp://\(gatewayHost):5555"
            configuration.busInEndpoint = "tcp://\(gatewayHost):5556"
            configuration.busOutEndpoint = "tcp://\(gatewayHost):5557"
            configuration.gatewayEdgeEndpoint = "tcp://\(gatewayHost):5558"
            for service in Self.services { configuration.serviceEndpoints[service] = "tcp://\(network.address(of: service)):5601" }
            configuration.edgeBind = "\(network.address(of: "edge")):8080"
            configuration.stopWithParent = true
            let edgeSecret = EdgeTrust.generateSecret()

            // One key folder per host, as compose's secrets give each container: its own
            // secret and every public key. The operator (this test) keeps its own.
            let pairs = try CurveKeyring.generate()
            let publicKeys = CurveKeyring.publicKeysText(pairs.mapValues(\.publicKey))
            func keyFolder(_ component: String) throws -> URL {
                let folder = directory.url.appendingPathComponent("\(component)/keys")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data(publicKeys.utf8).write(to: folder.appendingPathComponent(CurveKeyring.publicKeysFile))
                if let pair = pairs[component] {
                    let secret = "public-key = \"\(pair.publicKey)\"\nsecret-key = \"\(pair.secretKey)\"\n"
                    try Data(secret.utf8).write(to: folder.appendingPathComponent("\(component).secret"))
                }
                return folder
            }
            var operatorConfiguration = configuration
            operatorConfiguration.curveKeysDirectory = try keyFolder("operator").path

            for host in ["gateway"] + Self.services + ["edge"] {
                var own = configuration
                own.dataDirectory = directory.url.appendingPathComponent("\(host)/data").path
                own.curveKeysDirectory = try keyFolder(host).path
                var environment = own.environment
                if host == "gateway" || host == "edge" { environment["BACKEND_EDGE_SECRET"] = edgeSecret }
                // Off loopback the edge insists on TLS; here it stands behind a TLS proxy,
                // as it may in a deployment (its HTTPS is EdgeStackTests' business).
                if host == "edge" { environment["BACKEND_EDGE_ALLOW_PLAIN"] = "1" }
                if host == "auth" { environment.merge(EdgeFlowTests.fastAuth) { _, new in new } }
                if host == "booking" { environment["BACKEND_BOOKING_PAYMENT_PROVIDER"] = "dev" }
                processes.append(try network.run(TestEnvironment.binary(host), on: host, environment: environment, in: directory))
            }

            // The operator reaches the gateway over the bridge; every service answers through it.
            let gateway = ServiceClient(link: try operatorConfiguration.links(as: "operator").gateway, name: "operator-gateway")
            let healthy = try await Poll.until(timeout: .seconds(60), interval: .milliseconds(250)) {
                let reply = try? await gateway.call("gateway.health", idempotent: true, timeout: .seconds(2), attempts: 1)
                return reply?.data?["status"]?.stringValue == "ok"
            }
            await gateway.close()
            #expect(healthy, "\(processes.map(\.output).joined(separator: "\n---\n").suffix(4_000))")

            // Across hosts, auth answers the operator's key only.
            let health = Data(#"{"id":"n","op":"auth.health"}"#.utf8)
            let authLink = try operatorConfiguration.operatorLink(to: "auth")
            #expect(await RawClient.request(health, link: authLink)?.ok == true)
            #expect(await RawClient.request(health, link: Link(authLink.endpoint), timeout: .seconds(1)) == nil)
            let strangerKeys = try CurveKeyPair.generate()
            let stranger = Link(authLink.endpoint, curve: .client(serverPublicKey: pairs["auth"]!.publicKey, keys: strangerKeys))
            #expect(await RawClient.request(health, link: stranger, timeout: .seconds(1)) == nil)

            // The app's journey through the edge on its own host, once it listens.
            let app = EdgeHTTPClient(baseURL: "http://\(configuration.edgeBind)")
            let listening = try await Poll.until(timeout: .seconds(30), interval: .milliseconds(250)) {
                (try? await HTTPTestClient.send("GET", "\(app.baseURL)/v1/openapi.json").status) == 200
            }
            #expect(listening, "\(processes.last?.output.suffix(2_000) ?? "")")
            let operatorClient = ServiceClient(link: authLink, name: "operator")
            try await EdgeStackTests.bookingJourney(
                app, operator: operatorClient, authData: directory.url.appendingPathComponent("auth/data"))
            await operatorClient.close()
        } catch {
            for process in processes { await process.stop(grace: .seconds(5)) }
            await network.remove()
            directory.remove()
            throw error
        }
        for process in processes { await process.stop(grace: .seconds(10)) }
        await network.remove()
        directory.remove()
    }
}

/// Network namespaces joined by veth pairs to one bridge (in a namespace of its own), with
/// this process's namespace on the bridge too, on a random 10.x.y.0/24 network.
struct NetworkNamespaces {
    let tag: String
    let subnet: String
    let hosts: [String]
    let directory: TemporaryDirectory

    /// Whether namespaces can be made here: `ip netns add` works (root in a privileged place).
    static let available: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") || FileManager.default.isExecutableFile(atPath: "/sbin/ip")
        else { return false }
        let name = "probe-\(UInt32.random(in: 0...UInt32.max))"
        return shell("ip netns add \(name) && ip netns del \(name)") == 0
    }()

    /// Runs a shell command to its end (set-up and tear-down only, before any socket), with
    /// `posix_spawn` like every process the tests start (README, "Tests"), waited for on a
    /// thread of its own by the async callers; its output goes to /dev/null unless the
    /// command redirects it.
    @discardableResult
    static func shell(_ command: String) -> Int32 {
        let done = DispatchSemaphore(value: 0)
        let status = Mutex<Int32>(-1)
        guard
            let process = try? SpawnedProcess(
                executable: "/bin/sh", arguments: ["-c", command], environment: ProcessInfo.processInfo.environment,
                output: "/dev/null")
        else { return -1 }
        process.onExit { code in
            status.withLock { $0 = code }
            done.signal()
        }
        done.wait()
        return status.withLock { $0 }
    }

    /// The namespace of `host`.
    func namespace(_ host: String) -> String { "\(tag)-\(host)" }

    /// The address of `host`: `.10` for the first, then in order, `.20` for the edge.
    func address(of host: String) -> String {
        "\(subnet).\(host == "edge" ? 20 : 10 + (hosts.firstIndex(of: host) ?? 0))"
    }

    /// Makes the namespaces, the bridge and the links; this process gets `.1`.
    static func create(hosts: [String], in directory: TemporaryDirectory) async throws -> NetworkNamespaces {
        let tag = "bk" + String(UInt32.random(in: 0...0xFFFF), radix: 16)
        let subnet = "10.\(Int.random(in: 160...199)).\(Int.random(in: 0...255))"
        let network = NetworkNamespaces(tag: tag, subnet: subnet, hosts: hosts, directory: directory)
        let hub = "\(tag)-hub"
        var script = ["set -e", "ip netns add \(hub)", "ip -n \(hub) link add br0 type bridge", "ip -n \(hub) link set br0 up"]
        for (index, host) in hosts.enumerated() {
            let namespace = network.namespace(host), inside = "\(tag)h\(index)", outside = "\(tag)p\(index)"
            script += [
                "ip netns add \(namespace)", "ip -n \(namespace) link set lo up",
                "ip link add \(inside) type veth peer name \(outside)",
                "ip link set \(inside) netns \(namespace)", "ip link set \(outside) netns \(hub)",
                "ip -n \(hub) link set \(outside) master br0 up",
                "ip -n \(namespace) addr add \(network.address(of: host))/24 dev \(inside)", "ip -n \(namespace) link set \(inside) up",
            ]
        }
        script += [
            "ip link add \(tag)r type veth peer name \(tag)q", "ip link set \(tag)q netns \(hub)",
            "ip -n \(hub) link set \(tag)q master br0 up", "ip addr add \(subnet).1/24 dev \(tag)r", "ip link set \(tag)r up",
        ]
        let scriptFile = directory.url.appendingPathComponent("netns-up.sh")
        try script.joined(separator: "\n").write(to: scriptFile, atomically: false, encoding: .utf8)
        let status = try await SocketThread.value(name: "netns-up") { shell("sh \(scriptFile.path) > \(scriptFile.path).log 2>&1") }
        guard status == 0 else {
            await network.remove()
            let log = (try? String(contentsOf: URL(fileURLWithPath: scriptFile.path + ".log"), encoding: .utf8)) ?? ""
            throw TestStackError("cannot make the namespaces: \(log)")
        }
        return network
    }

    /// Starts `executable` inside `host`'s namespace (`ip netns exec` executes it in place,
    /// so the child is the service itself).
    func run(_ executable: URL, on host: String, environment: [String: String], in directory: TemporaryDirectory) throws -> ChildProcess {
        try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/sbin/ip"), arguments: ["netns", "exec", namespace(host), executable.path],
            environment: environment, logFile: directory.url.appendingPathComponent("\(host).log"))
    }

    /// Deletes the namespaces; their veth ends, and so the pairs, go with them.
    func remove() async {
        let names = hosts.map(namespace) + ["\(tag)-hub"]
        let tag = self.tag
        _ = try? await SocketThread.value(name: "netns-down") {
            NetworkNamespaces.shell("ip link del \(tag)r 2>/dev/null; " + names.map { "ip netns del \($0) 2>/dev/null" }.joined(separator: "; ") + "; true")
        }
    }
}

import ArgumentParser
import Foundation
import Platform
import ZeroMQ

/// The operator's command line: call operations, check health, read schemas, follow events.
@main
struct Ctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Talk to the backend through its gateway.",
        discussion: "Endpoints come from the BACKEND_* environment variables or the flags (see README).",
        subcommands: [Call.self, Health.self, Describe.self, Events.self, Solve.self, Backup.self, Restore.self, Keys.self, Top.self])
}

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @OptionGroup var platform: PlatformOptions
    @Flag(help: "Print raw JSON for scripts.")
    var json = false
    @Option(help: "Seconds to wait for a reply.")
    var timeout: Double = 5
    @Option(name: .customLong("as"), help: "Whose CURVE keys to use: operator (default), or a container's own component for its health check.")
    var component = "operator"

    var configuration: PlatformConfiguration {
        get throws { try platform.resolve() }
    }

    func validate() throws {
        guard timeout.isFinite, timeout >= 0.01, timeout <= 3_600 else { throw ValidationError("--timeout must be 0.01 to 3600 seconds") }
    }

    /// ctl's links: CURVE with `<component>.secret` (the operator's unless `--as` says
    /// otherwise) from BACKEND_CURVE_KEYS_DIR, or from the data folder's `keys` (where the
    /// stack runner keeps them).
    var links: Links {
        get throws {
            var configuration = try configuration
            configuration.curveKeysDirectory = keyFolder(configuration)?.path
            return try configuration.links(as: component)
        }
    }

    /// The key folder: BACKEND_CURVE_KEYS_DIR (`--curve-keys`), else the data folder's `keys`
    /// when it has keys.
    func keyFolder(_ configuration: PlatformConfiguration) -> URL? { configuration.operatorKeyFolder }
}

/// Exit codes: 0 ok, 1 the operation answered with an error, 3 no reply (stack not running).
enum ExitStatus {
    static let errorReply = ExitCode(1)
    static let unreachable = ExitCode(3)
}

/// Sends one request through the gateway (or straight to `service`), explaining an
/// unreachable stack in plain words.
func callGateway(
    _ op: String, data: JSONValue, token: String? = nil, idem: String? = nil, options: CommonOptions, service: String? = nil
) async throws -> Reply.Parsed {
    let links = try options.links
    let link = try service.map { try links.service($0) } ?? links.gateway
    let target = link.endpoint
    let client = ServiceClient(link: link, name: "ctl")
    defer { Task { await client.close() } }
    do {
        return try await client.call(op, data: data, token: token, idem: idem, idempotent: false, timeout: .milliseconds(Int(options.timeout * 1000)))
    } catch let error as ClientError {
        var text = """
            ctl: no reply from \(target) (\(error.reason == .unavailable ? "not reachable" : "timed out")).
            Is the stack running? Start it with `deploy/start.sh` (see README).

            """
        if link.curve == nil && links.keyring == nil && service != nil {
            text += "No CURVE keys found (BACKEND_CURVE_KEYS_DIR, or keys/ in the data folder): a service with encrypted links ignores this client.\n"
        }
        FileHandle.standardError.write(Data(text.utf8))
        throw ExitStatus.unreachable
    }
}

/// Prints a reply: the data (or the error) for people, or the raw JSON.
func printReply(_ reply: Reply.Parsed, json: Bool) throws {
    if json {
        var members: [String: JSONValue] = ["id": reply.id.map { .string($0) } ?? .null, "ok": .bool(reply.ok)]
        if let data = reply.data { members["data"] = data }
        if let error = reply.error { members["error"] = error.wireValue }
        print(String(decoding: JSONValue.object(members).serialized, as: UTF8.self))
    } else if let error = reply.error {
        var text = "error \(error.code.rawValue): \(error.message)\n"
        for (field, problem) in error.fields.sorted(by: { $0.key < $1.key }) { text += "  \(field): \(problem)\n" }
        for (key, value) in error.details.sorted(by: { $0.key < $1.key }) {
            text += "  \(key): \(String(decoding: value.serialized, as: UTF8.self))\n"
        }
        FileHandle.standardError.write(Data(text.utf8))
    } else {
        print((reply.data ?? .null).prettyPrinted)
    }
    if !reply.ok { throw ExitStatus.errorReply }
}

struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Call an operation: ctl call booking.slots '{\"date\":\"2026-11-22\"}'")

    @Argument(help: "The operation, <service>.<operation>.")
    var op: String
    @Argument(help: "The request data as a JSON object.")
    var data: String = "{}"
    @Option(help: "Access token.")
    var token: String?
    @Option(help: "Idempotency key for writes.")
    var idem: String?
    @Flag(help: "Call the service's own endpoint instead of the gateway (internal operations, e.g. auth.internal.admin.grant).")
    var direct = false
    @OptionGroup var options: CommonOptions

    func run() async throws {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Data(data.utf8))
        } catch {
            throw ValidationError("the data is not valid JSON: \(error.message)")
        }
        var service: String?
        if direct {
            service = String(op.prefix(while: { $0 != "." }))
            guard try options.configuration.serviceEndpoints[service!] != nil else {
                throw ValidationError("no service named \(service!)")
            }
        }
        try printReply(
            try await callGateway(op, data: value, token: token, idem: idem, options: options, service: service), json: options.json)
    }
}

struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the health of the gateway and every service, or of one service asked directly.",
        discussion: "ctl health auth --as auth   is auth's container health check: its own socket, its own key.")

    @Argument(help: "A service to ask directly at its own socket (default: everything, through the gateway).")
    var service: String?
    @OptionGroup var options: CommonOptions

    func run() async throws {
        if let service {
            guard PlatformConfiguration.serviceNames.contains(service) else { throw ValidationError("no service named \(service)") }
            let reply = try await callGateway("\(service).health", data: [:], options: options, service: service)
            guard !options.json, reply.ok else {
                try printReply(reply, json: options.json)
                if !reply.ok { throw ExitStatus.errorReply }
                return
            }
            print("\(service) \(reply.data?["status"]?.stringValue ?? "?")  version \(reply.data?["version"]?.stringValue ?? "?")")
            return
        }
        let reply = try await callGateway("gateway.health", data: [:], options: options)
        guard !options.json, reply.ok, let data = reply.data else { return try printReply(reply, json: options.json) }
        let status = data["status"]?.stringValue ?? "?"
        print("gateway    \(status == "ok" ? "ok" : status)  version \(data["version"]?.stringValue ?? "?")")
        let services = data["services"]?.objectValue ?? [:]
        for name in PlatformConfiguration.serviceNames {
            let service = services[name] ?? .null
            let serviceStatus = service["status"]?.stringValue ?? "missing"
            var line = name.padding(toLength: 10, withPad: " ", startingAt: 0) + " " + serviceStatus
            if serviceStatus == "ok" {
                let uptime = service["uptimeMs"]?.integerValue ?? 0
                line += "  version \(service["version"]?.stringValue ?? "?")  up \(uptime / 1000)s"
            } else if let error = service["error"]?.stringValue {
                line += "  (\(error))"
            }
            print(line)
        }
        if status != "ok" { throw ExitStatus.errorReply }
    }
}

struct Describe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List a service's operations and events.")

    @Argument(help: "The service: auth, goals, reminders, savings, booking, stats.")
    var service: String
    @OptionGroup var options: CommonOptions

    func run() async throws {
        let reply = try await callGateway("\(service).describe", data: [:], options: options)
        guard !options.json, reply.ok, let data = reply.data else { return try printReply(reply, json: options.json) }
        print("\(service): \(data["summary"]?.stringValue ?? "")\n\nOperations:")
        if case .array(let operations)? = data["operations"] {
            for operation in operations {
                let name = operation["op"]?.stringValue ?? "?"
                let auth = operation["auth"]?.stringValue ?? "?"
                print("  \(name.padding(toLength: 32, withPad: " ", startingAt: 0)) [\(auth)] \(operation["summary"]?.stringValue ?? "")")
            }
        }
        print("\nEvents:")
        if case .array(let events)? = data["events"], !events.isEmpty {
            for event in events {
                print("  \(event["type"]?.stringValue ?? "?"): \(event["summary"]?.stringValue ?? "")")
            }
        } else {
            print("  (none)")
        }
        print("\nFull schemas: ctl describe \(service) --json")
    }
}

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow events on the bus (--follow), or list a service's stored events.",
        discussion: "ctl events --follow booking.   follows every booking event\nctl events booking --after 0   lists stored events")

    @Flag(help: "Follow the bus until Ctrl-C.")
    var follow = false
    @Argument(help: "With --follow: a type prefix (e.g. booking. or auth.user.deleted). Without: a service name.")
    var prefix: String = ""
    @Option(help: "Without --follow: list events after this seq.")
    var after: Int64 = 0
    @Option(help: "Without --follow: at most this many events.")
    var limit: Int64 = 100
    @OptionGroup var options: CommonOptions

    func validate() throws {
        // The bus disconnects a subscriber whose subscription is longer than
        // BusRules.maxSubscriptionBytes; event types are far shorter.
        if follow && prefix.utf8.count > 256 {
            throw ValidationError("a prefix is at most 256 bytes (event types are <service>.<type>)")
        }
        guard limit > 0 && limit <= 1_000 else { throw ValidationError("--limit is 1 to 1000") }
        guard after >= 0 else { throw ValidationError("--after is a seq: 0 or more") }
    }

    func run() async throws {
        let configuration = try options.configuration
        if follow {
            let json = options.json
            let bus = try options.links.busOut
            let prefix = self.prefix
            let thread = SocketThread(name: "ctl-events") {
                followBus(bus, prefix: prefix, json: json)
            }
            await thread.join()
            return
        }
        guard PlatformConfiguration.serviceNames.contains(prefix) else {
            throw ValidationError("name a service (auth, goals, reminders, savings, booking, stats), or use --follow")
        }
        // Replay is internal: ask the service directly, not through the gateway.
        let client = ServiceClient(link: try options.links.service(prefix), name: "ctl")
        defer { Task { await client.close() } }
        let reply: Reply.Parsed
        do {
            reply = try await client.call(
                "\(prefix).events.replay", data: ["after": .integer(after), "limit": .integer(limit)], idempotent: true,
                timeout: .milliseconds(Int(options.timeout * 1000)), attempts: 1)
        } catch {
            FileHandle.standardError.write(Data("ctl: the \(prefix) service does not answer: \(error)\n".utf8))
            throw ExitStatus.unreachable
        }
        guard !options.json, reply.ok, case .array(let events)? = reply.data?["events"] else {
            return try printReply(reply, json: options.json)
        }
        for value in events { if let event = try? Event(json: value) { print(line(for: event)) } }
    }
}

/// One line per event for people.
func line(for event: Event) -> String {
    "\(event.at)  \(event.source)#\(event.seq)  \(event.type)  \(String(decoding: event.data.serialized, as: UTF8.self))"
}

/// Prints events from the bus until the process is interrupted.
func followBus(_ bus: Link, prefix: String, json: Bool) {
    do {
        let socket = try ZMQSocket(type: .sub, options: .with { $0.curve = bus.curve })
        try socket.subscribe(prefix)
        try socket.connect(bus.endpoint)
        FileHandle.standardError.write(Data("following \(prefix.isEmpty ? "all events" : prefix + "*") on \(bus.endpoint); Ctrl-C stops\n".utf8))
        while let frames = try socket.receiveMultipart() {
            guard frames.count == 2 else { continue }
            if json {
                print(String(decoding: frames[1], as: UTF8.self))
            } else if let value = try? JSONParser.parse(frames[1]), let event = try? Event(json: value) {
                print(line(for: event))
            }
            fflush(nil)
        }
    } catch {
        FileHandle.standardError.write(Data("ctl: \(error)\n".utf8))
    }
}

struct Solve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Solve an auth.challenge proof of work: prints the counter to send with auth.register or auth.phone.start.")

    @Argument(help: "The challenge's nonce.")
    var nonce: String
    @Argument(help: "The challenge's difficulty (leading zero bits).")
    var difficulty: Int

    func run() throws {
        guard (0...32).contains(difficulty) else { throw ValidationError("difficulty must be 0 to 32") }
        print(ProofOfWork.solve(nonce: nonce, difficulty: difficulty))
    }
}

/// `ctl backup <service|all> <folder>`: an online, consistent copy of each database,
/// taken beside the running service (on the host or in the container that holds its data
/// folder).
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up a service's database (or all) into a folder while the stack serves traffic.",
        discussion: """
            ctl backup all /srv/backups   writes <service>-<UTC time>.sqlite.sealed per service (read from the data folder),
            sealed to the operators' backup key of the deployment's public-keys; without keys, plain .sqlite files, and none for auth
            (its audit log is only ever backed up sealed).
            """)

    @Argument(help: "A service name, or all.") var service: String
    @Argument(help: "The folder to write the backups to.") var folder: String
    @OptionGroup var options: CommonOptions

    func run() async throws {
        let configuration = try options.configuration
        let names = service == "all" ? PlatformConfiguration.serviceNames : [service]
        guard names.allSatisfy(PlatformConfiguration.serviceNames.contains) else {
            throw ValidationError("no service named \(service) (one of \(PlatformConfiguration.serviceNames.joined(separator: ", ")), or all)")
        }
        var missing = 0, failed = 0
        // Backups are sealed whenever the deployment has keys, CURVE on the links or not.
        let sealing = try options.keyFolder(configuration).map { try CurveKeyring.load(from: $0, name: options.component) }?.backupSealing
        for name in names {
            let database = configuration.dataDirectoryURL.appendingPathComponent("\(name).sqlite")
            guard FileManager.default.fileExists(atPath: database.path) else {
                // With `all`, a service whose data lives elsewhere (another container) is skipped.
                FileHandle.standardError.write(Data("ctl: no \(database.path) here; skipped\n".utf8))
                missing += 1
                continue
            }
            do {
                let written = try await PeriodicBackup.backUp(
                    service: name, database: database, folder: URL(fileURLWithPath: folder), keep: nil, sealing: sealing)
                print("\(name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(written.file.path)  \(written.bytes) bytes")
            } catch {
                // With `all`, one service's failure does not stop the others' backups.
                FileHandle.standardError.write(Data("ctl: \(name) not backed up: \(error)\n".utf8))
                failed += 1
            }
        }
        if missing == names.count || failed > 0 { throw ExitStatus.errorReply }
    }
}

/// `ctl restore <service> <backup>`: puts a backup in place while the service is stopped.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put a backup in place of a stopped service's database (the current file is kept beside it).")

    @Argument(help: "The service.") var service: String
    @Argument(help: "The backup file (from ctl backup).") var backup: String
    @Option(help: "The operators' backup.secret, for a sealed backup (default: backup.secret in the key folder).")
    var backupKey: String?
    @Flag(help: "Put back an unsealed backup although the deployment seals its backups.")
    var allowPlain = false
    @OptionGroup var options: CommonOptions

    func run() async throws {
        let configuration = try options.configuration
        guard PlatformConfiguration.serviceNames.contains(service) else { throw ValidationError("no service named \(service)") }
        // A running service would keep writing to the file it has open: stop it first.
        let endpoint = try configuration.endpoint(of: service)
        let client = ServiceClient(link: try options.links.service(service), name: "ctl")
        let answer = try? await client.call("\(service).health", idempotent: true, timeout: .seconds(1), attempts: 1)
        await client.close()
        if answer?.ok == true {
            FileHandle.standardError.write(Data("ctl: \(service) is running at \(endpoint); stop it before restoring\n".utf8))
            throw ExitStatus.errorReply
        }
        let database = configuration.dataDirectoryURL.appendingPathComponent("\(service).sqlite")
        let source = URL(fileURLWithPath: backup)
        // The deployment's keys (even with CURVE off on the links): whether its backups
        // are sealed, and whose seal is accepted.
        let keyFolder = options.keyFolder(configuration)
        let keyring = try keyFolder.map { try CurveKeyring.load(from: $0, name: options.component) }
        let backupKeyFolder = backupKey.map { URL(fileURLWithPath: $0).deletingLastPathComponent() } ?? keyFolder
        var secretKey: [UInt8]?
        if let folder = backupKeyFolder {
            let file = backupKey.map { URL(fileURLWithPath: $0).lastPathComponent }
            if backupKey != nil {
                secretKey = try CurveKeyring.backupSecretKey(in: folder, file: file)
            } else {
                // A container's key folder has no backup.secret: a sealed backup then needs --backup-key.
                secretKey = try? CurveKeyring.backupSecretKey(in: folder, file: file)
            }
        }
        let senders = keyring?.backupSenders(of: service) ?? [:]
        let requireSealed = keyring?.backupRecipientKey != nil && !allowPlain
        let kept: URL?
        do {
            kept = try await SocketThread.value(name: "restore") { [secretKey] in
                try DatabaseBackup.restore(source, into: database, secretKey: secretKey, senders: senders, requireSealed: requireSealed)
            }
        } catch let failure as DatabaseBackup.Failure {
            throw ValidationError(failure.description + (failure.description.contains("is sealed") ? " (--backup-key <file>)" : "")
                + (failure.description.contains("not sealed") ? ". --allow-plain puts it back all the same" : ""))
        }
        print("restored \(database.path) from \(backup)" + (kept.map { "; the replaced file is \($0.path)" } ?? ""))
    }
}

/// `ctl keys generate <folder>`, `ctl keys show <folder>`: the deployment's CURVE keys.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make or show the CURVE key pairs of the gateway, the services and the operator, and the operators' backup key.",
        subcommands: [Generate.self, Show.self])

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new key pair per component into a folder (refuses to overwrite).",
            discussion: """
                Writes <component>.secret (mode 0600) for gateway, auth, goals, reminders, savings, booking, stats and operator,
                backup.secret (the operators' key that opens sealed backups: give it to no process), and public-keys.
                Give each process its own .secret and public-keys (BACKEND_CURVE_KEYS_DIR); see deploy/README.md.
                """)

        @Argument(help: "The folder to write the keys to.") var folder: String

        func run() throws {
            let url = URL(fileURLWithPath: folder, isDirectory: true)
            guard !FileManager.default.fileExists(atPath: url.appendingPathComponent(CurveKeyring.publicKeysFile).path) else {
                throw ValidationError("\(url.path) already holds keys; new keys go into a new folder")
            }
            try CurveKeyring.refuseExistingSecrets(in: url)
            try CurveKeyring.write(try CurveKeyring.generate(), to: url)
            print("CURVE keys for \(CurveKeyring.components.joined(separator: ", ")) written to \(url.path)")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the public keys of a key folder (never a secret).")

        @Argument(help: "The key folder.") var folder: String

        func run() throws {
            let url = URL(fileURLWithPath: folder, isDirectory: true).appendingPathComponent(CurveKeyring.publicKeysFile)
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw ValidationError("no \(url.path)") }
            print(text, terminator: "")
        }
    }
}

/// `ctl top`: live per-operation rates and p99 of every service, read from each service's
/// own figures (`<service>.metrics.prometheus`, directly with the operator's key: the same
/// figures the gateway's Prometheus endpoint serves).
struct Top: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show live requests/s, errors/s and p99 per operation of every service (Ctrl-C stops).")

    @Option(help: "Seconds between readings.") var interval: Double = 2
    @Option(help: "Stop after this many readings (0: until Ctrl-C).") var iterations: Int = 0
    @Option(help: "Only these services (comma-separated).") var services: String?
    @Option(help: "At most this many operations shown.") var limit: Int = 25
    @OptionGroup var options: CommonOptions

    func validate() throws {
        guard interval.isFinite, interval >= 0.1, interval <= 3_600 else { throw ValidationError("--interval must be 0.1 to 3600 seconds") }
        guard iterations >= 0, limit > 0 else { throw ValidationError("--iterations must be 0 or more, --limit more than 0") }
    }

    func run() async throws {
        let names = services.map { $0.split(separator: ",").map(String.init) } ?? PlatformConfiguration.serviceNames
        guard names.allSatisfy(PlatformConfiguration.serviceNames.contains) else { throw ValidationError("unknown service in \(services ?? "")") }
        let links = try options.links
        var clients: [String: ServiceClient] = [:]
        for name in names { clients[name] = ServiceClient(link: try links.service(name), name: "ctl-top") }
        defer { for client in clients.values { Task { await client.close() } } }
        var previous: (samples: [PrometheusText.Sample], at: ContinuousClock.Instant)?
        var reading = 0
        while iterations == 0 || reading < iterations {
            if reading > 0 { try await Task.sleep(for: .milliseconds(Int(interval * 1_000))) }
            reading += 1
            var samples: [PrometheusText.Sample] = []
            var silent: [String] = []
            for name in names {
                let reply = try? await clients[name]!.call(
                    "\(name).metrics.prometheus", idempotent: true, timeout: .milliseconds(Int(options.timeout * 1_000)), attempts: 1)
                if let text = reply?.data?["text"]?.stringValue { samples += PrometheusText.samples(text) } else { silent.append(name) }
            }
            let now = ContinuousClock.now
            let seconds = previous.map { (now - $0.at).wholeMilliseconds }.map { Double($0) / 1_000 } ?? 0
            let rates = OperationRates.between(previous?.samples, samples, seconds: seconds)
            previous = (samples, now)
            print(Self.table(rates.prefix(limit), interval: seconds, silent: silent, first: reading == 1))
            fflush(nil)
            if silent.count == names.count && iterations > 0 && reading == iterations { throw ExitStatus.unreachable }
        }
    }

    /// The screen: a header, then one line per operation.
    static func table(_ rates: ArraySlice<OperationRates>, interval: Double?, silent: [String], first: Bool) -> String {
        func number(_ value: Double?, _ digits: Int) -> String {
            guard let value else { return "-" }
            return String(format: "%.\(digits)f", value)
        }
        var text = first ? "since start (rates from the next reading)\n" : "last \(number(interval, 1)) s\n"
        text += "service    operation                             req/s     err/s   p99 ms      total\n"
        for rate in rates {
            text += rate.service.padding(toLength: 10, withPad: " ", startingAt: 0) + " "
            text += String(rate.op.prefix(36)).padding(toLength: 36, withPad: " ", startingAt: 0)
            text += number(first ? nil : rate.requestsPerSecond, 1).leftPadded(to: 7)
            text += number(first ? nil : rate.errorsPerSecond, 1).leftPadded(to: 10)
            text += number(rate.p99Ms, 2).leftPadded(to: 9)
            text += String(Int64(rate.totalRequests)).leftPadded(to: 11) + "\n"
        }
        if rates.isEmpty { text += "(no requests yet)\n" }
        if !silent.isEmpty { text += "no answer from: \(silent.joined(separator: ", "))\n" }
        return text
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

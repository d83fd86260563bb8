import Foundation
import ZeroMQ

/// The CURVE keys of a deployment as one process sees them: its own key pair and the
/// public key of every component (README, "Encrypted links").
///
/// Each component (the gateway, each service, and the operators' tools) has its own key
/// pair. A server socket uses its process's key pair and admits, through the ZAP
/// handler, only clients whose public key is one of the deployment's; a client connects
/// with its own key pair to the server key of the component it calls. So a process
/// without one of the deployment's secret keys can neither call a service, nor publish
/// on the bus, nor listen to it, and nothing on the wire is plaintext.
///
/// On disk (``write(_:to:)``, `ctl keys generate`) a key folder holds one
/// `<component>.secret` per component (mode 0600, read only by that component) and
/// `public-keys`, the public key of every component. A container gets its own secret
/// and the public keys; the local stack runner keeps all of them under the data folder.
public struct CurveKeyring: Sendable, Equatable {
    /// The components that have key pairs: the gateway (its sockets for services and the
    /// bus), the six services, and `operator` (ctl, load tools, tests).
    public static let components = ["gateway"] + PlatformConfiguration.serviceNames + ["operator"]
    /// The file of every component's public key in a key folder.
    public static let publicKeysFile = "public-keys"
    /// The operators' backup key pair (``BackupSeal``): its public key is in `public-keys`
    /// so services seal their backups to it; its secret stays with the operators (no
    /// process of the system gets `backup.secret`), and it is no client of any socket.
    public static let backupRecipient = "backup"

    /// The component this process is.
    public let name: String
    /// This process's key pair.
    public let keys: CurveKeyPair
    /// Every component's Z85 public key, by component.
    public let publicKeys: [String: String]

    /// A keyring, after checking that `keys` is the pair `publicKeys` names for `name`.
    public init(name: String, keys: CurveKeyPair, publicKeys: [String: String]) throws(ConfigurationError) {
        guard publicKeys[name] == keys.publicKey else {
            throw ConfigurationError("the CURVE secret key of \(name) does not match its entry in \(Self.publicKeysFile)")
        }
        self.name = name
        self.keys = keys
        self.publicKeys = publicKeys
    }

    /// The server key of `component`, as its clients need it.
    public func serverKey(of component: String) throws(ConfigurationError) -> String {
        guard let key = publicKeys[component] else {
            throw ConfigurationError("\(Self.publicKeysFile) has no key for \(component)")
        }
        return key
    }

    /// The role of a client socket of this process calling `component`.
    public func clientRole(to component: String) throws(ConfigurationError) -> CurveRole {
        .client(serverPublicKey: try serverKey(of: component), keys: keys)
    }

    /// The role of an internal server socket of this process: its own key, and a ZAP
    /// domain admitting the deployment's public keys only (registered with the process's
    /// ZAP handler, started here if it is not yet running).
    public func serverRole() throws(ConfigurationError) -> CurveRole {
        let known = Set(publicKeys.filter { $0.key != Self.backupRecipient }.values)
        // One domain per set of admitted keys: two deployments in one process (tests)
        // never share an admission.
        let domain = "internal-" + Digest.sha256Hex(Data(known.sorted().joined(separator: ",").utf8)).prefix(16)
        try Self.admit(.keys(known), domain: domain)
        return .server(secretKey: keys.secretKey, domain: domain)
    }

    /// The role of the gateway's public socket when it speaks CURVE: any client that knows
    /// the gateway's public key (apps are authenticated by their tokens).
    public func publicServerRole() throws(ConfigurationError) -> CurveRole {
        let domain = "public"
        try Self.admit(.anyClient, domain: domain)
        return .server(secretKey: keys.secretKey, domain: domain)
    }

    /// Registers an admission with the process's ZAP handler.
    public static func admit(_ admission: ZAPAuthenticator.Admission, domain: String) throws(ConfigurationError) {
        do {
            try ZAPAuthenticator.forSharedContext().admit(admission, domain: domain)
        } catch {
            throw ConfigurationError("cannot start the ZAP handler: \(error)")
        }
    }

    // MARK: Key folders

    /// The 32-byte public key backups are sealed to, when the deployment has one.
    public var backupRecipientKey: [UInt8]? {
        publicKeys[Self.backupRecipient].flatMap(Z85.decode)
    }

    /// How this process seals backups: to the operators' key, as itself (``BackupSeal``);
    /// `nil` when the deployment has no backup key.
    public var backupSealing: BackupSealing? {
        guard let recipient = backupRecipientKey, let sender = Z85.decode(keys.secretKey), sender.count == 32 else { return nil }
        return BackupSealing(recipient: recipient, sender: sender)
    }

    /// The public keys whose backups of `service` a restore accepts: the service's own and
    /// the operator's (`ctl backup`).
    public func backupSenders(of service: String) -> [String: [UInt8]] {
        var senders: [String: [UInt8]] = [:]
        for name in [service, "operator"] {
            if let key = publicKeys[name].flatMap(Z85.decode) { senders[name] = key }
        }
        return senders
    }

    /// The operators' backup secret key from a key folder (`backup.secret`), to open
    /// sealed backups.
    public static func backupSecretKey(in folder: URL, file: String? = nil) throws(ConfigurationError) -> [UInt8] {
        let entries = try entries(in: folder.appendingPathComponent(file ?? "\(backupRecipient).secret"))
        guard let secret = entries["secret-key"].flatMap(Z85.decode), secret.count == 32 else {
            throw ConfigurationError("\(backupRecipient).secret in \(folder.path) holds no Z85 secret key")
        }
        return secret
    }

    /// New key pairs for every component and the operators' backup key.
    public static func generate() throws(ConfigurationError) -> [String: CurveKeyPair] {
        var pairs: [String: CurveKeyPair] = [:]
        for component in components + [backupRecipient] {
            do {
                pairs[component] = try CurveKeyPair.generate()
            } catch {
                throw ConfigurationError("cannot generate CURVE keys: \(error)")
            }
        }
        return pairs
    }

    /// Writes `pairs` into `folder` (created 0700): `<component>.secret` (0600) for each
    /// and `public-keys`. Refuses to overwrite an existing key folder.
    public static func write(_ pairs: [String: CurveKeyPair], to folder: URL) throws {
        let manager = FileManager.default
        if manager.fileExists(atPath: folder.appendingPathComponent(publicKeysFile).path) {
            throw ConfigurationError("\(folder.path) already holds keys; remove them first to replace them")
        }
        try manager.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (component, pair) in pairs.sorted(by: { $0.key < $1.key }) {
            let heading =
                component == backupRecipient
                ? "The operators' backup key pair (Z85). Secret: for operators only, it opens every backup; give it to no process."
                : "CURVE key pair of \(component) (ZeroMQ Z85). Secret: only the \(component) process reads this file."
            let text = """
                # \(heading)
                public-key = "\(pair.publicKey)"
                secret-key = "\(pair.secretKey)"

                """
            try write(text, to: folder.appendingPathComponent("\(component).secret"), mode: 0o600)
        }
        try write(publicKeysText(pairs.mapValues(\.publicKey)), to: folder.appendingPathComponent(publicKeysFile), mode: 0o644)
    }

    /// The `public-keys` file: a comment, then `component = "key"` lines.
    public static func publicKeysText(_ keys: [String: String]) -> String {
        "# CURVE public keys of the deployment's components (ZeroMQ Z85). Not secret.\n"
            + keys.sorted(by: { $0.key < $1.key }).map { "\($0.key) = \"\($0.value)\"\n" }.joined()
    }

    /// Generates keys into `folder` unless it already has them; `true` when it made them.
    public static func ensure(in folder: URL) throws -> Bool {
        guard !FileManager.default.fileExists(atPath: folder.appendingPathComponent(publicKeysFile).path) else { return false }
        // Secret keys without their public-keys file: a damaged folder, never replaced
        // (new keys would leave every sealed backup unreadable).
        try refuseExistingSecrets(in: folder)
        try write(try generate(), to: folder)
        return true
    }

    /// Throws when `folder` already holds secret keys (`*.secret`): keys are never overwritten.
    public static func refuseExistingSecrets(in folder: URL) throws {
        let secrets = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".secret") }
        guard secrets.isEmpty else {
            throw ConfigurationError(
                "\(folder.path) already holds secret keys (\(secrets.sorted().joined(separator: ", "))) but no usable \(publicKeysFile): "
                    + "restore the folder from its copy; new keys would leave every sealed backup unreadable")
        }
    }

    /// Loads `name`'s keyring from a key folder.
    public static func load(from folder: URL, name: String) throws(ConfigurationError) -> CurveKeyring {
        let publicKeys = try entries(in: folder.appendingPathComponent(publicKeysFile))
        let own = try entries(in: folder.appendingPathComponent("\(name).secret"))
        guard let publicKey = own["public-key"], let secretKey = own["secret-key"] else {
            throw ConfigurationError("\(name).secret in \(folder.path) needs public-key and secret-key lines")
        }
        let keys: CurveKeyPair
        do {
            keys = try CurveKeyPair(publicKey: publicKey, secretKey: secretKey)
            guard try CurveKeyPair.publicKey(forSecret: secretKey) == publicKey else {
                throw ConfigurationError("\(name).secret: its public key is not the one of its secret key")
            }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError("\(name).secret holds no valid Z85 CURVE keys")
        }
        for (component, key) in publicKeys where Z85.decode(key)?.count != 32 {
            throw ConfigurationError("\(publicKeysFile): the key of \(component) is not a Z85 CURVE key")
        }
        return try CurveKeyring(name: name, keys: keys, publicKeys: publicKeys)
    }

    /// The `name = "value"` lines of a key file; `#` starts a comment line. (Z85 uses `=`
    /// and `#` too, so only the first `=` splits and comments are whole lines.)
    static func entries(in file: URL) throws(ConfigurationError) -> [String: String] {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw ConfigurationError("cannot read the CURVE key file \(file.path)")
        }
        var entries: [String: String] = [:]
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(file.lastPathComponent): a line is not name = \"value\"")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            entries[name] = value
        }
        return entries
    }

    private static func write(_ text: String, to file: URL, mode: Int) throws {
        let manager = FileManager.default
        guard manager.createFile(atPath: file.path, contents: Data(text.utf8), attributes: [.posixPermissions: mode]) else {
            throw ConfigurationError("cannot write \(file.path)")
        }
    }
}

/// Where a client connects and how it secures the connection.
public struct Link: Sendable, Equatable {
    /// The endpoint, e.g. `tcp://127.0.0.1:5601`.
    public var endpoint: String
    /// The client's CURVE role, `nil` for a plaintext connection.
    public var curve: CurveRole?

    /// A link to `endpoint`.
    public init(_ endpoint: String, curve: CurveRole? = nil) {
        self.endpoint = endpoint
        self.curve = curve
    }
}

/// The links of one process of a deployment: the endpoints of the configuration with the
/// CURVE roles of its keyring (plaintext when CURVE is off).
public struct Links: Sendable {
    /// The configuration the endpoints come from.
    public let configuration: PlatformConfiguration
    /// This process's keys, `nil` when CURVE is off.
    public let keyring: CurveKeyring?

    /// The links of `configuration` for a process with `keyring`.
    public init(configuration: PlatformConfiguration, keyring: CurveKeyring?) {
        self.configuration = configuration
        self.keyring = keyring
    }

    /// A service's ROUTER.
    public func service(_ name: String) throws -> Link {
        Link(try configuration.endpoint(of: name), curve: try keyring?.clientRole(to: name))
    }

    /// Every service's ROUTER, by name.
    public func services() throws -> [String: Link] {
        var links: [String: Link] = [:]
        for name in configuration.serviceEndpoints.keys { links[name] = try service(name) }
        return links
    }

    /// The bus's XSUB, where services publish.
    public var busIn: Link {
        get throws { Link(configuration.busInEndpoint, curve: try keyring?.clientRole(to: "gateway")) }
    }

    /// The bus's XPUB, where subscribers connect.
    public var busOut: Link {
        get throws { Link(configuration.busOutEndpoint, curve: try keyring?.clientRole(to: "gateway")) }
    }

    /// The gateway's public ROUTER: CURVE only when the gateway's public socket speaks it
    /// (``PlatformConfiguration/gatewayPublicCurve``).
    public var gateway: Link {
        get throws {
            Link(configuration.gatewayEndpoint, curve: configuration.gatewayPublicCurve ? try keyring?.clientRole(to: "gateway") : nil)
        }
    }

    /// The role of this process's internal server sockets (a service's ROUTER, the bus).
    public func serverRole() throws -> CurveRole? {
        try keyring?.serverRole()
    }
}

import Foundation
import GRDB
import Logging
import ServiceLifecycle
import Synchronization

/// Auth's public keys as a JWK set (RFC 7517, with RFC 8037's OKP keys), the shape
/// `auth.keys` returns so that a gateway in any language can verify tokens.
public enum JSONWebKeySet {
    /// `{"keys": [{"kty":"OKP","crv":"Ed25519","kid":...,"x":...,"alg":"EdDSA","use":"sig"}]}`.
    public static func document(_ keys: [(id: String, key: Ed25519PublicKey)]) -> JSONValue {
        [
            "keys": .array(
                keys.map { entry in
                    [
                        "kty": "OKP", "crv": "Ed25519", "kid": .string(entry.id), "alg": "EdDSA", "use": "sig",
                        "x": .string(Base64URL.encode(entry.key.rawRepresentation)),
                    ]
                })
        ]
    }

    /// Reads the Ed25519 keys of a JWK set by key id, skipping any other key type.
    public static func keys(from document: JSONValue) -> [String: Ed25519PublicKey] {
        guard case .array(let entries)? = document["keys"] else { return [:] }
        var keys: [String: Ed25519PublicKey] = [:]
        for entry in entries where entry["kty"] == "OKP" && entry["crv"] == "Ed25519" {
            guard case .string(let id)? = entry["kid"], case .string(let x)? = entry["x"], let raw = Base64URL.decode(x),
                let key = try? Ed25519PublicKey(rawRepresentation: raw)
            else { continue }
            keys[id] = key
        }
        return keys
    }

    /// The schema of the document, for `describe`.
    public static let schema = JSONSchema.object(
        [
            "keys": .array(
                of: .object(
                    [
                        "kty": .oneOf(["OKP"]), "crv": .oneOf(["Ed25519"]), "kid": .string(), "alg": .oneOf(["EdDSA"]),
                        "use": .oneOf(["sig"]), "x": .string().described("the raw public key, base64url"),
                    ], required: ["kty", "crv", "kid", "x"]))
        ], required: ["keys"])
}

/// Keeps a service's ``AccessTokenVerifier`` supplied with auth's public keys: fetched
/// from `auth.keys` at start-up (retrying until auth answers) and every minute after,
/// so rotated keys arrive without a restart.
public final class AuthKeyRefresher: Service, Sendable {
    private let client: ServiceClient
    private let verifier: AccessTokenVerifier
    private let logger: Logger
    private let interval: Duration

    /// Creates a refresher calling auth through `auth`.
    public init(auth: Link, verifier: AccessTokenVerifier, logger: Logger, interval: Duration = .seconds(60)) {
        client = ServiceClient(link: auth, name: "keys")
        self.verifier = verifier
        self.logger = logger
        self.interval = interval
        let client = self.client
        // On demand, when a token names an unknown key: at most one fetch a second.
        let onDemand = SingleFlight(quietPeriod: .seconds(1)) { [verifier, logger] in
            await AuthKeyRefresher.fetch(client: client, verifier: verifier, logger: logger)
        }
        verifier.setKeySource { await onDemand.run() }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let fetched = await self.refresh()
                try? await Task.sleep(for: fetched ? self.interval : .seconds(1))
            }
        }
        await client.close()
    }

    /// Fetches the keys once; returns whether it worked.
    @discardableResult
    public func refresh() async -> Bool {
        await Self.fetch(client: client, verifier: verifier, logger: logger)
    }

    static func fetch(client: ServiceClient, verifier: AccessTokenVerifier, logger: Logger) async -> Bool {
        guard let reply = try? await client.call("auth.keys", idempotent: true, timeout: .seconds(2), attempts: 1),
            let document = reply.data
        else {
            logger.debug("auth.keys not reachable yet")
            return false
        }
        let keys = JSONWebKeySet.keys(from: document)
        guard !keys.isEmpty else { return false }
        if Set(keys.keys) != verifier.keyIDs {
            logger.info("auth signing keys loaded", metadata: ["kids": "\(keys.keys.sorted().joined(separator: ","))"])
        }
        verifier.setKeys(keys)
        return true
    }
}

/// One run of an async job shared by everyone who asks while it runs or shortly after.
///
/// The key fetch on demand: requests that arrive together with a token signed by a key
/// not yet known (a service started a moment before auth, a key just rotated) all wait
/// for the one fetch and then verify again. Within `quietPeriod` after a run, callers get
/// its result without a new run, so a stream of forged key ids costs at most one fetch per
/// period. (Before, every caller but the first within the second was refused at once: 215
/// of 10,000 valid requests came back `unauthenticated` in `bench reminders`.)
public final class SingleFlight: Sendable {
    private struct State {
        var running: Task<Bool, Never>?
        var finished: (at: ContinuousClock.Instant, result: Bool)?
    }

    private let state = Mutex(State())
    private let quietPeriod: Duration
    private let job: @Sendable () async -> Bool

    /// Creates a single flight of `job`.
    public init(quietPeriod: Duration, job: @escaping @Sendable () async -> Bool) {
        self.quietPeriod = quietPeriod
        self.job = job
    }

    /// The result of the run under way, of one that ended within the quiet period, or of
    /// a new run.
    public func run() async -> Bool {
        enum Next { case wait(Task<Bool, Never>), done(Bool) }
        let next: Next = state.withLock { state in
            if let running = state.running { return .wait(running) }
            if let finished = state.finished, ContinuousClock.now - finished.at < quietPeriod { return .done(finished.result) }
            // The run records its own end, whoever waits for it.
            let task = Task { [self] in
                let result = await job()
                self.state.withLock { $0 = State(running: nil, finished: (.now, result)) }
                return result
            }
            state.running = task
            return .wait(task)
        }
        switch next {
        case .wait(let task): return await task.value
        case .done(let result): return result
        }
    }
}

/// Revoked sessions, remembered by every service so that a revoked session's access
/// tokens are refused before they expire.
public enum SessionRevocations {
    /// The auth event that reports revoked sessions: `{"userId", "sessions": [...]}`.
    public static let eventType = "auth.session.revoked"

    /// The subscription that records revocations and tells `verifier`.
    public static func subscription(verifier: AccessTokenVerifier) -> EventSubscription {
        EventSubscription(source: "auth", types: [eventType]) { db, event in
            guard case .array(let values)? = event.data["sessions"] else { return }
            let sessions = values.compactMap(\.stringValue)
            try record(db, sessions: sessions, at: event.at)
            verifier.revoke(sessions: sessions, at: Instant.parse(event.at).map { Int64($0.timeIntervalSince1970) })
        }
    }

    /// Stores revocations (in the transaction that learns of them), so they outlive a
    /// restart of the service.
    public static func record(_ db: Database, sessions: [String], at: String) throws {
        for session in sessions {
            try db.execute(
                sql: "INSERT OR IGNORE INTO platform_revoked_session (session_id, revoked_at) VALUES (?, ?)", arguments: [session, at])
        }
    }

    /// Tells `verifier` the revocations stored before this start that still matter
    /// (those of the last ``AccessTokenVerifier/revocationRetention`` seconds).
    public static func load(into verifier: AccessTokenVerifier, from pool: DatabasePool, now: Date = Date()) throws {
        let since = Instant.format(now.addingTimeInterval(-TimeInterval(AccessTokenVerifier.revocationRetention)))
        let rows = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT session_id, revoked_at FROM platform_revoked_session WHERE revoked_at > ?", arguments: [since])
        }
        for row in rows {
            verifier.revoke(sessions: [row["session_id"] as String], at: Instant.parse(row["revoked_at"]).map { Int64($0.timeIntervalSince1970) })
        }
    }

    /// Forgets stored revocations whose tokens have all expired; returns how many.
    @discardableResult
    public static func prune(_ db: Database, now: Date = Date()) throws -> Int {
        let before = Instant.format(now.addingTimeInterval(-TimeInterval(AccessTokenVerifier.revocationRetention)))
        try db.execute(sql: "DELETE FROM platform_revoked_session WHERE revoked_at < ?", arguments: [before])
        return db.changesCount
    }
}

import Foundation
import GRDB
import Logging

/// Everything a handler knows about the request it serves.
public struct RequestContext: Sendable {
    /// The client's request id.
    public let requestID: String
    /// The operation's full name.
    public let op: String
    /// The verified caller; `nil` for anonymous calls to public operations.
    public let principal: Principal?
    /// The idempotency key, if the request carried one.
    public let idempotencyKey: String?
    /// SHA-256 of the operation and its canonical `data`, to tell a retry from a reuse.
    public let requestHash: String
    /// When the service received the request.
    public let receivedAt: Date
    /// The request's `data` as sent (already valid against the schema), for handlers that
    /// must tell an absent field from an explicit `null`.
    public let data: JSONValue
    /// The client's network address, when the request came through the gateway.
    public let clientAddress: String?
    /// The request's logger, with its id and op as metadata (made when asked for: most
    /// requests log nothing but their one request line).
    public var logger: Logger {
        var logger = serviceLogger
        logger[metadataKey: "id"] = "\(RequestLog.sanitized(requestID))"
        logger[metadataKey: "op"] = "\(op)"
        return logger
    }
    private let serviceLogger: Logger
    let pool: DatabasePool?
    let batcher: WriteBatcher?
    /// Asked inside every write whether the caller's session was revoked meanwhile.
    let verifier: (any TokenVerifier)?

    /// Creates a context (the runtime does this; tests may too).
    public init(
        requestID: String, op: String, principal: Principal?, idempotencyKey: String?, requestHash: String,
        receivedAt: Date = Date(), data: JSONValue = [:], clientAddress: String? = nil, logger: Logger, database: DatabasePool?,
        batcher: WriteBatcher? = nil, verifier: (any TokenVerifier)? = nil
    ) {
        self.requestID = requestID
        self.op = op
        self.principal = principal
        self.idempotencyKey = idempotencyKey
        self.requestHash = requestHash
        self.receivedAt = receivedAt
        self.data = data
        self.clientAddress = clientAddress
        self.serviceLogger = logger
        self.pool = database
        self.batcher = batcher ?? database.map { WriteBatcher(pool: $0) }
        self.verifier = verifier
    }

    /// Throws `unauthenticated` when the caller's session was revoked after its token was
    /// verified. Called at the start of every write transaction: revocations (signing
    /// out, a password change, an account deletion, which auth publishes before
    /// `auth.user.deleted`) are applied in write transactions of their own, so a request
    /// either commits before them, and the deletion that follows sees and cleans what it
    /// wrote, or finds its session revoked and writes nothing.
    func requireLiveSession() throws {
        if sessionRevoked { throw ServiceError.unauthenticated("the session was revoked") }
    }

    /// Whether the caller's session was revoked after its token was verified.
    var sessionRevoked: Bool {
        guard let principal, let verifier else { return false }
        return verifier.isRevoked(session: principal.sessionID)
    }

    /// The service's database.
    public func database() throws -> DatabasePool {
        guard let pool else {
            logger.error("operation needs a database but the process has none")
            throw ServiceError.internal(ref: requestID)
        }
        return pool
    }

    /// The caller, or `unauthenticated` when the request had no valid token.
    public func requirePrincipal() throws -> Principal {
        guard let principal else { throw ServiceError.unauthenticated() }
        return principal
    }

    /// The scope idempotency keys live in: the caller's user id, or `public`.
    var idempotencyScope: String { principal.map { "user:\($0.userID)" } ?? "public" }

    /// Runs `body` atomically (a savepoint of the service's next group commit, see
    /// ``WriteBatcher``) and returns its result once durable. When the request has
    /// an `idem` key, the result is stored as the reply in the same transaction; if the
    /// key was already used for the same request, the stored reply comes back and `body`
    /// does not run; with another request it is a `conflict`.
    ///
    /// The caller's session must still be live inside the transaction (see
    /// ``requireLiveSession()``); `requiringLiveSession: false` is for the rare second
    /// transaction that records what an outside system already did for the request (a
    /// charged payment), which must be written even if the account went meanwhile.
    public func commit<Result: Codable & Sendable>(
        requiringLiveSession: Bool = true, _ body: @escaping @Sendable (Database) throws -> Result
    ) async throws -> Result {
        switch try await commitStoringReply(requiringLiveSession: requiringLiveSession, body) {
        case .fresh(let result, _): return result
        // Only a retry reads a stored reply back.
        case .replayed(let stored): return try WireJSON.decode(Result.self, from: stored)
        }
    }

    /// The stored reply of an earlier request with the same `idem` key, if there is one:
    /// for handlers that call an outside system (a payment) before committing, so that a
    /// retry does not call it again. Throws `conflict` if the key was used for another request.
    public func earlierReply<Result: Decodable & Sendable>(as type: Result.Type) async throws -> Result? {
        try await earlierReplyBytes().map { try WireJSON.decode(type, from: $0) }
    }

    /// The stored reply bytes of an earlier request with the same `idem` key, if there is
    /// one; throws `conflict` if the key was used for another request.
    func earlierReplyBytes() async throws -> Data? {
        guard let key = idempotencyKey else { return nil }
        let scope = idempotencyScope, op = self.op, hash = requestHash
        let lookup = try await database().read { db in
            try IdempotencyStore.lookup(db, scope: scope, key: key, op: op, requestHash: hash)
        }
        switch lookup {
        case .new: return nil
        case .conflict: throw ServiceError.idempotencyConflict
        case .replay(let data): return data
        }
    }

    /// Runs `body` atomically in the service's next group commit, without idempotency
    /// (for handlers whose replies must not be stored, e.g. ones carrying tokens). The
    /// caller's session must still be live, as for ``commit(requiringLiveSession:_:)``.
    public func write<Result: Sendable>(
        requiringLiveSession: Bool = true, _ body: @escaping @Sendable (Database) throws -> Result
    ) async throws -> Result {
        _ = try database()
        guard let batcher else { throw ServiceError.internal(ref: requestID) }
        guard requiringLiveSession, principal != nil, verifier != nil else { return try await batcher.write(body) }
        return try await batcher.write { db in
            try requireLiveSession()
            return try body(db)
        }
    }

    /// ``commit(_:)`` for a `.write` operation: returns the reply's JSON bytes. Without
    /// `idem` the result is encoded after the commit, off the writer.
    func commitReply<Result: Encodable & Sendable>(_ body: @escaping @Sendable (Database) throws -> Result) async throws -> Data {
        try await commitStoringReply(body).replyData()
    }

    /// What a commit gave: a new result (with its encoded reply when it was stored for
    /// `idem`), or the reply stored by an earlier request with the same key.
    enum CommitOutcome<Result: Sendable>: Sendable {
        case fresh(Result, encoded: Data?)
        case replayed(Data)
    }

    private func commitStoringReply<Result: Encodable & Sendable>(
        requiringLiveSession: Bool = true, _ body: @escaping @Sendable (Database) throws -> Result
    ) async throws -> CommitOutcome<Result> {
        guard let batcher else { throw ServiceError.internal(ref: requestID) }
        return try await batcher.write(try commitJob(requiringLiveSession: requiringLiveSession, body))
    }

    /// The transaction of ``commit(requiringLiveSession:_:)``: with an `idem` key it looks
    /// the key up first and stores the encoded reply with the write.
    func commitJob<Result: Encodable & Sendable>(
        requiringLiveSession: Bool = true, _ body: @escaping @Sendable (Database) throws -> Result
    ) throws -> @Sendable (Database) throws -> CommitOutcome<Result> {
        _ = try database()
        let checked = requiringLiveSession && principal != nil && verifier != nil
        guard let key = idempotencyKey else {
            guard checked else { return { db in .fresh(try body(db), encoded: nil) } }
            return { db in
                try requireLiveSession()
                return .fresh(try body(db), encoded: nil)
            }
        }
        let scope = idempotencyScope, op = self.op, hash = requestHash
        return { db -> CommitOutcome<Result> in
            switch try IdempotencyStore.lookup(db, scope: scope, key: key, op: op, requestHash: hash) {
            case .replay(let stored): return .replayed(stored)
            case .conflict: throw ServiceError.idempotencyConflict
            case .new: break
            }
            if checked { try requireLiveSession() }
            let result = try body(db)
            // The reply is stored with the write, so it is encoded here, once. Not for a
            // session revoked meanwhile (the account may be gone, its keys forgotten).
            let reply = try WireJSON.encode(result)
            if !sessionRevoked {
                try IdempotencyStore.save(db, scope: scope, key: key, op: op, requestHash: hash, reply: reply)
            }
            return .fresh(result, encoded: reply)
        }
    }

    /// Queues a `.write` operation's transaction (``commitJob(requiringLiveSession:_:)``)
    /// without waiting; `done` is told, on the writer thread, how to make the reply's
    /// `data` once it committed (the encoding, when the reply was not stored, is left to
    /// whoever calls that).
    func submitReply<Result: Encodable & Sendable>(
        _ body: @escaping @Sendable (Database) throws -> Result, done: @escaping @Sendable (@escaping @Sendable () throws -> Data) -> Void
    ) throws {
        guard let batcher else { throw ServiceError.internal(ref: requestID) }
        let job = try commitJob(body)
        batcher.submit({ db in try job(db) }) { result in
            done {
                switch result {
                case .success(let value as CommitOutcome<Result>): return try value.replyData()
                case .success: throw ServiceError.internal(ref: "write-batcher")
                case .failure(let error): throw error
                }
            }
        }
    }
}

extension ServiceError {
    /// An `idem` key reused with another operation or body.
    public static let idempotencyConflict = ServiceError.conflict(
        "this idempotency key was already used for a different request", reason: "idempotency_key_reused")
}

extension RequestContext.CommitOutcome where Result: Encodable {
    /// The reply's `data`: as stored with the write or by the earlier request, else encoded now.
    func replyData() throws -> Data {
        switch self {
        case .fresh(_, let encoded?): return encoded
        case .fresh(let result, nil): return try WireJSON.encode(result)
        case .replayed(let stored): return stored
        }
    }
}

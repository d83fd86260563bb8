import Foundation
import GRDB
import Logging

/// Turns a parsed request into a reply: finds the operation, checks the caller against
/// its auth rule, validates `data` against its schema, runs the handler and maps every
/// error to the contract's codes. Shared by all services.
public final class RequestDispatcher: Sendable {
    /// The service name.
    public let service: String
    private let operations: [String: ServiceOperation]
    private let verifier: any TokenVerifier
    private let pool: DatabasePool?
    private let batcher: WriteBatcher?
    private let logger: Logger
    /// The operators' CURVE public keys (Z85), who alone may call ``AuthRule/operatorOnly``
    /// operations; `nil` with CURVE off.
    private let operatorKeys: Set<String>?

    /// Creates a dispatcher over a service's operations.
    public init(
        service: String, operations: [ServiceOperation], verifier: any TokenVerifier, pool: DatabasePool?, logger: Logger,
        operatorKeys: Set<String>? = nil
    ) {
        self.service = service
        self.operatorKeys = operatorKeys
        // The gateway refuses internal operations by name; an internal operation it would
        // forward is a programming error, caught at start-up.
        for operation in operations where operation.auth.isInternal {
            precondition(InternalOperations.contains(operation.name), "\(operation.name) is internal but not named <service>.internal.*")
        }
        self.operations = Dictionary(operations.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.verifier = verifier
        self.pool = pool
        self.batcher = pool.map { WriteBatcher(pool: $0) }
        self.logger = logger
    }

    /// A request ready to run.
    public struct Prepared: Sendable {
        let operation: ServiceOperation
        let context: RequestContext
        let data: JSONValue
        /// Whether the handler may run on the socket thread.
        public var isInline: Bool { operation.executeInline != nil }
    }

    /// ``prepare(_:client:receivedAt:)`` that, when the token names a key the service does
    /// not know yet (it just started, or auth rotated keys), fetches the keys and tries once more.
    public func prepareFetchingKeys(_ request: RequestEnvelope, client: String? = nil, caller: String? = nil) async throws(ServiceError) -> Prepared {
        do {
            return try prepare(request, client: client, caller: caller)
        } catch where error.isUnknownKey {
            guard await verifier.refreshKeys() else { throw error }
            return try prepare(request, client: client, caller: caller)
        }
    }

    /// Whether `op` is answered on the socket thread (unknown ops are: with an error).
    public func isInline(_ op: String) -> Bool {
        operations[op].map { $0.executeInline != nil } ?? true
    }

    /// Looks up, authorizes and validates a request.
    /// `caller` is the CURVE public key (Z85) of the connection the request came on.
    public func prepare(_ request: RequestEnvelope, client: String? = nil, caller: String? = nil, receivedAt: Date = Date()) throws(ServiceError) -> Prepared {
        guard let operation = operations[request.op] else { throw .unknownOp(request.op) }
        var principal: Principal?
        if let token = request.token, operation.auth != .public {
            principal = try verifier.verify(token)
        }
        switch operation.auth {
        case .public, .internal:
            break
        case .operatorOnly:
            if let operatorKeys, !operatorKeys.contains(caller ?? "") {
                throw .forbidden("this operation is for the operators' tools only")
            }
        case .authenticated:
            guard principal != nil else { throw .unauthenticated() }
        case .anyRole(let roles):
            guard let principal else { throw .unauthenticated() }
            guard !roles.isDisjoint(with: principal.roles) else {
                throw .forbidden("this operation needs one of the roles: \(roles.sorted().joined(separator: ", "))")
            }
        }
        let problems = operation.request.validate(request.data)
        guard problems.isEmpty else { throw .validationFailed(problems) }
        // An operation that ignores `idem` never sees one: nothing of it is stored or looked up.
        let idem = operation.ignoresIdem ? nil : request.idem
        let hash = idem == nil ? "" : request.requestHash
        let context = RequestContext(
            requestID: request.id, op: request.op, principal: principal, idempotencyKey: idem, requestHash: hash,
            receivedAt: receivedAt, data: request.data, clientAddress: client, logger: logger, database: pool,
            batcher: batcher, verifier: verifier)
        return Prepared(operation: operation, context: context, data: request.data)
    }

    /// The reply from the operation's memory, when it has one (socket thread).
    public func answerFromMemory(_ prepared: Prepared) -> Data? {
        guard let fastPath = prepared.operation.fastPath, let data = fastPath(prepared.context, prepared.data) else { return nil }
        return Reply.success(id: prepared.context.requestID, data: data)
    }

    /// Whether the operation may answer from memory on the socket thread.
    public func hasFastPath(_ op: String) -> Bool {
        operations[op]?.fastPath != nil
    }

    /// Whether the operation is a write that may start on the socket thread (``startWrite(_:done:)``).
    public func startsWrites(_ op: String) -> Bool {
        operations[op]?.startWrite != nil
    }

    /// Whether the request's token, if it has one, is checked without a signature check:
    /// a socket thread prepares only such requests itself.
    public func checksAtOnce(_ request: RequestEnvelope) -> Bool {
        guard let token = request.token, let operation = operations[request.op], operation.auth != .public else { return true }
        return verifier.verifiesAtOnce(token)
    }

    /// How ``startWrite(_:done:)`` went.
    public enum WriteStart: Sendable {
        /// Queued for the writer: `done` will be called.
        case queued
        /// Refused before anything was queued: the reply frame and outcome.
        case refused(reply: Data, outcome: String)
        /// The preparation would have to wait: run the request with ``run(_:)`` in a task.
        case needsTask
    }

    /// Starts a write without a task: decodes and prepares it on the calling thread (a
    /// socket's, which must not block) and queues its transaction for the writer thread,
    /// whose completion calls `done` with what makes the reply frame and outcome (to be
    /// called off the writer: it may encode the reply). Requests take two hand-offs
    /// between threads (socket to writer, writer to socket) instead of four, with no task
    /// nor continuation.
    public func startWrite(
        _ prepared: Prepared, done: @escaping @Sendable (@escaping @Sendable () -> (reply: Data, outcome: String)) -> Void
    ) -> WriteStart {
        guard let start = prepared.operation.startWrite else { return .needsTask }
        let context = prepared.context
        do {
            let queued = try start(context, prepared.data) { makeData in
                done { [self] in
                    do {
                        return (Reply.success(id: context.requestID, data: try makeData()), "ok")
                    } catch {
                        return reply(for: error, context)
                    }
                }
            }
            return queued ? .queued : .needsTask
        } catch {
            let (reply, outcome) = reply(for: error, context)
            return .refused(reply: reply, outcome: outcome)
        }
    }

    /// Whether the operation runs whole on a thread that may block (``runBlocking(_:)``).
    public func runsBlocking(_ op: String) -> Bool {
        operations[op]?.executeBlocking != nil
    }

    /// Runs a read on the calling thread, which must not be one of Swift's pool, and
    /// returns the reply frame (`internal` for an operation without such a run, which
    /// ``runsBlocking(_:)`` tells apart first).
    public func runBlocking(_ prepared: Prepared) -> (reply: Data, outcome: String) {
        runHere(prepared, prepared.operation.executeBlocking)
    }

    /// Runs an inline request on the calling thread and returns the reply frame.
    public func runInline(_ prepared: Prepared) -> (reply: Data, outcome: String) {
        runHere(prepared, prepared.operation.executeInline)
    }

    /// Runs `run` on the calling thread (`internal` when the operation has none).
    private func runHere(
        _ prepared: Prepared, _ run: (@Sendable (RequestContext, JSONValue) throws -> Data)?
    ) -> (reply: Data, outcome: String) {
        guard let run else {
            return failure(prepared.context.requestID, .internal(ref: prepared.context.requestID), outcome: "internal")
        }
        do {
            return (Reply.success(id: prepared.context.requestID, data: try run(prepared.context, prepared.data)), "ok")
        } catch {
            return reply(for: error, prepared.context)
        }
    }

    /// Runs a request's handler and returns the reply frame.
    public func run(_ prepared: Prepared) async -> (reply: Data, outcome: String) {
        let context = prepared.context
        do {
            let data = try await prepared.operation.execute(context, prepared.data)
            return (Reply.success(id: context.requestID, data: data), "ok")
        } catch {
            return reply(for: error, context)
        }
    }

    /// Parses, prepares and runs a request frame end to end (for in-process callers).
    public func handle(_ body: Data) async -> Data {
        let envelope: RequestEnvelope
        do {
            envelope = try RequestEnvelope.parse(body)
        } catch {
            return Reply.failure(id: error.id, error: error.error)
        }
        do {
            return await run(try prepare(envelope)).reply
        } catch {
            return Reply.failure(id: envelope.id, error: error)
        }
    }

    private func reply(for error: any Error, _ context: RequestContext) -> (reply: Data, outcome: String) {
        switch error {
        case let error as ServiceError:
            return failure(context.requestID, error, outcome: error.code.rawValue)
        case is CancellationError:
            return failure(context.requestID, .timeout(), outcome: "timeout")
        default:
            // The cause goes to the log only; the wire gets a reference to find it.
            let ref = Digest.hex(Digest.randomBytes(6))
            context.logger.error("handler failed", metadata: ["ref": "\(ref)", "error": "\(String(reflecting: error))"])
            return failure(context.requestID, .internal(ref: ref), outcome: "internal")
        }
    }

    private func failure(_ id: String, _ error: ServiceError, outcome: String) -> (reply: Data, outcome: String) {
        (Reply.failure(id: id, error: error), outcome)
    }
}

import Foundation
import GRDB

/// The `data` of operations that take no input, and the result of those that return nothing.
public struct Empty: Codable, Sendable, Equatable {
    /// The empty value.
    public init() {}
}

/// One operation a service offers: its name, who may call it, the JSON Schemas of its
/// input and result (shown by `describe`, and the input's used to validate `data`), and
/// how it runs.
public struct ServiceOperation: Sendable {
    /// Where an operation's handler runs.
    public enum Mode: String, Sendable {
        /// On the socket thread itself: pure computation, no I/O (health, describe).
        case inline
        /// In a read transaction on the database pool; reads run in parallel.
        case read
        /// In one write transaction, serialized with the other writes, with the
        /// idempotency record in the same transaction.
        case write
        /// An async task that may call other systems first and commit with
        /// ``RequestContext/commit(_:)``.
        case task
    }

    /// The full name, `<service>.<operation>`.
    public let name: String
    /// What the operation does, for `describe`.
    public let summary: String
    /// Who may call it.
    public let auth: AuthRule
    /// The schema of `data`; requests that break it get `validation_failed`.
    public let request: JSONSchema
    /// The schema of the result.
    public let response: JSONSchema
    /// Where the handler runs.
    public let mode: Mode
    let execute: @Sendable (RequestContext, JSONValue) async throws -> Data
    let executeInline: (@Sendable (RequestContext, JSONValue) throws -> Data)?
    /// A read operation's whole run on the calling thread, which must be one that may
    /// block (not Swift's pool): decode, the read transaction, encode. The request socket
    /// runs it on its read threads, so a read crosses threads twice (to a read thread and
    /// back) instead of four times (to a task, to GRDB's queue, back to the task, back).
    let executeBlocking: (@Sendable (RequestContext, JSONValue) throws -> Data)?
    /// A `.write` operation's start without a task (``RequestDispatcher/startWrite(_:done:)``):
    /// decodes and prepares on the calling thread, which must not block, and queues the
    /// transaction; `done` is later given what makes the reply's `data`. Returns `false`,
    /// having queued nothing, when the preparation would have to wait (the task runs it).
    let startWrite: StartWrite?
    /// An answer from memory, tried on the socket thread before the handler is started
    /// as a task; `nil` means "not in memory, run the handler".
    public private(set) var fastPath: (@Sendable (RequestContext, JSONValue) -> Data?)?
    /// The operation takes no `idem`: a key sent with it is dropped before the handler
    /// (sign-ins, refreshes, single-use codes: a stored reply would hand the same tokens or
    /// nonce out again). `describe` says so (`idem: "ignored"`), and so does the edge's
    /// OpenAPI document (no `Idempotency-Key` parameter).
    public private(set) var ignoresIdem = false

    /// The same operation, taking no `idem` (``ignoresIdem``).
    public func ignoringIdem() -> ServiceOperation {
        var copy = self
        copy.ignoresIdem = true
        return copy
    }

    /// The same operation, first answered from memory on the socket thread when `answer`
    /// returns encoded data (a cache), else run as usual. `answer` must not block.
    public func answeringFromMemory<Request: Decodable & Sendable>(
        _ type: Request.Type, _ answer: @escaping @Sendable (Request) -> Data?
    ) -> ServiceOperation {
        var copy = self
        copy.fastPath = { _, data in (try? decodeRequest(Request.self, from: data)).flatMap(answer) }
        return copy
    }

    /// ``answeringFromMemory(_:_:)`` for answers that depend on the caller: `answer` gets
    /// the request's context, already authenticated and authorized.
    public func answeringFromMemory<Request: Decodable & Sendable>(
        _ type: Request.Type, _ answer: @escaping @Sendable (RequestContext, Request) -> Data?
    ) -> ServiceOperation {
        var copy = self
        copy.fastPath = { context, data in (try? decodeRequest(Request.self, from: data)).flatMap { answer(context, $0) } }
        return copy
    }

    /// See ``startWrite``.
    typealias StartWrite = @Sendable (
        RequestContext, JSONValue, _ done: @escaping @Sendable (@escaping @Sendable () throws -> Data) -> Void
    ) throws -> Bool

    init(
        name: String, summary: String, auth: AuthRule, request: JSONSchema, response: JSONSchema, mode: Mode,
        execute: @escaping @Sendable (RequestContext, JSONValue) async throws -> Data,
        executeInline: (@Sendable (RequestContext, JSONValue) throws -> Data)?,
        executeBlocking: (@Sendable (RequestContext, JSONValue) throws -> Data)? = nil,
        startWrite: StartWrite? = nil
    ) {
        self.name = name
        self.summary = summary
        self.auth = auth
        self.request = request
        self.response = response
        self.mode = mode
        self.execute = execute
        self.executeInline = executeInline
        self.executeBlocking = executeBlocking
        self.startWrite = startWrite
        self.fastPath = nil
    }

    /// An operation that computes its answer on the socket thread, without I/O.
    public static func inline<Request: Decodable & Sendable, Response: Encodable & Sendable>(
        _ name: String, summary: String, auth: AuthRule = .public, request: JSONSchema = .empty, response: JSONSchema,
        _ handler: @escaping @Sendable (RequestContext, Request) throws -> Response
    ) -> ServiceOperation {
        let run: @Sendable (RequestContext, JSONValue) throws -> Data = { context, data in
            try WireJSON.encode(handler(context, try decodeRequest(Request.self, from: data)))
        }
        return ServiceOperation(
            name: name, summary: summary, auth: auth, request: request, response: response, mode: .inline,
            execute: { context, data in try run(context, data) }, executeInline: run)
    }

    /// An operation answered from one read transaction.
    ///
    /// `remembered`: the answer is a function of the request and of the caller's own rows
    /// in tables the service counts with ``UserChanges`` (not of the clock, nor of other
    /// tables), so a read thread may give the same bytes again while none of those rows
    /// changed (``ThreadReader/read(_:remembering:user:_:)``). For the lists a screen asks
    /// for again and again.
    public static func read<Request: Decodable & Sendable, Response: Encodable & Sendable>(
        _ name: String, summary: String, auth: AuthRule, request: JSONSchema, response: JSONSchema, remembered: Bool = false,
        _ handler: @escaping @Sendable (RequestContext, Request, Database) throws -> Response
    ) -> ServiceOperation {
        ServiceOperation(
            name: name, summary: summary, auth: auth, request: request, response: response, mode: .read,
            execute: { context, data in
                let input = try decodeRequest(Request.self, from: data)
                let result = try await context.database().read { db in try handler(context, input, db) }
                return try WireJSON.encode(result)
            }, executeInline: nil,
            executeBlocking: { context, data in
                let pool = try context.database()
                guard remembered, let principal = context.principal else {
                    let input = try decodeRequest(Request.self, from: data)
                    return try WireJSON.encode(try ThreadReader.read(pool) { db in try handler(context, input, db) })
                }
                let key = RememberedRead(op: name, principal: principal, data: data.serialized)
                return try ThreadReader.read(pool, remembering: key, user: principal.userID) { db in
                    try WireJSON.encode(try handler(context, try decodeRequest(Request.self, from: data), db))
                }
            })
    }

    /// An operation that changes state in one write transaction. With an `idem` key the
    /// reply is stored in the same transaction, and a retry gets it back unchanged.
    public static func write<Request: Decodable & Sendable, Response: Encodable & Sendable>(
        _ name: String, summary: String, auth: AuthRule, request: JSONSchema, response: JSONSchema,
        _ handler: @escaping @Sendable (RequestContext, Request, Database) throws -> Response
    ) -> ServiceOperation {
        ServiceOperation(
            name: name, summary: summary, auth: auth, request: request, response: response, mode: .write,
            execute: { context, data in
                // Decoding happened before and encoding happens after the transaction
                // (unless the reply must be stored for `idem`): the writer only writes.
                let input = try decodeRequest(Request.self, from: data)
                return try await context.commitReply { db in try handler(context, input, db) }
            }, executeInline: nil,
            startWrite: { context, data, done in
                let input = try decodeRequest(Request.self, from: data)
                try context.submitReply({ db in try handler(context, input, db) }, done: done)
                return true
            })
    }

    /// A write in two steps: `prepare` runs first, outside any transaction (parsing,
    /// checks that need no lock, reading cached reference data, formatting times, new
    /// ids; it may run again for a retry, so it must have no effects a second run would
    /// repeat), then `handler` runs in the serialized write transaction with the plan and
    /// only loads, decides and writes. The writer thread is the service's one serial
    /// resource, so whatever can move out of it does. With an `idem` key the reply is
    /// stored in the same transaction, as with ``write(_:summary:auth:request:response:_:)``.
    ///
    /// `preparedAtOnce`, when given, is the same preparation when it needs nothing that
    /// waits (reference data already in memory), or `nil` when it would: the request
    /// socket's thread tries it first and runs `prepare` in a task only when it answers
    /// `nil`, which spares the request a task and two hand-offs between threads.
    public static func write<Request: Decodable & Sendable, Plan: Sendable, Response: Encodable & Sendable>(
        _ name: String, summary: String, auth: AuthRule, request: JSONSchema, response: JSONSchema,
        prepare: @escaping @Sendable (RequestContext, Request) async throws -> Plan,
        preparedAtOnce: (@Sendable (RequestContext, Request) throws -> Plan?)? = nil,
        _ handler: @escaping @Sendable (RequestContext, Plan, Database) throws -> Response
    ) -> ServiceOperation {
        ServiceOperation(
            name: name, summary: summary, auth: auth, request: request, response: response, mode: .write,
            execute: { context, data in
                let input = try decodeRequest(Request.self, from: data)
                let plan: Plan
                do {
                    plan = try await prepare(context, input)
                } catch {
                    // A retry is answered with the first reply even when `prepare` now
                    // refuses it: what `prepare` checks (settings, the clock) may have
                    // changed since the first attempt succeeded. Looked up only then: when
                    // `prepare` passes, the transaction looks anyway (a retry racing the
                    // first attempt included), and a read before every write would cost
                    // each first attempt two thread hand-offs.
                    if let earlier = try await context.earlierReplyBytes() { return earlier }
                    throw error
                }
                return try await context.commitReply { db in try handler(context, plan, db) }
            }, executeInline: nil,
            startWrite: preparedAtOnce.map { preparedAtOnce -> StartWrite in
                { (context: RequestContext, data: JSONValue, done: @escaping @Sendable (@escaping @Sendable () throws -> Data) -> Void) throws -> Bool in
                    let input = try decodeRequest(Request.self, from: data)
                    let plan: Plan
                    do {
                        guard let prepared = try preparedAtOnce(context, input) else { return false }
                        plan = prepared
                    } catch where context.idempotencyKey != nil {
                        // Maybe a retry of a request that passed then: the task looks.
                        return false
                    }
                    try context.submitReply({ db in try handler(context, plan, db) }, done: done)
                    return true
                }
            })
    }

    /// ``write(_:summary:auth:request:response:prepare:preparedAtOnce:_:)`` for a
    /// preparation that never waits: it always runs on the request socket's thread.
    public static func write<Request: Decodable & Sendable, Plan: Sendable, Response: Encodable & Sendable>(
        _ name: String, summary: String, auth: AuthRule, request: JSONSchema, response: JSONSchema,
        preparedAtOnce: @escaping @Sendable (RequestContext, Request) throws -> Plan,
        _ handler: @escaping @Sendable (RequestContext, Plan, Database) throws -> Response
    ) -> ServiceOperation {
        write(
            name, summary: summary, auth: auth, request: request, response: response,
            prepare: { context, input in try preparedAtOnce(context, input) }, preparedAtOnce: preparedAtOnce,
            handler)
    }

    /// An operation that does async work (hashing, calls to providers or other services)
    /// and commits its changes with ``RequestContext/commit(_:)``.
    public static func task<Request: Decodable & Sendable, Response: Encodable & Sendable>(
        _ name: String, summary: String, auth: AuthRule, request: JSONSchema, response: JSONSchema,
        _ handler: @escaping @Sendable (RequestContext, Request) async throws -> Response
    ) -> ServiceOperation {
        ServiceOperation(
            name: name, summary: summary, auth: auth, request: request, response: response, mode: .task,
            execute: { context, data in
                try WireJSON.encode(try await handler(context, try decodeRequest(Request.self, from: data)))
            }, executeInline: nil)
    }

    /// The operation as `describe` lists it.
    public var descriptionValue: JSONValue {
        var value: JSONValue = [
            "op": .string(name), "summary": .string(summary), "auth": .string(auth.wireName),
            "mode": .string(mode.rawValue), "request": request.jsonValue, "response": response.jsonValue,
        ]
        if ignoresIdem { value = value.merging(["idem": "ignored"]) }
        return value
    }
}

/// What a remembered read's answer depends on besides the database: the operation, the
/// whole caller (user, roles, active role, session) and the request's `data` as its
/// canonical bytes (``JSONValue/serialized``: keys sorted, strings as their UTF-8). Not the
/// `JSONValue` itself: Swift's `String` equality is canonical equivalence ("й" precomposed
/// equals "и" with a combining breve), while a handler (a search's words, SQLite's
/// comparisons) may tell them apart, so two such requests must not share an answer.
struct RememberedRead: Hashable, Sendable {
    let op: String
    let principal: Principal
    let data: Data
}

/// Decodes an operation's typed input from `data` that already passed its schema.
/// A decoding failure still names the field, as `validation_failed`.
func decodeRequest<Request: Decodable>(_ type: Request.Type, from data: JSONValue) throws -> Request {
    if type == Empty.self, let empty = Empty() as? Request { return empty }
    do {
        return try JSONValueDecoder().decode(type, from: data)
    } catch let error as DecodingError {
        throw ServiceError.validationFailed(fieldProblem(of: error))
    }
}

private func fieldProblem(of error: DecodingError) -> [String: String] {
    func path(_ codingPath: [any CodingKey]) -> String {
        let text = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        let trimmed = text.hasPrefix(".") ? String(text.dropFirst()) : text
        return trimmed.isEmpty ? "data" : trimmed
    }
    switch error {
    case .typeMismatch(_, let context), .dataCorrupted(let context):
        return [path(context.codingPath): context.debugDescription]
    case .keyNotFound(let key, let context):
        return [path(context.codingPath + [key]): "is required"]
    case .valueNotFound(_, let context):
        return [path(context.codingPath): "must not be null"]
    @unknown default:
        return ["data": "is not valid"]
    }
}

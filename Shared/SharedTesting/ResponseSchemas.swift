import Platform

/// The response schema each operation of a service declares, to check replies against:
/// taken from the operations themselves (in process) or from `<service>.describe` (over
/// the wire), which publishes the same schemas.
public struct ResponseSchemas: Sendable {
    private var schemas: [String: JSONSchema]

    /// The schemas of `operations` (use `ServiceDefinition.servedOperations` to include
    /// `health`, `describe` and `events.replay`).
    public init(_ operations: [ServiceOperation]) {
        schemas = Dictionary(operations.map { ($0.name, $0.response) }, uniquingKeysWith: { first, _ in first })
    }

    /// The schemas a `<service>.describe` reply lists (its `data`).
    public init(describe document: JSONValue) throws {
        guard case .array(let operations)? = document["operations"] else {
            throw TestStackError("describe has no operations: \(document)")
        }
        schemas = [:]
        for operation in operations {
            guard let op = operation["op"]?.stringValue, let response = operation["response"] else {
                throw TestStackError("describe lists an operation without op or response: \(operation)")
            }
            do {
                schemas[op] = try JSONSchema(jsonValue: response)
            } catch {
                throw TestStackError("describe: the response schema of \(op) cannot be read: \(error)")
            }
        }
    }

    /// The operations listed.
    public var operations: Set<String> { Set(schemas.keys) }

    /// The response schema of `op`, if listed.
    public subscript(op: String) -> JSONSchema? { schemas[op] }

    /// Throws ``ReplySchemaMismatch`` when `reply` is a success whose `data` breaks the
    /// response schema of `op`, or `op` is not listed at all; errors are not checked.
    public func check(_ reply: Reply.Parsed, of op: String) throws(ReplySchemaMismatch) {
        guard reply.ok else { return }
        let data = reply.data ?? .null
        guard let schema = schemas[op] else {
            throw ReplySchemaMismatch(op: op, problems: ["op": "answered ok but declares no response schema"], data: data)
        }
        let problems = schema.validate(data)
        if !problems.isEmpty { throw ReplySchemaMismatch(op: op, problems: problems, data: data) }
    }
}

/// A successful reply whose `data` does not match its operation's declared response
/// schema: the schema or the handler drifted.
public struct ReplySchemaMismatch: Error, Sendable, Equatable, CustomStringConvertible {
    /// The operation.
    public let op: String
    /// Each problem keyed by its path in `data` (`items[0].price.minor`).
    public let problems: [String: String]
    /// The reply's `data`.
    public let data: JSONValue

    /// Creates the error.
    public init(op: String, problems: [String: String], data: JSONValue) {
        self.op = op
        self.problems = problems
        self.data = data
    }

    public var description: String {
        let list = problems.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        return "the reply of \(op) does not match its declared response schema: \(list)\ndata: \(String(decoding: data.serialized, as: UTF8.self))"
    }
}

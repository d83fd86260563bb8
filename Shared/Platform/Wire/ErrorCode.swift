/// The stable error codes of the wire contract (CONTRACT.md, "Reply").
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    /// Not JSON, not an object, missing `id`/`op`, wrong types in the envelope.
    case badRequest = "bad_request"
    /// No such operation.
    case unknownOp = "unknown_op"
    /// `data` breaks the operation's schema or rules; `details.fields` names each field.
    case validationFailed = "validation_failed"
    /// Missing, malformed, expired or revoked token.
    case unauthenticated
    /// Authenticated, but not allowed (role, ownership).
    case forbidden
    /// The object does not exist, or the caller may not know it exists.
    case notFound = "not_found"
    /// State forbids it.
    case conflict
    /// Too many attempts; `details.retryAfterMs`.
    case rateLimited = "rate_limited"
    /// Request over the size limit.
    case payloadTooLarge = "payload_too_large"
    /// The target service does not answer.
    case unavailable
    /// The operation did not finish within its deadline.
    case timeout
    /// A bug; `details.ref` points to the log line.
    case `internal`
}

/// An error a handler throws to answer with one of the contract's codes.
///
/// Anything else a handler throws becomes `internal` with a reference to the log line,
/// so no stack trace, SQL or other internals ever reach the wire.
public struct ServiceError: Error, Sendable, Equatable {
    /// The contract's code.
    public var code: ErrorCode
    /// Text for people.
    public var message: String
    /// Field-level problems (`details.fields`), keyed by dotted path.
    public var fields: [String: String]
    /// Other details (`retryAfterMs`, `ref`, `reason`, ...).
    public var details: [String: JSONValue]

    /// Creates an error.
    public init(_ code: ErrorCode, _ message: String, fields: [String: String] = [:], details: [String: JSONValue] = [:]) {
        self.code = code
        self.message = message
        self.fields = fields
        self.details = details
    }

    /// `bad_request` for a malformed envelope.
    public static func badRequest(_ message: String) -> ServiceError { ServiceError(.badRequest, message) }
    /// `unknown_op`.
    public static func unknownOp(_ op: String) -> ServiceError { ServiceError(.unknownOp, "unknown operation \(op)") }
    /// `unknown_op` for an `op` that is not shaped like an operation's name at all.
    public static let unknownOperationName = ServiceError(.unknownOp, "no such operation: operations are named `<service>.<operation>`")
    /// `validation_failed` naming each bad field.
    public static func validationFailed(_ fields: [String: String], message: String = "the request data is not valid") -> ServiceError {
        ServiceError(.validationFailed, message, fields: fields)
    }
    /// `validation_failed` for one field.
    public static func invalid(_ field: String, _ problem: String) -> ServiceError {
        validationFailed([field: problem])
    }
    /// `unauthenticated`.
    public static func unauthenticated(_ message: String = "a valid access token is required") -> ServiceError {
        ServiceError(.unauthenticated, message)
    }
    /// `forbidden`.
    public static func forbidden(_ message: String = "not allowed") -> ServiceError { ServiceError(.forbidden, message) }
    /// `not_found`.
    public static func notFound(_ message: String = "not found") -> ServiceError { ServiceError(.notFound, message) }
    /// `conflict`, with a machine-readable reason.
    public static func conflict(_ message: String, reason: String? = nil) -> ServiceError {
        ServiceError(.conflict, message, details: reason.map { ["reason": .string($0)] } ?? [:])
    }
    /// `rate_limited` with `retryAfterMs`.
    public static func rateLimited(retryAfterMs: Int64, _ message: String = "too many attempts, try again later") -> ServiceError {
        ServiceError(.rateLimited, message, details: ["retryAfterMs": .integer(retryAfterMs)])
    }
    /// `payload_too_large`.
    public static func payloadTooLarge(limit: Int) -> ServiceError {
        ServiceError(.payloadTooLarge, "the request is larger than \(limit) bytes")
    }
    /// `unavailable`.
    public static func unavailable(_ message: String) -> ServiceError { ServiceError(.unavailable, message) }
    /// `timeout`.
    public static func timeout(_ message: String = "the operation did not finish within its deadline") -> ServiceError {
        ServiceError(.timeout, message)
    }
    /// `internal` with the reference of the log line that has the cause.
    public static func `internal`(ref: String) -> ServiceError {
        ServiceError(.internal, "internal error", details: ["ref": .string(ref)])
    }

    /// The `error` object of a reply.
    /// Reads an error object as ``wireValue`` writes it; an unknown code reads as `internal`.
    public init(wire value: JSONValue) {
        let object = value.objectValue ?? [:]
        let code = object["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:)) ?? .internal
        var details = object["details"]?.objectValue ?? [:]
        let fields = details.removeValue(forKey: "fields")?.objectValue?.compactMapValues(\.stringValue) ?? [:]
        self.init(code, object["message"]?.stringValue ?? "", fields: fields, details: details)
    }

    public var wireValue: JSONValue {
        var detailMembers = details
        if !fields.isEmpty {
            detailMembers["fields"] = .object(fields.mapValues { .string($0) })
        }
        var members: [String: JSONValue] = ["code": .string(code.rawValue), "message": .string(message)]
        if !detailMembers.isEmpty { members["details"] = .object(detailMembers) }
        return .object(members)
    }
}

import Foundation
import HTTPTypes
import Platform

/// What the edge answers over HTTP, before it becomes a Hummingbird response.
struct EdgeAnswer: Sendable {
    var status: HTTPTypes.HTTPResponse.Status
    var headers: HTTPFields = [:]
    var body: Data
    var contentType = "application/json"

    /// The contract's error as HTTP: the status of its code and `{"code", "message", "fields"}`.
    static func error(_ error: ServiceError) -> EdgeAnswer {
        var headers: HTTPFields = [:]
        if error.code == .rateLimited {
            // Whole seconds, rounded up: a client that waits this long is not refused again
            // for the same reason.
            let milliseconds = error.details["retryAfterMs"]?.integerValue ?? 1_000
            headers[.retryAfter] = String(max(1, (milliseconds + 999) / 1_000))
        }
        if error.code == .unauthenticated {
            // RFC 9110, 11.6.1: a 401 names its scheme (RFC 6750's bearer token).
            headers[.wwwAuthenticate] = "Bearer"
        }
        if case .string(let reference)? = error.details["ref"] {
            headers[.errorReference] = reference
        }
        // The refusal's reason (`full`, `no_credit`, `idempotency_key_reused`, ...), which the
        // contract carries in `details`: a header, so the error object keeps its shape.
        if case .string(let reason)? = error.details["reason"], reason.utf8.count <= 64,
            reason.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        {
            headers[.errorReason] = reason
        }
        let body: JSONValue = [
            "code": .string(error.code.rawValue), "message": .string(error.message),
            "fields": .object(error.fields.mapValues { .string($0) }),
        ]
        return EdgeAnswer(status: HTTPStatusMapping.status(of: error.code), headers: headers, body: body.serialized)
    }

    /// 405 for a path served with other methods, with `Allow` naming them (the body's
    /// code is `bad_request`: the contract has none for a method).
    static func methodNotAllowed(_ method: HTTPTypes.HTTPRequest.Method, path: String, allowed: [HTTPTypes.HTTPRequest.Method]) -> EdgeAnswer {
        var answer = error(ServiceError.badRequest("\(method) is not served at \(path): use \(allowed.map(\.rawValue).joined(separator: " or "))"))
        answer.status = HTTPTypes.HTTPResponse.Status.methodNotAllowed
        answer.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
        return answer
    }

    /// 415 for a request body in a content coding (RFC 9110, 15.5.16 and 12.5.3): the edge
    /// decodes none, and says so with `Accept-Encoding: identity`.
    static func unsupportedContentEncoding(_ codings: String) -> EdgeAnswer {
        var answer = error(ServiceError.badRequest("Content-Encoding \(codings) is not accepted: send the body unencoded"))
        answer.status = HTTPTypes.HTTPResponse.Status.unsupportedMediaType
        answer.headers[.acceptEncoding] = "identity"
        return answer
    }

    /// The content codings a request's body is in, other than `identity`, as sent; `nil`
    /// when there are none.
    static func contentCodings(_ headers: HTTPFields) -> String? {
        contentCodings(headers[values: .contentEncoding])
    }

    /// ``contentCodings(_:)`` from the `Content-Encoding` values themselves (as NIO's
    /// HTTP/1 headers give them to ``HTTP1Strictness``).
    static func contentCodings(_ values: [String]) -> String? {
        let codings = values.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty && $0 != "identity" }
        return codings.isEmpty ? nil : codings.joined(separator: ", ")
    }

    /// A reply frame from the gateway as HTTP: 200 with its `data` as it came (not parsed
    /// into values, not written again), or its error.
    static func reply(_ frame: Data) -> EdgeAnswer {
        // A success as services write it: its data found without a parse.
        if let range = Reply.successDataRange(of: frame) {
            return EdgeAnswer(status: .ok, body: frame[(frame.startIndex + range.lowerBound)..<(frame.startIndex + range.upperBound)])
        }
        var ranges: [String: Range<Int>] = [:]
        guard let members = try? JSONParser.parseMembers(of: frame, keeping: ["ok", "error"], noting: ["data"], ranges: &ranges),
            case .value(.bool(let ok))? = members["ok"]
        else {
            return error(ServiceError(.internal, "the gateway sent a reply the edge cannot read"))
        }
        guard ok else {
            guard case .value(let errorValue)? = members["error"] else {
                return error(ServiceError(.internal, "the gateway sent an error the edge cannot read"))
            }
            return error(ServiceError(wire: errorValue))
        }
        guard let range = ranges["data"] else { return EdgeAnswer(status: .ok, body: Data("null".utf8)) }
        return EdgeAnswer(status: .ok, body: frame[(frame.startIndex + range.lowerBound)..<(frame.startIndex + range.upperBound)])
    }
}

/// The HTTP status of each of the contract's error codes (README, "HTTP edge").
enum HTTPStatusMapping {
    static func status(of code: ErrorCode) -> HTTPTypes.HTTPResponse.Status {
        switch code {
        case .badRequest: .badRequest
        case .validationFailed: .unprocessableContent
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound, .unknownOp: .notFound
        case .conflict: .conflict
        case .rateLimited: .tooManyRequests
        case .payloadTooLarge: .contentTooLarge
        case .unavailable: .serviceUnavailable
        case .timeout: .gatewayTimeout
        case .internal: .internalServerError
        }
    }
}

extension HTTPField.Name {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let requestID = HTTPField.Name("X-Request-Id")!
    static let errorReference = HTTPField.Name("X-Error-Ref")!
    static let errorReason = HTTPField.Name("X-Error-Reason")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
}

/// The request frame the edge sends to the gateway for one HTTP call.
///
/// The body's bytes go in as `data` unchanged; they were checked to be one JSON object
/// first, so nothing in them can add members to the envelope. `client` is the app user's
/// address, believed by the gateway only on its edge socket.
enum EdgeEnvelope {
    static func encode(id: String, op: String, token: String?, idem: String?, client: String, data: Data?) -> Data {
        var head: [UInt8] = []
        head.reserveCapacity(96 + (token?.utf8.count ?? 0))
        head.append(contentsOf: #"{"id":"#.utf8)
        JSONValue.writeString(id, to: &head)
        head.append(contentsOf: #","op":"#.utf8)
        JSONValue.writeString(op, to: &head)
        head.append(contentsOf: #","client":"#.utf8)
        JSONValue.writeString(client, to: &head)
        if let token {
            head.append(contentsOf: #","token":"#.utf8)
            JSONValue.writeString(token, to: &head)
        }
        if let idem {
            head.append(contentsOf: #","idem":"#.utf8)
            JSONValue.writeString(idem, to: &head)
        }
        head.append(contentsOf: #","data":"#.utf8)
        var frame = Data(capacity: head.count + (data?.count ?? 2) + 1)
        frame.append(contentsOf: head)
        if let data { frame.append(data) } else { frame.append(contentsOf: "{}".utf8) }
        frame.append(UInt8(ascii: "}"))
        return frame
    }

    /// How deep a body may nest: the envelope it goes into is one level more, and the
    /// gateway takes 64 in all (deeper is refused here, in bytes of the body).
    static let maxBodyDepth = 63

    /// Checks an HTTP body as an operation's `data`: empty means `{}`; otherwise it must
    /// be one JSON object (UTF-8). Returns the bytes to send (`nil` for `{}`).
    static func data(fromBody body: Data) throws(ServiceError) -> Data? {
        guard body.contains(where: { !Self.isWhitespace($0) }) else { return nil }
        let members: [String: JSONParser.Member]?
        do {
            members = try JSONParser.parseMembers(of: body, keeping: [], maxDepth: maxBodyDepth)
        } catch {
            throw ServiceError.badRequest("the body is not valid JSON (UTF-8): \(error.message)")
        }
        guard members != nil else { throw ServiceError.badRequest("the body must be a JSON object (the operation's `data`)") }
        return body
    }

    /// What a full parse finds wrong with a body, at its offsets in the body; `nil` when
    /// nothing. Only for a request the service refused as `bad_request`: the check above
    /// skips values without building them (no repeated-name check), and the service's
    /// message counts from the start of the envelope the body went into.
    static func bodyError(_ body: Data) -> ServiceError? {
        guard body.contains(where: { !Self.isWhitespace($0) }) else { return nil }
        do {
            _ = try JSONParser.parse(body, maxDepth: maxBodyDepth)
            return nil
        } catch {
            return ServiceError.badRequest("the body is not valid JSON (UTF-8): \(error.message)")
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

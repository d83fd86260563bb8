import Foundation
import Platform

/// One request a load run sends: an operation, its caller and its `data` as JSON bytes.
public struct LoadRequest: Sendable {
    public var op: String
    public var token: String?
    public var idem: String?
    /// The request's `data`, as JSON.
    public var data: Data
    /// The virtual user it is sent for.
    public var user: Int
    /// The workload's own mark (what to do with the reply).
    public var kind: Int
    /// Whether the workload reads the reply's data (it is parsed only then).
    public var wantsReply: Bool

    /// A whole envelope sent as it is (benchmarks that prepare theirs in advance).
    public var preparedEnvelope: Data?

    /// A request sent as `envelope`, counted under `op`.
    public init(op: String, envelope: Data) {
        self.init(op: op)
        preparedEnvelope = envelope
    }

    public init(op: String, token: String? = nil, idem: String? = nil, data: Data = Data("{}".utf8), user: Int = 0, kind: Int = 0, wantsReply: Bool = false) {
        self.op = op
        self.token = token
        self.idem = idem
        self.data = data
        self.user = user
        self.kind = kind
        self.wantsReply = wantsReply
    }

    /// The contract's envelope around it (`id` "l": replies are matched by routing frame).
    public var envelope: Data {
        if let preparedEnvelope { return preparedEnvelope }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + op.utf8.count + (token?.utf8.count ?? 0) + 64)
        bytes.append(contentsOf: #"{"id":"l","op":"#.utf8)
        JSONValue.writeString(op, to: &bytes)
        if let token {
            bytes.append(contentsOf: #","token":"#.utf8)
            JSONValue.writeString(token, to: &bytes)
        }
        if let idem {
            bytes.append(contentsOf: #","idem":"#.utf8)
            JSONValue.writeString(idem, to: &bytes)
        }
        bytes.append(contentsOf: #","data":"#.utf8)
        bytes.append(contentsOf: data)
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }
}

/// How a request ended.
public struct LoadReply: Sendable {
    public var ok: Bool
    /// The error's code (contract codes), `no_reply` when none came in time,
    /// `malformed_reply` when what came is not a reply.
    public var code: String?
    /// The reply's `data`, parsed, when the request asked for it.
    public var data: JSONValue?

    public init(ok: Bool, code: String? = nil, data: JSONValue? = nil) {
        self.ok = ok
        self.code = code
        self.data = data
    }

    /// Codes that answer the request as the system should (a place taken, a field
    /// refused): counted as refusals, not failures.
    public static let refusalCodes: Set<String> = ["conflict", "validation_failed", "not_found", "forbidden", "rate_limited", "payload_too_large"]

    public var isRefusal: Bool { !ok && code.map { Self.refusalCodes.contains($0) } == true }
}

/// What a load run sends and how it follows up on replies. A workload is used by one
/// driver thread at a time.
public protocol LoadWorkload: AnyObject, Sendable {
    /// The next request for virtual user `user`, or `nil` when there is nothing more to send.
    func next(user: Int) -> LoadRequest?
    /// The reply to `request` (every request sent gets exactly one call, in warm-up too).
    func completed(_ request: LoadRequest, reply: LoadReply)
}

/// The same request again and again (a single operation, or the raw echo's message).
public final class RepeatedWorkload: LoadWorkload, @unchecked Sendable {
    private let request: LoadRequest
    public init(_ request: LoadRequest) { self.request = request }
    public func next(user: Int) -> LoadRequest? { request }
    public func completed(_ request: LoadRequest, reply: LoadReply) {}
}

/// Whole envelopes, the n-th from `bodies(n)` (0, 1, ...) until it returns `nil`.
public final class EnvelopeWorkload: LoadWorkload, @unchecked Sendable {
    private let bodies: @Sendable (Int) -> Data?
    private var number = 0

    public init(_ bodies: @escaping @Sendable (Int) -> Data?) { self.bodies = bodies }

    public func next(user: Int) -> LoadRequest? {
        guard let body = bodies(number) else { return nil }
        number += 1
        return LoadRequest(op: "request", envelope: body)
    }

    public func completed(_ request: LoadRequest, reply: LoadReply) {}
}

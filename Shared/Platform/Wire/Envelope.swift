import Foundation

/// A parsed request (CONTRACT.md, "Request"). One codec for the gateway, the services,
/// the client and the tools.
public struct RequestEnvelope: Sendable, Equatable {
    /// Chosen by the client, echoed in the reply; at most 128 bytes of UTF-8.
    public var id: String
    /// `<service>.<operation>`.
    public var op: String
    /// The access token, absent for public operations.
    public var token: String?
    /// The idempotency key, optional.
    public var idem: String?
    /// The operation's input; always an object (`{}` when absent).
    public var data: JSONValue
    /// The bytes of `data` as they came in the request frame (`nil` when built in code, or
    /// when the request had no `data`): idempotency hashes them instead of writing `data` out again.
    public var dataBytes: Data?

    /// The longest accepted `id`.
    public static let maxIDLength = 128
    /// The longest accepted `idem` key.
    public static let maxIdempotencyKeyLength = 200

    /// Creates an envelope.
    public init(
        id: String, op: String, token: String? = nil, idem: String? = nil, data: JSONValue = .object([:]), dataBytes: Data? = nil
    ) {
        self.id = id
        self.op = op
        self.token = token
        self.idem = idem
        self.data = data
        self.dataBytes = dataBytes
    }

    /// Envelopes are equal when their fields are; where `data`'s bytes came from does not matter.
    public static func == (lhs: RequestEnvelope, rhs: RequestEnvelope) -> Bool {
        lhs.id == rhs.id && lhs.op == rhs.op && lhs.token == rhs.token && lhs.idem == rhs.idem && lhs.data == rhs.data
    }

    /// The service an operation belongs to: its first segment.
    public var service: Substring {
        op.prefix(while: { $0 != "." })
    }

    /// A request that could not be parsed: the error to answer with, and the request's
    /// `id` when it could be read, so the reply still matches.
    public struct Rejection: Error, Sendable {
        /// The reply's error.
        public let error: ServiceError
        /// The request's `id`, if it was readable.
        public let id: String?
    }

    /// Parses one request frame, checking the envelope's types.
    public static func parse(_ frame: Data) throws(Rejection) -> RequestEnvelope {
        let value: JSONValue, dataRange: Range<Int>?
        do {
            (value, dataRange) = try JSONParser.parse(frame, recordingMember: "data")
        } catch {
            throw notJSON(error)
        }
        guard case .object(let members) = value else { throw notAnObject }
        let head = try Head(checkingID: members["id"], op: members["op"], token: members["token"], idem: members["idem"])
        let data: JSONValue
        var dataBytes: Data?
        switch members["data"] {
        case nil, .null?: data = .object([:])
        case .object(let object):
            data = .object(object)
            // A slice: it shares the frame's storage, nothing is copied.
            dataBytes = dataRange.map { frame[(frame.startIndex + $0.lowerBound)..<(frame.startIndex + $0.upperBound)] }
        default: throw Rejection(error: .badRequest(dataNotAnObject), id: head.id)
        }
        return RequestEnvelope(id: head.id, op: head.op, token: head.token, idem: head.idem, data: data, dataBytes: dataBytes)
    }

    /// The envelope without its `data`: what the gateway needs to route a request.
    public struct Head: Sendable, Equatable {
        /// The request's `id`.
        public var id: String
        /// The request's `op`.
        public var op: String
        /// The access token, if any.
        public var token: String?
        /// The idempotency key, if any.
        public var idem: String?
        /// The app user's address as the HTTP edge claims it (top-level `client`), when it
        /// is a plausible address; only the gateway's edge socket believes it (``EdgeTrust``).
        public var client: String?

        /// The service the operation belongs to: its first segment.
        public var service: Substring { op.prefix(while: { $0 != "." }) }

        /// Checks the envelope's members (`nil` where absent) in the order `parse` does,
        /// so both report the same first problem.
        init(checkingID idValue: JSONValue?, op opValue: JSONValue?, token tokenValue: JSONValue?, idem idemValue: JSONValue?) throws(Rejection) {
            switch idValue {
            case .string(let text) where !text.isEmpty && text.utf8.count <= maxIDLength: id = text
            case .string: throw Rejection(error: .badRequest("`id` must have 1 to \(maxIDLength) bytes"), id: nil)
            case nil, .null?: throw Rejection(error: .badRequest("`id` is missing"), id: nil)
            default: throw Rejection(error: .badRequest("`id` must be a string"), id: nil)
            }
            let id = id
            func reject(_ message: String) -> Rejection { Rejection(error: .badRequest(message), id: id) }
            switch opValue {
            case .string(let text) where isOperationName(text): op = text
            case .string(let text) where text.isEmpty: throw reject("`op` is empty")
            // A well-formed envelope naming no operation there can be: no such operation
            // (the name itself is not echoed, it may be anything).
            case .string: throw Rejection(error: .unknownOperationName, id: id)
            case nil, .null?: throw reject("`op` is missing")
            default: throw reject("`op` must be a string")
            }
            switch tokenValue {
            case nil, .null?: token = nil
            case .string(let text): token = text
            default: throw reject("`token` must be a string")
            }
            switch idemValue {
            case nil, .null?: idem = nil
            case .string(let text) where !text.isEmpty && text.utf8.count <= maxIdempotencyKeyLength: idem = text
            case .string: throw reject("`idem` must have 1 to \(maxIdempotencyKeyLength) bytes")
            default: throw reject("`idem` must be a string")
            }
        }
    }

    /// Reads one request frame with the same checks and errors as ``parse(_:)``, but
    /// builds only `id`, `op`, `token` and `idem`: the whole frame is validated as JSON
    /// and `data` must be an object, `null` or absent, yet its contents are skipped
    /// without being copied. The gateway uses this; services parse in full.
    public static func parseHead(_ frame: Data) throws(Rejection) -> Head {
        let slots: [JSONParser.Member?]?
        do {
            var ranges: [Range<Int>?] = []
            slots = try JSONParser.parseMemberSlots(of: frame, headMembers, ranges: &ranges)
        } catch {
            throw notJSON(error)
        }
        guard let slots else { throw notAnObject }
        func value(_ slot: HeadSlot) -> JSONValue? {
            if case .value(let value)? = slots[slot.rawValue] { value } else { nil }
        }
        var head = try Head(checkingID: value(.id), op: value(.op), token: value(.token), idem: value(.idem))
        if case .string(let client)? = value(.client), EdgeTrust.isPlausibleAddress(client) { head.client = client }
        switch slots[HeadSlot.data.rawValue] {
        case nil, .skipped(.object)?, .skipped(.null)?: return head
        default: throw Rejection(error: .badRequest(dataNotAnObject), id: head.id)
        }
    }

    /// The members ``parseHead(_:)`` reads, by their slot in ``headMembers``.
    private enum HeadSlot: Int {
        case id, op, token, idem, client, data
    }

    private static let headMembers = JSONParser.MemberNames(ordered: ["id", "op", "token", "idem", "client"], noting: ["data"])

    private static func notJSON(_ error: JSONParser.Failure) -> Rejection {
        Rejection(error: .badRequest("the request is not valid JSON (UTF-8): \(error.message)"), id: nil)
    }

    private static let notAnObject = Rejection(error: .badRequest("the request must be a JSON object"), id: nil)
    private static let dataNotAnObject = "`data` must be an object"

    /// Whether `text` has the form `service(.segment)+`: the service of lowercase letters,
    /// digits and `_`, the segments after it of letters (either case), digits and `_`.
    public static func isOperationName(_ text: String) -> Bool {
        guard text.utf8.count <= 128 else { return false }
        var segments = 0
        var segmentLength = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                segmentLength += 1
            // Operations after the service may be camel-cased (`stats.keyFacts`); services are not.
            case UInt8(ascii: "A")...UInt8(ascii: "Z") where segments > 0:
                segmentLength += 1
            case UInt8(ascii: "."):
                guard segmentLength > 0 else { return false }
                segments += 1
                segmentLength = 0
            default:
                return false
            }
        }
        return segmentLength > 0 && segments >= 1
    }

    /// The JSON bytes of this envelope, as a client sends them.
    public var encoded: Data {
        var members: [String: JSONValue] = ["id": .string(id), "op": .string(op), "data": data]
        if let token { members["token"] = .string(token) }
        if let idem { members["idem"] = .string(idem) }
        return JSONValue.object(members).serialized
    }
}

/// Builds and reads reply frames (CONTRACT.md, "Reply").
public enum Reply {
    /// `{"id":..., "ok":true, "data": <data>}` around already-encoded JSON data.
    public static func success(id: String?, data: Data) -> Data {
        var head: [UInt8] = []
        head.reserveCapacity(64)
        head.append(contentsOf: #"{"id":"#.utf8)
        writeID(id, to: &head)
        head.append(contentsOf: #","ok":true,"data":"#.utf8)
        // One allocation and one copy of the (possibly large) data, through one pointer:
        // Data's appends cost more than the copies.
        var output = Data(count: head.count + data.count + 1)
        output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            head.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            out[out.copy(data, at: head.count)] = UInt8(ascii: "}")
        }
        return output
    }

    /// Where `data` is in a success frame exactly as ``success(id:data:)`` writes it
    /// (`{"id":<string or null>,"ok":true,"data":` … `}`), found without parsing the data;
    /// `nil` for any other frame (an error, another layout), which a caller then parses.
    /// For a hop that passes the data on as it came (the HTTP edge).
    public static func successDataRange(of frame: Data) -> Range<Int>? {
        let literal = #","ok":true,"data":"#.utf8
        return frame.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Range<Int>? in
            let head = #"{"id":"#.utf8
            guard bytes.count >= head.count + 2 + literal.count + 2, bytes.starts(with: head), bytes[bytes.count - 1] == UInt8(ascii: "}") else { return nil }
            var index = head.count
            if bytes[index] == UInt8(ascii: "n") {
                guard bytes[index..<(index + 4)].elementsEqual("null".utf8) else { return nil }
                index += 4
            } else {
                guard bytes[index] == UInt8(ascii: "\"") else { return nil }
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count else { return nil }
                index += 1
            }
            let dataStart = index + literal.count
            guard dataStart < bytes.count - 1, bytes[index..<dataStart].elementsEqual(literal) else { return nil }
            return dataStart..<(bytes.count - 1)
        }
    }

    /// `{"id":..., "ok":false, "error": {...}}`.
    public static func failure(id: String?, error: ServiceError) -> Data {
        var output: [UInt8] = []
        output.append(contentsOf: #"{"id":"#.utf8)
        writeID(id, to: &output)
        output.append(contentsOf: #","ok":false,"error":"#.utf8)
        error.wireValue.write(to: &output)
        output.append(UInt8(ascii: "}"))
        return Data(output)
    }

    private static func writeID(_ id: String?, to output: inout [UInt8]) {
        if let id { JSONValue.writeString(id, to: &output) } else { output.append(contentsOf: "null".utf8) }
    }

    /// A reply read back by a client.
    public struct Parsed: Sendable, Equatable {
        /// The echoed request id (`nil` when the request's id could not be read).
        public var id: String?
        /// The result on success.
        public var data: JSONValue?
        /// The error on failure.
        public var error: ServiceError?
        /// Whether the reply is a success.
        public var ok: Bool { error == nil }

        /// Creates a parsed reply.
        public init(id: String?, data: JSONValue?, error: ServiceError?) {
            self.id = id
            self.data = data
            self.error = error
        }
    }

    /// Parses a reply frame.
    public static func parse(_ frame: Data) throws -> Parsed {
        let value = try JSONParser.parse(frame)
        guard case .object(let members) = value, case .bool(let ok)? = members["ok"] else {
            throw JSONParser.Failure(message: "not a reply")
        }
        let id = members["id"]?.stringValue
        if ok { return Parsed(id: id, data: members["data"] ?? .null, error: nil) }
        return Parsed(id: id, data: nil, error: ServiceError(wire: members["error"] ?? .null))
    }
}

/// A message on a ROUTER socket split into its routing envelope and body.
///
/// Every frame up to and including the first empty delimiter is the envelope and goes
/// back unchanged with the reply; exactly one body frame must follow (CONTRACT.md, "Frames").
public struct RoutedMessage: Sendable {
    /// The routing frames, ending with the empty delimiter.
    public var envelope: [Data]
    /// The request body.
    public var body: Data

    /// Why a message could not be split.
    public enum Problem: Error, Sendable {
        /// No empty delimiter: the reply goes to the first frame (the peer's identity).
        case missingDelimiter(identity: Data)
        /// More than one frame after the delimiter.
        case extraFrames(envelope: [Data])
        /// Nothing after the delimiter.
        case missingBody(envelope: [Data])
        /// More frames than any client or hop needs: answered to the first frame.
        case tooManyFrames(identity: Data, limit: Int)
    }

    /// The most frames a request may have: routing frames, the delimiter and the body
    /// (a client's own is 3; the gateway adds 3). Receivers pass `maxFrames + 1` to
    /// `ZMQSocket.receiveMultipart(dontWait:maxFrames:)` so a longer message is dropped
    /// as it is read and refused here.
    public static let maxFrames = 32

    /// The most frames the gateway takes from a client (its identity included): the hops
    /// add the gateway's tag, the client frame and the gateway's identity at the service,
    /// and the service must still see at most ``maxFrames`` (here with one to spare).
    public static let maxClientFrames = maxFrames - 4

    /// The most bytes of routing frames (all frames before the body) a request may carry.
    /// The gateway forwards a request as one frame (``PackedFrames``) that must fit the
    /// service's ``RequestLimits/maxMessageBytes``: the body's 1 MiB and this.
    public static let maxEnvelopeBytes = 8 << 10

    /// The gateway's bound on a client's routing frames, leaving room for its own.
    public static let maxClientEnvelopeBytes = 4 << 10

    /// Splits the frames a ROUTER received.
    public static func split(_ frames: [Data], maxFrames: Int = maxFrames) -> Result<RoutedMessage, Problem> {
        guard frames.count <= maxFrames else { return .failure(.tooManyFrames(identity: frames.first ?? Data(), limit: maxFrames)) }
        guard let delimiter = frames.firstIndex(where: { $0.isEmpty }) else {
            return .failure(.missingDelimiter(identity: frames.first ?? Data()))
        }
        let envelope = Array(frames[...delimiter])
        let bodyCount = frames.count - delimiter - 1
        if bodyCount == 0 { return .failure(.missingBody(envelope: envelope)) }
        if bodyCount > 1 { return .failure(.extraFrames(envelope: envelope)) }
        return .success(RoutedMessage(envelope: envelope, body: frames[delimiter + 1]))
    }

    /// The envelope to answer a message that could not be split, and why it failed.
    public static func replyEnvelope(for problem: Problem) -> (envelope: [Data], message: String) {
        switch problem {
        case .missingDelimiter(let identity):
            return ([identity, Data()], "expected an empty delimiter frame before the request")
        case .extraFrames(let envelope):
            return (envelope, "expected exactly one frame after the delimiter")
        case .missingBody(let envelope):
            return (envelope, "no request frame after the delimiter")
        case .tooManyFrames(let identity, let limit):
            return ([identity, Data()], "a request has at most \(limit) frames")
        }
    }
}

/// The first steps every receiver of requests takes, the gateway and the services alike:
/// split the routing envelope, check the size, parse the envelope.
public enum IncomingRequest {
    /// A message that cannot go further, with the envelope and error to answer it with.
    public struct Rejected: Error, Sendable {
        /// Where the reply goes.
        public let envelope: [Data]
        /// The request's id, when it could be read.
        public let id: String?
        /// The error to answer with.
        public let error: ServiceError
    }

    /// Reads the frames a ROUTER received into a routing envelope and a parsed request.
    public static func read(_ frames: [Data], maxBytes: Int) -> Result<(envelope: [Data], request: RequestEnvelope), Rejected> {
        read(
            frames, maxBytes: maxBytes, maxFrames: RoutedMessage.maxFrames, maxEnvelopeBytes: RoutedMessage.maxEnvelopeBytes,
            parse: RequestEnvelope.parse
        ).map { ($0.envelope, $0.parsed) }
    }

    /// ``read(_:maxBytes:)`` for the gateway: the same checks and errors, but the request
    /// is read with ``RequestEnvelope/parseHead(_:)``, so `data` is validated and skipped.
    /// A client's frames are bounded tighter (``RoutedMessage/maxClientFrames``,
    /// ``RoutedMessage/maxClientEnvelopeBytes``), so what the gateway forwards always fits
    /// what a service accepts.
    public static func readHead(_ frames: [Data], maxBytes: Int) -> Result<(envelope: [Data], head: RequestEnvelope.Head), Rejected> {
        read(
            frames, maxBytes: maxBytes, maxFrames: RoutedMessage.maxClientFrames, maxEnvelopeBytes: RoutedMessage.maxClientEnvelopeBytes,
            parse: RequestEnvelope.parseHead
        ).map { ($0.envelope, $0.parsed) }
    }

    private static func read<Parsed>(
        _ frames: [Data], maxBytes: Int, maxFrames: Int, maxEnvelopeBytes: Int, parse: (Data) throws(RequestEnvelope.Rejection) -> Parsed
    ) -> Result<(envelope: [Data], parsed: Parsed), Rejected> {
        let message: RoutedMessage
        switch RoutedMessage.split(frames, maxFrames: maxFrames) {
        case .failure(let problem):
            let (envelope, text) = RoutedMessage.replyEnvelope(for: problem)
            return .failure(Rejected(envelope: envelope, id: nil, error: .badRequest(text)))
        case .success(let split):
            message = split
        }
        guard message.body.count <= maxBytes else {
            return .failure(Rejected(envelope: message.envelope, id: nil, error: .payloadTooLarge(limit: maxBytes)))
        }
        let envelopeBytes = message.envelope.reduce(0) { $0 + $1.count }
        guard envelopeBytes <= maxEnvelopeBytes else {
            return .failure(
                Rejected(
                    envelope: message.envelope, id: nil,
                    error: ServiceError(.payloadTooLarge, "the routing frames take more than \(maxEnvelopeBytes) bytes")))
        }
        do {
            return .success((message.envelope, try parse(message.body)))
        } catch {
            return .failure(Rejected(envelope: message.envelope, id: error.id, error: error.error))
        }
    }
}

/// Who sent a request, as the gateway saw it.
///
/// The gateway puts one routing frame `client:<address>` after its own tag frame; the
/// service finds it in the routing envelope (`[gateway identity, tag, client frame, ...]`)
/// and gives the address to handlers for per-client limits and the audit log. Requests
/// made directly to a service (internal callers) carry none.
public enum ClientAddress {
    /// The prefix of the client frame.
    public static let framePrefix = "client:"

    /// The client address in a routing envelope, if the gateway put one there.
    public static func find(in envelope: [Data]) -> String? {
        guard envelope.count >= 4 else { return nil }
        return envelope[2].withUnsafeBytes { (frame: UnsafeRawBufferPointer) -> String? in
            guard frame.count > prefixBytes.count, prefixBytes.withUnsafeBytes({ memcmp($0.baseAddress!, frame.baseAddress!, $0.count) == 0 })
            else { return nil }
            return String(decoding: UnsafeRawBufferPointer(rebasing: frame[prefixBytes.count...]), as: UTF8.self)
        }
    }

    private static let prefixBytes = Array(framePrefix.utf8)
}

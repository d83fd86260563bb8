import Foundation
import HTTPDoor
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Platform
import ServiceLifecycle
import Synchronization
import ZeroMQ

/// What each request carries through the edge: the TCP peer, and the client address made
/// from it (``ClientAddressResolver``).
public struct EdgeRequestContext: Hummingbird.RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer's address.
    let peer: String?
    /// The loop of the connection's channel.
    let eventLoop: any EventLoop
    /// The app user's address, set by the door before any route runs.
    var clientAddress = ""

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress
        eventLoop = source.channel.eventLoop
    }

    /// Bodies are read with their own limits (``EdgeSettings``).
    public var maxUploadSize: Int { RequestLimits().maxRequestBytes }
}

/// The HTTP edge: the apps' front door (README, "HTTP edge").
///
/// `POST /v1/{op}` becomes one request to the gateway's edge socket (``EdgeTrust``) with the
/// body as `data`, the bearer token as `token`, `Idempotency-Key` as `idem` and the user's
/// address as `client`; the reply becomes 200 with its `data`, or the error's status with
/// `{"code", "message", "fields"}`. Media are served by URL, and `GET /v1/openapi.json`
/// describes it all. Every request passes the door first: the client's address, its rate
/// limit, security headers, and CORS only for configured origins.
public final class EdgeServer: Sendable {
    let settings: EdgeSettings
    let gateway: ServiceClient
    let limiter: RateLimiter
    let connections: ConnectionLimits
    let bodies: BodyBudget
    let documents: OpenAPIDocuments
    let logger: Logger
    private let requestCounter = Atomic<UInt64>(0)
    /// The security headers of an answer that is not cached (``addSecurityHeaders(to:cacheable:tls:)``).
    let securityHeaders: HTTPFields

    /// Creates the edge over a client of the gateway's edge socket.
    public init(settings: EdgeSettings, gateway: ServiceClient, documents: OpenAPIDocuments, logger: Logger) {
        self.settings = settings
        self.gateway = gateway
        self.limiter = RateLimiter(perSecond: settings.ratePerSecond, burst: settings.rateBurst)
        let resolver = settings.resolver
        connections = ConnectionLimits(
            total: settings.maxConnections, perAddress: settings.maxConnectionsPerAddress,
            exempt: { address in IPAddress(address).map(resolver.isTrusted) ?? false })
        bodies = BodyBudget(capacity: settings.bodyBudgetBytes)
        var securityHeaders = HTTPFields()
        Self.addSecurityHeaders(to: &securityHeaders, cacheable: false, tls: settings.usesTLS)
        self.securityHeaders = securityHeaders
        self.documents = documents
        self.logger = logger
    }

    /// The Hummingbird application on `eventLoopGroup`; `onRunning` hears the bound port.
    /// Run it under the preference of an ``EventLoopExecutor`` of the same group, so handlers
    /// run on the loops of their connections.
    public func application(
        eventLoopGroup: any EventLoopGroup, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let router = Router(context: EdgeRequestContext.self)
        router.add(middleware: Door(edge: self))
        // `POST /v1/{op}` never reaches the router: ``OperationCalls`` serves it in the pipeline.
        router.get("/v1/openapi.json") { _, _ in self.answer(EdgeAnswer(status: .ok, body: self.documents.current())) }
        router.get("/v1/media/:service/:id") { request, context in await self.download(request, context: context) }
        // HEAD (RFC 9110, 9.3.2): the GET's answer, whose body NIO's encoder leaves out
        // (it pairs each answer with its request's method), keeping its Content-Length.
        router.head("/v1/openapi.json") { _, _ in self.answer(EdgeAnswer(status: .ok, body: self.documents.current())) }
        router.head("/v1/media/:service/:id") { request, context in await self.download(request, context: context) }
        router.post("/v1/media/:service") { request, context in
            // A body that grew past the limit as it came (chunked): the rest is not read, and
            // the connection closes after the answer. (A request whose head already says it
            // ends the connection: ``OperationCalls/routedRequestEndsConnection(_:limits:)``.)
            var response = await self.upload(request, context: context)
            if response.status == .contentTooLarge { response.headers[.connection] = "close" }
            return response
        }
        let guardFactory: @Sendable () -> [any RemovableChannelHandler] = { [self, settings, connections] in
            HTTPDoor.handlers(
                limits: connections,
                headerTimeout: .milliseconds(Int64(settings.headerTimeout.wholeMilliseconds)),
                bodyTimeout: .milliseconds(Int64(settings.bodyTimeout.wholeMilliseconds)),
                idleTimeout: .milliseconds(Int64(settings.idleTimeout.wholeMilliseconds)))
                + [
                    MalformedRequestAnswer(tls: settings.usesTLS, bodyLimit: { [settings] uri in EdgePaths.bodyLimit(uri, settings) }) { self.requestID(HTTPFields()) },
                    OperationCalls(edge: self),
                ]
        }
        let http1 = HTTPServerBuilder.http1(configuration: .init(additionalChannelHandlers: guardFactory()))
        let server: HTTPServerBuilder
        if let certificate = settings.tlsCertificatePath, let key = settings.tlsKeyPath {
            let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
            var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            tls.minimumTLSVersion = .tlsv12
            // TLS 1.2 with forward secrecy and AEAD only (TLS 1.3's suites are all such).
            tls.cipherSuites = Self.tls12CipherSuites
            server = try .tls(http1, tlsConfiguration: tls)
        } else {
            server = http1
        }
        var httpLogger = logger
        httpLogger.logLevel = max(logger.logLevel, .notice)
        return Application(
            router: router, server: server,
            configuration: .init(address: .hostname(settings.bind.host, port: settings.bind.port), serverName: nil),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(eventLoopGroup), logger: httpLogger)
    }

    /// The TLS 1.2 cipher suites offered (OpenSSL names): ECDHE key exchange, AES-GCM or
    /// ChaCha20-Poly1305; no RSA key exchange, no CBC, no SHA-1.
    static let tls12CipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    // MARK: Operations

    /// What the head of a call (`POST /v1/{op}`, ``OperationCalls``) says, checked: the
    /// request's id, op, token, idempotency key, the client's address and the CORS origin
    /// allowed; `refusal` when it is answered without going further (the door's rate limit,
    /// an op name that cannot be one, a malformed token or key, a declared length over the
    /// limit).
    struct CallHead: Sendable {
        var id: String
        var op: String
        var token: String?
        var idem: String?
        var client: String
        var origin: String?
        var refusal: EdgeAnswer?
    }

    /// `op`: the path's (``OperationCalls/callOp(_:)``); `client`: the app user's address
    /// (``ClientAddressResolver/resolve(peer:forwardedFor:)``).
    func callHead(_ request: HTTPTypes.HTTPRequest, op: String, client: String) -> CallHead {
        let headers = request.headerFields
        var head = CallHead(id: requestID(headers), op: op, client: client, origin: allowedOrigin(headers))
        do throws(ServiceError) {
            if let wait = limiter.admit(head.client) {
                throw ServiceError.rateLimited(retryAfterMs: Int64(wait.wholeMilliseconds), "too many requests from this address")
            }
            guard RequestEnvelope.isOperationName(op) else { throw ServiceError.unknownOperationName }
            head.token = try bearerToken(headers)
            head.idem = try idempotencyKey(headers)
            if let length = headers[.contentLength], (Int(length) ?? .max) > settings.maxBodyBytes {
                throw ServiceError.payloadTooLarge(limit: settings.maxBodyBytes)
            }
            if let codings = EdgeAnswer.contentCodings(headers) {
                head.refusal = .unsupportedContentEncoding(codings)
            }
        } catch {
            head.refusal = .error(error)
        }
        return head
    }

    /// A call's answer from the gateway's reply frame. The service read the body inside the
    /// envelope, so its words about where the body is malformed (a repeated name, which the
    /// edge's check does not look for) count from the envelope's start: they are said again
    /// about the body itself.
    static func callAnswer(_ reply: Data, body: Data) -> EdgeAnswer {
        let answer = EdgeAnswer.reply(reply)
        if answer.status == .badRequest, let refined = EdgeEnvelope.bodyError(body) { return .error(refined) }
        return answer
    }

    /// Bodies and replies above this size are checked, cut and encoded on Swift's pool.
    static let largeBytes = 64 << 10

    /// Runs `work` where it is when `bytes` is small; on Swift's pool when it is larger
    /// than ``largeBytes`` (a 1 MB body checked, an image encoded: milliseconds that would
    /// hold up every other connection of the event loop).
    func onPoolIfLarge<T: Sendable>(_ bytes: Int, _ work: () throws(ServiceError) -> T) async throws(ServiceError) -> T {
        guard bytes > Self.largeBytes else { return try work() }
        let result = await withTaskExecutorPreference(globalConcurrentExecutor) { () async -> Result<T, ServiceError> in
            do throws(ServiceError) { return .success(try work()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// ``onPoolIfLarge(_:_:)`` for code that is not async: `work` runs now when `bytes` is
    /// small, on a global queue when it is larger than ``largeBytes``.
    static func offLoopIfLarge(_ bytes: Int, _ work: @escaping @Sendable () -> Void) {
        if bytes > largeBytes { DispatchQueue.global().async(execute: work) } else { work() }
    }

    /// Runs a route with the request's id (``requestID(_:)``): a thrown error becomes its
    /// HTTP answer, and every answer carries the id.
    func answering(_ request: Request, _ body: (String) async throws(ServiceError) -> Response) async -> Response {
        let id = requestID(request.headers)
        do {
            return try await body(id)
        } catch {
            return answer(EdgeAnswer.error(error), requestID: id)
        }
    }

    /// Sends one frame to the gateway and returns its reply frame. The reply is handed to
    /// the event loop this runs on, if any (``EventLoopExecutor``), so the handler resumes
    /// on its connection's loop.
    func call(_ frame: Data) async throws(ServiceError) -> Data {
        let loop = MultiThreadedEventLoopGroup.currentEventLoop
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Data, any Error>, Never>) in
            gateway.send(frame, timeout: settings.gatewayTimeout) { result in
                if let loop { loop.execute { continuation.resume(returning: result) } } else { continuation.resume(returning: result) }
            }
        }
        do {
            return try result.get()
        } catch {
            throw Self.gatewayError(error)
        }
    }

    /// What the client is told when the gateway gave no reply.
    static func gatewayError(_ error: any Error) -> ServiceError {
        if let error = error as? ClientError, error.reason == .timeout {
            return ServiceError(.timeout, "the gateway did not answer in time")
        }
        return ServiceError.unavailable("the gateway is not reachable")
    }

    /// The access token of `Authorization: Bearer <token>`; `nil` without the header, or
    /// with credentials of another scheme (a proxy's `Basic` in front of the edge is not
    /// ours to judge: a public operation goes through, any other is `unauthenticated` by
    /// its service). A malformed `Bearer` is refused here.
    func bearerToken(_ headers: HTTPFields) throws(ServiceError) -> String? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.first?.lowercased() == "bearer" || headers[values: .authorization].count > 1 else { return nil }
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty, parts[1].utf8.count <= 4_096 else {
            throw ServiceError.unauthenticated("send the access token as `Authorization: Bearer <token>`")
        }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    func idempotencyKey(_ headers: HTTPFields) throws(ServiceError) -> String? {
        let values = headers[values: .idempotencyKey]
        guard let key = values.first else { return nil }
        // One header, of visible ASCII: keys that differ only in bytes a header cannot carry
        // as text must not collide.
        guard values.count == 1, key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw ServiceError.badRequest("send one Idempotency-Key of visible ASCII characters")
        }
        guard !key.isEmpty, key.utf8.count <= RequestEnvelope.maxIdempotencyKeyLength else {
            throw ServiceError.badRequest("Idempotency-Key must have 1 to \(RequestEnvelope.maxIdempotencyKeyLength) bytes")
        }
        return key
    }

    /// The client's `X-Request-Id` when it is usable (1 to 128 visible ASCII characters),
    /// or a new one; sent to the gateway as the envelope's `id` and back as a header.
    func requestID(_ headers: HTTPFields) -> String {
        if let given = headers[.requestID], !given.isEmpty, given.utf8.count <= RequestEnvelope.maxIDLength,
            given.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        {
            return given
        }
        return "edge-\(requestCounter.add(1, ordering: .relaxed).newValue)"
    }

    /// Reads the whole body, refusing more than `limit` bytes with `payload_too_large`,
    /// taking its bytes from the edge's ``HTTPDoor/BodyBudget`` as they arrive (`held`: what
    /// the caller gives back once the request is answered).
    func collect(_ request: Request, limit: Int, held: inout Int) async throws(ServiceError) -> Data {
        if let length = request.headers[.contentLength], (Int(length) ?? .max) > limit {
            throw ServiceError.payloadTooLarge(limit: limit)
        }
        // Read here rather than with `collect(upTo:)`, so a chunked body over the limit is
        // told `payload_too_large` like one announced by its Content-Length.
        var body = Data()
        do {
            for try await buffer in request.body {
                guard body.count + buffer.readableBytes <= limit else { throw ServiceError.payloadTooLarge(limit: limit) }
                guard bodies.take(buffer.readableBytes) else {
                    throw ServiceError.unavailable("the edge holds as many request bodies as it may at once: try again in a moment")
                }
                held += buffer.readableBytes
                body.append(contentsOf: buffer.readableBytesView)
            }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError.badRequest("the body could not be read")
        }
        return body
    }

    // MARK: Media

    func download(_ request: Request, context: EdgeRequestContext) async -> Response {
        await answering(request) { id throws(ServiceError) in
            let service = try mediaService(context)
            let imageID = context.parameters.get("id") ?? ""
            let token = try bearerToken(request.headers)
            let data = JSONValue.object(["id": .string(imageID)]).serialized
            let frame = EdgeEnvelope.encode(id: id, op: "\(service).media.get", token: token, idem: nil, client: context.clientAddress, data: data)
            let reply = try await call(frame)
            let (content, contentType, sha256) = try await onPoolIfLarge(reply.count) { () throws(ServiceError) in
                guard let parsed = try? Reply.parse(reply) else { throw ServiceError(.internal, "the gateway sent a reply the edge cannot read") }
                if let error = parsed.error { throw error }
                guard case .string(let base64)? = parsed.data?["content"], case .string(let contentType)? = parsed.data?["contentType"],
                    case .string(let sha256)? = parsed.data?["sha256"], let content = Data(base64Encoded: base64)
                else { throw ServiceError(.internal, "the media store sent an image the edge cannot read") }
                return (content, contentType, sha256)
            }
            let etag = "\"\(sha256)\""
            var headers: HTTPFields = [.eTag: etag, .requestID: id]
            // Content-addressed: what an id names never changes. Images read with a token
            // stay in the user's own cache.
            headers[.cacheControl] = "\(token == nil ? "public" : "private"), max-age=31536000, immutable"
            if let match = request.headers[.ifNoneMatch], Self.matches(match, etag: etag) {
                return decorate(Response(status: .notModified, headers: headers), cacheable: true)
            }
            headers[.contentType] = contentType
            return decorate(Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: content))), cacheable: true)
        }
    }

    func upload(_ request: Request, context: EdgeRequestContext) async -> Response {
        await answering(request) { id throws(ServiceError) in
            let service = try mediaService(context)
            let token = try bearerToken(request.headers)
            let idem = try idempotencyKey(request.headers)
            if let codings = EdgeAnswer.contentCodings(request.headers) {
                return answer(.unsupportedContentEncoding(codings), requestID: id)
            }
            let declared = request.headers[.contentType].map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            guard OpenAPIDocument.imageTypes.contains(declared) else {
                throw ServiceError.invalid("Content-Type", "send the image as image/png, image/jpeg or image/webp")
            }
            var held = 0
            defer { bodies.give(held) }
            let content: Data
            do throws(ServiceError) {
                content = try await collect(request, limit: settings.maxMediaBytes, held: &held)
            } catch {
                guard error.code == .payloadTooLarge else { throw error }
                // As the media store says it: on the image's field, with the limit.
                var limits = MediaLimits()
                limits.maxBytes = settings.maxMediaBytes
                throw limits.tooLarge
            }
            let client = context.clientAddress
            let frame = try await onPoolIfLarge(content.count) { () throws(ServiceError) in
                if let header = try? ImageHeader.read(content, limits: MediaLimits()), header.contentType != declared {
                    throw ServiceError.invalid("Content-Type", "the body is \(header.contentType), not \(declared)")
                }
                let data = JSONValue.object(["content": .string(content.base64EncodedString())]).serialized
                return EdgeEnvelope.encode(id: id, op: "\(service).media.put", token: token, idem: idem, client: client, data: data)
            }
            return answer(EdgeAnswer.reply(try await call(frame)), requestID: id)
        }
    }

    /// The service of a media path, when it has a media store: one of ours that, once
    /// described, lists `<service>.media.get` (before that, the gateway's answer decides).
    func mediaService(_ context: EdgeRequestContext) throws(ServiceError) -> String {
        let service = context.parameters.get("service") ?? ""
        guard PlatformConfiguration.serviceNames.contains(service), documents.mightOfferMedia(service) else {
            throw ServiceError.notFound("no media store named \(service)")
        }
        return service
    }

    /// Whether an `If-None-Match` value names `etag` (or is `*`); weak tags compare equal.
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    // MARK: Answers

    func answer(_ answer: EdgeAnswer, requestID: String? = nil) -> Response {
        Response(status: answer.status, headers: responseHeaders(answer, requestID: requestID), body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
    }

    /// The headers of an answer that is not cached: its own, the request's id, its content
    /// type and the security headers.
    func responseHeaders(_ answer: EdgeAnswer, requestID: String?) -> HTTPFields {
        // Appended to a copy of the security headers rather than set one by one (each set
        // looks for the name among those before it): none of the answer's own headers
        // (Retry-After, X-Error-Ref, X-Error-Reason, WWW-Authenticate) is among them.
        var headers = securityHeaders
        headers.append(contentsOf: answer.headers)
        if let requestID { headers.append(HTTPField(name: .requestID, value: requestID)) }
        headers.append(HTTPField(name: .contentType, value: answer.contentType))
        return headers
    }

    /// The request's `Origin` when CORS is on for it.
    func allowedOrigin(_ headers: HTTPFields) -> String? {
        headers[.origin].flatMap { settings.corsOrigins.contains($0) ? $0 : nil }
    }

    /// The CORS headers of an answer to a request from `origin` (``allowedOrigin(_:)``).
    func addCORS(to headers: inout HTTPFields, origin: String?) {
        // With CORS on, every answer may differ by Origin, also one without CORS headers:
        // a shared cache must not give an answer made for no origin to an allowed one.
        if !settings.corsOrigins.isEmpty { headers[.vary] = "Origin" }
        guard let origin else { return }
        headers[.accessControlAllowOrigin] = origin
        headers[.accessControlExposeHeaders] = "ETag, Retry-After, X-Request-Id, X-Error-Ref, X-Error-Reason"
    }

    /// Adds the security headers every answer carries.
    func decorate(_ response: Response, cacheable: Bool) -> Response {
        var response = response
        Self.addSecurityHeaders(to: &response.headers, cacheable: cacheable, tls: settings.usesTLS)
        return response
    }

    static func addSecurityHeaders(to headers: inout HTTPFields, cacheable: Bool, tls: Bool) {
        headers[.xContentTypeOptions] = "nosniff"
        headers[.xFrameOptions] = "DENY"
        headers[.contentSecurityPolicy] = "default-src 'none'; frame-ancestors 'none'"
        headers[.referrerPolicy] = "no-referrer"
        if !cacheable { headers[.cacheControl] = "no-store" }
        if tls { headers[.strictTransportSecurity] = "max-age=63072000" }
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let strictTransportSecurity = HTTPField.Name("Strict-Transport-Security")!
    static let accessControlAllowOrigin = HTTPField.Name("Access-Control-Allow-Origin")!
    static let accessControlAllowMethods = HTTPField.Name("Access-Control-Allow-Methods")!
    static let accessControlAllowHeaders = HTTPField.Name("Access-Control-Allow-Headers")!
    static let accessControlExposeHeaders = HTTPField.Name("Access-Control-Expose-Headers")!
    static let accessControlMaxAge = HTTPField.Name("Access-Control-Max-Age")!
    static let allow = HTTPField.Name("Allow")!
    static let acceptEncoding = HTTPField.Name("Accept-Encoding")!
}

/// The edge's paths and the methods each serves, for the `Allow` of a 405.
enum EdgePaths {
    /// A path's segments as the router reads them: the query left out, empty ones skipped.
    static func segments(_ path: String) -> [Substring] {
        path.prefix { $0 != "?" }.split(separator: "/")
    }

    /// The methods served at `path` (``segments(_:)``); empty for a path the edge does not
    /// serve at all.
    static func methods(at path: String) -> [HTTPTypes.HTTPRequest.Method] {
        let segments = segments(path)
        guard segments.first == "v1" else { return [] }
        switch segments.count {
        case 2 where segments[1] == "openapi.json": return [.get, .head]
        case 2 where RequestEnvelope.isOperationName(String(segments[1])): return [.post]
        case 3 where segments[1] == "media": return [.post]
        case 4 where segments[1] == "media": return [.get, .head]
        default: return []
        }
    }

    /// A path as an answer's message names it: at most 200 characters (a 20 KB path is not
    /// sent back whole).
    static func shown(_ path: String) -> String {
        path.count <= 200 ? path : String(path.prefix(200)) + "…"
    }

    /// The largest body a request to `uri` may send: an image's to a media path (what
    /// ``EdgeServer/upload(_:context:)`` takes), a call's to any other.
    static func bodyLimit(_ uri: String, _ settings: EdgeSettings) -> Int {
        let segments = segments(uri)
        return segments.count >= 3 && segments[0] == "v1" && segments[1] == "media" ? settings.maxMediaBytes : settings.maxBodyBytes
    }
}

/// The door every request passes: the client's address, its rate limit, answers for paths
/// that do not exist, and CORS for configured origins only.
struct Door: RouterMiddleware {
    typealias Context = EdgeRequestContext
    let edge: EdgeServer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A connection's task starts on the loop that accepted it; its request is handled
        // on the loop of its channel, where its answer is written (``EventLoopExecutor``).
        if !context.eventLoop.inEventLoop { try? await context.eventLoop.submit {}.get() }
        var context = context
        context.clientAddress = edge.settings.resolver.resolve(peer: context.peer, forwardedFor: request.headers[values: .forwardedFor])
        let origin = edge.allowedOrigin(request.headers)
        if let wait = edge.limiter.admit(context.clientAddress) {
            return cors(
                edge.answer(EdgeAnswer.error(.rateLimited(retryAfterMs: Int64(wait.wholeMilliseconds), "too many requests from this address")), requestID: edge.requestID(request.headers)),
                origin)
        }
        if request.method == .options, let origin {
            var response = Response(status: .noContent)
            response.headers[.accessControlAllowMethods] = "GET, POST"
            response.headers[.accessControlAllowHeaders] = "Authorization, Content-Type, Idempotency-Key, X-Request-Id, If-None-Match"
            response.headers[.accessControlMaxAge] = "600"
            response.headers[.requestID] = edge.requestID(request.headers)
            return cors(edge.decorate(response, cacheable: false), origin)
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            // Hummingbird's own refusals (no such route, a bad request line) in the
            // contract's form.
            let allowed = EdgePaths.methods(at: request.uri.path)
            if error.status == .notFound || error.status == .methodNotAllowed, !allowed.isEmpty {
                // A path served with other methods (RFC 9110, 15.5.6): 405 naming them.
                response = edge.answer(EdgeAnswer.methodNotAllowed(request.method, path: EdgePaths.shown(request.uri.path), allowed: allowed))
            } else {
                let serviceError: ServiceError =
                    switch error.status {
                    case .notFound, .methodNotAllowed: .notFound("no such path: \(request.method) \(EdgePaths.shown(request.uri.path))")
                    case .contentTooLarge: .payloadTooLarge(limit: edge.settings.maxBodyBytes)
                    default: .badRequest("the request could not be read")
                    }
                response = edge.answer(EdgeAnswer.error(serviceError))
            }
        }
        // Every answer carries the request's id, the door's own and a missing path's too.
        if response.headers[.requestID] == nil { response.headers[.requestID] = edge.requestID(request.headers) }
        return cors(response, origin)
    }

    private func cors(_ response: Response, _ origin: String?) -> Response {
        var response = response
        edge.addCORS(to: &response.headers, origin: origin)
        return response
    }
}

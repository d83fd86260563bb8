import Foundation
import HTTPTypes
import HTTPDoor
import Hummingbird
import Logging
import Mustache
import NIOCore
import Platform

/// The panel's settings (README, "Admin panel").
public struct AdminSettings: Sendable {
    public var bind: HostAndPort
    /// Whether cookies get `Secure`: the panel is reached over HTTPS (through a TLS proxy
    /// named by `BACKEND_ADMIN_PUBLIC_URL`).
    public var secureCookies: Bool
    /// The largest form accepted (an image of 512 KiB in a multipart body, and some).
    public var maxBodyBytes = 1_000_000

    public init(configuration: PlatformConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        bind = try HostAndPort(configuration.adminBind, name: "BACKEND_ADMIN_BIND")
        secureCookies = (environment["BACKEND_ADMIN_PUBLIC_URL"] ?? "").lowercased().hasPrefix("https://")
    }
}

/// What each request carries: the TCP peer's address.
public struct AdminRequestContext: Hummingbird.RequestContext {
    public var coreContext: CoreRequestContextStorage
    let peer: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    public var maxUploadSize: Int { 1_000_000 }
}

/// One request as the pages see it: who asks (a live session with a fresh token), from
/// where, what they sent.
struct Visit: Sendable {
    var session: AdminSession
    var path: String
    var query: [String: String]
    var clientAddress: String

    var format: Formatting {
        Formatting(locale: session.locale, zone: TimeZone(identifier: session.timeZone) ?? TimeZone(identifier: "UTC")!)
    }
    func query(_ name: String) -> String? { query[name].flatMap { $0.isEmpty ? nil : $0 } }
}

/// What a page handler answers.
enum PageResult: Sendable {
    case page(title: String, blocks: [Block])
    case redirect(String)
    case failure(ServiceError)
}

extension Block: @unchecked Sendable {}

/// The admin panel: a web application for administrators and the park's staff
/// (README, "Admin panel"). It calls the services through the gateway with the signed-in
/// person's token and never touches a database.
public final class AdminPanel: Sendable {
    let settings: AdminSettings
    let gateway: GatewayLink
    let sessions: SessionStore
    let renderer: Renderer
    let logger: Logger
    let forms: [String: AdminForm]
    /// Signs the sign-in form's tokens, so only tokens this panel issued pass (a cookie
    /// planted by someone else does not); new at every start.
    let loginKey = Digest.randomBytes(32)
    static let cookieName = "admin_session"
    static let loginCookieName = "admin_login"

    public init(settings: AdminSettings, gateway: GatewayLink, sessions: SessionStore = SessionStore(), logger: Logger) throws {
        self.settings = settings
        self.gateway = gateway
        self.sessions = sessions
        self.renderer = Renderer(library: try Templates.library())
        self.logger = logger
        self.forms = Dictionary(uniqueKeysWithValues: FormCatalog.all.map { ($0.id, $0) })
    }

    /// The Hummingbird application; `onRunning` hears the bound port.
    public func application(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router(context: AdminRequestContext.self)
        router.add(middleware: SecurityHeaders(secure: settings.secureCookies))
        router.get("/assets/admin.css") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "max-age=3600"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: Templates.css)))
        }
        router.get("/login") { request, context in self.loginPage(request, context: context) }
        router.post("/login") { request, context in await self.login(request, context: context) }
        router.post("/logout") { request, context in await self.logout(request, context: context) }
        router.get("/media/:service/:id") { request, context in await self.media(request, context: context) }
        router.post("/act/:form") { request, context in await self.act(request, context: context) }
        for route in PageCatalog.routes {
            router.get(RouterPath(route.path)) { request, context in await self.page(route, request: request, context: context) }
        }
        var httpLogger = logger
        httpLogger.logLevel = max(logger.logLevel, .notice)
        // Staff use a handful of browsers: a few hundred connections, 64 from one address.
        let limits = ConnectionLimits(total: 512, perAddress: 64)
        return Application(
            router: router, server: .http1(configuration: .init(additionalChannelHandlers: HTTPDoor.handlers(limits: limits))),
            configuration: .init(address: .hostname(settings.bind.host, port: settings.bind.port), serverName: nil),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: httpLogger)
    }

    // MARK: Sessions

    /// The request's live session with a token good for the next calls, or `nil`.
    func currentSession(_ request: Request) async -> AdminSession? {
        guard let id = request.cookies[Self.cookieName]?.value, id.count == 64, let session = sessions.session(id: id) else { return nil }
        let fresh = await sessions.fresh(session) { refreshToken in
            guard case .success(let answer) = await self.gateway.call("auth.refresh", ["refreshToken": .string(refreshToken)]) else { return nil }
            return SessionStore.Tokens(answer)
        }
        guard let fresh else { return nil }
        return await sessions.confirmed(fresh) { token in
            if case .failure(let error) = await self.gateway.call("auth.profile.get", token: token), error.code == .unauthenticated { return false }
            return true
        }
    }

    func sessionCookie(_ value: String, maxAge: Int) -> String {
        "\(Self.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(settings.secureCookies ? "; Secure" : "")"
    }

    func loginCookie(_ value: String, maxAge: Int) -> String {
        "\(Self.loginCookieName)=\(value); Path=/login; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(settings.secureCookies ? "; Secure" : "")"
    }

    /// A sign-in token: a random nonce and its HMAC under ``loginKey``.
    func loginToken() -> String {
        let nonce = SessionStore.randomToken()
        return nonce + "." + Digest.hex(Digest.hmacSHA256(key: loginKey, message: Array(nonce.utf8)))
    }

    /// Whether a sign-in token is one this panel issued.
    func isIssued(_ token: String) -> Bool {
        let parts = token.split(separator: ".")
        guard parts.count == 2, parts[0].count == 64 else { return false }
        return Self.same(String(parts[1]), Digest.hex(Digest.hmacSHA256(key: loginKey, message: Array(parts[0].utf8))))
    }

    func loginPage(_ request: Request, context: AdminRequestContext, error: String? = nil, email: String = "", status: HTTPResponse.Status = .ok) -> Response {
        let token = loginToken()
        let next = Self.localPath(request.uri.queryParameters["next"].map(String.init)) ?? "/"
        let body = renderer.login(error: error, email: email, next: next, loginToken: token)
        var response = html(renderer.layout(title: "Sign in", body: body, session: nil, nav: [], current: "/login", flash: nil), status: status)
        response.headers[values: .setCookie].append(loginCookie(token, maxAge: 3_600))
        return response
    }

    func login(_ request: Request, context: AdminRequestContext) async -> Response {
        guard let form = try? await FormBody.read(request, limit: 16_384) else {
            return loginPage(request, context: context, error: "The form could not be read; try again.", status: .badRequest)
        }
        let email = form.values["email"] ?? ""
        // Login CSRF: the token in the form must be the one this browser got as a cookie.
        guard let cookie = request.cookies[Self.loginCookieName]?.value, let posted = form.values["_csrf"], Self.same(cookie, posted),
            isIssued(posted)
        else {
            return loginPage(request, context: context, error: "The sign-in form expired; please sign in again.", email: email, status: .forbidden)
        }
        let answer = await gateway.call(
            "auth.login", ["email": .string(email), "password": .string(form.values["password"] ?? "")], client: context.peer)
        switch answer {
        case .failure(let error):
            let text = error.code == .rateLimited
                ? "Too many attempts; try again later."
                : error.code == .unavailable ? "The backend is not reachable; try again in a moment."
                : error.code == .validationFailed ? "Enter your email and password." : error.message
            return loginPage(request, context: context, error: text, email: email, status: error.code == .rateLimited ? .tooManyRequests : .unauthorized)
        case .success(let tokens):
            let roles = Set((tokens["user"]?["roles"]?.arrayValue ?? []).compactMap(\.stringValue))
            guard let parsed = SessionStore.Tokens(tokens), let userID = tokens["user"]?["id"]?.stringValue else {
                return loginPage(request, context: context, error: "The backend answered in a way the panel cannot read.", email: email, status: .badGateway)
            }
            guard PanelRole.of(roles) != nil else {
                _ = await gateway.call("auth.logout", token: parsed.access, client: context.peer)
                return loginPage(
                    request, context: context, error: "This account is neither an administrator nor park staff.", email: email, status: .forbidden)
            }
            let profile = (try? await gateway.call("auth.profile.get", token: parsed.access, client: context.peer).get()) ?? [:]
            let name = [profile["firstName"]?.stringValue, profile["lastName"]?.stringValue].compactMap { $0 }.joined(separator: " ")
            let locale = profile["locale"]?.stringValue ?? Self.browserLocale(request) ?? "en"
            var session = sessions.create(userID: userID, name: name.isEmpty ? email : name, roles: roles, locale: locale, tokens: parsed)
            if let zone = profile["timeZone"]?.stringValue, TimeZone(identifier: zone) != nil {
                sessions.update(session.id) { $0.timeZone = zone }
                session.timeZone = zone
            }
            logger.info("signed in", metadata: ["user": "\(userID)", "role": "\(session.role.rawValue)"])
            let next = Self.localPath(form.values["next"]) ?? "/"
            var response = redirect(next == "/login" ? "/" : next)
            response.headers[values: .setCookie].append(sessionCookie(session.id, maxAge: Int(sessions.absoluteTimeout)))
            response.headers[values: .setCookie].append(loginCookie("", maxAge: 0))
            return response
        }
    }

    func logout(_ request: Request, context: AdminRequestContext) async -> Response {
        if let id = request.cookies[Self.cookieName]?.value, let session = sessions.session(id: id) {
            // Without the session's token nothing happens: the page says so, and the
            // session (and the cookie) stay as they are rather than seeming to end.
            guard let form = try? await FormBody.read(request, limit: 16_384), Self.same(form.values["_csrf"] ?? "", session.csrf) else {
                return html(
                    renderer.layout(
                        title: "Not signed out", body: renderer.message("Use the Sign out button of the panel's own pages.", link: ("Back", "/")),
                        session: session, nav: PageCatalog.nav(for: session.role), current: "", flash: nil), status: .forbidden)
            }
            _ = await gateway.call("auth.logout", token: session.accessToken, client: context.peer)
            sessions.remove(id)
        }
        var response = redirect("/login")
        response.headers[values: .setCookie].append(sessionCookie("", maxAge: 0))
        return response
    }

    // MARK: Pages

    func page(_ route: PageRoute, request: Request, context: AdminRequestContext) async -> Response {
        guard let session = await currentSession(request) else {
            // Back to the page asked for, its query included, after signing in.
            let asked = request.uri.path + (request.uri.query.map { "?\($0)" } ?? "")
            return redirect("/login?next=\(asked.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-_."))) ?? "/")")
        }
        guard session.role.allows(route.role) else {
            return html(
                renderer.layout(
                    title: "Not allowed", body: renderer.message("This page is for administrators.", link: ("Go to the desk", "/desk")),
                    session: session, nav: PageCatalog.nav(for: session.role), current: "", flash: nil), status: .forbidden)
        }
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        for name in route.parameters { parameters[":" + name] = context.parameters.get(name) }
        let visit = Visit(session: session, path: request.uri.path, query: parameters, clientAddress: context.peer)
        let result = await route.handler(PageKit(panel: self, visit: visit))
        return respond(result, session: session, current: route.path)
    }

    func respond(_ result: PageResult, session: AdminSession, current: String, status: HTTPResponse.Status = .ok) -> Response {
        switch result {
        case .redirect(let path): return redirect(path)
        case .page(let title, let blocks):
            let flash = sessions.takeFlash(session.id)
            return html(
                renderer.layout(
                    title: title, body: renderer.blocks(blocks), session: session, nav: PageCatalog.nav(for: session.role), current: current,
                    flash: flash), status: status)
        case .failure(let error):
            if error.code == .unauthenticated {
                sessions.remove(session.id)
                return redirect("/login")
            }
            let status: HTTPResponse.Status =
                switch error.code {
                case .notFound: .notFound
                case .forbidden: .forbidden
                case .validationFailed, .badRequest: .badRequest
                case .rateLimited: .tooManyRequests
                default: .badGateway
                }
            return html(
                renderer.layout(
                    title: error.code == .notFound ? "Not found" : "Something went wrong", body: renderer.message(Self.explain(error)),
                    session: session, nav: PageCatalog.nav(for: session.role), current: current, flash: nil), status: status)
        }
    }

    /// A service's error as a sentence for people (never a stack trace: services send none).
    static func explain(_ error: ServiceError) -> String {
        switch error.code {
        case .unavailable, .timeout: "The backend is not reachable right now; try again in a moment."
        case .notFound: "Not found: it may have been deleted. \(error.message)"
        case .forbidden: "Not allowed: \(error.message)"
        case .rateLimited: "Too many requests; wait a little and try again."
        case .internal: "The service failed (reference \(error.details["ref"]?.stringValue ?? "—")); try again, or tell the operators."
        default: error.message.prefix(1).uppercased() + error.message.dropFirst()
        }
    }

    // MARK: Media

    func media(_ request: Request, context: AdminRequestContext) async -> Response {
        guard let session = await currentSession(request) else { return Response(status: .unauthorized) }
        let service = context.parameters.get("service") ?? ""
        let id = context.parameters.get("id") ?? ""
        guard ["goals", "booking", "savings", "stats", "reminders"].contains(service), id.count <= 100 else { return Response(status: .notFound) }
        guard case .success(let answer) = await gateway.call("\(service).media.get", ["id": .string(id)], token: session.accessToken, client: context.peer),
            let content = answer["content"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
            let type = answer["contentType"]?.stringValue, ["image/png", "image/jpeg", "image/webp"].contains(type)
        else { return Response(status: .notFound) }
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "private, max-age=600"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: content)))
    }

    // MARK: Helpers

    func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func redirect(_ path: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = path
        return Response(status: .seeOther, headers: headers)
    }

    /// A path on this site (`/users?page=2`), never another site (`//evil.example`, `/\evil`).
    static func localPath(_ text: String?) -> String? {
        guard let text, text.hasPrefix("/"), !text.hasPrefix("//"), !text.contains("\\"), text.count < 2_000,
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return nil }
        return text
    }

    static func same(_ lhs: String, _ rhs: String) -> Bool { Digest.constantTimeEqual(Array(lhs.utf8), Array(rhs.utf8)) }

    /// The first language of `Accept-Language` (`ru-RU,ru;q=0.9` → `ru-RU`).
    static func browserLocale(_ request: Request) -> String? {
        guard let header = request.headers[.acceptLanguage] else { return nil }
        let first = header.split(separator: ",").first.map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces) } ?? ""
        guard first.count >= 2, first.count <= 35, first.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else { return nil }
        return first
    }
}

/// Security headers on every answer: no framing, no sniffing, no scripts at all, forms
/// only to this panel, nothing cached (pages hold personal data).
struct SecurityHeaders: RouterMiddleware {
    typealias Context = AdminRequestContext
    let secure: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A form posted from another site is refused before any handler runs (the session
        // cookie is SameSite=Strict and every form carries a token too).
        if request.method == .post {
            if request.headers[HTTPField.Name("Sec-Fetch-Site")!] == "cross-site" { return Response(status: .forbidden) }
            if let origin = request.headers[.origin], let host = request.head.authority,
                origin != "http://\(host)", origin != "https://\(host)"
            {
                return Response(status: .forbidden)
            }
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = Response(status: error.status)
        }
        response.headers[.contentSecurityPolicy] =
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        if secure { response.headers[.strictTransportSecurity] = "max-age=31536000" }
        return response
    }
}

extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}

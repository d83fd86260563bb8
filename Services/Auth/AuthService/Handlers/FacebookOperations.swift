import Foundation
import GRDB
import Platform

/// Facebook sign-in (goals app): the app's Facebook access token is checked with the
/// Graph API (`debug_token` with the app token, then `/me?fields=id,name,email`) at a
/// configurable base URL, then linked to the account with the same email or a new one.
struct FacebookOperations: Sendable {
    let issuer: SessionIssuer
    let settings: AuthSettings

    var all: [ServiceOperation] { [login] }

    struct Login: Codable, Sendable {
        var accessToken: String
    }

    /// What the Graph API says about a user token.
    struct GraphUser: Sendable, Equatable {
        var id: String
        var name: String
        var email: String?
    }

    var login: ServiceOperation {
        let (issuer, settings) = (self.issuer, self.settings)
        return .task(
            "auth.facebook.login",
            summary: "Signs in with a Facebook user access token: verified with the Graph API, linked to the account with the same email, or a new account. Ignores idem.",
            auth: .public, request: .object(["accessToken": .string(minLength: 1, maxLength: 4_096)], required: ["accessToken"]),
            response: AuthSchemas.tokens
        ) { (context, input: Login) in
            guard let appID = settings.facebookAppID, let appSecret = settings.facebookAppSecret else {
                throw ServiceError.unavailable("Facebook sign-in is not configured")
            }
            let user: GraphUser
            do {
                user = try await Self.verify(
                    token: input.accessToken, graph: settings.facebookGraphURL, appID: appID, appSecret: appSecret, logger: context)
            } catch let error as ServiceError where error.code == .unauthenticated {
                try await context.write { db in
                    try AuditLog.record(db, .signInFailed, user: nil, detail: ["method": "facebook"], client: context.clientAddress)
                }
                throw error
            }
            return try await context.write { db -> IssuedTokens in
                let userID: String
                if let linked = try String.fetchOne(db, sql: "SELECT id FROM user WHERE facebook_id = ?", arguments: [user.id]) {
                    userID = linked
                } else if let email = user.email.map(Identifiers.email),
                    let existing = try Row.fetchOne(db, sql: "SELECT id, email_verified FROM user WHERE email = ?", arguments: [email])
                {
                    // Facebook only returns confirmed emails, so its user owns this address.
                    // If the account never proved it owns the address, someone else may
                    // have registered it: their password and sessions end here.
                    let existingID: String = existing["id"]
                    if !(existing["email_verified"] as Bool) {
                        try db.execute(sql: "UPDATE user SET password_hash = NULL WHERE id = ?", arguments: [existingID])
                        try issuer.revoke(db, sessions: try SessionIssuer.live(db, userID: existingID), userID: existingID, reason: "email_claimed")
                    }
                    try db.execute(
                        sql: "UPDATE user SET facebook_id = ?, email_verified = 1 WHERE id = ?", arguments: [user.id, existingID])
                    try AuditLog.record(
                        db, .facebookLinked, user: existingID, detail: ["passwordCleared": .bool(!(existing["email_verified"] as Bool))],
                        client: context.clientAddress)
                    userID = existingID
                } else {
                    let parts = user.name.split(separator: " ", maxSplits: 1).map(String.init)
                    userID = try Accounts.create(
                        db, email: user.email.map(Identifiers.email), phone: nil, passwordHash: nil,
                        firstName: String((parts.first ?? "").prefix(100)), lastName: String((parts.count > 1 ? parts[1] : "").prefix(100)),
                        patronymic: nil, birthDate: nil, termsVersion: nil, method: "facebook", client: context.clientAddress)
                    try db.execute(
                        sql: "UPDATE user SET facebook_id = ?, email_verified = ? WHERE id = ?", arguments: [user.id, user.email != nil, userID])
                }
                try AuditLog.record(db, .signInSucceeded, user: userID, detail: ["method": "facebook"], client: context.clientAddress)
                return try issuer.open(db, userID: userID)
            }
        }.ignoringIdem()
    }

    /// Checks the token with the Graph API and reads the user.
    static func verify(token: String, graph: String, appID: String, appSecret: String, logger context: RequestContext) async throws -> GraphUser {
        let base = graph.hasSuffix("/") ? String(graph.dropLast()) : graph
        let debug: JSONValue
        do {
            let response = try await Curl.send(
                HTTPRequest(url: "\(base)/debug_token?input_token=\(escape(token))&access_token=\(escape(appID + "|" + appSecret))"))
            debug = try JSONParser.parse(response.body)
        } catch {
            context.logger.warning("Graph API debug_token failed", metadata: ["error": "\(error)"])
            throw ServiceError.unavailable("Facebook could not be reached; try again")
        }
        guard debug["data"]?["is_valid"] == true, debug["data"]?["app_id"]?.stringValue == appID,
            case .string(let tokenUser)? = debug["data"]?["user_id"]
        else { throw ServiceError.unauthenticated("the Facebook token is not valid for this app") }
        let me: JSONValue
        let status: Int
        do {
            let response = try await Curl.send(HTTPRequest(url: "\(base)/me?fields=id,name,email&access_token=\(escape(token))"))
            status = response.status
            me = try JSONParser.parse(response.body)
        } catch {
            context.logger.warning("Graph API /me failed", metadata: ["error": "\(error)"])
            throw ServiceError.unavailable("Facebook could not be reached; try again")
        }
        guard status == 200, case .string(let id)? = me["id"], id == tokenUser else {
            throw ServiceError.unauthenticated("the Facebook token is not valid for this app")
        }
        return GraphUser(id: id, name: me["name"]?.stringValue ?? "", email: me["email"]?.stringValue)
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }
}

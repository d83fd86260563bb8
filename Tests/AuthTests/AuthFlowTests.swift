import Foundation
import Logging
import Platform
import SharedTesting
import Testing

@testable import AuthService

/// Auth's flows: the journey (register, sign in, administration, keys) through the gateway
/// over real processes; the other scenarios against auth run in process, with the tokens
/// it issues (auth verifies its own, so no test tokens here).
@Suite("Auth flows")
struct AuthFlowTests {
    /// Fast hashing and a small proof of work keep the suite quick; both are still real.
    static let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "10", "BACKEND_AUTH_POW_DIFFICULTY": "6"]

    static func withAuth<T>(_ body: (TestStack) async throws -> T) async throws -> T {
        try await TestStack.with(services: ["auth"], extraEnvironment: environment, body)
    }

    /// Auth in process with the settings of ``environment``.
    static func inProcess<T>(
        configuration: PlatformConfiguration? = nil, settings adjust: (inout AuthSettings) -> Void = { _ in },
        _ body: (InProcessService) async throws -> T
    ) async throws -> T {
        var settings = AuthSettings()
        settings.scryptLogN = 10
        settings.proofOfWorkDifficulty = 6
        // The hashing threads and their queue are the test process's, shared by every
        // auth started in it at once: the per-process bound would refuse one test for
        // another's hashes (the bound itself is tested over real processes).
        settings.hashQueue = 1_000
        adjust(&settings)
        let auth = try await InProcessService(configuration: configuration, verifier: nil) { [settings] configuration in
            AuthService.definition(settings: settings, dataDirectory: configuration.dataDirectoryURL)
        }
        do {
            let result = try await body(auth)
            await auth.stop()
            return result
        } catch {
            await auth.stop()
            throw error
        }
    }

    /// A solved challenge, as an app computes it.
    static func solvedChallenge(_ stack: TestStack) async throws -> JSONValue {
        try await AuthFixtures.solvedChallenge(stack.client)
    }

    /// A solved challenge from auth in process.
    static func solvedChallenge(_ auth: InProcessService) async throws -> JSONValue {
        try await AuthFixtures.solvedChallenge(auth.client)
    }

    static func registration(_ email: String, challenge: JSONValue, password: String = "secret-pass-1") -> JSONValue {
        [
            "email": .string(email), "password": .string(password), "firstName": "Anna", "lastName": "Ivanova",
            "patronymic": "Petrovna", "birthDate": "1990-04-12", "acceptTerms": true, "challenge": challenge,
        ]
    }

    /// Registers and returns the tokens.
    static func register(_ stack: TestStack, _ email: String, password: String = "secret-pass-1") async throws -> JSONValue {
        let reply = try await stack.client.call(
            "auth.register", data: registration(email, challenge: try await solvedChallenge(stack), password: password))
        #expect(reply.ok, "\(reply.error?.message ?? "") \(reply.error?.fields ?? [:])")
        return try #require(reply.data)
    }

    /// Registers with auth in process and returns the tokens.
    static func register(
        _ auth: InProcessService, _ email: String, password: String = "secret-pass-1", timeout: Duration = .seconds(5)
    ) async throws -> JSONValue {
        let reply = try await auth.client.call(
            "auth.register", data: registration(email, challenge: try await solvedChallenge(auth), password: password), timeout: timeout)
        #expect(reply.ok, "\(reply.error?.message ?? "") \(reply.error?.fields ?? [:])")
        return try #require(reply.data)
    }

    static func token(_ tokens: JSONValue) throws -> String { try #require(tokens["accessToken"]?.stringValue) }

    @Test("register, sign in, read the profile; one message for unknown email and wrong password")
    func registerAndSignIn() async throws {
        try await Self.withAuth { stack in
            let tokens = try await Self.register(stack, "Anna@Example.com")
            #expect(tokens["user"]?["roles"] == ["recipient", "sponsor"])
            let profile = try await stack.client.call("auth.profile.get", token: try Self.token(tokens), idempotent: true)
            #expect(profile.data?["email"] == "anna@example.com")
            #expect(profile.data?["patronymic"] == "Petrovna")
            #expect(profile.data?["termsVersion"] == "2026-11")

            let login = try await stack.client.call("auth.login", data: ["email": "anna@example.com", "password": "secret-pass-1"])
            #expect(login.ok && login.data?["user"]?["id"] == tokens["user"]?["id"])

            let wrong = try await stack.client.call("auth.login", data: ["email": "anna@example.com", "password": "wrong-pass-1"])
            let unknown = try await stack.client.call("auth.login", data: ["email": "nobody@example.com", "password": "secret-pass-1"])
            #expect(wrong.error?.code == .unauthenticated && unknown.error?.code == .unauthenticated)
            #expect(wrong.error?.message == AccountOperations.failedSignIn)
            #expect(unknown.error?.message == wrong.error?.message)

            let again = try await stack.client.call(
                "auth.register", data: Self.registration("anna@example.com", challenge: try await Self.solvedChallenge(stack)))
            #expect(again.error?.code == .conflict)
        }
    }

    @Test("bad registration data is refused field by field")
    func registrationValidation() async throws {
        try await Self.inProcess { auth in
            var data = Self.registration("not-an-email", challenge: try await Self.solvedChallenge(auth), password: "short")
            guard case .object(var members) = data else { return }
            members["firstName"] = .string(String(repeating: "x", count: 10_000))
            members["lastName"] = "Bad\u{0007}Name"
            data = .object(members)
            let reply = try await auth.client.call("auth.register", data: data)
            let fields = try #require(reply.error?.fields)
            #expect(reply.error?.code == .validationFailed)
            #expect(fields["email"] == "not an email address")
            #expect(fields["firstName"] == "must have at most 100 characters")
            #expect(fields["lastName"] == "must not contain control characters")

            let future = try await auth.client.call(
                "auth.register",
                data: Self.registration("b@example.com", challenge: try await Self.solvedChallenge(auth)).merging(["birthDate": "2999-01-01"]))
            #expect(future.error?.fields["birthDate"] == "must not be in the future")
            let weak = try await auth.client.call(
                "auth.register",
                data: Self.registration("c@example.com", challenge: try await Self.solvedChallenge(auth), password: "1234567"))
            #expect(weak.error?.fields["password"] == "must have at least 8 characters")
            let noTerms = try await auth.client.call(
                "auth.register",
                data: Self.registration("d@example.com", challenge: try await Self.solvedChallenge(auth)).merging(["acceptTerms": false]))
            #expect(noTerms.error?.fields["acceptTerms"] != nil)
        }
    }

    @Test("registration needs a solved, unused challenge")
    func proofOfWorkRequired() async throws {
        try await Self.inProcess { auth in
            let challenge = try await Self.solvedChallenge(auth)
            let nonce = try #require(challenge["nonce"])
            var wrongCounter = challenge["counter"]?.integerValue ?? 0
            repeat { wrongCounter += 1 } while ProofOfWork.isSolved(nonce: nonce.stringValue ?? "", counter: UInt64(wrongCounter), difficulty: 6)
            let unsolved = try await auth.client.call(
                "auth.register", data: Self.registration("e@example.com", challenge: ["nonce": nonce, "counter": .integer(wrongCounter)]))
            #expect(unsolved.error?.fields["challenge.counter"] == "does not solve the challenge")

            #expect(try await auth.client.call("auth.register", data: Self.registration("e@example.com", challenge: challenge)).ok)
            let reused = try await auth.client.call("auth.register", data: Self.registration("f@example.com", challenge: challenge))
            #expect(reused.error?.fields["challenge"] != nil)
        }
    }

    // Through the gateway: the per-client limit keys on the address the gateway reports.
    @Test("failed sign-ins are rate limited per account with retryAfterMs")
    func signInRateLimit() async throws {
        try await Self.withAuth { stack in
            _ = try await Self.register(stack, "limited@example.com")
            for _ in 0..<5 {
                let reply = try await stack.client.call("auth.login", data: ["email": "limited@example.com", "password": "wrong-pass-1"])
                #expect(reply.error?.code == .unauthenticated)
            }
            let limited = try await stack.client.call("auth.login", data: ["email": "limited@example.com", "password": "secret-pass-1"])
            #expect(limited.error?.code == .rateLimited)
            let retryAfter = try #require(limited.error?.details["retryAfterMs"]?.integerValue)
            #expect(retryAfter > 0 && retryAfter <= 15 * 60 * 1000)
            // Per client: this client has 5 failures; 15 more on other accounts reach its cap of 20.
            for index in 0..<15 {
                let reply = try await stack.client.call("auth.login", data: ["email": .string("guess\(index)@example.com"), "password": "wrong-pass-1"])
                #expect(reply.error?.code == .unauthenticated)
            }
            let clientLimited = try await stack.client.call("auth.login", data: ["email": "someone@example.com", "password": "whatever-1"])
            #expect(clientLimited.error?.code == .rateLimited)
        }
    }

    @Test("parallel guesses cannot pass the failed sign-in limit together")
    func parallelGuesses() async throws {
        try await Self.inProcess { auth in
            _ = try await Self.register(auth, "target@example.com")
            let replies = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        try await auth.client.call("auth.login", data: ["email": "target@example.com", "password": .string("guess-\(index)-x")])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // At most 5 guesses are checked (fewer: two checks of one account hash at a
            // time and the others are refused at once); every other is rate_limited.
            let checked = replies.filter { $0.error?.code == .unauthenticated }.count
            #expect(checked >= 1 && checked <= 5)
            #expect(replies.filter { $0.error?.code == .rateLimited }.count == 12 - checked)
        }
    }

    @Test("refresh rotates; a reused refresh token revokes the session")
    func refreshRotation() async throws {
        try await Self.inProcess { auth in
            let first = try await Self.register(auth, "rotate@example.com")
            let oldRefresh = try #require(first["refreshToken"])
            let second = try await auth.client.call("auth.refresh", data: ["refreshToken": oldRefresh])
            let newRefresh = try #require(second.data?["refreshToken"])
            #expect(newRefresh != oldRefresh)
            #expect(second.data?["sessionId"] == first["sessionId"])
            let newAccess = try #require(second.data?["accessToken"]?.stringValue)
            #expect(try await auth.client.call("auth.profile.get", token: newAccess, idempotent: true).ok)
            // The client goes on with the new token: the chain has moved on.
            let third = try await auth.client.call("auth.refresh", data: ["refreshToken": newRefresh])
            let thirdAccess = try #require(third.data?["accessToken"]?.stringValue)

            // The stolen old token comes back: the whole session ends.
            let replay = try await auth.client.call("auth.refresh", data: ["refreshToken": oldRefresh])
            #expect(replay.error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(third.data?["refreshToken"])]).error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.profile.get", token: thirdAccess, idempotent: true).error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.refresh", data: ["refreshToken": "made-up"]).error?.code == .unauthenticated)
        }
    }

    @Test("every challenge is new, whatever idem it carries: anonymous callers with the same key never share one")
    func challengeIgnoresIdem() async throws {
        try await Self.inProcess { auth in
            let first = try await auth.client.call("auth.challenge", data: [:], idem: "install-1")
            let second = try await auth.client.call("auth.challenge", data: [:], idem: "install-1")
            let nonces = [first, second].compactMap { $0.data?["nonce"]?.stringValue }
            #expect(nonces.count == 2 && nonces[0] != nonces[1])
            // A refresh with a key is a refresh: new tokens each time, nothing stored for the key.
            let session = try await Self.register(auth, "keyed@example.com")
            let refreshed = try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(session["refreshToken"])], idem: "r-1")
            let again = try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(refreshed.data?["refreshToken"])], idem: "r-1")
            // (With the key honoured, the second, another body under the same key, would be a conflict.)
            #expect(refreshed.ok && again.ok && refreshed.data?["refreshToken"] != again.data?["refreshToken"], "\(again.error?.code.rawValue ?? "")")
            let replayed = try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(again.data?["refreshToken"])], idem: "r-2")
            let replayedAgain = try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(again.data?["refreshToken"])], idem: "r-2")
            // The same token and key again is a retry within the refresh's grace: new tokens, not a stored reply.
            #expect(replayed.ok && replayedAgain.ok && replayed.data?["refreshToken"] != replayedAgain.data?["refreshToken"])
            // describe says which operations ignore idem (the edge's OpenAPI document offers them no key).
            let describe = try #require(try await auth.client.call("auth.describe").data?["operations"]?.arrayValue)
            let ignoring = Set(describe.filter { $0["idem"] == "ignored" }.compactMap { $0["op"]?.stringValue })
            #expect(ignoring.isSuperset(of: ["auth.challenge", "auth.refresh", "auth.login", "auth.phone.verify"]))
            #expect(!ignoring.contains("auth.profile.update"))
        }
    }

    @Test("a refresh whose reply was lost can be retried with the same token for a short while; the token it gave is then void, and using that is reuse")
    func refreshRetriedAfterLostReply() async throws {
        try await Self.inProcess { auth in
            let first = try await Self.register(auth, "retry@example.com")
            let oldRefresh = try #require(first["refreshToken"])
            // This reply never reaches the client (a timeout, auth killed after the commit).
            let lost = try #require(try await auth.client.call("auth.refresh", data: ["refreshToken": oldRefresh]).data)
            // The client retries with the token it holds: new tokens, the same session.
            let retried = try await auth.client.call("auth.refresh", data: ["refreshToken": oldRefresh])
            let retriedData = try #require(retried.data, "\(retried.error?.message ?? "")")
            #expect(retriedData["sessionId"] == first["sessionId"])
            #expect(retriedData["refreshToken"] != lost["refreshToken"])
            // Retried twice: still fine, and only the newest token stands.
            let again = try #require(try await auth.client.call("auth.refresh", data: ["refreshToken": oldRefresh]).data)
            #expect(try await auth.client.call("auth.profile.get", token: try Self.token(again), idempotent: true).ok)
            // The lost reply's token turns up after all (a thief's copy): reuse, the session ends.
            let voided = try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(lost["refreshToken"])])
            #expect(voided.error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(again["refreshToken"])]).error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.profile.get", token: try Self.token(again), idempotent: true).error?.code == .unauthenticated)
        }
        // Past the grace, presenting a used token is reuse, even if the new one was never used.
        try await Self.inProcess(settings: { $0.sessions.refreshRetryGrace = 0.5 }) { auth in
            let first = try await Self.register(auth, "late-retry@example.com")
            let oldRefresh = try #require(first["refreshToken"])
            let lost = try #require(try await auth.client.call("auth.refresh", data: ["refreshToken": oldRefresh]).data)
            try await Task.sleep(for: .milliseconds(700))
            #expect(try await auth.client.call("auth.refresh", data: ["refreshToken": oldRefresh]).error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.refresh", data: ["refreshToken": try #require(lost["refreshToken"])]).error?.code == .unauthenticated)
        }
    }

    @Test("sessions: list, revoke one, logout; password change ends the others")
    func sessions() async throws {
        try await Self.inProcess { auth in
            let phone = try await Self.register(auth, "many@example.com")
            let laptop = try #require(
                try await auth.client.call("auth.login", data: ["email": "many@example.com", "password": "secret-pass-1"]).data)
            let list = try await auth.client.call("auth.sessions.list", token: try Self.token(laptop), idempotent: true)
            guard case .array(let items)? = list.data?["items"] else {
                Issue.record("no sessions")
                return
            }
            #expect(items.count == 2)
            #expect(items.filter { $0["current"] == true }.map { $0["id"] } == [laptop["sessionId"]])

            let revoke = try await auth.client.call("auth.sessions.revoke", data: ["session": try #require(phone["sessionId"])], token: try Self.token(laptop))
            #expect(revoke.ok)
            #expect(try await auth.client.call("auth.profile.get", token: try Self.token(phone), idempotent: true).error?.code == .unauthenticated)

            let tablet = try #require(
                try await auth.client.call("auth.login", data: ["email": "many@example.com", "password": "secret-pass-1"]).data)
            let change = try await auth.client.call(
                "auth.password.change", data: ["currentPassword": "secret-pass-1", "newPassword": "another-pass-2"], token: try Self.token(laptop))
            #expect(change.ok)
            #expect(try await auth.client.call("auth.profile.get", token: try Self.token(tablet), idempotent: true).error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.profile.get", token: try Self.token(laptop), idempotent: true).ok)
            #expect(try await auth.client.call("auth.login", data: ["email": "many@example.com", "password": "another-pass-2"]).ok)

            #expect(try await auth.client.call("auth.logout", token: try Self.token(laptop)).ok)
            #expect(try await auth.client.call("auth.profile.get", token: try Self.token(laptop), idempotent: true).error?.code == .unauthenticated)
        }
    }

    @Test("no role escalation, no reading or changing another user's profile")
    func authorization() async throws {
        try await Self.inProcess { auth in
            let anna = try await Self.register(auth, "anna2@example.com")
            let boris = try await Self.register(auth, "boris@example.com")
            let annaToken = try Self.token(anna)
            let borisID = try #require(boris["user"]?["id"])

            #expect(try await auth.client.call("auth.role.switch", data: ["role": "admin"], token: annaToken).error?.code == .forbidden)
            let sponsor = try await auth.client.call("auth.role.switch", data: ["role": "sponsor"], token: annaToken, idem: "switch-1")
            #expect(sponsor.data?["user"]?["activeRole"] == "sponsor")
            // A role switch renews the access token only: no refresh token comes out of it.
            #expect(sponsor.data?["refreshToken"] == nil && sponsor.data?["accessToken"] != nil)
            #expect(try await auth.client.call("auth.admin.users.list", token: annaToken, idempotent: true).error?.code == .forbidden)
            #expect(try await auth.client.call("auth.audit.list", token: annaToken, idempotent: true).error?.code == .forbidden)
            #expect(
                try await auth.client.call("auth.admin.roles.grant", data: ["userId": anna["user"]?["id"] ?? nil, "role": "admin"], token: annaToken)
                    .error?.code == .forbidden)
            // Roles are not a profile field.
            #expect(try await auth.client.call("auth.profile.update", data: ["roles": ["admin"]], token: annaToken).error?.code == .validationFailed)

            #expect(try await auth.client.call("auth.profile.get", data: ["userId": borisID], token: annaToken, idempotent: true).error?.code == .notFound)
            #expect(
                try await auth.client.call("auth.profile.update", data: ["userId": borisID, "firstName": "Hacked"], token: annaToken)
                    .error?.code == .notFound)
            let borisProfile = try await auth.client.call("auth.profile.get", token: try Self.token(boris), idempotent: true)
            #expect(borisProfile.data?["firstName"] == "Anna")

            let updated = try await auth.client.call("auth.profile.update", data: ["firstName": "Anya", "patronymic": nil], token: annaToken)
            #expect(updated.data?["firstName"] == "Anya" && updated.data?["patronymic"] == nil)
            // The phone changes only with a code sent to the new number.
            #expect(try await auth.client.call("auth.profile.update", data: ["phone": "+79161234567"], token: annaToken).error?.code == .validationFailed)
            let badPhone = try await auth.client.call("auth.phone.change.start", data: ["phone": "89161234567"], token: annaToken)
            #expect(badPhone.error?.fields["phone"] != nil)
            #expect(try await auth.client.call(
                "auth.phone.change.start", data: ["phone": "+79161234567", "currentPassword": "secret-pass-1"], token: annaToken).ok)
            let code = try await AuthFixtures.code(to: "+79161234567", dataDirectory: auth.dataDirectory)
            let confirmed = try await auth.client.call("auth.phone.change.confirm", data: ["code": .string(code)], token: annaToken)
            #expect(confirmed.data?["phone"] == "+79161234567")
        }
    }

    @Test("admins: the first one through ctl-style internal call, then users, counts, roles and the audit log")
    func administration() async throws {
        try await Self.withAuth { stack in
            let root = try await Self.register(stack, "root@example.com")
            let worker = try await Self.register(stack, "worker@example.com")
            _ = try await stack.client.call("auth.login", data: ["email": "worker@example.com", "password": "bad-password"])

            // Internal: refused through the gateway, accepted at auth's own endpoint.
            #expect(try await stack.client.call("auth.internal.admin.grant", data: ["email": "root@example.com"]).error?.code == .forbidden)
            let direct = try stack.directClient("auth")
            #expect(try await direct.call("auth.internal.admin.grant", data: ["email": "root@example.com"]).data?["roles"] == ["admin", "recipient", "sponsor"])

            let admin = try #require(
                try await stack.client.call("auth.login", data: ["email": "root@example.com", "password": "secret-pass-1"]).data)
            let adminToken = try Self.token(admin)
            let search = try await stack.client.call("auth.admin.users.list", data: ["query": "WORKER"], token: adminToken, idempotent: true)
            #expect(search.data?["items"]?.arrayValue?.count == 1)
            let page = try await stack.client.call("auth.admin.users.list", data: ["limit": 1], token: adminToken, idempotent: true)
            let next = try #require(page.data?["next"]?.stringValue)
            let rest = try await stack.client.call("auth.admin.users.list", data: ["limit": 1, "cursor": .string(next)], token: adminToken, idempotent: true)
            #expect(rest.data?["items"]?[0]?["id"] != page.data?["items"]?[0]?["id"])

            let counts = try await stack.client.call("auth.admin.users.count", token: adminToken, idempotent: true)
            #expect(counts.data?["total"] == 2 && counts.data?["byRole"]?["admin"] == 1)
            #expect(counts.data?["byDay"]?[0]?["count"] == 2)

            let workerID = try #require(worker["user"]?["id"])
            let granted = try await stack.client.call("auth.admin.roles.grant", data: ["userId": workerID, "role": "staff"], token: adminToken)
            #expect(granted.data?["roles"] == ["recipient", "sponsor", "staff"])
            let removed = try await stack.client.call("auth.admin.roles.revoke", data: ["userId": workerID, "role": "sponsor"], token: adminToken)
            #expect(removed.data?["roles"] == ["recipient", "staff"])
            // Removing a role ends the user's sessions: no token keeps the old roles.
            #expect(try await stack.client.call("auth.profile.get", token: try Self.token(worker), idempotent: true).error?.code == .unauthenticated)

            let audit = try await stack.client.call("auth.audit.list", data: ["userId": workerID], token: adminToken, idempotent: true)
            guard case .array(let entries)? = audit.data?["items"] else {
                Issue.record("no audit")
                return
            }
            let actions = entries.compactMap { $0["action"]?.stringValue }
            #expect(actions.contains("sign_in.failed") && actions.contains("roles.changed") && actions.contains("registered"))
            // Every entry of a request says where it came from, the admin's role changes included.
            let rolesChanged = entries.filter { $0["action"] == "roles.changed" }
            #expect(!rolesChanged.isEmpty && rolesChanged.allSatisfy { $0["client"]?.stringValue?.isEmpty == false }, "\(rolesChanged)")
            let text = String(decoding: try #require(audit.data).serialized, as: UTF8.self)
            let workerToken = try Self.token(worker)
            #expect(!text.contains("bad-password") && !text.contains("secret-pass-1") && !text.contains(workerToken))
        }
    }

    @Test("auth.keys publishes the verification key; describe lists every operation")
    func keysAndDescribe() async throws {
        try await Self.withAuth { stack in
            let keys = try await stack.client.call("auth.keys", idempotent: true)
            let published = JSONWebKeySet.keys(from: try #require(keys.data))
            #expect(published.count == 1)
            let tokens = try await Self.register(stack, "keys@example.com")
            let verifier = AccessTokenVerifier(keys: published)
            let principal = try verifier.verify(try Self.token(tokens))
            #expect(principal.userID == tokens["user"]?["id"]?.stringValue)

            // Rotation: a new key signs, the old one still verifies; retired, it is refused.
            let direct = try stack.directClient("auth")
            let oldKey = try #require(published.keys.first)
            let rotated = try await direct.call("auth.internal.keys.rotate")
            let newKey = try #require(rotated.data?["kid"]?.stringValue)
            #expect(try await stack.client.call("auth.profile.get", token: try Self.token(tokens), idempotent: true).ok)
            let fresh = try #require(try await stack.client.call("auth.login", data: ["email": "keys@example.com", "password": "secret-pass-1"]).data)
            let freshHeader = try JSONParser.parse(Data(try #require(Base64URL.decode(try Self.token(fresh).split(separator: ".")[0]))))
            #expect(freshHeader["kid"]?.stringValue == newKey)
            #expect(try await direct.call("auth.internal.keys.retire", data: ["kid": .string(oldKey)]).ok)
            #expect(try await stack.client.call("auth.profile.get", token: try Self.token(tokens), idempotent: true).error?.code == .unauthenticated)
            #expect(try await stack.client.call("auth.profile.get", token: try Self.token(fresh), idempotent: true).ok)
            #expect(try await direct.call("auth.internal.keys.retire", data: ["kid": .string(newKey)]).error?.code == .conflict)

            let describe = try await stack.client.call("auth.describe", idempotent: true)
            guard case .array(let operations)? = describe.data?["operations"] else {
                Issue.record("no operations")
                return
            }
            let names = Set(operations.compactMap { $0["op"]?.stringValue })
            for op in [
                "auth.register", "auth.login", "auth.refresh", "auth.logout", "auth.sessions.list", "auth.sessions.revoke",
                "auth.role.switch", "auth.profile.get", "auth.profile.update", "auth.password.change", "auth.challenge", "auth.keys",
                "auth.audit.list", "auth.admin.users.list", "auth.admin.users.count", "auth.admin.roles.grant", "auth.admin.roles.revoke",
            ] {
                #expect(names.contains(op), "\(op) missing from describe")
            }
        }
    }
}

/// Another service checks auth's tokens locally and learns of revocations by event.
@Suite("Token verification across services")
struct CrossServiceTokenTests {
    @Test("a service verifies tokens with auth.keys and refuses a session after logout")
    func verificationAndRevocation() async throws {
        try await AuthFlowTests.withAuth { stack in
            // A stand-in for any service with a signed-in operation, run in process with the
            // verifier every service has: auth's keys from auth.keys, revocations by event.
            let probe = ServiceDefinition(
                name: "stats", summary: "probe", durability: .normal,
                operations: [
                    .read("stats.whoami", summary: "The caller.", auth: .authenticated, request: .empty, response: .string()) {
                        (context, _: Empty, _) in try context.requirePrincipal().userID
                    }
                ])
            let service = try await InProcessService(probe, configuration: stack.configuration, verifier: nil, catchUpInterval: .milliseconds(500))

            let tokens = try await AuthFlowTests.register(stack, "probe@example.com")
            let token = try AuthFlowTests.token(tokens)
            var whoami: Reply.Parsed?
            for _ in 0..<100 {
                whoami = try await service.call("stats.whoami", as: .token(token), idempotent: true)
                if whoami?.ok == true { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(whoami?.data == tokens["user"]?["id"])

            #expect(try await stack.client.call("auth.logout", token: token).ok)
            var refused = false
            for _ in 0..<100 {
                if try await service.call("stats.whoami", as: .token(token), idempotent: true).error?.code == .unauthenticated {
                    refused = true
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(refused, "the revoked session's token was still accepted")

            await service.stop()
        }
    }
}

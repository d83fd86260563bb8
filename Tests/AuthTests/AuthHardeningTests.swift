import Foundation
import GRDB
import Logging
import Platform
import SharedTesting
import Testing

@testable import AuthService

/// Issue "Auth hardening": one regression test per finding of the review.
@Suite("Auth hardening")
struct AuthHardeningTests {
    /// Starts a phone sign-in (its proof of work solved) and returns the code the fake SMS
    /// gateway got.
    static func sentCode(_ auth: InProcessService, to phone: String) async throws -> String {
        let started = try await auth.client.call("auth.phone.start", data: ["phone": .string(phone), "challenge": try await AuthFlowTests.solvedChallenge(auth)])
        #expect(started.ok, "\(started.error.map { "\($0.code): \($0.message)" } ?? "")")
        return try await AuthFixtures.code(to: phone, dataDirectory: auth.dataDirectory)
    }

    // MARK: Probing at registration

    @Test("one solved challenge tells at most once that an email is taken, and is spent by the refusal")
    func registrationProbing() async throws {
        try await AuthFlowTests.inProcess { auth in
            _ = try await AuthFlowTests.register(auth, "known@example.com")
            let challenge = try await AuthFlowTests.solvedChallenge(auth)
            let first = try await auth.client.call("auth.register", data: AuthFlowTests.registration("known@example.com", challenge: challenge))
            #expect(first.error?.code == .conflict && first.error?.details["reason"] == "email_taken")
            // The same challenge again, for the same or another email: spent.
            for email in ["known@example.com", "other@example.com", "new@example.com"] {
                let again = try await auth.client.call("auth.register", data: AuthFlowTests.registration(email, challenge: challenge))
                #expect(again.error?.code == .validationFailed && again.error?.fields["challenge"] != nil, "\(email)")
            }
        }
    }

    @Test("a refused SMS sign-in start spends its challenge too")
    func phoneStartSpendsChallenge() async throws {
        try await AuthFlowTests.inProcess { auth in
            let first = try await auth.client.call(
                "auth.phone.start", data: ["phone": "+375291112233", "challenge": try await AuthFlowTests.solvedChallenge(auth)])
            #expect(first.ok)
            let challenge = try await AuthFlowTests.solvedChallenge(auth)
            let early = try await auth.client.call("auth.phone.start", data: ["phone": "+375291112233", "challenge": challenge])
            #expect(early.error?.code == .rateLimited, "resend within a minute")
            let reused = try await auth.client.call("auth.phone.start", data: ["phone": "+375291112244", "challenge": challenge])
            #expect(reused.error?.code == .validationFailed && reused.error?.fields["challenge"] != nil)
        }
    }

    // MARK: Takeover from a stolen access token

    /// Messages to `recipient` once the outbox has settled.
    static func messages(to recipient: String, _ auth: InProcessService) async throws -> [JSONValue] {
        try await Task.sleep(for: .milliseconds(400))
        return AuthFixtures.messages(dataDirectory: auth.dataDirectory).filter { $0["recipient"]?.stringValue == recipient }
    }

    @Test("a stolen access token alone cannot change the email; the owner's change tells the old address, ends other sessions and is audited")
    func emailChangeNeedsThePassword() async throws {
        try await AuthFlowTests.inProcess { auth in
            let stolen = try AuthFlowTests.token(try await AuthFlowTests.register(auth, "owner@example.com"))
            let attempt = try await auth.client.call("auth.email.change.start", data: ["newEmail": "thief@example.com"], token: stolen)
            #expect(attempt.error?.fields["currentPassword"] != nil)
            let guess = try await auth.client.call(
                "auth.email.change.start", data: ["newEmail": "thief@example.com", "currentPassword": "guess-pass-1"], token: stolen)
            #expect(guess.error?.fields["currentPassword"] != nil)
            #expect(try await Self.messages(to: "thief@example.com", auth).isEmpty)

            // The owner, signed in on a second device too, changes it with the password.
            let second = try await auth.client.call("auth.login", data: ["email": "owner@example.com", "password": "secret-pass-1"])
            let secondToken = try #require(second.data?["accessToken"]?.stringValue)
            #expect(try await auth.client.call(
                "auth.email.change.start", data: ["newEmail": "owner.new@example.com", "currentPassword": "secret-pass-1"], token: stolen).ok)
            let code = try await AuthFixtures.code(to: "owner.new@example.com", dataDirectory: auth.dataDirectory)
            #expect(try await auth.client.call("auth.email.change.confirm", data: ["code": .string(code)], token: stolen).ok)
            let notices = try await Self.messages(to: "owner@example.com", auth)
            #expect(notices.contains { $0["subject"] == "Your email was changed" && ($0["body"]?.stringValue ?? "").contains("o***") })
            #expect(try await auth.client.call("auth.profile.get", token: secondToken, idempotent: true).error?.code == .unauthenticated)
            #expect(try await auth.client.call("auth.profile.get", token: stolen, idempotent: true).ok, "the device that changed it stays")
            let audited = try await DatabaseQueue(path: auth.dataDirectory.appendingPathComponent("auth.sqlite").path).read { db in
                try String.fetchAll(db, sql: "SELECT detail FROM audit WHERE action = 'email.changed'")
            }
            #expect(audited.count == 1 && audited[0].contains("\"sessionsEnded\":1"))
        }
    }

    @Test("a guessed sign-in code tells nothing: the same answer whether a code was sent to the number or not, and after five wrong ones")
    func guessedCodesTellNothing() async throws {
        try await AuthFlowTests.inProcess { auth in
            let code = try await Self.sentCode(auth, to: "+375290000011")
            let guess = code == "000000" ? "111111" : "000000"
            func verify(_ phone: String, _ code: String) async throws -> ServiceError? {
                try await auth.client.call("auth.phone.verify", data: ["phone": .string(phone), "code": .string(code), "profile": ["firstName": "Ivan", "lastName": "Rider"]]).error
            }
            let pending = try #require(try await verify("+375290000011", guess))
            let none = try #require(try await verify("+375290000012", guess))
            #expect(pending.code == .validationFailed && pending.code == none.code && pending.message == none.message && pending.fields == none.fields)
            for _ in 0..<4 { _ = try await verify("+375290000011", guess) }
            // Five wrong codes void it: the right one is refused now, in the same words.
            let voided = try #require(try await verify("+375290000011", code))
            #expect(voided.code == none.code && voided.message == none.message && voided.fields == none.fields)
        }
    }

    @Test("an account without a password confirms a change with a code sent to its current number")
    func passwordlessChangeNeedsCurrentContact() async throws {
        try await AuthFlowTests.inProcess { auth in
            let signInCode = try await Self.sentCode(auth, to: "+375290000001")
            let verified = try await auth.client.call(
                "auth.phone.verify", data: ["phone": "+375290000001", "code": .string(signInCode), "profile": ["firstName": "Ivan", "lastName": "Rider"]])
            let token = try #require(verified.data?["accessToken"]?.stringValue)
            let withPassword = try await auth.client.call(
                "auth.phone.change.start", data: ["phone": "+375290000002", "currentPassword": "secret-pass-1"], token: token)
            #expect(withPassword.error?.fields["currentPassword"] != nil, "this account has no password")
            #expect(try await auth.client.call("auth.phone.change.start", data: ["phone": "+375290000002"], token: token).ok)
            let currentCode = try await AuthFixtures.code(to: "+375290000001", number: 2, dataDirectory: auth.dataDirectory)
            let newCode = try await AuthFixtures.code(to: "+375290000002", dataDirectory: auth.dataDirectory)
            let withoutCurrent = try await auth.client.call("auth.phone.change.confirm", data: ["code": .string(newCode)], token: token)
            #expect(withoutCurrent.error?.fields["currentCode"] != nil)
            let confirmed = try await auth.client.call(
                "auth.phone.change.confirm", data: ["code": .string(newCode), "currentCode": .string(currentCode)], token: token)
            #expect(confirmed.data?["phone"] == "+375290000002")
            let notices = try await Self.messages(to: "+375290000001", auth)
            #expect(notices.count == 3 && (notices[2]["body"]?.stringValue ?? "").contains("changed"))
        }
    }

    @Test("email and phone change answer alike, resend rule included, whether or not the address has an account")
    func changeDoesNotTellTakenAddresses() async throws {
        try await AuthFlowTests.inProcess { auth in
            _ = try await AuthFlowTests.register(auth, "exists@example.com")
            for target in ["exists@example.com", "free@example.com"] {
                let token = try AuthFlowTests.token(try await AuthFlowTests.register(auth, "prober-\(target.prefix(4))@example.com"))
                let data: JSONValue = ["newEmail": .string(target), "currentPassword": "secret-pass-1"]
                let first = try await auth.client.call("auth.email.change.start", data: data, token: token)
                let second = try await auth.client.call("auth.email.change.start", data: data, token: token)
                #expect(first.ok, "\(target)")
                #expect(second.error?.code == .rateLimited, "\(target): the resend rule answers the same")
            }
            #expect(try await Self.messages(to: "free@example.com", auth).count == 1)
            let toTaken = try await Self.messages(to: "exists@example.com", auth)
            #expect(toTaken.count == 1 && AuthFixtures.sixDigits(in: toTaken[0]["body"]?.stringValue ?? "") == nil, "a notice, not a code")
        }
    }

    @Test("SMS to one number are capped across accounts and operations")
    func smsCapsAcrossAccounts() async throws {
        try await AuthFlowTests.inProcess { auth in
            var answers: [ErrorCode?] = []
            for index in 0..<11 {
                let token = try AuthFlowTests.token(try await AuthFlowTests.register(auth, "sender\(index)@example.com"))
                let reply = try await auth.client.call(
                    "auth.phone.change.start", data: ["phone": "+375299999999", "currentPassword": "secret-pass-1"], token: token)
                answers.append(reply.error?.code)
            }
            #expect(answers.prefix(5).allSatisfy { $0 == nil })
            #expect(answers.dropFirst(5).allSatisfy { $0 == .rateLimited })
            // And sign-in codes to that number count in the same cap.
            let signIn = try await auth.client.call(
                "auth.phone.start", data: ["phone": "+375299999999", "challenge": try await AuthFlowTests.solvedChallenge(auth)])
            #expect(signIn.error?.code == .rateLimited)
            #expect(try await Self.messages(to: "+375299999999", auth).count == 5)
        }
    }

    // MARK: Bounded state

    @Test("deletion codes sent by SMS count in the same caps: twelve asks, five SMS to the number, then rate_limited")
    func deletionCodesAreCapped() async throws {
        try await AuthFlowTests.inProcess(settings: { $0.codeResendInterval = 0 }) { auth in
            let phone = "+375290000077"
            let signInCode = try await Self.sentCode(auth, to: phone)
            let verified = try await auth.client.call(
                "auth.phone.verify", data: ["phone": .string(phone), "code": .string(signInCode), "profile": ["firstName": "Ivan", "lastName": "Rider"]])
            let token = try #require(verified.data?["accessToken"]?.stringValue)
            var answers: [ErrorCode?] = []
            for _ in 0..<12 { answers.append(try await auth.client.call("auth.account.delete.start", token: token).error?.code) }
            // The sign-in code was the number's first SMS of the hour; four deletion codes follow.
            #expect(answers.prefix(4).allSatisfy { $0 == nil }, "\(answers)")
            #expect(answers.dropFirst(4).allSatisfy { $0 == .rateLimited }, "\(answers)")
            #expect(try await Self.messages(to: phone, auth).count == 5)
        }
    }

    @Test("a password check whose deadline passes while it hashes is answered timeout, counts nothing and opens no session")
    func timedOutCheckCountsNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "auth-deadline")
        defer { directory.remove() }
        var configuration = PlatformConfiguration.forTests(directory: directory)
        // A production-cost hash (scrypt N=2^17, a few hundred ms) against a 150 ms deadline:
        // the attempt is counted and the hash started well within it, and ends after it.
        let production: (inout AuthSettings) -> Void = { $0.scryptLogN = 17 }
        // Hashes of every suite running beside this one share the process's hashing
        // threads: a production-cost hash may wait well beyond the usual deadlines, so the
        // registration gets a minute on both sides.
        var patient = configuration
        patient.requestDeadlineMs = 60_000
        try await AuthFlowTests.inProcess(configuration: patient, settings: production) { auth in
            _ = try await AuthFlowTests.register(auth, "slow@example.com", timeout: .seconds(60))
        }
        configuration.requestDeadlineMs = 150
        try await AuthFlowTests.inProcess(configuration: configuration, settings: production) { auth in
            for password in ["secret-pass-1", "wrong-pass-1"] {
                let reply = try await auth.client.call(
                    "auth.login", data: ["email": "slow@example.com", "password": .string(password)], timeout: .seconds(30), attempts: 1)
                #expect(reply.error?.code == .timeout, "\(password): \(reply.error?.code.rawValue ?? "ok")")
            }
            // Let the hashes finish and anything they would write commit.
            try await Task.sleep(for: .seconds(2))
        }
        let database = try DatabaseQueue(path: directory.url.appendingPathComponent("auth.sqlite").path)
        let (sessions, attempts, failures) = try await database.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM session") ?? -1,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM attempt WHERE key LIKE 'pw%'") ?? -1,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM audit WHERE action = 'sign_in.failed'") ?? -1
            )
        }
        #expect(sessions == 1, "only the registration's session")
        #expect(attempts == 0)
        #expect(failures == 0)
    }

    @Test("at most the configured number of live sessions per account: a new one ends the oldest")
    func sessionCap() async throws {
        try await AuthFlowTests.inProcess(settings: { $0.sessions.maxSessions = 3 }) { auth in
            var tokens = [try AuthFlowTests.token(try await AuthFlowTests.register(auth, "many@example.com"))]
            for _ in 0..<3 {
                let login = try await auth.client.call("auth.login", data: ["email": "many@example.com", "password": "secret-pass-1"])
                tokens.append(try #require(login.data?["accessToken"]?.stringValue))
            }
            #expect(try await auth.client.call("auth.sessions.list", token: tokens[0], idempotent: true).error?.code == .unauthenticated)
            let list = try await auth.client.call("auth.sessions.list", token: tokens[3], idempotent: true)
            #expect(list.data?["items"]?.arrayValue?.count == 3)
        }
    }

    @Test("a forgotten password answers and works alike for known and unknown addresses: one code, one message, the same limits")
    func forgotDoesNotTellAccounts() async throws {
        try await AuthFlowTests.inProcess { auth in
            _ = try await AuthFlowTests.register(auth, "known@example.com")
            let database = auth.dataDirectory.appendingPathComponent("auth.sqlite").path
            func codes(_ email: String) async throws -> Int {
                try await DatabaseQueue(path: database).read { db in
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM one_time_code WHERE target = ?", arguments: [email]) ?? 0
                }
            }
            for email in ["known@example.com", "unknown@example.com"] {
                let first = try await auth.client.call("auth.password.forgot", data: ["email": .string(email)])
                let again = try await auth.client.call("auth.password.forgot", data: ["email": .string(email)])
                #expect(first.ok && again.ok && first.data == again.data, "\(email)")
                #expect(try await codes(email) == 1, "\(email): a code either way")
            }
            let known = try await Self.messages(to: "known@example.com", auth)
            let unknown = try await Self.messages(to: "unknown@example.com", auth)
            #expect(known.count == 1 && unknown.count == 1, "one message each; the second ask was inside the minute for both")
            #expect(AuthFixtures.sixDigits(in: known[0]["body"]?.stringValue ?? "") != nil)
            #expect((unknown[0]["body"]?.stringValue ?? "").contains("no account"))
            // The code sent to an address without an account resets nothing.
            let reset = try await auth.client.call(
                "auth.password.reset", data: ["email": "unknown@example.com", "code": "000000", "newPassword": "whatever-123"])
            #expect(reset.error?.fields["code"] != nil)
        }
    }

    // MARK: Password guessing

    @Test("password change and account deletion count wrong passwords in the sign-in limits, and are audited")
    func everyPasswordCheckIsLimited() async throws {
        try await AuthFlowTests.inProcess { auth in
            let token = try AuthFlowTests.token(try await AuthFlowTests.register(auth, "guessed@example.com"))
            for index in 0..<3 {
                let reply = try await auth.client.call(
                    "auth.password.change", data: ["currentPassword": .string("wrong-guess-\(index)"), "newPassword": "new-pass-123"], token: token)
                #expect(reply.error?.fields["currentPassword"] != nil)
            }
            for index in 0..<2 {
                let reply = try await auth.client.call("auth.account.delete", data: ["password": .string("wrong-guess-x\(index)")], token: token)
                #expect(reply.error?.fields["password"] != nil)
            }
            // Five wrong passwords through two operations: the right one is refused now,
            // in both, and at sign-in from the same client.
            let change = try await auth.client.call(
                "auth.password.change", data: ["currentPassword": "secret-pass-1", "newPassword": "new-pass-123"], token: token)
            #expect(change.error?.code == .rateLimited)
            #expect(try await auth.client.call("auth.account.delete", data: ["password": "secret-pass-1"], token: token).error?.code == .rateLimited)
            #expect(try await auth.client.call("auth.login", data: ["email": "guessed@example.com", "password": "secret-pass-1"]).error?.code == .rateLimited)
            let audited = try await DatabaseQueue(path: auth.dataDirectory.appendingPathComponent("auth.sqlite").path).read { db in
                try String.fetchAll(db, sql: "SELECT detail FROM audit WHERE action = 'password.rejected' ORDER BY rowid")
            }
            #expect(audited.count == 5)
            #expect(audited.filter { $0.contains("auth.password.change") }.count == 3)
            #expect(audited.filter { $0.contains("auth.account.delete") }.count == 2)
            #expect(audited.allSatisfy { !$0.contains("wrong-guess") }, "never the password")
        }
    }

    @Test("limits key on account and client: a stranger's failures slow the stranger, not the owner elsewhere; many addresses slow the account")
    func limitsKeyOnAccountAndClient() async throws {
        let directory = try TemporaryDirectory(prefix: "auth-limits")
        let pool = try ServiceDatabase.open(directory: directory.url, name: "auth", durability: .normal) { AuthMigrations.register(in: &$0) }
        let hasher = PasswordHasher(logN: 10)
        let stored = try await hasher.hash("owner-pass-1")
        var limits = PasswordLimits()
        limits.perAccount = 12
        let check = PasswordCheck(hasher: hasher, limits: limits)
        func attempt(_ password: String, from client: String) async throws -> Result<String?, ServiceError> {
            let context = RequestContext(
                requestID: "r", op: "auth.login", principal: nil, idempotencyKey: nil, requestHash: "", clientAddress: client,
                logger: Logger(label: "test"), database: pool)
            do {
                return .success(
                    try await check.verify(context, operation: "auth.login", password: password, failure: .signInFailed) { _ in
                        PasswordCheck.Subject(accountKey: "usr_owner", userID: "usr_owner", hash: stored)
                    })
            } catch let error as ServiceError {
                return .failure(error)
            }
        }
        for _ in 0..<5 { #expect(try await attempt("guess", from: "203.0.113.7") == .success(nil)) }
        #expect(try await attempt("owner-pass-1", from: "203.0.113.7").failure?.code == .rateLimited, "the stranger is slowed")
        #expect(try await attempt("owner-pass-1", from: "198.51.100.1") == .success("usr_owner"), "the owner elsewhere is not")
        // Spread over addresses, 12 failures on the account slow everyone on it.
        for index in 0..<7 { #expect(try await attempt("guess", from: "192.0.2.\(index)") == .success(nil)) }
        #expect(try await attempt("owner-pass-1", from: "198.51.100.1").failure?.code == .rateLimited)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// The hashing queue under a flood, over real processes.
@Suite("Auth hardening: hashing under a flood", .serialized)
struct AuthHashingFloodTests {
    struct Request: Sendable {
        var op: String
        var data: JSONValue
        var token: String?
    }

    /// Signs `email` in three times alone (the median is its own time), then once while
    /// `flood` is sent all at once over a few connections; the flood's replies and both times.
    static func signIn(
        _ stack: TestStack, email: String, password: String, during flood: [Request]
    ) async throws -> (replies: [Reply.Parsed], alone: Duration, during: Duration) {
        let member = CheckedClient(endpoint: stack.configuration.gatewayEndpoint, name: "member")
        defer { Task { await member.close() } }
        func signIn() async throws -> Duration {
            let started = ContinuousClock.now
            let reply = try await member.call(
                "auth.login", data: ["email": .string(email), "password": .string(password)], timeout: .seconds(30), attempts: 1)
            #expect(reply.ok, "\(reply.error?.code.rawValue ?? "")")
            return ContinuousClock.now - started
        }
        var alone: [Duration] = []
        for _ in 0..<3 { alone.append(try await signIn()) }

        let flooders = (0..<3).map { CheckedClient(endpoint: stack.configuration.gatewayEndpoint, name: "flood-\($0)") }
        async let replies = withThrowingTaskGroup(of: Reply.Parsed.self) { group in
            for (index, request) in flood.enumerated() {
                let client = flooders[index % flooders.count]
                group.addTask { try await client.call(request.op, data: request.data, token: request.token, timeout: .seconds(30), attempts: 1) }
            }
            return try await group.reduce(into: [Reply.Parsed]()) { $0.append($1) }
        }
        try await Task.sleep(for: .milliseconds(30))
        let during = try await signIn()
        let all = try await replies
        for client in flooders { await client.close() }
        return (all, alone.sorted()[1], during)
    }

    @Test("150 concurrent wrong password changes from one account do not hold another user's sign-in beyond its own hashing time plus a second")
    func floodDoesNotStarveSignIn() async throws {
        // A realistic hash (scrypt N=2^15, about 50 ms here; 150 queued would take seconds), so a queue shows.
        let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "15", "BACKEND_AUTH_POW_DIFFICULTY": "6"]
        try await TestStack.with(services: ["auth"], extraEnvironment: environment) { stack in
            let attacker = try await AuthFixtures.signUp(stack.client, email: "flooder@example.com")
            _ = try await AuthFixtures.signUp(stack.client, email: "victim@example.com", password: "victim-pass-1")
            let flood = (0..<150).map { index in
                Request(
                    op: "auth.password.change", data: ["currentPassword": .string("guess-\(index)-x"), "newPassword": "new-pass-123"], token: attacker)
            }
            let (replies, ownTime, during) = try await Self.signIn(stack, email: "victim@example.com", password: "victim-pass-1", during: flood)
            #expect(during <= ownTime + .seconds(1), "sign-in took \(during) during the flood, \(ownTime) alone")
            #expect(replies.allSatisfy { $0.error?.code != .timeout }, "the flood is refused, not left to time out")
            #expect(replies.filter { $0.error?.code == .rateLimited }.count >= 140)
        }
    }

    @Test("one address signing in to many accounts of its own with their right passwords holds at most four places in the hashing queue")
    func oneAddressHoldsAQuarter() async throws {
        // About 0.1 s a hash: sixteen at once from one address would fill the queue.
        let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "16", "BACKEND_AUTH_POW_DIFFICULTY": "0"]
        try await TestStack.with(services: ["auth"], extraEnvironment: environment) { stack in
            for index in 0..<8 { _ = try await AuthFixtures.signUp(stack.client, email: "hog\(index)@example.com", password: "hog-pass-123") }
            _ = try await AuthFixtures.signUp(stack.client, email: "member@example.com", password: "member-pass-1")
            // The hog connects from 127.0.0.2 (libzmq's `source;destination`), the member from 127.0.0.1.
            let gateway = stack.configuration.gatewayEndpoint
            let hog = CheckedClient(endpoint: gateway.replacingOccurrences(of: "tcp://", with: "tcp://127.0.0.2:0;"), name: "hog")
            defer { Task { await hog.close() } }
            // Two at once per account (what the per-account bound allows), eight accounts.
            async let burst = withThrowingTaskGroup(of: Reply.Parsed.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        try await hog.call(
                            "auth.login", data: ["email": .string("hog\(index % 8)@example.com"), "password": "hog-pass-123"],
                            timeout: .seconds(30), attempts: 1)
                    }
                }
                return try await group.reduce(into: [Reply.Parsed]()) { $0.append($1) }
            }
            try await Task.sleep(for: .milliseconds(20))
            let member = try await stack.client.call(
                "auth.login", data: ["email": "member@example.com", "password": "member-pass-1"], timeout: .seconds(30), attempts: 1)
            let replies = try await burst
            let codes = Dictionary(grouping: replies, by: { $0.error?.code.rawValue ?? "ok" }).mapValues(\.count)
            #expect(member.ok, "\(member.error?.message ?? "")")
            // At most four hashed at once from the hog's address: most of the burst is refused.
            #expect(codes["rate_limited", default: 0] >= 10, "\(codes)")
            #expect(Set(codes.keys).isSubset(of: ["ok", "rate_limited"]), "\(codes)")
        }
    }

    @Test("a flood of registrations with new emails is refused rate_limited past half the hashing queue, and sign-ins keep their room")
    func registrationFloodLeavesRoomForSignIn() async throws {
        let environment = ["BACKEND_AUTH_SCRYPT_LOG_N": "15", "BACKEND_AUTH_POW_DIFFICULTY": "0", "BACKEND_AUTH_HASH_QUEUE": "8"]
        try await TestStack.with(services: ["auth"], extraEnvironment: environment) { stack in
            _ = try await AuthFixtures.signUp(stack.client, email: "member@example.com", password: "member-pass-1")
            var flood: [Request] = []
            for index in 0..<80 {
                let challenge = try await AuthFixtures.solvedChallenge(stack.client)
                flood.append(Request(op: "auth.register", data: AuthFlowTests.registration("bot\(index)@example.com", challenge: challenge)))
            }
            let (replies, ownTime, during) = try await Self.signIn(stack, email: "member@example.com", password: "member-pass-1", during: flood)
            let codes = Dictionary(grouping: replies, by: { $0.error?.code.rawValue ?? "ok" }).mapValues(\.count)
            #expect(Set(codes.keys).isSubset(of: ["ok", "rate_limited"]), "\(codes): never internal or timeout")
            #expect(codes["rate_limited", default: 0] > 0, "\(codes)")
            let limited = replies.compactMap(\.error).first { $0.code == .rateLimited }
            #expect(limited?.details["retryAfterMs"]?.integerValue ?? 0 > 0)
            #expect(during <= ownTime + .seconds(1), "sign-in took \(during) during the flood, \(ownTime) alone")
        }
    }
}

/// A deleted account's tokens over restarts, over real processes.
@Suite("Auth hardening: revocations across restarts", .serialized)
struct AuthRevocationRestartTests {
    @Test("a deleted user's unexpired token stays refused after auth and booking restart")
    func deletedUserStaysRefused() async throws {
        try await TestStack.with(services: ["auth", "booking"], extraEnvironment: AuthFlowTests.environment) { stack in
            let token = try await AuthFixtures.signUp(stack.client, email: "leaving@example.com")
            let other = try await stack.client.call("auth.login", data: ["email": "leaving@example.com", "password": "secret-pass-1"])
            let otherToken = try #require(other.data?["accessToken"]?.stringValue)
            #expect(try await stack.client.call("booking.pass.get", token: otherToken, idempotent: true).ok)
            #expect(try await stack.client.call("auth.account.delete", data: ["password": "secret-pass-1"], token: token).ok)
            // Booking learns of the revocation through the bus.
            var refused = false
            for _ in 0..<100 where !refused {
                refused = try await stack.client.call("booking.pass.get", token: otherToken, idempotent: true).error?.code == .unauthenticated
                if !refused { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(refused)
            for name in ["auth", "booking"] {
                let process = try #require(stack.process(name))
                process.kill(signal: SIGKILL)
                _ = await process.waitForExit(timeout: .seconds(5))
                try stack.start(name)
            }
            try await stack.waitUntilHealthy(["auth", "booking"], timeout: .seconds(20))
            #expect(try await stack.client.call("auth.sessions.list", token: otherToken, idempotent: true).error?.code == .unauthenticated)
            #expect(try await stack.client.call("booking.pass.get", token: otherToken, idempotent: true).error?.code == .unauthenticated)
        }
    }
}

/// Secrets at rest, over real processes.
@Suite("Auth hardening: secrets at rest", .serialized)
struct AuthSecretsAtRestTests {
    @Test("the data folder is 0700 and its files 0600; signing keys are sealed with the configured key and need it to start")
    func secretsAtRest() async throws {
        let encryption = Data(Digest.randomBytes(32)).base64EncodedString()
        let environment = AuthFlowTests.environment.merging(["BACKEND_AUTH_KEY_ENCRYPTION_KEY": encryption]) { _, new in new }
        try await TestStack.with(services: ["auth"], extraEnvironment: environment) { stack in
            let token = try await AuthFixtures.signUp(stack.client, email: "secrets@example.com")
            let data = stack.configuration.dataDirectoryURL
            func mode(_ url: URL) throws -> Int {
                (try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
            }
            #expect(try mode(data) == 0o700)
            #expect(try mode(data.appendingPathComponent("auth.sqlite")) == 0o600)
            let outbox = data.appendingPathComponent("outbox")
            for name in (try? FileManager.default.contentsOfDirectory(atPath: outbox.path)) ?? [] {
                #expect(try mode(outbox.appendingPathComponent(name)) == 0o600, "\(name)")
            }
            let stored = try await DatabaseQueue(path: data.appendingPathComponent("auth.sqlite").path).read { db in
                try Data.fetchAll(db, sql: "SELECT private_key FROM signing_key")
            }
            #expect(!stored.isEmpty && stored.allSatisfy { SecretBox.isSealed(Array($0)) })

            // Restarted with the key: the same keys, so the token still verifies.
            let auth = try #require(stack.process("auth"))
            auth.kill(signal: SIGTERM)
            _ = await auth.waitForExit(timeout: .seconds(10))
            try stack.start("auth")
            try await stack.waitUntilHealthy(["auth"], timeout: .seconds(20))
            #expect(try await stack.client.call("auth.sessions.list", token: token, idempotent: true).ok)
        }
        // Without the key the sealed keys cannot be read: auth refuses to start.
        let stack = try TestStack(extraEnvironment: AuthFlowTests.environment)
        defer { Task { await stack.stop() } }
        try FileManager.default.createDirectory(at: stack.configuration.dataDirectoryURL, withIntermediateDirectories: true)
        let pool = try ServiceDatabase.open(directory: stack.configuration.dataDirectoryURL, name: "auth", durability: .normal) {
            AuthMigrations.register(in: &$0)
        }
        let box = try SecretBox(base64: encryption)
        try await pool.write { db in _ = try SigningKeys.insertNewKey(db, box: box) }
        try pool.close()
        let process = try stack.start("auth")
        let status = await process.waitForExit(timeout: .seconds(20))
        #expect(status != nil && status != 0, "auth exits instead of running without its keys")
    }
}

/// What the new services need from auth: profiles with locale and time zone, published.
@Suite("Auth: profile events")
struct AuthProfileEventTests {
    @Test("auth.user.profile_changed on registration and every change, with locale and time zone; bad ones refused")
    func profileChanged() async throws {
        try await AuthFlowTests.inProcess { auth in
            var registration = AuthFlowTests.registration("zoned@example.com", challenge: try await AuthFlowTests.solvedChallenge(auth))
            registration = registration.merging(["locale": "ru-RU", "timeZone": "Europe/Minsk"])
            let tokens = try #require(try await auth.client.call("auth.register", data: registration).data)
            let token = try AuthFlowTests.token(tokens)
            let updated = try await auth.client.call("auth.profile.update", data: ["timeZone": "Asia/Tokyo", "firstName": "Anya"], token: token)
            #expect(updated.data?["timeZone"] == "Asia/Tokyo" && updated.data?["locale"] == "ru-RU")
            let cleared = try await auth.client.call("auth.profile.update", data: ["locale": nil], token: token)
            #expect(cleared.data?["locale"] == nil || cleared.data?["locale"] == .null)
            #expect(try await auth.client.call("auth.profile.update", data: ["timeZone": "Mars/Olympus"], token: token).error?.fields["timeZone"] != nil)
            #expect(try await auth.client.call("auth.profile.update", data: ["locale": "russian!"], token: token).error?.fields["locale"] != nil)

            let replay = try await auth.client.call("auth.events.replay", data: ["after": 0, "limit": 100], idempotent: true)
            let changes = (replay.data?["events"]?.arrayValue ?? []).filter { $0["type"] == "auth.user.profile_changed" }.map { $0["data"] ?? .null }
            #expect(changes.count == 3)
            #expect(changes.first == ["userId": tokens["user"]!["id"]!, "firstName": "Anna", "birthDate": "1990-04-12", "locale": "ru-RU", "timeZone": "Europe/Minsk"])
            #expect(changes[1]["timeZone"] == "Asia/Tokyo" && changes[1]["firstName"] == "Anya")
            #expect(changes[2]["locale"] == .null)
        }
    }
}

/// Device accounts (the fitness assistant has no sign-in).
@Suite("Auth: device accounts")
struct AuthDeviceAccountTests {
    static func registerDevice(_ auth: InProcessService) async throws -> JSONValue {
        let reply = try await auth.client.call(
            "auth.device.register", data: ["challenge": try await AuthFlowTests.solvedChallenge(auth), "timeZone": "Europe/Minsk"])
        return try #require(reply.data, "\(reply.error?.message ?? "")")
    }

    @Test("a device registers with a solved challenge, holds only recipient, attaches an email and becomes ordinary, its data kept")
    func registerAndAttach() async throws {
        try await AuthFlowTests.inProcess { auth in
            let challenge = try await AuthFlowTests.solvedChallenge(auth)
            let first = try #require(try await auth.client.call("auth.device.register", data: ["challenge": challenge]).data)
            #expect(first["user"]?["roles"] == ["recipient"])
            let reused = try await auth.client.call("auth.device.register", data: ["challenge": challenge])
            #expect(reused.error?.fields["challenge"] != nil, "one account per solved challenge")

            let device = try await Self.registerDevice(auth)
            let token = try AuthFlowTests.token(device)
            let id = try #require(device["user"]?["id"])
            #expect(try await auth.client.call("auth.role.switch", data: ["role": "sponsor"], token: token).error?.code == .forbidden)
            // Nothing to prove but the token: no password, no current contact.
            #expect(try await auth.client.call("auth.email.change.start", data: ["newEmail": "athlete@example.com"], token: token).ok)
            let code = try await AuthFixtures.code(to: "athlete@example.com", dataDirectory: auth.dataDirectory)
            let profile = try await auth.client.call("auth.email.change.confirm", data: ["code": .string(code)], token: token)
            #expect(profile.data?["id"] == id && profile.data?["email"] == "athlete@example.com")
            #expect(profile.data?["roles"] == ["recipient", "sponsor"] && profile.data?["timeZone"] == "Europe/Minsk")
            // Now an ordinary account without a password: a further change is proven by a
            // code at its email, like any such account.
            #expect(try await auth.client.call("auth.phone.change.start", data: ["phone": "+375291230000"], token: token).ok)
            let proof = try await AuthFixtures.code(to: "athlete@example.com", number: 2, dataDirectory: auth.dataDirectory)
            let phoneCode = try await AuthFixtures.code(to: "+375291230000", dataDirectory: auth.dataDirectory)
            let withoutProof = try await auth.client.call("auth.phone.change.confirm", data: ["code": .string(phoneCode)], token: token)
            #expect(withoutProof.error?.fields["currentCode"] != nil)
            let confirmed = try await auth.client.call(
                "auth.phone.change.confirm", data: ["code": .string(phoneCode), "currentCode": .string(proof)], token: token)
            #expect(confirmed.data?["phone"] == "+375291230000")
        }
    }

    @Test("a device account is deleted by its token alone, and idle ones are swept as deletions")
    func deleteAndSweep() async throws {
        try await AuthFlowTests.inProcess { auth in
            let kept = try await Self.registerDevice(auth)
            let leaving = try await Self.registerDevice(auth)
            #expect(try await auth.client.call("auth.account.delete", data: [:], token: try AuthFlowTests.token(leaving)).ok)
            let ordinary = try AuthFlowTests.token(try await AuthFlowTests.register(auth, "person@example.com"))
            #expect(try await auth.client.call("auth.account.delete", data: [:], token: ordinary).error?.code == .validationFailed)

            let pool = try ServiceDatabase.open(directory: auth.dataDirectory, name: "auth", durability: .normal) { AuthMigrations.register(in: &$0) }
            let keys = SigningKeys(verifier: AccessTokenVerifier())
            let issuer = SessionIssuer(keys: keys, policy: SessionPolicy())
            // Not idle yet: nothing goes; a year later the device account goes, the person stays.
            #expect(try await pool.write { db in try DeviceAccountSweep.run(db, issuer: issuer, maxIdle: 86_400) } == 0)
            let later = Date().addingTimeInterval(365 * 86_400)
            #expect(try await pool.write { db in try DeviceAccountSweep.run(db, issuer: issuer, maxIdle: 180 * 86_400, now: later) } == 1)
            let users = try await pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM user ORDER BY id") }
            #expect(!users.contains(kept["user"]?["id"]?.stringValue ?? "") && users.count == 1)
            let deleted = try await pool.read { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_event WHERE type = 'auth.user.deleted'") ?? 0
            }
            #expect(deleted == 2)
            try pool.close()
        }
    }
}

import Foundation
import Platform

/// What tests and benchmarks do with auth again and again: solve the bot check,
/// register, and read the codes auth sent through its `file` transport.
public enum AuthFixtures {
    /// A solved `auth.challenge`, as an app computes it: `{"nonce", "counter"}`.
    public static func solvedChallenge(_ client: some OperationCalling) async throws -> JSONValue {
        let reply = try await client.call(
            "auth.challenge", data: [:], token: nil, idem: nil, idempotent: false, timeout: .seconds(5), attempts: 1)
        guard let answer = ProofOfWork.answer(toChallenge: reply.data) else {
            throw TestStackError("auth.challenge failed: \(reply.error?.message ?? "no nonce")")
        }
        return answer
    }

    /// Registers an account by email and returns auth's reply (tokens on success).
    public static func register(
        _ client: some OperationCalling, email: String, password: String = "secret-pass-1", firstName: String = "Test",
        lastName: String = "Rider"
    ) async throws -> Reply.Parsed {
        try await client.call(
            "auth.register",
            data: [
                "email": .string(email), "password": .string(password), "firstName": .string(firstName), "lastName": .string(lastName),
                "birthDate": "1990-01-01", "acceptTerms": true, "challenge": try await solvedChallenge(client),
            ], token: nil, idem: nil, idempotent: false, timeout: .seconds(5), attempts: 1)
    }

    /// Registers and returns the access token.
    /// A registration answered `timeout` (hashing behind a loaded machine's other tests)
    /// may still have committed, so it is followed by a sign-in, then by a second try.
    public static func signUp(_ client: some OperationCalling, email: String, password: String = "secret-pass-1") async throws -> String {
        var reply = try await register(client, email: email, password: password)
        var retried = false
        // After a timeout the account may exist (then `email_taken`): sign in instead.
        for _ in 0..<3 where reply.error?.code == .timeout || reply.error?.code == .unavailable || (retried && reply.error?.code == .conflict) {
            retried = true
            try await Task.sleep(for: .milliseconds(200))
            let login = try await signIn(client, email: email, password: password)
            reply = login.ok ? login : try await register(client, email: email, password: password)
        }
        guard let token = reply.data?["accessToken"]?.stringValue else {
            throw TestStackError("sign-up of \(email) failed: \(reply.error?.message ?? "") \(reply.error?.fields ?? [:])")
        }
        return token
    }

    /// Signs in; a sign-in answered `timeout` or `unavailable` (its hash waited behind a
    /// loaded machine's other tests) is tried again, up to three times: another sign-in
    /// only opens another session.
    public static func signIn(_ client: some OperationCalling, email: String, password: String) async throws -> Reply.Parsed {
        var reply = try await client.call(
            "auth.login", data: ["email": .string(email), "password": .string(password)], token: nil, idem: nil, idempotent: false,
            timeout: .seconds(5), attempts: 1)
        for _ in 0..<3 where reply.error?.code == .timeout || reply.error?.code == .unavailable {
            try await Task.sleep(for: .milliseconds(200))
            reply = try await client.call(
                "auth.login", data: ["email": .string(email), "password": .string(password)], token: nil, idem: nil, idempotent: false,
                timeout: .seconds(5), attempts: 1)
        }
        return reply
    }

    /// Registers an account through `client`, makes it an admin through `direct` (auth's
    /// own socket: the grant is internal) and signs in again, so the returned access
    /// token carries the admin role.
    public static func signUpAdmin(
        _ client: some OperationCalling, direct: some OperationCalling, email: String, password: String = "secret-pass-1"
    ) async throws -> String {
        _ = try await signUp(client, email: email, password: password)
        _ = try await direct.call(
            "auth.internal.admin.grant", data: ["email": .string(email)], token: nil, idem: nil, idempotent: false, timeout: .seconds(5),
            attempts: 1)
        let login = try await signIn(client, email: email, password: password)
        guard let token = login.data?["accessToken"]?.stringValue else {
            throw TestStackError("sign-in of \(email) failed: \(login.error?.message ?? "")")
        }
        return token
    }

    /// The messages auth's `file` transport wrote under `dataDirectory/outbox`, oldest first.
    public static func messages(dataDirectory: URL) -> [JSONValue] {
        let folder = dataDirectory.appendingPathComponent("outbox")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }
            .compactMap { try? JSONParser.parse(Data(contentsOf: folder.appendingPathComponent($0))) }
            .sorted { ($0["createdAt"]?.stringValue ?? "", $0["id"]?.stringValue ?? "") < ($1["createdAt"]?.stringValue ?? "", $1["id"]?.stringValue ?? "") }
    }

    /// Waits for the `count`-th message to `recipient` and returns its 6-digit code.
    public static func code(to recipient: String, number count: Int = 1, dataDirectory: URL) async throws -> String {
        for _ in 0..<200 {
            let messages = messages(dataDirectory: dataDirectory).filter { $0["recipient"]?.stringValue == recipient }
            if messages.count >= count, let code = sixDigits(in: messages[count - 1]["body"]?.stringValue ?? "") { return code }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestStackError("no message number \(count) to \(recipient)")
    }

    /// The first 6-digit number in a text.
    public static func sixDigits(in text: String) -> String? {
        text.firstMatch(of: /\b(\d{6})\b/).map { String($0.1) }
    }
}

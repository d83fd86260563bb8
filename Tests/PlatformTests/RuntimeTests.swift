import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@Suite("Storage")
struct StorageTests {
    @Test("databases open in WAL with foreign keys, the chosen durability, and migrate once", arguments: [Durability.full, .normal])
    func openDatabase(durability: Durability) throws {
        let directory = try TemporaryDirectory()
        let migrate: @Sendable (inout DatabaseMigrator) -> Void = { migrator in
            migrator.registerMigration("one") { db in try db.execute(sql: "CREATE TABLE t (x)") }
        }
        let pool = try ServiceDatabase.open(directory: directory.url, name: "db", durability: durability, migrations: migrate)
        #expect(try ServiceDatabase.synchronousSetting(of: pool) == (durability == .full ? 2 : 1))
        let (journal, foreignKeys, tables) = try pool.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA foreign_keys"),
                try db.tableExists("platform_event") && db.tableExists("t")
            )
        }
        #expect(journal == "wal")
        #expect(foreignKeys == 1)
        #expect(tables)
        try pool.close()
        // Reopening runs no migration twice.
        let again = try ServiceDatabase.open(directory: directory.url, name: "db", durability: durability, migrations: migrate)
        #expect(try ServiceDatabase.synchronousSetting(of: again) == (durability == .full ? 2 : 1))
        try again.close()
    }
}

@Suite("Idempotency store")
struct IdempotencyStoreTests {
    @Test("keys are kept while fresh and pruned once old")
    func pruning() throws {
        let directory = try TemporaryDirectory()
        let pool = try ServiceDatabase.open(directory: directory.url, name: "db", durability: .normal, migrations: { _ in })
        let now = Date()
        try pool.write { db in
            try IdempotencyStore.save(db, scope: "public", key: "k", op: "x.y", requestHash: "h", reply: Data("{}".utf8))
            #expect(try IdempotencyStore.prune(db, olderThan: 3_600, now: now) == 0)
            #expect(try IdempotencyStore.lookup(db, scope: "public", key: "k", op: "x.y", requestHash: "h") == .replay(Data("{}".utf8)))
            #expect(try IdempotencyStore.prune(db, olderThan: 3_600, now: now.addingTimeInterval(7_200)) == 1)
            #expect(try IdempotencyStore.lookup(db, scope: "public", key: "k", op: "x.y", requestHash: "h") == .new)
        }
        try pool.close()
    }

    @Test("pruning goes from the oldest keys in batches and stops at the first fresh one")
    func pruningInBatches() throws {
        let directory = try TemporaryDirectory()
        let pool = try ServiceDatabase.open(directory: directory.url, name: "db", durability: .normal, migrations: { _ in })
        let now = Date()
        try pool.write { db in
            // 2,500 keys two days old, then 700 from the last hour.
            for index in 0..<3_200 {
                let age: TimeInterval = index < 2_500 ? 2 * 86_400 - Double(index) : 3_600 - Double(index - 2_500)
                try IdempotencyStore.save(
                    db, scope: "u\(index % 7)", key: "k\(index)", op: "x.y", requestHash: "h", reply: Data("{}".utf8), at: now.addingTimeInterval(-age))
            }
            #expect(try IdempotencyStore.prune(db, olderThan: 86_400, now: now) == 2_500)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM platform_idempotency") == 700)
            #expect(try IdempotencyStore.lookup(db, scope: "u1", key: "k2500", op: "x.y", requestHash: "h") == .replay(Data("{}".utf8)))
            #expect(try IdempotencyStore.lookup(db, scope: "u0", key: "k2499", op: "x.y", requestHash: "h") == .new)
            #expect(try IdempotencyStore.prune(db, olderThan: 86_400, now: now) == 0)
        }
        try pool.close()
    }
}

@Suite("Service runtime")
struct RuntimeTests {
    @Test("a write with idem happens once; the same key with another body is a conflict")
    func idempotency() async throws {
        let service = try await InProcessService(TestService.definition())
        let first = try await service.call("test.put", data: ["key": "a", "value": 1], idem: "k1")
        let retry = try await service.call("test.put", data: ["key": "a", "value": 1], idem: "k1")
        #expect(first.ok && first.data == retry.data)
        let reused = try await service.call("test.put", data: ["key": "a", "value": 2], idem: "k1")
        #expect(reused.error?.code == .conflict)
        #expect(reused.error?.details["reason"] == "idempotency_key_reused")
        // Keys are per caller: another user's same key is a new write.
        let alice = try await service.call("test.mine.put", data: ["key": "b", "value": 1], as: .user("alice"), idem: "k2")
        let bob = try await service.call("test.mine.put", data: ["key": "b", "value": 1], as: .user("bob"), idem: "k2")
        #expect(alice.data?["count"] == 2)
        #expect(bob.data?["count"] == 3)
        #expect(try await service.call("test.count", idempotent: true).data == 3)
        await service.stop()
    }

    @Test("concurrent retries with one idem key write once")
    func concurrentIdempotency() async throws {
        let service = try await InProcessService(TestService.definition())
        let replies = try await withThrowingTaskGroup(of: Reply.Parsed.self) { group in
            for _ in 0..<20 {
                group.addTask { try await service.call("test.put", data: ["key": "x", "value": 5], idem: "same") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.allSatisfy { $0.ok && $0.data == replies[0].data })
        #expect(try await service.call("test.count", idempotent: true).data == 1)
        await service.stop()
    }

    @Test("a write prepared without waiting goes from the socket thread to the writer; one that would wait, or a retry refused now, takes a task")
    func writesStartedOnTheSocketThread() async throws {
        defer { TestService.stagedMode.store(0, ordering: .relaxed) }
        let service = try await InProcessService(TestService.definition())
        TestService.stagedMode.store(0, ordering: .relaxed)
        let first = try await service.call("test.staged.put", data: ["key": "a", "value": 1], as: .user("alice"), idem: "s1")
        #expect(first.data?["preparedOn"] == "socket" && first.data?["count"] == 1)
        // Many at once: each written once, each answered its own count.
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<40 {
                group.addTask {
                    let reply = try await service.call("test.staged.put", data: ["key": .string("k\(index)"), "value": 2], as: .user("alice"))
                    guard case .integer(let count)? = reply.data?["count"] else { return -1 }
                    return Int(count)
                }
            }
            return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
        }
        #expect(counts == Set(2...41))
        // A preparation that would have to wait runs in a task.
        TestService.stagedMode.store(1, ordering: .relaxed)
        let waited = try await service.call("test.staged.put", data: ["key": "b", "value": 3], as: .user("alice"))
        #expect(waited.data?["preparedOn"] == "task" && waited.data?["count"] == 42)
        // Refused now: a retry of a request that passed gets its first reply (the task looks
        // it up); a new request is refused, and nothing is written.
        TestService.stagedMode.store(2, ordering: .relaxed)
        let retry = try await service.call("test.staged.put", data: ["key": "a", "value": 1], as: .user("alice"), idem: "s1")
        #expect(retry.ok && retry.data == first.data)
        let refused = try await service.call("test.staged.put", data: ["key": "c", "value": 4], as: .user("alice"))
        #expect(refused.error?.code == .validationFailed && refused.error?.fields["value"] == "refused now")
        let refusedWithKey = try await service.call("test.staged.put", data: ["key": "c", "value": 4], as: .user("alice"), idem: "s2")
        #expect(refusedWithKey.error?.code == .validationFailed)
        // A bad body never reaches the preparation.
        TestService.stagedMode.store(0, ordering: .relaxed)
        let bad = try await service.call("test.staged.put", data: ["key": "", "value": 4], as: .user("alice"))
        #expect(bad.error?.code == .validationFailed && bad.error?.fields["key"] != nil)
        #expect(try await service.call("test.count", idempotent: true).data == 42)
        await service.stop()
    }

    @Test("a token seen for the first time is checked off the socket thread; the next requests with it are prepared there; a forged one writes nothing")
    func firstTokensOffTheSocketThread() async throws {
        let key = try Ed25519PrivateKey()
        let signer = AccessTokenSigner(keyID: "k1", key: key)
        let service = try await InProcessService(TestService.definition(), verifier: AccessTokenVerifier(keys: ["k1": key.publicKey]))
        let now = Int64(Date().timeIntervalSince1970)
        let token = try signer.token(for: AccessTokenClaims(
            userID: "usr_1", roles: ["recipient"], activeRole: "recipient", sessionID: "ses_1", issuedAt: now, expiresAt: now + 300))
        func put(_ key: String, token: String) async throws -> Reply.Parsed {
            try await service.client.call("test.staged.put", data: ["key": .string(key), "value": 1], token: token, idem: nil, idempotent: false)
        }
        #expect(try await put("a", token: token).data?["preparedOn"] == "task")
        #expect(try await put("b", token: token).data?["preparedOn"] == "socket")
        // Another key's signature on the same claims: refused, whichever thread checks it.
        let forged = try AccessTokenSigner(keyID: "k1", key: try Ed25519PrivateKey()).token(for: AccessTokenClaims(
            userID: "usr_1", roles: ["recipient"], activeRole: "recipient", sessionID: "ses_1", issuedAt: now, expiresAt: now + 300))
        for _ in 0..<2 { #expect(try await put("c", token: forged).error?.code == .unauthenticated) }
        #expect(try await service.call("test.count", idempotent: true).data == 2)
        await service.stop()
    }

    @Test("auth rules: unauthenticated without a valid token, forbidden without the role")
    func authRules() async throws {
        let service = try await InProcessService(TestService.definition())
        #expect(try await service.call("test.me", idempotent: true).error?.code == .unauthenticated)
        #expect(try await service.call("test.me", as: .token("garbage"), idempotent: true).error?.code == .unauthenticated)
        #expect(try await service.call("test.me", as: .user("ann", roles: ["recipient"]), idempotent: true).data == "ann")
        #expect(try await service.call("test.admin", as: .user("ann", roles: ["recipient"]), idempotent: true).error?.code == .forbidden)
        #expect(try await service.call("test.admin", as: .user("root", roles: ["admin"]), idempotent: true).data == "secret")
        await service.stop()
    }

    @Test("a handler past its deadline is answered timeout, and others are not held up")
    func deadline() async throws {
        let directory = try TemporaryDirectory()
        var configuration = PlatformConfiguration.forTests(directory: directory, services: ["test"])
        configuration.requestDeadlineMs = 3_000
        let service = try await InProcessService(TestService.definition(), configuration: configuration)
        async let slow = service.call("test.slow", data: ["ms": 6_000], idempotent: false, timeout: .seconds(10))
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        #expect(try await service.call("test.health", idempotent: true).ok)
        // Held up, it would wait for the slow handler's 3 s deadline (2.95 s from here);
        // the bound leaves a loaded machine (the whole suite on two cores) its margin.
        #expect(ContinuousClock.now - started < .seconds(2))
        let reply = try await slow
        #expect(reply.error?.code == .timeout)
        await service.stop()
    }

    @Test("a read runs whole on a read thread, not a task; one past its deadline is answered timeout and other reads are not held up")
    func readsOnReadThreads() async throws {
        let directory = try TemporaryDirectory()
        var configuration = PlatformConfiguration.forTests(directory: directory, services: ["test"])
        configuration.requestDeadlineMs = 1_500
        let service = try await InProcessService(TestService.definition(), configuration: configuration)
        #expect(try await service.call("test.slow.read", data: ["ms": 0], idempotent: true).data?["onTask"] == false)
        // Two reads block their threads past their deadline: answered `timeout`, their
        // late replies dropped.
        async let slow = withThrowingTaskGroup(of: Reply.Parsed.self) { group in
            for _ in 0..<2 { group.addTask { try await service.call("test.slow.read", data: ["ms": 3_000], idempotent: true, timeout: .seconds(10)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        #expect(try await service.call("test.count", idempotent: true, timeout: .seconds(10)).data == 0)
        // There are at least three read threads, so another read waits for neither
        // (the bound leaves a loaded machine its margin).
        #expect(ContinuousClock.now - started < .seconds(2))
        let replies = try await slow
        #expect(replies.count == 2 && replies.allSatisfy { $0.error?.code == .timeout })
        // The threads come free: a read after them runs.
        try await Task.sleep(for: .seconds(2))
        #expect(try await service.call("test.slow.read", data: ["ms": 0], idempotent: true).data?["onTask"] == false)
        await service.stop()
    }

    @Test("an unexpected error is internal with a ref, never SQL")
    func internalErrors() async throws {
        let service = try await InProcessService(TestService.definition())
        let reply = try await service.call("test.fail", idempotent: false)
        let error = try #require(reply.error)
        #expect(error.code == .internal)
        #expect(error.details["ref"]?.stringValue?.count == 12)
        #expect(!error.message.contains("no_such_table") && !error.message.contains("SELECT"))
        await service.stop()
    }

    @Test("describe lists every operation with schemas, auth rules and events")
    func describe() async throws {
        let service = try await InProcessService(TestService.definition())
        let reply = try await service.call("test.describe", idempotent: true)
        guard case .array(let operations)? = reply.data?["operations"] else {
            Issue.record("no operations")
            return
        }
        let names = operations.compactMap { $0["op"]?.stringValue }
        #expect(Set(names) == ["test.put", "test.mine.put", "test.staged.put", "test.count", "test.slow", "test.slow.read", "test.fail", "test.me", "test.me.fast", "test.admin", "test.health", "test.describe", "test.events.replay", "test.metrics", "test.metrics.prometheus"])
        let put = try #require(operations.first { $0["op"] == "test.put" })
        #expect(put["request"]?["required"] == ["key", "value"])
        #expect(operations.first { $0["op"] == "test.events.replay" }?["auth"] == "internal")
        #expect(reply.data?["events"]?.objectValue == nil)
        #expect(reply.data?["events"]?[0]?["type"] == "test.item.put")
        #expect(reply.data?["events"]?[0]?["data"]?["required"] == ["key", "value"])
        await service.stop()
    }

    @Test("metrics count what the service answered, errors by code, health checks left out; admins only")
    func metrics() async throws {
        // Counts are kept per service name in a process: a name of its own.
        let service = try await InProcessService(TestService.definition(name: "counted"))
        let before = try #require(try await service.call("counted.metrics", as: .user("root", roles: ["admin"]), idempotent: true).data)
        for _ in 0..<5 { _ = try await service.call("counted.health", idempotent: true) }
        #expect(try await service.call("counted.me", as: .user("ann", roles: ["recipient"]), idempotent: true).ok)
        #expect(try await service.call("counted.admin", as: .user("ann", roles: ["recipient"]), idempotent: true).error?.code == .forbidden)
        #expect(try await service.call("counted.metrics", as: .user("ann", roles: ["recipient"]), idempotent: true).error?.code == .forbidden)
        let after = try #require(try await service.call("counted.metrics", as: .user("root", roles: ["admin"]), idempotent: true).data)
        func count(_ value: JSONValue, _ path: String...) -> Int64 {
            var current: JSONValue? = value
            for part in path { current = current?[part] }
            return current?.integerValue ?? 0
        }
        // test.me, two refusals and the first metrics call; not the five health checks.
        #expect(count(after, "total", "requests") - count(before, "total", "requests") == 4)
        #expect(count(after, "lastHour", "errorsByCode", "forbidden") - count(before, "lastHour", "errorsByCode", "forbidden") == 2)
        #expect(after["minutes"]?.arrayValue?.count == 60)
        #expect(["integer", "number"].contains(after["total"]?["p99Ms"]?.typeName ?? "null"))
        await service.stop()
    }

    @Test("shutdown finishes requests in flight before closing")
    func gracefulShutdown() async throws {
        let service = try await InProcessService(TestService.definition())
        #expect(try await service.call("test.health", idempotent: true).ok)
        let tag = UUID().uuidString
        async let slow = service.call("test.slow", data: ["ms": 400, "tag": .string(tag)], idempotent: false)
        // Shut down once the slow request is running (a loaded machine may take a while to deliver it).
        for _ in 0..<500 where !TestService.slowStarted.withLock({ $0.contains(tag) }) { try await Task.sleep(for: .milliseconds(10)) }
        await service.triggerShutdown()
        // Once the service drains (the signal arrives asynchronously), a new request is
        // refused at once rather than left unanswered.
        var late: Reply.Parsed?
        for _ in 0..<100 {
            late = try? await service.call("test.health", idempotent: false, timeout: .milliseconds(500))
            if late?.error != nil { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(late?.error?.code == .unavailable)
        #expect(try await slow.ok)
        await service.waitUntilStopped()
        await service.stop()
    }
}

@Suite("Service client")
struct ServiceClientTests {
    @Test("many requests in flight on one client")
    func manyInFlight() async throws {
        let service = try await InProcessService(TestService.definition())
        let count = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await service.call("test.put", data: ["key": .string("k\(index)"), "value": .integer(Int64(index))]).ok
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(count == 200)
        #expect(try await service.call("test.count", idempotent: true).data == 200)
        await service.stop()
    }

    @Test("nothing listening: unavailable by the deadline, no late delivery")
    func unreachable() async throws {
        let client = ServiceClient(endpoint: TestEnvironment.freeEndpoint())
        let started = ContinuousClock.now
        await #expect(throws: ClientError.self) {
            try await client.call("x.health", idempotent: true, timeout: .milliseconds(300), attempts: 2)
        }
        // Two 300 ms attempts (0.65 s alone); the bound is loose because the suite shares
        // two cores with services running in process (12.7 s once, beside the stats suites),
        // but far below a hang.
        #expect(ContinuousClock.now - started < .seconds(30))
        await client.close()
    }
}

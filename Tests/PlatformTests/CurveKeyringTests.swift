import Foundation
import Platform
import SharedTesting
import Testing
import ZeroMQ

/// The deployment's keys on disk and the sealing of backups (README, "Encrypted links",
/// "Backups").
@Suite("CURVE keyring and sealed backups")
struct CurveKeyringTests {
    @Test("a key folder loads per component; a secret that is not its public key's, or a missing entry, is refused")
    func keyFolders() throws {
        let directory = try TemporaryDirectory(prefix: "keyring")
        defer { directory.remove() }
        let folder = directory.url.appendingPathComponent("keys")
        let pairs = try CurveKeyring.generate()
        try CurveKeyring.write(pairs, to: folder)
        #expect(throws: ConfigurationError.self) { try CurveKeyring.write(pairs, to: folder) }

        let auth = try CurveKeyring.load(from: folder, name: "auth")
        #expect(auth.keys == pairs["auth"])
        #expect(try auth.serverKey(of: "gateway") == pairs["gateway"]?.publicKey)
        #expect(auth.backupRecipientKey == Z85.decode(pairs["backup"]!.publicKey))
        #expect(throws: ConfigurationError.self) { try auth.serverKey(of: "nosuch") }
        #expect(throws: ConfigurationError.self) { try CurveKeyring.load(from: folder, name: "nosuch") }

        // auth's file with goals' secret: refused.
        let swapped = "public-key = \"\(pairs["auth"]!.publicKey)\"\nsecret-key = \"\(pairs["goals"]!.secretKey)\"\n"
        try Data(swapped.utf8).write(to: folder.appendingPathComponent("auth.secret"))
        #expect(throws: ConfigurationError.self) { try CurveKeyring.load(from: folder, name: "auth") }
        // A keyring whose own key is not the one public-keys names: refused.
        #expect(throws: ConfigurationError.self) {
            try CurveKeyring(name: "auth", keys: pairs["goals"]!, publicKeys: pairs.mapValues(\.publicKey))
        }
    }

    @Test("key files: Z85's = and # inside values, comments, blank lines and spaces")
    func keyFileSyntax() throws {
        let directory = try TemporaryDirectory(prefix: "keyfile")
        defer { directory.remove() }
        // Z85 uses = and #: only the first = splits, and only whole lines are comments.
        var pairs = try CurveKeyring.generate()
        var tries = 0
        while !(pairs["auth"]!.publicKey + pairs["auth"]!.secretKey).contains(where: { $0 == "=" || $0 == "#" }), tries < 200 {
            pairs["auth"] = try CurveKeyPair.generate()
            tries += 1
        }
        let folder = directory.url.appendingPathComponent("keys")
        try CurveKeyring.write(pairs, to: folder)
        let spaced = "# the deployment's public keys\n\n" + pairs.map { "   \($0.key)=\"\($0.value.publicKey)\"   \n# between\n" }.joined()
        try Data(spaced.utf8).write(to: folder.appendingPathComponent(CurveKeyring.publicKeysFile))
        let auth = try CurveKeyring.load(from: folder, name: "auth")
        #expect(auth.keys == pairs["auth"])
        #expect(auth.publicKeys == pairs.mapValues(\.publicKey))
        // A line that is no entry is refused, not skipped.
        try Data("auth \"\(pairs["auth"]!.publicKey)\"\n".utf8).write(to: folder.appendingPathComponent(CurveKeyring.publicKeysFile))
        #expect(throws: ConfigurationError.self) { try CurveKeyring.load(from: folder, name: "auth") }
    }

    @Test("the server role admits the deployment's keys, not the backup key; the edge's domain is per secret")
    func serverRoles() throws {
        let pairs = try CurveKeyring.generate()
        let keyring = try CurveKeyring(name: "auth", keys: pairs["auth"]!, publicKeys: pairs.mapValues(\.publicKey))
        guard case .server(let secret, let domain) = try keyring.serverRole() else {
            Issue.record("not a server role")
            return
        }
        #expect(secret == pairs["auth"]!.secretKey)
        #expect(domain.hasPrefix("internal-"))
        let one = try EdgeTrust(secret: EdgeTrust.generateSecret()), two = try EdgeTrust(secret: EdgeTrust.generateSecret())
        #expect(one.domain != two.domain)
    }

    @Test("a sealed backup opens with the backup secret only and names its sender; a changed byte, another key or a forged sender fails")
    func sealing() throws {
        let pair = try CurveKeyPair.generate()
        let recipient = try #require(Z85.decode(pair.publicKey))
        let secret = try #require(Z85.decode(pair.secretKey))
        let service = try CurveKeyPair.generate()
        let sender = try #require(Z85.decode(service.secretKey))
        let plaintext = Array("SQLite format 3\u{0}the audit log".utf8) + Digest.randomBytes(5_000)
        let sealed = try BackupSeal.seal(plaintext, to: recipient, from: sender)
        #expect(BackupSeal.isSealed(sealed))
        #expect(Data(sealed).range(of: Data("audit".utf8)) == nil)
        let opened = try BackupSeal.open(sealed, secretKey: secret)
        #expect(opened.plaintext == plaintext && opened.sender == Z85.decode(service.publicKey))
        // Two seals of one backup differ (a fresh ephemeral key each time).
        #expect(try BackupSeal.seal(plaintext, to: recipient, from: sender) != sealed)
        var changed = sealed
        changed[changed.count / 2] ^= 0x01
        #expect(throws: CryptoError.self) { try BackupSeal.open(changed, secretKey: secret) }
        // Claiming another sender (a deployment's public key, as anyone may read it) fails.
        var forged = sealed
        let claimed = try #require(Z85.decode(try CurveKeyPair.generate().publicKey))
        forged.replaceSubrange(36..<68, with: claimed)
        #expect(throws: CryptoError.self) { try BackupSeal.open(forged, secretKey: secret) }
        let other = try #require(Z85.decode(try CurveKeyPair.generate().secretKey))
        #expect(throws: CryptoError.self) { try BackupSeal.open(sealed, secretKey: other) }
        #expect(throws: CryptoError.self) { try BackupSeal.seal(plaintext, to: [1, 2, 3], from: sender) }
        // A low-order recipient key (all zeros) gives no usable secret: refused.
        #expect(throws: CryptoError.self) { try BackupSeal.seal(plaintext, to: [UInt8](repeating: 0, count: 32), from: sender) }
        // The first format, with no sender, is refused.
        #expect(throws: CryptoError.self) { try BackupSeal.open(Array("bks1".utf8) + Array(sealed.dropFirst(4)), secretKey: secret) }
    }

    @Test("restore puts back only a sound database of the same service, sealed by it or an operator, never under a running process")
    func restoreRefusals() async throws {
        let directory = try TemporaryDirectory(prefix: "restore-refusals")
        let keys = directory.url.appendingPathComponent("keys")
        try CurveKeyring.write(try CurveKeyring.generate(), to: keys)
        let booking = try CurveKeyring.load(from: keys, name: "booking")
        let savings = try CurveKeyring.load(from: keys, name: "savings")
        let backupSecret = try CurveKeyring.backupSecretKey(in: keys)
        let data = directory.url.appendingPathComponent("data")
        let pool = try ServiceDatabase.open(directory: data, name: "booking", durability: .normal) { _ in }
        try await pool.write { db in try db.execute(sql: "CREATE TABLE marker (x)") }
        let database = data.appendingPathComponent("booking.sqlite")
        let sealed = directory.url.appendingPathComponent("booking.sqlite.sealed")
        _ = try DatabaseBackup.backup(database, to: sealed, sealing: try #require(booking.backupSealing))
        let bySavings = directory.url.appendingPathComponent("by-savings.sqlite.sealed")
        _ = try DatabaseBackup.backup(database, to: bySavings, sealing: try #require(savings.backupSealing))
        let senders = booking.backupSenders(of: "booking")

        // Open in this process only: F_GETLK sees other processes' locks, so a child holds it.
        let holder = try SpawnedProcess(
            executable: "/usr/bin/python3",
            arguments: ["-c", "import sqlite3,time; c=sqlite3.connect('\(database.path)'); c.execute('select * from marker').fetchall(); time.sleep(30)"],
            environment: ProcessInfo.processInfo.environment, output: nil)
        defer { holder.send(SIGKILL) }
        try pool.close()
        var waited = 0
        while DatabaseBackup.openedBy(database) == nil, waited < 100 {
            try await Task.sleep(for: .milliseconds(50))
            waited += 1
        }
        #expect(DatabaseBackup.openedBy(database) == holder.pid)
        #expect(throws: DatabaseBackup.Failure.self) { try DatabaseBackup.restore(sealed, into: database, secretKey: backupSecret, senders: senders) }
        holder.send(SIGKILL)
        while holder.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(DatabaseBackup.openedBy(database) == nil)

        // Sealed by savings' key: not a sender of booking's backups.
        #expect(throws: DatabaseBackup.Failure.self) { try DatabaseBackup.restore(bySavings, into: database, secretKey: backupSecret, senders: senders) }
        // An empty file, and another service's database.
        let empty = directory.url.appendingPathComponent("empty.sqlite")
        FileManager.default.createFile(atPath: empty.path, contents: Data())
        #expect(throws: DatabaseBackup.Failure.self) { try DatabaseBackup.restore(empty, into: database) }
        let other = try ServiceDatabase.open(directory: directory.url.appendingPathComponent("other"), name: "savings", durability: .normal) { _ in }
        try other.close()
        #expect(throws: DatabaseBackup.Failure.self) {
            try DatabaseBackup.restore(directory.url.appendingPathComponent("other/savings.sqlite"), into: database)
        }
        // The booking backup sealed by booking goes back.
        #expect(try DatabaseBackup.restore(sealed, into: database, secretKey: backupSecret, senders: senders) != nil)
    }
}

@Suite("Backup leftovers")
struct BackupLeftoverTests {
    @Test("an interrupted backup's working copies go once they are an hour old; fresh ones and backups stay")
    func leftovers() throws {
        let directory = try TemporaryDirectory(prefix: "leftovers")
        defer { directory.remove() }
        let folder = directory.url
        let names = [".auth-1.sqlite.sealed.plain", ".auth-1.sqlite.sealed.partial", ".auth.sqlite.restoring", ".fresh.sqlite.plain", "auth-1.sqlite.sealed", "auth.sqlite"]
        for name in names { try Data("x".utf8).write(to: folder.appendingPathComponent(name)) }
        let old = Date().addingTimeInterval(-7_200)
        for name in names where name != ".fresh.sqlite.plain" {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: folder.appendingPathComponent(name).path)
        }
        DatabaseBackup.removeLeftovers(in: folder)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left == [".fresh.sqlite.plain", "auth-1.sqlite.sealed", "auth.sqlite"])
    }

    @Test("pruning keeps the newest of the backups named as the system names them; other names and future dates are left out")
    func pruning() throws {
        let directory = try TemporaryDirectory(prefix: "prune")
        let folder = directory.url
        let start = Date().addingTimeInterval(-10 * 3_600)
        let ours = (0..<5).map { DatabaseBackup.fileName(service: "auth", at: start.addingTimeInterval(Double($0) * 3_600), sealed: true) }
        let others = ["auth-before-upgrade.sqlite.sealed", "auth-2099-01-01T00-00-00.000Z.sqlite.sealed", "authx-1.sqlite", "booking-2026-01-01T00-00-00.000Z.sqlite"]
        for name in ours + others { try Data("x".utf8).write(to: folder.appendingPathComponent(name)) }
        DatabaseBackup.prune(folder: folder, service: "auth", keep: 2)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: folder.path))
        #expect(left == Set(ours.suffix(2) + others))
    }
}

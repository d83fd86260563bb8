import Foundation
import GRDB
import Platform
import Synchronization

/// What booking keeps in memory between requests: the park's configuration and the
/// availability of recently asked days. Both are dropped after every commit that could
/// change them (a booking, a cancellation, a block, a setting), so they are never older
/// than the last write; availability also expires after a second, since "bookable"
/// depends on the time. A generation number keeps a read that raced with a write from
/// storing what it read before the write, and the park's `settings_version` column keeps a
/// read transaction whose snapshot began before a settings change committed (GRDB reads
/// the schema version first, so a snapshot can predate the first statement of a handler)
/// from caching the settings it sees as current.
final class BookingState: Sendable {
    private struct Caches {
        var generation = 0
        /// Changes with every change of the park's settings (not with bookings).
        var settingsVersion = 0
        var park: ParkConfiguration?
        /// Settings changes written but not yet committed or rolled back.
        var openSettingsChanges = 0
        /// The highest `settings_version` known committed: settings read from a snapshot
        /// older than that are out of date.
        var committedStored = 0
        var availability: [String: (items: Data, until: Date)] = [:]
        /// Connections whose open transaction already clears the caches when it ends.
        var clearingAtEnd: Set<ObjectIdentifier> = []
    }

    private let caches = Mutex(Caches())

    /// The current generation, to pass back when storing what was read after it.
    var generation: Int { caches.withLock { $0.generation } }

    /// The park's configuration, loaded once per change. `inWriter` is set by the write
    /// transaction, which sees its own uncommitted settings.
    ///
    /// While a settings change is uncommitted, readers see the old settings and the writer
    /// the new: neither is cached, and a reader's copy carries version -1, so a plan made
    /// from it never matches and is made again in the transaction.
    func configuration(_ db: Database, inWriter: Bool = false) throws -> ParkConfiguration {
        let (cached, generation, version, changing, committed) = caches.withLock {
            ($0.park, $0.generation, $0.settingsVersion, $0.openSettingsChanges > 0, $0.committedStored)
        }
        if let cached { return cached }
        var loaded = try ParkConfiguration.load(db)
        // The writer always reads the latest commit; a reader's snapshot may be older than
        // a settings change whose end was already counted.
        if changing || (!inWriter && loaded.stored < committed) {
            loaded.version = inWriter ? version : -1
            return loaded
        }
        loaded.version = version
        caches.withLock { if $0.generation == generation && $0.openSettingsChanges == 0 { $0.park = loaded } }
        return loaded
    }

    /// The park's configuration from memory, or read outside any write (a handler's
    /// preparation): the writer compares its ``ParkConfiguration/version`` with the one
    /// it reads in the transaction.
    func configuration(outside pool: DatabasePool) async throws -> ParkConfiguration {
        if let cached = cachedConfiguration { return cached }
        return try await pool.read { db in try self.configuration(db) }
    }

    /// The park's configuration when it is in memory (no read).
    var cachedConfiguration: ParkConfiguration? { caches.withLock { $0.park } }

    /// A cached availability answer for `key`, if fresh.
    func cachedAvailability(_ key: String, now: Date = Date()) -> Data? {
        caches.withLock { caches in
            guard let entry = caches.availability[key], entry.until > now else { return nil }
            return entry.items
        }
    }

    /// Stores an availability answer computed from a read that started at `generation`.
    func storeAvailability(_ key: String, _ items: Data, generation: Int, now: Date = Date()) {
        caches.withLock { caches in
            guard caches.generation == generation else { return }
            if caches.availability.count > 2_000 { caches.availability.removeAll(keepingCapacity: true) }
            caches.availability[key] = (items, now.addingTimeInterval(1))
        }
    }

    /// Call inside a transaction that changes bookings or blocks: availability is dropped
    /// at once and again when the transaction ends (commit or rollback).
    ///
    /// The end of the transaction is hooked once however many bookings it holds: each hook
    /// is a GRDB transaction observer that every later statement of a group commit would
    /// consult.
    func changed(_ db: Database) {
        let connection = ObjectIdentifier(db)
        clear(settings: false)
        guard caches.withLock({ $0.clearingAtEnd.insert(connection).inserted }) else { return }
        let ended: @Sendable (Database) -> Void = { [self] _ in
            caches.withLock { _ = $0.clearingAtEnd.remove(connection) }
            clear(settings: false)
        }
        db.afterNextTransaction(onCommit: ended, onRollback: ended)
    }

    /// Call inside a transaction that changes the park's settings: the cached settings go
    /// too, at once (so later writes of the same group commit read the new ones) and again
    /// when the transaction ends.
    func settingsChanged(_ db: Database) throws {
        let stored = try Int.fetchOne(db, sql: "UPDATE park SET settings_version = settings_version + 1 WHERE id = 1 RETURNING settings_version") ?? 0
        clear(settings: true, opening: 1)
        db.afterNextTransaction(
            onCommit: { [self] db in
                // Read back (nothing writes between the commit and this hook): a savepoint of
                // the group commit may have undone this change.
                let committed = (try? Int.fetchOne(db, sql: "SELECT settings_version FROM park WHERE id = 1")) ?? stored
                caches.withLock { $0.committedStored = max($0.committedStored, committed) }
                clear(settings: true, opening: -1)
            },
            onRollback: { [self] _ in clear(settings: true, opening: -1) })
    }

    private func clear(settings: Bool, opening: Int = 0) {
        caches.withLock { caches in
            caches.openSettingsChanges += opening
            caches.generation += 1
            if settings {
                caches.park = nil
                caches.settingsVersion += 1
            }
            caches.availability.removeAll(keepingCapacity: true)
        }
    }
}

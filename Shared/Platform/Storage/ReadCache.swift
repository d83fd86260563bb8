import Foundation
import GRDB
import Synchronization

/// Recent answers of the busiest reads (`goals.dashboard` and `goals.calendar`, stats'
/// period statistics), served from the socket thread. Every commit to the database empties
/// it (a transaction observer on the writer), so an answer is never older than the last
/// write; entries also expire after a second, since "today" moves at midnight without any
/// write. A generation number
/// keeps a read that raced with a commit from storing what it read before it.
public final class ReadCache: Sendable {
    private struct State {
        var generation = 0
        var entries: [String: (generation: Int, until: ContinuousClock.Instant, data: Data)] = [:]
    }

    /// At most this many answers are kept; beyond, the cache starts again.
    public static let capacity = 20_000
    /// How long an answer is served.
    public static let lifetime = Duration.seconds(1)

    private let state = Mutex(State())

    /// An empty cache; add its ``observer`` to the database.
    public init() {}

    /// The current generation, to pass back when storing what was read after it.
    public var generation: Int { state.withLock { $0.generation } }

    /// The answer kept for `key`, if it is still current.
    public func answer(_ key: String) -> Data? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.generation == state.generation, entry.until > .now else { return nil }
            return entry.data
        }
    }

    /// Keeps `data` for `key` unless a commit happened since `generation` was read.
    public func store(_ key: String, _ data: Data, generation: Int) {
        state.withLock { state in
            guard generation == state.generation else { return }
            if state.entries.count >= Self.capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = (generation, .now + Self.lifetime, data)
        }
    }

    /// Called after every commit.
    public func committed() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll(keepingCapacity: true)
        }
    }

    /// Runs `read` in a read transaction of `database`, keeps its encoded answer under
    /// `key` and returns it as raw JSON.
    ///
    /// The generation is taken before the transaction begins: GRDB opens a read's snapshot
    /// (reading the schema version) before the closure runs, so a generation taken inside
    /// could already count a commit the snapshot does not show, and the answer from before
    /// that commit would be kept as current.
    public func remember(
        _ key: String, from database: DatabasePool, _ read: @escaping @Sendable (Database) throws -> JSONValue
    ) async throws -> RawJSON {
        let generation = self.generation
        let data = try await database.read { db in try WireJSON.encode(try read(db)) }
        store(key, data, generation: generation)
        return RawJSON(data)
    }

    /// The observer to add to the service's database: it empties the cache at each commit.
    public var observer: some TransactionObserver { CommitObserver(cache: self) }

    private final class CommitObserver: TransactionObserver {
        let cache: ReadCache
        init(cache: ReadCache) { self.cache = cache }
        // Commits are told to every observer; no need to follow each row (that costs).
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { cache.committed() }
        func databaseDidRollback(_ db: Database) {}
    }
}

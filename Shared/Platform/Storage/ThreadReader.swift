import Foundation
import GRDB

/// A read-only connection of the calling thread's own, per database: for the threads
/// that answer reads one after another (the request socket's read threads).
///
/// `DatabasePool.read` lends one of the pool's readers for each read: the pool's
/// semaphore, a `sync` on its concurrent queue and a `sync` on the reader's serial queue.
/// With four read threads asking at once, a profile of `reminders.list` at 32 in flight
/// found a fifth of their time in libdispatch's slow path and futex waits there. A thread
/// that keeps its own connection reads with no hand-off and no wait: SQLite's WAL gives
/// each read transaction the latest committed snapshot, whatever connection runs it.
///
/// Only for dedicated threads that may block (never Swift's cooperative pool), and only
/// for reads of a database whose schema does not change after its migrations (they run
/// when the service opens it, before any read): the connection's schema cache is not
/// cleared between reads as the pool's readers' is. A connection is dropped once its
/// database's pool is gone (a service stopped in a test process), the next time its
/// thread meets a pool it has no connection to, and with its thread if that ends.
public enum ThreadReader {
    /// Runs `body` in a read transaction on this thread's connection to `pool`'s database.
    public static func read<T>(_ pool: DatabasePool, _ body: (Database) throws -> T) throws -> T {
        try Connections.ofThisThread.connection(to: pool).queue.read(body)
    }

    /// Whether ``read(_:remembering:user:_:)`` keeps answers (`BACKEND_READ_MEMORY=off` turns
    /// it off, to measure what it saves or to rule it out).
    public static let remembersAnswers = ProcessInfo.processInfo.environment["BACKEND_READ_MEMORY"]?.lowercased() != "off"

    /// Answers `body`'s bytes for `key` from this thread's memory when none of `user`'s
    /// rows changed since they were worked out, else runs `body` in a read transaction
    /// and keeps its bytes.
    ///
    /// For reads whose answer is a function of `key` (the operation, the caller, the
    /// request) and of `user`'s rows in tables counted by ``UserChanges`` alone: never of
    /// the clock, of memory, or of another table. The user's counter is read in the same
    /// transaction as `body`, so an answer is kept with the counter of its own snapshot
    /// and given again only while the counter stands. Errors are not kept. Bounded per
    /// thread by ``Memory/byteBudget`` and ``Memory/entryBudget``; past either it starts over.
    public static func read<Key: Hashable & Sendable>(
        _ pool: DatabasePool, remembering key: Key, user: String, _ body: (Database) throws -> Data
    ) throws -> Data {
        guard remembersAnswers else { return try read(pool, body) }
        let entry = try Connections.ofThisThread.connection(to: pool)
        return try entry.queue.read { db in
            let generation = try UserChanges.generation(db, user: user)
            let key = AnyHashable(key)
            if let kept = entry.memory.answer(for: key, generation: generation) { return kept }
            let answer = try body(db)
            entry.memory.keep(answer, for: key, generation: generation)
            return answer
        }
    }

    /// One thread's kept answers from one database, each with its user's counter.
    final class Memory {
        static let byteBudget = 4 << 20
        static let entryBudget = 2_048

        private var answers: [AnyHashable: (generation: Int64, bytes: Data)] = [:]
        private var bytes = 0

        /// The answer kept for `key` when it was worked out at `generation`.
        func answer(for key: AnyHashable, generation: Int64) -> Data? {
            guard let kept = answers[key], kept.generation == generation else { return nil }
            return kept.bytes
        }

        func keep(_ answer: Data, for key: AnyHashable, generation: Int64) {
            guard answer.count <= Self.byteBudget / 8 else { return }
            if let replaced = answers.removeValue(forKey: key) { bytes -= replaced.bytes.count }
            if bytes + answer.count > Self.byteBudget || answers.count >= Self.entryBudget {
                answers.removeAll(keepingCapacity: true)
                bytes = 0
            }
            answers[key] = (generation, answer)
            bytes += answer.count
        }
    }

    private final class Connections {
        struct Entry {
            weak var pool: DatabasePool?
            let queue: DatabaseQueue
            let memory = Memory()
        }

        private var entries: [ObjectIdentifier: Entry] = [:]

        /// The calling thread's connections (made on its first read, kept for its life).
        static var ofThisThread: Connections {
            if let raw = pthread_getspecific(key) { return Unmanaged<Connections>.fromOpaque(raw).takeUnretainedValue() }
            let made = Connections()
            pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
            return made
        }

        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            // A thread that ends releases its connections (they close with their queues).
            pthread_key_create(&key) { raw in
                if let raw { Unmanaged<Connections>.fromOpaque(raw).release() }
            }
            return key
        }()

        func connection(to pool: DatabasePool) throws -> Entry {
            let id = ObjectIdentifier(pool)
            if let entry = entries[id], entry.pool === pool { return entry }
            // A pool seen for the first time: forget the connections of pools that are gone.
            entries = entries.filter { $0.value.pool != nil }
            var configuration = pool.configuration
            configuration.readonly = true
            configuration.label = (configuration.label ?? "database") + ".thread-reader"
            let queue = try DatabaseQueue(path: pool.path, configuration: configuration)
            let entry = Entry(pool: pool, queue: queue)
            entries[id] = entry
            return entry
        }
    }
}

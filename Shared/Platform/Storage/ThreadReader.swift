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
        try Connections.ofThisThread.connection(to: pool).read(body)
    }

    private final class Connections {
        private struct Entry {
            weak var pool: DatabasePool?
            let queue: DatabaseQueue
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

        func connection(to pool: DatabasePool) throws -> DatabaseQueue {
            let id = ObjectIdentifier(pool)
            if let entry = entries[id], entry.pool === pool { return entry.queue }
            // A pool seen for the first time: forget the connections of pools that are gone.
            entries = entries.filter { $0.value.pool != nil }
            var configuration = pool.configuration
            configuration.readonly = true
            configuration.label = (configuration.label ?? "database") + ".thread-reader"
            let queue = try DatabaseQueue(path: pool.path, configuration: configuration)
            entries[id] = Entry(pool: pool, queue: queue)
            return queue
        }
    }
}

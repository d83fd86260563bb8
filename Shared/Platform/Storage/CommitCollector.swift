import GRDB
import Synchronization

/// Gathers a value over the statements of a transaction and hands it over once, when the
/// transaction commits (nothing on a rollback): one commit hook per transaction however
/// many times it is fed. The outbox wakes the event publishers with it, durable timers
/// wake their workers with the earliest due time a transaction scheduled.
final class CommitCollector<Value: Sendable>: Sendable {
    private let pending = Mutex<[ObjectIdentifier: Value]>([:])
    private let merge: @Sendable (Value, Value) -> Value
    private let onCommit: @Sendable (Value) -> Void

    /// `merge` folds a new value into the transaction's so far; `onCommit` gets the result.
    init(merge: @escaping @Sendable (Value, Value) -> Value, onCommit: @escaping @Sendable (Value) -> Void) {
        self.merge = merge
        self.onCommit = onCommit
    }

    /// Adds `value` to what `db`'s open transaction has gathered.
    func add(_ value: Value, in db: Database) {
        let connection = ObjectIdentifier(db)
        let first = pending.withLock { pending -> Bool in
            guard let gathered = pending[connection] else {
                pending[connection] = value
                return true
            }
            pending[connection] = merge(gathered, value)
            return false
        }
        guard first else { return }
        db.afterNextTransaction(
            onCommit: { [self] _ in
                if let gathered = pending.withLock({ $0.removeValue(forKey: connection) }) { onCommit(gathered) }
            },
            onRollback: { [self] _ in _ = pending.withLock { $0.removeValue(forKey: connection) } })
    }
}

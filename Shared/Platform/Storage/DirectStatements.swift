import Foundation
import GRDB
import GRDBSQLite

/// A value bound to a statement parameter straight through SQLite's C API, for the hot
/// writes: no `StatementArguments` array of existentials, no `DatabaseValue` per value,
/// no observation bookkeeping per statement. Text is bound whole (GRDB stops a string at
/// its first NUL character). (In a profile of `booking.create` GRDB's
/// argument handling took more of the writer thread than SQLite's own work on the rows.)
public protocol SQLiteBindable {
    /// Binds `self` to the 1-based parameter `index`; returns SQLite's result code.
    func bind(to statement: SQLiteStatement, at index: Int32) -> Int32
}

/// SQLite copies the bytes before the bind call returns.
private let copiedBySQLite = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension String: SQLiteBindable {
    public func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 {
        var text = self
        return text.withUTF8 { sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), copiedBySQLite) }
    }
}

extension Int64: SQLiteBindable {
    public func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
}

extension Int: SQLiteBindable {
    public func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
}

extension Bool: SQLiteBindable {
    public func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self ? 1 : 0) }
}

extension Double: SQLiteBindable {
    public func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 { sqlite3_bind_double(statement, index, self) }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    public func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 {
        switch self {
        case .some(let value): value.bind(to: statement, at: index)
        case .none: sqlite3_bind_null(statement, index)
        }
    }
}

/// UTF-8 bytes already at hand (an encoded reply, an event's JSON) bound as TEXT without
/// making a `String` of them first.
public struct UTF8Text: SQLiteBindable {
    public let bytes: Data
    public init(_ bytes: Data) { self.bytes = bytes }

    public func bind(to statement: SQLiteStatement, at index: Int32) -> Int32 {
        bytes.withUnsafeBytes { raw in
            // A zero-length buffer may have no address; SQLite reads NULL as SQL NULL, so
            // an empty text gets an address of its own.
            guard let base = raw.baseAddress, raw.count > 0 else { return sqlite3_bind_text(statement, index, "", 0, copiedBySQLite) }
            return sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), Int32(raw.count), copiedBySQLite)
        }
    }
}

extension Statement {
    /// Binds `values` to the statement's parameters in order and runs it to its end (an
    /// INSERT, UPDATE or DELETE) inside the caller's transaction. For the hot writes, on
    /// tables no GRDB `TransactionObserver` follows row by row (this path does not tell
    /// GRDB's observation broker which statement runs); the transaction stays GRDB's.
    public func run<each Value: SQLiteBindable>(_ values: repeat each Value) throws {
        try bindAll(repeat each values)
        try stepRows { _ in }
    }

    /// Binds `values` and calls `body` with each row's columns, in order.
    public func forEachRow<each Value: SQLiteBindable>(_ values: repeat each Value, body: (StoredColumns) throws -> Void) throws {
        try bindAll(repeat each values)
        try stepRows(body)
    }

    /// Steps the bound statement to its end, calling `body` with each row (every row is
    /// stepped: a write's effects need it), and resets it.
    func stepRows(_ body: (StoredColumns) throws -> Void) throws {
        let statement = sqliteStatement
        defer { sqlite3_reset(statement) }
        let columns = StoredColumns(statement: statement)
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: try body(columns)
            case SQLITE_DONE: return
            case let code: throw failure(code)
            }
        }
    }

    /// Binds `values` and reads the first row with `read`, or returns `nil` when there is
    /// none (a keyed look-up, `... RETURNING`): the statement is run to its end either way.
    public func firstRow<Result, each Value: SQLiteBindable>(
        _ values: repeat each Value, read: (StoredColumns) throws -> Result
    ) throws -> Result? {
        var result: Result?
        try forEachRow(repeat each values) { columns in
            if result == nil { result = try read(columns) }
        }
        return result
    }

    private func bindAll<each Value: SQLiteBindable>(_ values: repeat each Value) throws {
        let statement = sqliteStatement
        // These run inside a transaction. One SQLite rolled back by itself (a full disk, an
        // I/O error) must not let a later write commit alone: GRDB refuses statements of an
        // aborted transaction, and so does this path.
        guard sqlite3_stmt_readonly(statement) != 0 || sqlite3_get_autocommit(sqlite3_db_handle(statement)) == 0 else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "a write outside a transaction (was it rolled back?)", sql: sql)
        }
        sqlite3_reset(statement)
        var index: Int32 = 0
        for value in repeat each values {
            index += 1
            let code = value.bind(to: statement, at: index)
            guard code == SQLITE_OK else { throw failure(code) }
        }
        guard index == sqlite3_bind_parameter_count(statement) else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "\(index) values for \(sqlite3_bind_parameter_count(statement)) parameters", sql: sql)
        }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
    }
}

import GRDB
import GRDBSQLite

/// The current row of a statement read straight from SQLite's column accessors: for the
/// hot lists (hundreds of rows a request), where GRDB's generic decoding spends most of
/// its time looking up generic metadata. Valid only inside the closure that receives it.
public struct StoredColumns {
    let statement: SQLiteStatement

    /// The text at `index` (0-based), or `nil` for NULL.
    public func text(_ index: Int32) -> String? {
        utf8(index).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The UTF-8 bytes of the text at `index`, or `nil` for NULL: valid until the next row.
    public func utf8(_ index: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard let bytes = sqlite3_column_text(statement, index) else { return nil }
        return UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index)))
    }

    /// The text at `index`; "" for NULL.
    public func string(_ index: Int32) -> String { text(index) ?? "" }

    /// The integer at `index`, or `nil` for NULL.
    public func integer(_ index: Int32) -> Int64? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, index)
    }

    /// The integer at `index` read as a boolean (NULL is false).
    public func bool(_ index: Int32) -> Bool { sqlite3_column_int64(statement, index) != 0 }
}

extension Statement {
    /// Runs the query with `arguments` and calls `body` with each row's columns, in order.
    /// For queries inside a transaction the caller holds (a read or a write): the
    /// statement is stepped here, without GRDB's cursor, whose set-up cost more than
    /// reading a row of a keyed look-up.
    public func forEachRow(arguments: StatementArguments, _ body: (StoredColumns) throws -> Void) throws {
        try setArguments(arguments)
        try stepRows(body)
    }
}

extension Database {
    /// The absolute path of the connection's main database file ("" in memory): which
    /// database a connection is on, for a cache kept per database of the process.
    public var mainFilePath: String {
        sqlite3_db_filename(sqliteConnection, "main").map { String(cString: $0) } ?? ""
    }
}

import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

/// Statements run with values bound straight through SQLite's C API (the hot writes'
/// path): every kind of value lands as GRDB would store it, a failure is a `DatabaseError`
/// with SQLite's code and leaves the cached statement usable, and a wrong number of values
/// is refused before anything runs.
@Suite("Direct statements")
struct DirectStatementsTests {
    /// A fresh folder per test (the suite is made anew for each), removed with it.
    private let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory(prefix: "direct-statements") }

    private func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: directory.url.appendingPathComponent("direct.sqlite").path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount INTEGER CHECK (amount >= 0), ratio REAL, flag INTEGER, note TEXT);
                """)
        }
        return queue
    }

    @Test("every kind of value is stored as GRDB stores it; nil is NULL; bytes at hand are TEXT")
    func values() throws {
        let queue = try database()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (id, name, amount, ratio, flag, note) VALUES (?, ?, ?, ?, ?, ?)")
            try insert.run(1, "Zoë 🏄", Int64(42), 0.5, true, String?.none)
            try insert.run(2, "", Int64?.none, Double?.none, false, UTF8Text(Data("{\"a\":\"é\"}".utf8)))
            try insert.run(3, "empty bytes", Int64(0), 1.0, false, UTF8Text(Data()))
        }
        try queue.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM t ORDER BY id")
            #expect(rows.count == 3)
            #expect(rows[0]["name"] as String == "Zoë 🏄")
            #expect(rows[0]["amount"] as Int64 == 42)
            #expect(rows[0]["ratio"] as Double == 0.5)
            #expect(rows[0]["flag"] as Bool == true)
            #expect((rows[0]["note"] as DatabaseValue).isNull)
            #expect((rows[1]["amount"] as DatabaseValue).isNull)
            #expect(rows[1]["note"] as String == "{\"a\":\"é\"}")
            #expect(try String.fetchOne(db, sql: "SELECT typeof(note) FROM t WHERE id = 2") == "text")
            #expect(try String.fetchOne(db, sql: "SELECT typeof(note) || ':' || note FROM t WHERE id = 3") == "text:")
        }
    }

    @Test("rows are read by position; firstRow is nil when nothing matches; RETURNING runs the write")
    func reading() throws {
        let queue = try database()
        try queue.write { db in
            for id in 1...5 { try db.cachedStatement(sql: "INSERT INTO t (id, name, amount) VALUES (?, ?, ?)").run(id, "n\(id)", Int64(id * 10)) }
            var seen: [String] = []
            try db.cachedStatement(sql: "SELECT name, amount FROM t WHERE amount >= ? ORDER BY id").forEachRow(Int64(30)) { columns in
                seen.append("\(columns.string(0))=\(columns.integer(1) ?? -1)")
            }
            #expect(seen == ["n3=30", "n4=40", "n5=50"])
            let missing = try db.cachedStatement(sql: "SELECT name FROM t WHERE id = ?").firstRow(99) { $0.string(0) }
            #expect(missing == nil)
            let raised = try db.cachedStatement(sql: "UPDATE t SET amount = amount + ? WHERE id = ? RETURNING amount").firstRow(Int64(5), 2) {
                $0.integer(0)
            }
            #expect(raised == 25)
            #expect(try Int64.fetchOne(db, sql: "SELECT amount FROM t WHERE id = 2") == 25)
        }
    }

    @Test("a constraint failure throws SQLite's code, writes nothing, and the statement runs again")
    func failures() throws {
        let queue = try database()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (id, name, amount) VALUES (?, ?, ?)")
            try insert.run(1, "a", Int64(1))
            let duplicate = #expect(throws: DatabaseError.self) { try insert.run(1, "b", Int64(1)) }
            #expect(duplicate?.resultCode == .SQLITE_CONSTRAINT)
            let negative = #expect(throws: DatabaseError.self) { try insert.run(2, "c", Int64(-1)) }
            #expect(negative?.extendedResultCode == .SQLITE_CONSTRAINT_CHECK)
            try insert.run(2, "c", Int64(2))
            #expect(try String.fetchAll(db, sql: "SELECT name FROM t ORDER BY id") == ["a", "c"])
        }
    }

    @Test("a write outside a transaction (one SQLite rolled back by itself) is refused; reads are not")
    func outsideTransaction() throws {
        let queue = try database()
        try queue.writeWithoutTransaction { db in
            #expect(throws: DatabaseError.self) { try db.cachedStatement(sql: "INSERT INTO t (id, name) VALUES (?, ?)").run(1, "alone") }
            let count = try db.cachedStatement(sql: "SELECT count(*) FROM t WHERE id > ?").firstRow(0) { $0.integer(0) }
            #expect(count == 0)
        }
    }

    @Test("too few or too many values are refused before the statement runs")
    func arity() throws {
        let queue = try database()
        try queue.write { db in
            // `note` may be NULL: a missing value would silently insert one.
            let insert = try db.cachedStatement(sql: "INSERT INTO t (id, name, note) VALUES (?, 'x', ?)")
            #expect(throws: DatabaseError.self) { try insert.run(1) }
            #expect(throws: DatabaseError.self) { try insert.run(1, "a", "extra") }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 0)
        }
    }
}

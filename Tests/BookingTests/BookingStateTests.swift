import Foundation
import GRDB
import Platform
import SharedTesting
import Testing

@testable import BookingService

/// The park's settings cache against a settings change that is written but not committed;
/// the availability cache against the end of every transaction that changed bookings.
@Suite("Booking state")
struct BookingStateTests {
    private struct Refused: Error {}

    @Test("while a settings change is uncommitted, readers get the old settings uncached and without a version")
    func uncommittedSettingsChange() async throws {
        let directory = try TemporaryDirectory()
        let pool = try ServiceDatabase.open(directory: directory.url, name: "booking", durability: .normal) {
            BookingMigrations.register(in: &$0)
        }
        let state = BookingState()
        let before = try await state.configuration(outside: pool)
        #expect(before.cables.first { $0.id == "reverse-1" }?.active == true)

        let written = AsyncSignal(), release = AsyncSignal()
        let change = Task {
            try await pool.write { db in
                try db.execute(sql: "UPDATE cable SET active = 0 WHERE id = 'reverse-1'")
                try state.settingsChanged(db)
                // The writer sees its own change, under the new version.
                let inWriter = try state.configuration(db, inWriter: true)
                #expect(inWriter.cables.first { $0.id == "reverse-1" }?.active == false)
                #expect(inWriter.version != before.version)
                written.fire()
                while !release.isFired { Thread.sleep(forTimeInterval: 0.005) }
            }
        }
        await written.wait()
        // A reader during the change: the committed (old) settings, version -1, not cached.
        let during = try await state.configuration(outside: pool)
        #expect(during.cables.first { $0.id == "reverse-1" }?.active == true)
        #expect(during.version == -1)
        let again = try await pool.read { db in try state.configuration(db) }
        #expect(again.version == -1)
        release.fire()
        try await change.value

        let after = try await state.configuration(outside: pool)
        #expect(after.cables.first { $0.id == "reverse-1" }?.active == false)
        #expect(after.version != before.version && after.version != -1)
        try pool.close()
    }

    /// A read transaction's snapshot can begin before its handler asks for the settings
    /// (GRDB reads the schema version first): a change committed, and counted, in between
    /// must not leave the old settings cached for the writer and every later reader.
    @Test("a reader whose snapshot predates a committed settings change does not cache what it sees")
    func snapshotOlderThanACommittedChange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pool = try ServiceDatabase.open(directory: directory.url, name: "booking", durability: .normal) {
            BookingMigrations.register(in: &$0)
        }
        let state = BookingState()
        let before = try await state.configuration(outside: pool)
        #expect(before.capacity != 7)

        let snapshotTaken = AsyncSignal(), committed = AsyncSignal()
        let reader = Task {
            try await pool.read { db -> ParkConfiguration in
                _ = try Int.fetchOne(db, sql: "SELECT capacity FROM park WHERE id = 1")
                snapshotTaken.fire()
                while !committed.isFired { Thread.sleep(forTimeInterval: 0.005) }
                return try state.configuration(db)
            }
        }
        await snapshotTaken.wait()
        try await pool.write { db in
            try db.execute(sql: "UPDATE park SET capacity = 7 WHERE id = 1")
            try state.settingsChanged(db)
        }
        committed.fire()
        // The old snapshot shows the old capacity, and says it is out of date.
        let stale = try await reader.value
        #expect(stale.capacity == before.capacity)
        #expect(stale.version == -1)
        // Nothing stale was cached: readers and the writer see the change.
        #expect(try await state.configuration(outside: pool).capacity == 7)
        let inWriter = try await pool.write { db in try state.configuration(db, inWriter: true) }
        #expect(inWriter.capacity == 7)
        try pool.close()
    }

    /// The end of a transaction is hooked once however many bookings it holds, and hooked
    /// again by the connection's next transaction.
    @Test("a day stored during a changing transaction is gone when it commits or rolls back, transaction after transaction")
    func droppedAtEveryEnd() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pool = try ServiceDatabase.open(directory: directory.url, name: "booking", durability: .normal) {
            BookingMigrations.register(in: &$0)
        }
        let state = BookingState()
        let day = Data("[]".utf8)
        for round in 1...3 {
            try pool.write { db in
                state.changed(db)
                state.changed(db)
                // A read that started after the changes began stores its answer.
                state.storeAvailability("day", day, generation: state.generation)
                #expect(state.cachedAvailability("day") != nil)
            }
            #expect(state.cachedAvailability("day") == nil, "commit \(round)")
            _ = try? pool.write { db in
                state.changed(db)
                state.storeAvailability("day", day, generation: state.generation)
                throw Refused()
            }
            #expect(state.cachedAvailability("day") == nil, "rollback \(round)")
        }
        // Outside any change, a stored day stays.
        state.storeAvailability("day", day, generation: state.generation)
        #expect(state.cachedAvailability("day") != nil)
        try pool.close()
    }
}

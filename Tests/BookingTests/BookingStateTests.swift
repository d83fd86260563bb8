@testable import BookingService
import Foundation
import GRDB
import Testing

/// The availability cache is dropped when a transaction that changed bookings ends, for
/// every such transaction of a connection: the end is hooked once per transaction however
/// many bookings it holds, and hooked again by the next one.
@Suite("Booking state")
struct BookingStateTests {
    private struct Refused: Error {}

    @Test("a day stored during a changing transaction is gone when it commits or rolls back, transaction after transaction")
    func droppedAtEveryEnd() throws {
        let state = BookingState()
        let queue = try DatabaseQueue()
        let day = Data("[]".utf8)
        for round in 1...3 {
            try queue.write { db in
                state.changed(db)
                state.changed(db)
                // A read that started after the changes began stores its answer.
                state.storeAvailability("day", day, generation: state.generation)
                #expect(state.cachedAvailability("day") != nil)
            }
            #expect(state.cachedAvailability("day") == nil, "commit \(round)")
            _ = try? queue.write { db in
                state.changed(db)
                state.storeAvailability("day", day, generation: state.generation)
                throw Refused()
            }
            #expect(state.cachedAvailability("day") == nil, "rollback \(round)")
        }
        // Outside any change, a stored day stays.
        state.storeAvailability("day", day, generation: state.generation)
        #expect(state.cachedAvailability("day") != nil)
    }
}

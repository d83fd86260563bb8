import Platform
import Testing

/// What a subscriber does about its source's restores (pure rules).
@Suite("Restore history")
struct RestoreHistoryTests {
    let movedOn = RestoreRecord(id: "r1", restoredAt: 500, resumedAfter: 1_000)
    let gaveAgain = RestoreRecord(id: "r2", restoredAt: 700, resumedAfter: 700)

    @Test("nothing to do without restores, or when every one is followed")
    func nothingNew() {
        #expect(RestoreHistory.rewind(cursor: 900, followed: [], restores: []) == nil)
        #expect(RestoreHistory.rewind(cursor: 900, followed: ["r1", "r2"], restores: [movedOn, gaveAgain]) == nil)
    }

    @Test("a restore that moved seqs on is recorded without moving the cursor")
    func movedOnKeepsTheCursor() throws {
        let target = try #require(RestoreHistory.rewind(cursor: 900, followed: [], restores: [movedOn]))
        #expect(target.seq == 900)
        #expect(target.followed == ["r1"])
    }

    @Test("a restore that gave seqs again sends the cursor back to where the source went on")
    func gaveAgainRewinds() throws {
        let target = try #require(RestoreHistory.rewind(cursor: 900, followed: ["r1"], restores: [movedOn, gaveAgain]))
        #expect(target.seq == 700)
        #expect(target.followed == ["r1", "r2"])
        // Never forward: a subscriber behind the restore stays where it is.
        #expect(RestoreHistory.rewind(cursor: 300, followed: ["r1"], restores: [movedOn, gaveAgain])?.seq == 300)
    }

    @Test("a chain of restores not followed: back to the lowest of them, not to the latest's")
    func chainGoesToTheEarliest() throws {
        let first = RestoreRecord(id: "a", restoredAt: 3, resumedAfter: 3)
        let second = RestoreRecord(id: "b", restoredAt: 5, resumedAfter: 5)
        let target = try #require(RestoreHistory.rewind(cursor: 6, followed: ["old"], restores: [first, second]))
        #expect(target.seq == 3)
        #expect(target.followed == ["old", "a", "b"])
        // After following them, the same answer changes nothing.
        #expect(RestoreHistory.rewind(cursor: 3, followed: target.followed, restores: [first, second]) == nil)
    }

    @Test("a subscriber restored to before restores that moved seqs on does not apply its own past again")
    func movedOnChainKeepsTheCursor() throws {
        let a = RestoreRecord(id: "a", restoredAt: 500, resumedAfter: 1_000)
        let b = RestoreRecord(id: "b", restoredAt: 900, resumedAfter: 1_100)
        #expect(RestoreHistory.rewind(cursor: 700, followed: [], restores: [a, b])?.seq == 700)
    }

    @Test("the history after a restore: the replaced file's, the backup's it lacks, then the new one; the latest kept")
    func appending() {
        let x = RestoreRecord(id: "x", restoredAt: 1, resumedAfter: 1)
        let y = RestoreRecord(id: "y", restoredAt: 2, resumedAfter: 2)
        let z = RestoreRecord(id: "z", restoredAt: 3, resumedAfter: 3)
        #expect(RestoreHistory.appending(z, replaced: [x, y], backup: [x]).map(\.id) == ["x", "y", "z"])
        // The replaced file was made anew (no history): the backup's history is kept.
        #expect(RestoreHistory.appending(z, replaced: [], backup: [x, y]).map(\.id) == ["x", "y", "z"])
        let many = (0..<100).map { RestoreRecord(id: "m\($0)", restoredAt: Int64($0), resumedAfter: Int64($0)) }
        let kept = RestoreHistory.appending(z, replaced: many, backup: [])
        #expect(kept.count == RestoreHistory.keptRestores)
        #expect(kept.last == z)
    }

    @Test("records that make no sense are left out: negative seqs, beyond the source's last, going on before the backup's last; the latest 64 kept")
    func sane() {
        let records = [
            RestoreRecord(id: "neg", restoredAt: -5, resumedAfter: -5), RestoreRecord(id: "far", restoredAt: 1, resumedAfter: 10_000),
            RestoreRecord(id: "back", restoredAt: 50, resumedAfter: 40), RestoreRecord(id: "", restoredAt: 1, resumedAfter: 2),
            RestoreRecord(id: "ok", restoredAt: 1, resumedAfter: 2),
        ]
        #expect(RestoreHistory.sane(records, last: 100).map(\.id) == ["ok"])
        let many = (0..<300).map { RestoreRecord(id: "m\($0)", restoredAt: 2, resumedAfter: 2) }
        #expect(RestoreHistory.sane(many, last: 100).count == RestoreHistory.keptRestores)
        // Never below zero, and a long answer is taken to its latest 64: following them
        // leaves nothing unseen (no endless rewinds).
        let target = RestoreHistory.rewind(cursor: 10, followed: [], restores: many)
        #expect(target?.seq == 2)
        #expect(RestoreHistory.rewind(cursor: 2, followed: target?.followed ?? [], restores: many) == nil)
        // Records of restores that moved seqs on never move a cursor back, whatever their
        // numbers say (a clock set back, a history made up).
        let movedOn = (0..<300).map { RestoreRecord(id: "x\($0)", restoredAt: Int64($0), resumedAfter: Int64(2 * $0)) }
        #expect(RestoreHistory.rewind(cursor: 1_791, followed: [], restores: movedOn)?.seq == 1_791)
    }

    @Test("the ids a subscriber keeps are bounded, the latest kept")
    func followedBounded() throws {
        let followed = (0..<RestoreHistory.keptFollowed).map { "f\($0)" }
        let target = try #require(RestoreHistory.rewind(cursor: 10, followed: followed, restores: [movedOn]))
        #expect(target.followed.count == RestoreHistory.keptFollowed)
        #expect(target.followed.last == "r1")
        #expect(target.followed.first == "f1")
    }
}

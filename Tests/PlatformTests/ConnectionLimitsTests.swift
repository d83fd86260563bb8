import HTTPDoor
import Testing

/// The bounds every HTTP listener keeps on connections and on bodies held in memory.
@Suite("HTTP door")
struct ConnectionLimitsTests {
    @Test("connections are bounded per address and in all; places come back; exempt addresses have only the overall bound")
    func connectionBounds() {
        let limits = ConnectionLimits(total: 5, perAddress: 2, exempt: { $0 == "10.0.0.1" })
        #expect(limits.admit("1.1.1.1") && limits.admit("1.1.1.1"))
        #expect(!limits.admit("1.1.1.1"))
        #expect(limits.admit("2.2.2.2"))
        // The proxy: no per-address bound, but the total holds.
        #expect(limits.admit("10.0.0.1") && limits.admit("10.0.0.1"))
        #expect(limits.open == 5)
        #expect(!limits.admit("10.0.0.1") && !limits.admit("3.3.3.3"))
        limits.release("1.1.1.1")
        #expect(limits.admit("1.1.1.1"))
        limits.release("10.0.0.1")
        #expect(limits.open == 4)
        #expect(limits.admit("3.3.3.3"))
    }

    @Test("the overall bound never exceeds half of the process's descriptors")
    func descriptorShare() {
        let limits = ConnectionLimits(total: .max, perAddress: 10)
        #expect(limits.total == ConnectionLimits.descriptorShare)
        #expect(limits.total >= 16)
    }

    @Test("a body budget gives what is left and takes back what was given")
    func bodyBudget() {
        let budget = BodyBudget(capacity: 100)
        #expect(budget.take(60))
        #expect(!budget.take(41))
        #expect(budget.take(40))
        #expect(budget.held == 100)
        budget.give(60)
        #expect(budget.take(60) && !budget.take(1))
    }
}

import Foundation
import Platform
import Synchronization
import Testing

@Suite("Record ids")
struct RecordIDTests {
    @Test("prefix, twelve hex digits of milliseconds, sixteen random hex digits; in creation order; never repeated")
    func shapeOrderAndUniqueness() {
        let at = Date(timeIntervalSince1970: 1_795_000_000.123)
        let id = RecordID.make(prefix: "dep", at: at)
        let parts = id.split(separator: "_")
        #expect(parts.count == 3 && parts[0] == "dep")
        #expect(parts[1] == String(UInt64(1_795_000_000_123), radix: 16).leftPadded(to: 12))
        #expect(parts[2].count == 16 && parts[2].allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(RecordID.make(prefix: "dep", at: at.addingTimeInterval(0.001)) > id)
        // More than one pool of random bits (512 ids), from several threads at once.
        let made = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let ids = (0..<1_500).map { _ in RecordID.make(prefix: "x", at: at) }
            made.withLock { $0 += ids }
        }
        let all = made.withLock { $0 }
        #expect(all.count == 6_000 && Set(all).count == 6_000)
        // The random parts are not a counter: their bits vary in every position.
        let suffixes = all.compactMap { UInt64($0.split(separator: "_")[2], radix: 16) }
        let ors = suffixes.reduce(0, |), ands = suffixes.reduce(~UInt64(0), &)
        #expect(ors == ~UInt64(0) && ands == 0)
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}

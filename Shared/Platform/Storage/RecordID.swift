import Foundation
import Synchronization

/// Identifiers for new rows: a type prefix, the creation time, then random bits.
///
/// `bkg_0193a4f2c1e8_5f0c2d9a8b7e6f10`: twelve hex digits of milliseconds since 1970 keep
/// ids in creation order, so inserts land on the last page of an id index instead of a
/// random one (fewer pages written per commit); 64 random bits keep them unguessable and
/// unique. Clients treat ids as opaque strings (CONTRACT.md, "Values").
public enum RecordID {
    /// A new id with `prefix` (`bkg`, `goal`, ...).
    public static func make(prefix: String, at date: Date = Date()) -> String {
        let milliseconds = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        let random = randomBits.withLock { $0.next() }
        var text = [UInt8]()
        text.reserveCapacity(prefix.utf8.count + 30)
        text.append(contentsOf: prefix.utf8)
        text.append(UInt8(ascii: "_"))
        appendHex(milliseconds, digits: 12, to: &text)
        text.append(UInt8(ascii: "_"))
        appendHex(random, digits: 16, to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    private static func appendHex(_ value: UInt64, digits: Int, to text: inout [UInt8]) {
        for index in stride(from: digits - 1, through: 0, by: -1) {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(index * 4)) & 0x0F
            text.append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
        }
    }

    /// Random bits for ids, drawn from OpenSSL's CSPRNG 4 KiB at a time: one `RAND_bytes`
    /// call for 8 bytes cost a twentieth of a deposit's time on the writer thread (its
    /// locking and reseed checks are per call). Only ids come from here; tokens, keys and
    /// codes take their bytes from ``Digest/randomBytes(_:)`` each time.
    private static let randomBits = Mutex(RandomBits())

    struct RandomBits: ~Copyable {
        private var pool: [UInt64] = []
        private var taken = 0

        mutating func next() -> UInt64 {
            if taken == pool.count {
                let bytes = Digest.randomBytes(4_096)
                pool = bytes.withUnsafeBytes { raw in (0..<512).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) } }
                taken = 0
            }
            defer { taken += 1 }
            return pool[taken]
        }
    }
}

import Foundation

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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(14)
        for shift in stride(from: 40, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: milliseconds >> UInt64(shift))) }
        return prefix + "_" + Digest.hex(bytes) + "_" + Digest.hex(Digest.randomBytes(8))
    }
}

import Foundation
import Synchronization

/// A token bucket: `burst` requests at once, refilled at `perSecond`.
struct TokenBucket: Sendable, Equatable {
    var tokens: Double
    var updated: ContinuousClock.Instant

    /// Takes one token at `now`, or returns how long until one is there.
    mutating func take(now: ContinuousClock.Instant, perSecond: Double, burst: Double) -> Duration? {
        let elapsed = now - updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + max(0, seconds) * perSecond)
        updated = now
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return .milliseconds(Int(((1 - tokens) / perSecond * 1_000).rounded(.up)))
    }

    /// Whether the bucket would be full at `now` (its entry can be forgotten).
    func isFull(now: ContinuousClock.Instant, perSecond: Double, burst: Double) -> Bool {
        let elapsed = now - updated
        return tokens + Double(elapsed.components.seconds) * perSecond >= burst
    }
}

/// Per-address request limits at the door: a token bucket for each client address.
///
/// Buckets live in memory, sharded by address so the event loops rarely wait on each
/// other. A full bucket is forgotten when its shard grows past ``maxAddressesPerShard``,
/// so a flood from many addresses cannot grow memory without bound.
final class RateLimiter: Sendable {
    let perSecond: Double
    let burst: Double
    static let shardCount = 16
    static let maxAddressesPerShard = 8_192
    private final class Shard: Sendable {
        let buckets = Mutex<[String: TokenBucket]>([:])
    }

    private let shards: [Shard]

    /// `perSecond` 0 switches the limits off.
    init(perSecond: Double, burst: Double) {
        self.perSecond = perSecond
        self.burst = max(1, burst)
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// How many addresses have a bucket now.
    var trackedAddresses: Int {
        shards.reduce(0) { $0 + $1.buckets.withLock { $0.count } }
    }

    /// Takes one request of `address` at `now`; `nil` admits it, otherwise how long to wait.
    func admit(_ address: String, now: ContinuousClock.Instant = .now) -> Duration? {
        guard perSecond > 0 else { return nil }
        var hasher = Hasher()
        hasher.combine(address)
        let shard = shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(Self.shardCount))]
        let (perSecond, burst) = (self.perSecond, self.burst)
        return shard.buckets.withLock { buckets in
            if buckets.count >= Self.maxAddressesPerShard, buckets[address] == nil {
                buckets = buckets.filter { !$0.value.isFull(now: now, perSecond: perSecond, burst: burst) }
                // Still full of busy addresses: forget the oldest half.
                if buckets.count >= Self.maxAddressesPerShard {
                    let kept = buckets.sorted { $0.value.updated > $1.value.updated }.prefix(Self.maxAddressesPerShard / 2)
                    buckets = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
                }
            }
            var bucket = buckets[address] ?? TokenBucket(tokens: burst, updated: now)
            let wait = bucket.take(now: now, perSecond: perSecond, burst: burst)
            buckets[address] = bucket
            return wait
        }
    }
}

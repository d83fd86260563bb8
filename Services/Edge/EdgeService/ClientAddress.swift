import Foundation
import Platform

/// An IPv4 or IPv6 address as bytes, parsed with `inet_pton` (no host names).
struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    let bytes: [UInt8]

    /// Parses an address in its usual text form; an IPv4-mapped IPv6 address
    /// (`::ffff:192.0.2.1`) is taken as the IPv4 address it carries.
    init?(_ text: some StringProtocol) {
        var text = String(text)
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }  // an IPv6 zone
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            let all = withUnsafeBytes(of: &address) { Array($0) }
            if all[0..<10].allSatisfy({ $0 == 0 }), all[10] == 0xff, all[11] == 0xff {
                bytes = Array(all[12..<16])
            } else {
                bytes = all
            }
        } else {
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &address) { Array($0) }
        }
    }

    var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses, `10.0.0.0/8` or `fd00::/8`; a bare address is a block of one.
struct AddressBlock: Sendable, Hashable {
    let base: IPAddress
    let prefixLength: Int

    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard let first = parts.first, let base = IPAddress(first.trimmingCharacters(in: .whitespaces)) else { return nil }
        let width = base.bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1].trimmingCharacters(in: .whitespaces)), (0...width).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = width
        }
        self.base = base
    }

    func contains(_ address: IPAddress) -> Bool {
        guard address.bytes.count == base.bytes.count else { return false }
        var remaining = prefixLength
        for index in base.bytes.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
            if address.bytes[index] & mask != base.bytes[index] & mask { return false }
            remaining -= bits
        }
        return true
    }
}

/// Who an HTTP request comes from: the TCP peer, or, when the peer is a trusted proxy, the
/// address that proxy wrote into `X-Forwarded-For`.
///
/// The header is read from its right end: each hop appends the address it received from,
/// so the rightmost entries were written by our own proxies and everything to the left
/// of the first untrusted entry may have been made up by the client. The answer is the
/// rightmost entry that is not a trusted proxy (or the leftmost, when all are). An
/// entry that is not an address ends the walk at the hop that wrote it.
struct ClientAddressResolver: Sendable {
    let trustedProxies: [AddressBlock]

    /// Parses `BACKEND_EDGE_TRUSTED_PROXIES`: addresses and blocks separated by commas.
    init(trustedProxies text: String) throws(ConfigurationError) {
        var blocks: [AddressBlock] = []
        for entry in text.split(separator: ",") where !entry.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let block = AddressBlock(entry) else {
                throw ConfigurationError("BACKEND_EDGE_TRUSTED_PROXIES: \(entry) is not an address or block (10.0.0.0/8)")
            }
            blocks.append(block)
        }
        trustedProxies = blocks
    }

    func isTrusted(_ address: IPAddress) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }

    /// The client's address for a request from `peer` with these `X-Forwarded-For` values
    /// (one per header line, in order).
    func resolve(peer: String?, forwardedFor: [String]) -> String {
        guard let peerText = peer, let peerAddress = IPAddress(peerText) else { return peer ?? "" }
        guard isTrusted(peerAddress), !forwardedFor.isEmpty else { return peerAddress.description }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peerAddress
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { break }
            client = address
            if !isTrusted(address) { break }
        }
        return client.description
    }
}


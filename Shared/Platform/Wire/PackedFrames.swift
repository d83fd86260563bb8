import Foundation

/// A multipart message carried as one frame on our internal links.
///
/// The gateway's hops to the services carry five frames each way (its tag, the client
/// frame, the client's identity, the delimiter and the body), and over CURVE every frame
/// is sealed and opened on its own: a nonce, a key derivation, a MAC and two copies per
/// frame, whatever its size. Packed into one frame, a request and its reply cost one seal
/// and one open per hop, and libzmq handles one message part instead of five.
///
/// The layout: the marker byte `0xFF` (never the first byte of a JSON request, nor of the
/// empty delimiter), the number of frames (1 to ``RoutedMessage/maxFrames``), then each
/// frame but the last as a 32-bit little-endian length and its bytes; the last frame is
/// the rest. A receiving ROUTER sees `[peer identity, packed]`; it unpacks, handles the
/// frames as if they had come separately, and answers packed. Clients of the contract
/// never see this: they send and receive the contract's frames, which every receiver
/// still accepts.
public enum PackedFrames {
    /// The first byte of a packed message.
    public static let marker: UInt8 = 0xFF

    /// One frame holding `frames` (at least one).
    public static func pack(_ frames: [Data]) -> Data {
        precondition(!frames.isEmpty, "at least one frame")
        return pack(frames.dropLast(), last: frames[frames.count - 1])
    }

    /// One frame holding `frames` followed by `last`, without building their array.
    static func pack(_ frames: ArraySlice<Data>, last: Data) -> Data {
        precondition(frames.count < Int(UInt8.max), "1 to 255 frames")
        var total = 2 + 4 * frames.count + last.count
        for frame in frames { total += frame.count }
        // Written through one pointer: Data's generic appends cost more than the copies.
        var packed = Data(count: total)
        packed.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            out[0] = marker
            out[1] = UInt8(frames.count + 1)
            var offset = 2
            for frame in frames {
                out.storeBytes(of: UInt32(frame.count).littleEndian, toByteOffset: offset, as: UInt32.self)
                offset = out.copy(frame, at: offset + 4)
            }
            _ = out.copy(last, at: offset)
        }
        return packed
    }

    /// The frames of a packed message, or `nil` when `packed` is not one (a wrong marker,
    /// a count out of range, a length past the end).
    public static func unpack(_ packed: Data) -> [Data]? {
        packed.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [Data]? in
            guard bytes.count >= 2, let base = bytes.baseAddress, bytes[0] == marker else { return nil }
            let count = Int(bytes[1])
            guard count >= 1, count <= RoutedMessage.maxFrames else { return nil }
            var frames: [Data] = []
            frames.reserveCapacity(count)
            var offset = 2
            for _ in 0..<(count - 1) {
                guard bytes.count - offset >= 4 else { return nil }
                let size = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                offset += 4
                guard bytes.count - offset >= size else { return nil }
                frames.append(Data(bytes: base + offset, count: size))
                offset += size
            }
            frames.append(Data(bytes: base + offset, count: bytes.count - offset))
            return frames
        }
    }

    /// What a ROUTER received, unpacked when it is `[peer identity, packed]`: the frames as
    /// the contract's framing would have brought them, and whether the reply goes back
    /// packed. Anything else (the contract's frames, a malformed packed frame, or one without
    /// a delimiter inside, which then fail the envelope's checks as any malformed request
    /// does) comes back as it is.
    public static func open(_ received: [Data]) -> (frames: [Data], packed: Bool) {
        // Our senders always pack a delimiter: a frame that unpacks without one is a
        // malformed contract request, answered in the contract's frames.
        guard received.count == 2, received[1].first == marker, let inner = unpack(received[1]), inner.contains(where: { $0.isEmpty }) else {
            return (received, false)
        }
        return ([received[0]] + inner, true)
    }

    /// What a DEALER received: the frames of a packed reply, or the contract's frames as
    /// they came (a peer that answers in them).
    public static func openReply(_ received: [Data]) -> [Data] {
        received.count == 1 ? unpack(received[0]) ?? received : received
    }

    /// The frames a ROUTER sends to answer: `envelope` (starting with the peer's identity)
    /// and `reply`, packed behind the identity when the request came packed.
    public static func reply(envelope: [Data], _ reply: Data, packed: Bool) -> [Data] {
        guard packed, let identity = envelope.first else { return envelope + [reply] }
        return [identity, pack(envelope.dropFirst(), last: reply)]
    }
}

extension UnsafeMutableRawBufferPointer {
    /// Copies `data`'s bytes here from `offset` (the caller made room); returns the
    /// offset just after them.
    func copy(_ data: Data, at offset: Int) -> Int {
        data.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                (self.baseAddress! + offset).copyMemory(from: base, byteCount: bytes.count)
            }
        }
        return offset + data.count
    }
}

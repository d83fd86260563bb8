import Foundation

/// An image's format and size, read from its own bytes (never from a name a client
/// gives): PNG, JPEG or WebP, told by their magic bytes.
///
/// Reading also checks the file's framing, so a truncated upload or one with something
/// appended is refused: a PNG's chunks must run from `IHDR` to an `IEND` that ends the
/// content, a JPEG must have its frame header before its first scan and end with `EOI`,
/// a WebP's RIFF size must be the content's size and its chunks must fill it. Every read is
/// bounds-checked and every step moves forward, so hostile input (lengths past the end,
/// endless fill bytes, marker loops) ends in a ``Problem``, never a crash or a hang. The
/// pixels themselves are not decoded.
public struct ImageHeader: Sendable, Equatable {
    /// The accepted formats, as their media types.
    public enum Format: String, Sendable, CaseIterable {
        case png = "image/png"
        case jpeg = "image/jpeg"
        case webp = "image/webp"
    }

    /// Why bytes are not an accepted image; ``description`` is said to the client.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not PNG, JPEG or WebP (a text file, a GIF, an SVG...).
        case unknownFormat
        /// The format's structure is broken or cut short.
        case malformed(String)
        /// A width or height of zero (or a JPEG whose height comes later, in a DNL segment).
        case noDimensions
        /// Beyond ``MediaLimits``.
        case tooLarge(width: Int, height: Int, limits: MediaLimits)

        /// The problem in words, for `details.fields.content`.
        public var description: String {
            switch self {
            case .unknownFormat: "not a PNG, JPEG or WebP image"
            case .malformed(let problem): problem
            case .noDimensions: "the image has no width or height"
            case .tooLarge(let width, let height, let limits):
                "the image is \(width) x \(height) pixels; each side may have at most \(limits.maxSide) pixels and the image at most \(limits.maxPixels / 1_000_000) megapixels"
            }
        }
    }

    /// The format.
    public var format: Format
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// The media type to serve the content as.
    public var contentType: String { format.rawValue }

    /// Creates a header (tests, stored rows).
    public init(format: Format, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// Reads the format and size of `bytes` and checks their framing and `limits`.
    public static func read(_ bytes: some ContiguousBytes, limits: MediaLimits = MediaLimits()) throws(Problem) -> ImageHeader {
        let result = bytes.withUnsafeBytes { raw -> Result<ImageHeader, Problem> in
            let reader = ByteReader(raw)
            let header: Result<ImageHeader, Problem>
            if reader.matches(0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
                header = png(reader)
            } else if reader.matches(0, [0xFF, 0xD8, 0xFF]) {
                header = jpeg(reader)
            } else if reader.matches(0, Array("RIFF".utf8)) && reader.matches(8, Array("WEBP".utf8)) {
                header = webp(reader)
            } else {
                header = .failure(.unknownFormat)
            }
            return header.flatMap { $0.checked(limits) }
        }
        return try result.get()
    }

    private func checked(_ limits: MediaLimits) -> Result<ImageHeader, Problem> {
        guard width > 0, height > 0 else { return .failure(.noDimensions) }
        guard width <= limits.maxSide, height <= limits.maxSide, width * height <= limits.maxPixels else {
            return .failure(.tooLarge(width: width, height: height, limits: limits))
        }
        return .success(self)
    }

    // MARK: PNG

    /// Signature, an `IHDR` of 13 bytes first, then chunks (length, type, data, CRC) up to
    /// an empty `IEND` that ends the content, with at least one `IDAT` before it.
    private static func png(_ reader: ByteReader) -> Result<ImageHeader, Problem> {
        guard reader.u32be(8) == 13, reader.matches(12, Array("IHDR".utf8)), let width = reader.u32be(16), let height = reader.u32be(20)
        else { return .failure(.malformed("PNG: the first chunk is not a 13-byte IHDR")) }
        var at = 8
        var sawData = false
        while true {
            guard let length = reader.u32be(at), reader.has(at + 4, 4) else { return .failure(.malformed("PNG: truncated")) }
            guard length <= 0x7FFF_FFFF, reader.has(at + 8, length + 4) else { return .failure(.malformed("PNG: a chunk runs past the end")) }
            guard (0..<4).allSatisfy({ reader.u8(at + 4 + $0).map(Self.isLetter) == true }) else {
                return .failure(.malformed("PNG: a chunk type is not four letters"))
            }
            let end = at + 12 + length
            if reader.matches(at + 4, Array("IDAT".utf8)) { sawData = true }
            if reader.matches(at + 4, Array("IEND".utf8)) {
                guard length == 0, end == reader.count else { return .failure(.malformed("PNG: something follows IEND")) }
                guard sawData else { return .failure(.malformed("PNG: no IDAT chunk")) }
                break
            }
            at = end
        }
        return .success(ImageHeader(format: .png, width: width, height: height))
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }

    // MARK: JPEG

    /// Segments from `SOI`: a marker (after any 0xFF fill bytes), then, unless standalone,
    /// a big-endian length that counts itself. The frame header (`SOF0`, `SOF1` or `SOF2`:
    /// baseline, extended or progressive Huffman, what phones decode) gives the size; the
    /// first scan (`SOS`) must follow it, and the content must end with `EOI`.
    private static func jpeg(_ reader: ByteReader) -> Result<ImageHeader, Problem> {
        var at = 2
        var size: (width: Int, height: Int)?
        while true {
            guard reader.u8(at) == 0xFF else { return .failure(.malformed("JPEG: a segment does not start with a marker")) }
            at += 1
            while reader.u8(at) == 0xFF { at += 1 }
            guard let marker = reader.u8(at) else { return .failure(.malformed("JPEG: truncated")) }
            at += 1
            switch marker {
            case 0x01, 0xD0...0xD7:
                continue  // standalone markers: no length
            case 0x00, 0xD8, 0xD9:
                return .failure(.malformed("JPEG: no image data"))
            default:
                break
            }
            guard let length = reader.u16be(at), length >= 2, reader.has(at, length) else {
                return .failure(.malformed("JPEG: a segment runs past the end"))
            }
            switch marker {
            case 0xC0, 0xC1, 0xC2:
                guard size == nil else { return .failure(.malformed("JPEG: more than one frame header")) }
                guard length >= 8, let height = reader.u16be(at + 3), let width = reader.u16be(at + 5) else {
                    return .failure(.malformed("JPEG: a short frame header"))
                }
                size = (width, height)
            case 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                return .failure(.malformed("JPEG: only baseline and progressive JPEG are accepted"))
            case 0xDA:
                guard let size else { return .failure(.malformed("JPEG: image data before the frame header")) }
                guard reader.count - 2 >= at + length, reader.matches(reader.count - 2, [0xFF, 0xD9]) else {
                    return .failure(.malformed("JPEG: the content does not end with EOI (truncated, or something appended)"))
                }
                return .success(ImageHeader(format: .jpeg, width: size.width, height: size.height))
            default:
                break
            }
            at += length
        }
    }

    // MARK: WebP

    /// `RIFF`, its size (the content's less 8), `WEBP`, then chunks (FourCC, little-endian
    /// size, data, a pad byte when the size is odd) that fill the RIFF exactly. The first
    /// chunk is `VP8 ` (lossy: a key frame's start code, then 14-bit width and height),
    /// `VP8L` (lossless: signature 0x2F, then width-1 and height-1 in 14 bits each) or
    /// `VP8X` (extended: the canvas's width-1 and height-1 in 24 bits each, and image data
    /// in a later chunk).
    private static func webp(_ reader: ByteReader) -> Result<ImageHeader, Problem> {
        guard let riffSize = reader.u32le(4), riffSize + 8 == reader.count else {
            return .failure(.malformed("WebP: the RIFF size is not the content's size (truncated, or something appended)"))
        }
        var at = 12
        var size: (width: Int, height: Int)?
        var hasImageData = false
        while at < reader.count {
            guard let length = reader.u32le(at + 4), reader.has(at + 8, length) else {
                return .failure(.malformed("WebP: a chunk runs past the end"))
            }
            let data = at + 8
            let isLossy = reader.matches(at, Array("VP8 ".utf8)), isLossless = reader.matches(at, Array("VP8L".utf8))
            if at == 12 {
                if isLossy {
                    guard length >= 10, let tag = reader.u8(data), tag & 1 == 0, reader.matches(data + 3, [0x9D, 0x01, 0x2A]),
                        let width = reader.u16le(data + 6), let height = reader.u16le(data + 8)
                    else { return .failure(.malformed("WebP: the VP8 chunk does not start with a key frame")) }
                    size = (width & 0x3FFF, height & 0x3FFF)
                } else if isLossless {
                    guard length >= 5, reader.u8(data) == 0x2F, let bits = reader.u32le(data + 1), bits >> 29 == 0 else {
                        return .failure(.malformed("WebP: the VP8L chunk has no valid header"))
                    }
                    size = ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
                } else if reader.matches(at, Array("VP8X".utf8)) {
                    guard length >= 10, let width = reader.u24le(data + 4), let height = reader.u24le(data + 7) else {
                        return .failure(.malformed("WebP: a short VP8X chunk"))
                    }
                    size = (width + 1, height + 1)
                } else {
                    return .failure(.malformed("WebP: the first chunk is not VP8, VP8L or VP8X"))
                }
            }
            if isLossy || isLossless || reader.matches(at, Array("ANMF".utf8)) { hasImageData = true }
            at = data + length + (length & 1)
        }
        guard at == reader.count else { return .failure(.malformed("WebP: the last chunk's padding is missing")) }
        guard let size, hasImageData else { return .failure(.malformed("WebP: no image data")) }
        return .success(ImageHeader(format: .webp, width: size.width, height: size.height))
    }
}

/// Bounds-checked reads from a buffer: every read past the end is `nil`.
private struct ByteReader {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var count: Int { bytes.count }

    /// Whether `length` bytes start at `offset` inside the buffer (no overflow for any
    /// non-negative values read from the input, which are at most 32 bits).
    func has(_ offset: Int, _ length: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= count && length <= count - offset
    }

    func u8(_ offset: Int) -> UInt8? { has(offset, 1) ? bytes[offset] : nil }

    func u16be(_ offset: Int) -> Int? {
        guard has(offset, 2) else { return nil }
        return Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
    }

    func u16le(_ offset: Int) -> Int? {
        guard has(offset, 2) else { return nil }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
    }

    func u24le(_ offset: Int) -> Int? {
        guard has(offset, 3) else { return nil }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
    }

    func u32be(_ offset: Int) -> Int? {
        guard has(offset, 4) else { return nil }
        return (0..<4).reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
    }

    func u32le(_ offset: Int) -> Int? {
        guard has(offset, 4) else { return nil }
        return (0..<4).reversed().reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
    }

    func matches(_ offset: Int, _ expected: [UInt8]) -> Bool {
        guard has(offset, expected.count) else { return false }
        return expected.indices.allSatisfy { bytes[offset + $0] == expected[$0] }
    }
}

import Foundation

/// Small real images for tests and benchmarks of the media block.
///
/// PNGs are made here, of any size (RGB, pixels stored in uncompressed deflate blocks, so
/// the file is about width × height × 3 bytes and any decoder reads it). JPEG and WebP
/// files are 3 × 2 images written by the reference encoders (libjpeg-turbo's `cjpeg
/// -quality 50 -optimize [-progressive]`, libwebp's `cwebp -q 80` and `-lossless`, and
/// `cwebp` of a PNG with alpha for the extended format) and kept as base64.
public enum TestImages {
    /// A PNG of `width` × `height` RGB pixels, each pixel's colour derived from `seed`
    /// and its position (different seeds give different content, so different hashes).
    public static func png(width: Int, height: Int, seed: UInt32 = 1) -> Data {
        var raw = [UInt8]()
        raw.reserveCapacity((width * 3 + 1) * height)
        var state = seed &* 2_654_435_761 | 1
        for _ in 0..<height {
            raw.append(0)  // filter: none
            for _ in 0..<(width * 3) {
                // xorshift: noise that deflate could not shrink either.
                state ^= state << 13
                state ^= state >> 17
                state ^= state << 5
                raw.append(UInt8(truncatingIfNeeded: state))
            }
        }
        var header = [UInt8]()
        header += bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]  // 8-bit depth, RGB, deflate, no filter, no interlace
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", header)
        file += chunk("IDAT", zlibStored(raw))
        file += chunk("IEND", [])
        return Data(file)
    }

    /// A 3 × 2 baseline JPEG.
    public static let jpeg = Data(base64Encoded: """
        /9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhC\
        Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAACAAMDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAP/xAAbEAEAAgIDAAAAAAAAAAAA\
        AAABAAMFIQQRIv/EABUBAQEAAAAAAAAAAAAAAAAAAAUG/8QAHREAAQIHAAAAAAAAAAAAAAAAAAEDAgQzNHFysf/aAAwDAQACEQMRAD8Anl+NQZO8KK+hA8GtEREqJO2b1Tgg1Thwh//Z
        """) ?? Data()

    /// A 3 × 2 progressive JPEG.
    public static let progressiveJPEG = Data(base64Encoded: """
        /9j/4AAQSkZJRgABAQAAAQABAAD/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhC\
        Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wgARCAACAAMDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAL/xAAVAQEBAAAAAAAAAAAAAAAA\
        AAAEBf/aAAwDAQACEAMQAAABkVEf/8QAFxAAAwEAAAAAAAAAAAAAAAAAAQIDE//aAAgBAQABBQKqjT//xAAXEQADAQAAAAAAAAAAAAAAAAAAAQIy/9oACAEDAQE/AZyj/8QAGBEAAgMAAAAAAAAA\
        AAAAAAAAAAIDM3H/2gAIAQIBAT8BhrXD/8QAFhABAQEAAAAAAAAAAAAAAAAAAQAh/9oACAEBAAY/AnC//8QAFRABAQAAAAAAAAAAAAAAAAAAAMH/2gAIAQEAAT8hl5//2gAMAwEAAgADAAAAEAP/\
        xAAWEQADAAAAAAAAAAAAAAAAAAAAAaH/2gAIAQMBAT8QkR//xAAWEQADAAAAAAAAAAAAAAAAAAAAobH/2gAIAQIBAT8QSQ//xAAXEAEBAQEAAAAAAAAAAAAAAAABIQAR/9oACAEBAAE/EDmchAmQ\
        3//Z
        """) ?? Data()

    /// A 3 × 2 lossy WebP (`VP8 `).
    public static let webpLossy = Data(base64Encoded: """
        UklGRmQAAABXRUJQVlA4IFgAAADwAgCdASoDAAIAAUAmJagCdLoBQAKoAyQD9AAW7PazAADif/x223wt/87x3gqVDYDzZP/sxvj6yv4U3/5Nl/0xvj6yv4U3/loX3gaxymehwaRA5TOSQAAA
        """) ?? Data()

    /// A 3 × 2 lossless WebP (`VP8L`).
    public static let webpLossless = Data(base64Encoded: "UklGRjQAAABXRUJQVlA4TCgAAAAvAkAAAC8gEEjaH3qN+RcQFPk/2vwHH0QCg0K2EeDQvQSncBH9j2MF") ?? Data()

    /// A 3 × 2 extended WebP with alpha (`VP8X`, `ALPH`, `VP8 `).
    public static let webpExtended = Data(base64Encoded: """
        UklGRlAAAABXRUJQVlA4WAoAAAAQAAAAAgAAAQAAQUxQSAcAAAAAgICAgICAAFZQOCAiAAAAcAEAnQEqAwACAAFAJiWUAnQBQAAA/vw3gVf31Og+K+AAAA==
        """) ?? Data()

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            output += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8(~count >> 8 & 0xFF)]
            output += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return output + bigEndian(b << 16 | a)
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { value, _ in value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(0xFFFF_FFFF as UInt32) { crc, byte in crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}

import Foundation
import Platform
import SharedTesting
import Testing

/// The image reader as a pure function: real files of each format, then hostile ones.
@Suite("Image headers")
struct ImageHeaderTests {
    static func read(_ bytes: Data, limits: MediaLimits = MediaLimits()) -> Result<ImageHeader, ImageHeader.Problem> {
        Result { () throws(ImageHeader.Problem) in try ImageHeader.read(bytes, limits: limits) }
    }

    static func isMalformed(_ result: Result<ImageHeader, ImageHeader.Problem>) -> Bool {
        if case .failure(.malformed) = result { return true }
        return false
    }

    @Test(
        "real PNG, JPEG and WebP files give their type and size",
        arguments: [
            (TestImages.png(width: 3, height: 2), ImageHeader(format: .png, width: 3, height: 2)),
            (TestImages.png(width: 640, height: 1), ImageHeader(format: .png, width: 640, height: 1)),
            (TestImages.jpeg, ImageHeader(format: .jpeg, width: 3, height: 2)),
            (TestImages.progressiveJPEG, ImageHeader(format: .jpeg, width: 3, height: 2)),
            (TestImages.webpLossy, ImageHeader(format: .webp, width: 3, height: 2)),
            (TestImages.webpLossless, ImageHeader(format: .webp, width: 3, height: 2)),
            (TestImages.webpExtended, ImageHeader(format: .webp, width: 3, height: 2)),
        ])
    func realImages(bytes: Data, expected: ImageHeader) throws {
        #expect(!bytes.isEmpty)
        #expect(try Self.read(bytes).get() == expected)
    }

    @Test("text, a text file named .png, SVG, GIF and empty content are not images")
    func notImages() {
        let inputs = [
            Data("hello, this is a text file someone named picture.png\n".utf8),
            Data(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8),
            Data("GIF89a\u{01}\u{00}\u{01}\u{00}".utf8), Data(), Data([0x89, 0x50, 0x4E]), Data([0xFF, 0xD8]), Data("RIFF".utf8),
        ]
        for input in inputs {
            #expect(Self.read(input) == .failure(.unknownFormat), "\(input.count) bytes")
        }
    }

    @Test("every truncation of every sample is refused, never read past its end")
    func truncated() {
        for sample in [
            TestImages.png(width: 3, height: 2), TestImages.jpeg, TestImages.progressiveJPEG, TestImages.webpLossy, TestImages.webpLossless,
            TestImages.webpExtended,
        ] {
            for length in 0..<sample.count {
                let cut = sample.prefix(length)
                #expect(throws: ImageHeader.Problem.self, "\(length) of \(sample.count) bytes") { try ImageHeader.read(cut) }
            }
        }
    }

    @Test("something appended after the image (a polyglot's archive, a script) is refused")
    func appended() {
        let tail = Data("PK\u{03}\u{04}<script>alert(1)</script>".utf8)
        for sample in [TestImages.png(width: 3, height: 2), TestImages.jpeg, TestImages.webpLossy, TestImages.webpExtended] {
            #expect(Self.isMalformed(Self.read(sample + tail)))
            #expect(Self.isMalformed(Self.read(sample + Data([0]))))
        }
    }

    @Test("zero sizes are refused, and sizes over the limits are refused with the size")
    func dimensions() throws {
        #expect(Self.read(TestImages.png(width: 0, height: 0)) == .failure(.noDimensions))
        var limits = MediaLimits()
        limits.maxSide = 100
        limits.maxPixels = 2_000
        #expect(Self.read(TestImages.png(width: 101, height: 1), limits: limits) == .failure(.tooLarge(width: 101, height: 1, limits: limits)))
        #expect(Self.read(TestImages.png(width: 50, height: 41), limits: limits) == .failure(.tooLarge(width: 50, height: 41, limits: limits)))
        #expect(try Self.read(TestImages.png(width: 50, height: 40), limits: limits).get().width == 50)

        // A PNG header claiming 2^31-1 x 2^31-1 (a decompression bomb's promise).
        var huge = [UInt8](TestImages.png(width: 1, height: 1))
        for index in 16..<24 { huge[index] = index % 4 == 0 ? 0x7F : 0xFF }
        #expect(Self.read(Data(huge)) == .failure(.tooLarge(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF, limits: MediaLimits())))
        // The default limits: 8192 on a side, 40 megapixels.
        var jpeg = [UInt8](TestImages.jpeg)
        let frame = try #require(Self.offset(of: [0xFF, 0xC0], in: jpeg))
        jpeg[frame + 5] = 0x20  // height 0x2000 = 8192
        jpeg[frame + 6] = 0x00
        jpeg[frame + 7] = 0x20  // width 8192
        jpeg[frame + 8] = 0x00
        #expect(Self.read(Data(jpeg)) == .failure(.tooLarge(width: 8_192, height: 8_192, limits: MediaLimits())))
        jpeg[frame + 5] = 0
        jpeg[frame + 6] = 0  // height 0: defined later by a DNL segment; refused
        #expect(Self.read(Data(jpeg)) == .failure(.noDimensions))
    }

    @Test("hostile JPEG segment chains end in a refusal: loops of fill bytes, lengths past the end, scans before frames")
    func hostileJPEG() throws {
        // Megabytes of fill bytes after SOI: walked once, refused at the end.
        #expect(Self.isMalformed(Self.read(Data([0xFF, 0xD8] + [UInt8](repeating: 0xFF, count: 1 << 20)))))
        // A segment length of 0 or 1 would not move forward.
        #expect(Self.isMalformed(Self.read(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00, 0xFF, 0xD9]))))
        #expect(Self.isMalformed(Self.read(Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0xFF, 0xD9]))))
        // A length past the end.
        #expect(Self.isMalformed(Self.read(Data([0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF, 0x00]))))
        // Many restart markers (no length) then the end: no frame, no scan.
        #expect(Self.isMalformed(Self.read(Data([0xFF, 0xD8] + Array([[UInt8]](repeating: [0xFF, 0xD0], count: 10_000).joined()) + [0xFF, 0xD9]))))
        // A scan before any frame header.
        #expect(Self.isMalformed(Self.read(Data([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xD9]))))
        // Arithmetic coding or lossless frames: phones do not decode them.
        var arithmetic = [UInt8](TestImages.jpeg)
        arithmetic[try #require(Self.offset(of: [0xFF, 0xC0], in: arithmetic)) + 1] = 0xC9
        #expect(Self.isMalformed(Self.read(Data(arithmetic))))
        // Two frame headers.
        let jpeg = [UInt8](TestImages.jpeg)
        let frame = try #require(Self.offset(of: [0xFF, 0xC0], in: jpeg))
        let twice = Array(jpeg[..<frame]) + Array(jpeg[frame..<(frame + 19)]) + Array(jpeg[frame...])
        #expect(Self.isMalformed(Self.read(Data(twice))))
    }

    @Test("hostile PNG and WebP chunk chains are refused")
    func hostileChunks() throws {
        let png = [UInt8](TestImages.png(width: 3, height: 2))
        // A chunk length of 2^32-1.
        var long = png
        long.replaceSubrange(33..<37, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(Self.isMalformed(Self.read(Data(long))))
        // IHDR not first.
        var noHeader = png
        noHeader.replaceSubrange(12..<16, with: Array("tEXt".utf8))
        #expect(Self.isMalformed(Self.read(Data(noHeader))))
        // No IDAT: header then end.
        #expect(Self.isMalformed(Self.read(Data(Array(png[..<33]) + Array(png.suffix(12))))))
        // A chunk type that is not letters.
        var badType = png
        badType.replaceSubrange(37..<41, with: [0x00, 0x3C, 0x3E, 0x00])
        #expect(Self.isMalformed(Self.read(Data(badType))))

        // WebP whose RIFF size lies (larger, then smaller than the content).
        var webp = [UInt8](TestImages.webpLossy)
        webp[4] &+= 2
        #expect(Self.isMalformed(Self.read(Data(webp))))
        webp[4] &-= 4
        #expect(Self.isMalformed(Self.read(Data(webp))))
        // A lossy chunk that is not a key frame, a lossless one without its signature.
        var interFrame = [UInt8](TestImages.webpLossy)
        interFrame[20] |= 1
        #expect(Self.isMalformed(Self.read(Data(interFrame))))
        var unsigned = [UInt8](TestImages.webpLossless)
        unsigned[20] = 0
        #expect(Self.isMalformed(Self.read(Data(unsigned))))
        // An extended file with only its VP8X chunk: no image data.
        let extended = [UInt8](TestImages.webpExtended)
        var headerOnly = Array(extended[0..<30])
        headerOnly.replaceSubrange(4..<8, with: [22, 0, 0, 0])
        #expect(Self.isMalformed(Self.read(Data(headerOnly))))
    }

    @Test("random bytes after each format's magic never crash and are refused", arguments: 0..<3)
    func fuzz(seed: Int) {
        var generator = SplitMix64(seed: UInt64(seed + 1))
        let magics: [[UInt8]] = [
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], [0xFF, 0xD8, 0xFF], Array("RIFF".utf8) + [20, 0, 0, 0] + Array("WEBP".utf8),
        ]
        for magic in magics {
            for _ in 0..<300 {
                let tail = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                _ = Self.read(Data(magic + tail))
            }
        }
        // Mutations of real files: any answer but a crash; an accepted one keeps the limits.
        for sample in [TestImages.png(width: 3, height: 2), TestImages.jpeg, TestImages.webpLossy, TestImages.webpExtended] {
            for _ in 0..<300 {
                var bytes = [UInt8](sample)
                for _ in 0..<3 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
                if case .success(let header) = Self.read(Data(bytes)) {
                    #expect(header.width >= 1 && header.width <= 8_192 && header.height >= 1 && header.height <= 8_192)
                }
            }
        }
    }

    static func offset(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }
}

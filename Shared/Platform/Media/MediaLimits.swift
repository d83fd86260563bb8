/// The limits every service's media block applies (README, "Media"), shown in `describe`.
public struct MediaLimits: Sendable, Equatable {
    /// The most bytes an image may have once decoded from base64: 512 KiB.
    public var maxBytes = 524_288
    /// The most pixels on either side.
    public var maxSide = 8_192
    /// The most pixels in all (width × height): 40 megapixels, so a small file that
    /// decodes to gigabytes of pixels (a decompression bomb) is refused.
    public var maxPixels = 40_000_000

    /// The platform's limits.
    public init() {}

    /// The most base64 characters `maxBytes` take (with padding).
    public var maxBase64Length: Int { (maxBytes + 2) / 3 * 4 }

    /// An image over ``maxBytes``: `payload_too_large` on `content`, with the limit in
    /// `details.limitBytes` (the media store's answer, and the edge's for a raw upload).
    public var tooLarge: ServiceError {
        ServiceError(
            .payloadTooLarge, "the image is larger than \(maxBytes) bytes",
            fields: ["content": "at most \(maxBytes) bytes (\(maxBase64Length) base64 characters)"],
            details: ["limitBytes": .integer(Int64(maxBytes))])
    }

    /// The limits as one sentence, for `describe`.
    public var summary: String {
        "at most \(maxBytes / 1_024) KiB decoded, each side 1 to \(maxSide) pixels, at most \(maxPixels / 1_000_000) megapixels"
    }
}

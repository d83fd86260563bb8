import Foundation
import Hummingbird
import MultipartKit
import NIOCore

/// A posted form: its text fields and its files (`multipart/form-data`, for images).
struct FormBody: Sendable {
    var values: [String: String] = [:]
    var files: [String: Data] = [:]

    struct Unreadable: Error {}
    /// The body is longer than the limit.
    struct TooLarge: Error {}

    static func read(_ request: Request, limit: Int) async throws -> FormBody {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw TooLarge()
        }
        let type = request.headers[.contentType] ?? ""
        if type.lowercased().hasPrefix("multipart/form-data") {
            guard let boundary = Self.boundary(of: type) else { throw Unreadable() }
            return try multipart(buffer, boundary: boundary)
        }
        return FormBody(values: urlEncoded(String(buffer: buffer)))
    }

    /// `a=1&b=x+y` → ["a": "1", "b": "x y"]; the first of repeated names wins.
    static func urlEncoded(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard !name.isEmpty, values[name] == nil else { continue }
            values[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return values
    }

    private static func decode(_ text: Substring) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
    }

    static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return value.isEmpty || value.count > 200 ? nil : value
        }
        return nil
    }

    /// Parses a multipart body with MultipartKit's parser: a part with a file name is a
    /// file (kept only when not empty: a file input left empty still sends a part).
    static func multipart(_ buffer: ByteBuffer, boundary: String) throws -> FormBody {
        let parser = MultipartParser(boundary: boundary)
        var body = FormBody()
        var headers: [(String, String)] = []
        var content = ByteBuffer()
        parser.onHeader = { name, value in headers.append((name, value)) }
        parser.onBody = { chunk in content.writeBuffer(&chunk) }
        parser.onPartComplete = {
            let disposition = headers.first { $0.0.lowercased() == "content-disposition" }?.1 ?? ""
            if let name = Self.parameter("name", in: disposition) {
                if Self.parameter("filename", in: disposition) != nil {
                    if content.readableBytes > 0, body.files[name] == nil { body.files[name] = Data(content.readableBytesView) }
                } else if body.values[name] == nil {
                    body.values[name] = String(buffer: content)
                }
            }
            headers = []
            content = ByteBuffer()
        }
        try parser.execute(buffer)
        return body
    }

    /// A parameter of a `Content-Disposition` value: `form-data; name="icon"; filename="a.png"`.
    static func parameter(_ key: String, in header: String) -> String? {
        for part in header.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == key else { continue }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }
}

import Foundation

/// A strict RFC 8259 parser from UTF-8 bytes to ``JSONValue``.
///
/// The envelope of every request goes through here, on the socket threads of the gateway
/// and the services, so it is written for speed: one pass over the bytes, no Foundation
/// bridging, integers kept exact. Invalid UTF-8 in strings is rejected.
public struct JSONParser {
    /// Why a document is not valid JSON.
    public struct Failure: Error, Sendable, Equatable {
        /// A short description with the byte offset.
        public let message: String
    }

    /// Parses a whole document; trailing non-whitespace is an error.
    public static func parse(_ data: Data, maxDepth: Int = 64) throws(Failure) -> JSONValue {
        try parse(data, maxDepth: maxDepth, recordingMember: nil).value
    }

    /// Parses a whole document and also returns where the value of the top-level member
    /// `member` lies in `data` (offsets from `data.startIndex`), if the document is an
    /// object that has it. The request reader uses it to hash `data` as sent, without
    /// writing it out again.
    public static func parse(
        _ data: Data, maxDepth: Int = 64, recordingMember member: String?
    ) throws(Failure) -> (value: JSONValue, memberRange: Range<Int>?) {
        let result: Result<(JSONValue, Range<Int>?), Failure> = data.withUnsafeBytes { raw in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self), maxDepth: maxDepth, recordedMember: member)
            do throws(Failure) {
                parser.skipWhitespace()
                let value = try parser.parseValue(depth: 0)
                parser.skipWhitespace()
                guard parser.index == parser.bytes.count else { throw parser.fail("unexpected data after the JSON value") }
                return .success((value, parser.recordedRange))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var index = 0
    private let recordedMember: String?
    private var recordedRange: Range<Int>?

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, recordedMember: String? = nil) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.recordedMember = recordedMember
    }

    private func fail(_ message: String) -> Failure {
        Failure(message: "\(message) at byte \(index)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end of input") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw fail("invalid literal")
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        // Room for a request's envelope or a typical input without growing two or three
        // times on the way.
        var members = [String: JSONValue](minimumCapacity: 6)
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            // A repeated member name is refused: parsers that keep the first and those
            // that keep the last would read the same text differently.
            guard members[key] == nil else { throw fail("repeated member name") }
            let start = index
            members[key] = try parseValue(depth: depth + 1)
            if depth == 0, let recordedMember, key == recordedMember { recordedRange = start..<index }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1
        let start = index
        // Fast path: no escapes, so the bytes are the string.
        while index < bytes.count {
            skipPlainStringBytes()
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                // Validated once, then copied: `String(validating:as:)` is generic and
                // looked up its metadata for every string of every request.
                guard let text = try? UTF8Span(validating: slice.span) else { throw fail("invalid UTF-8 in string") }
                return String(copying: text)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            index += 1
        }
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = try? UTF8Span(validating: buffer.span) else { throw fail("invalid UTF-8 in string") }
                return String(copying: text)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw fail("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &buffer)
                default: throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in string") }
                buffer.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape(to buffer: inout [UInt8]) throws(Failure) {
        let scalar = try unicodeEscape()
        UTF8.encode(scalar) { buffer.append($0) }
    }

    /// The scalar of a `\u` escape (a surrogate pair counts as one), after the `u`.
    private mutating func unicodeEscape() throws(Failure) -> Unicode.Scalar {
        var scalarValue = try hex4()
        if (0xD800...0xDBFF).contains(scalarValue) {
            // A high surrogate must be followed by an escaped low surrogate.
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail("unpaired surrogate")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
            scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalarValue) {
            throw fail("unpaired surrogate")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw fail("invalid code point") }
        return scalar
    }

    private mutating func parseNumber() throws(Failure) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
        return .number(value)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

// MARK: Reading a document without building all of it

extension JSONParser {
    /// The kind of a JSON value, known without building the value.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null
    }

    /// One top-level member as ``parseMembers(of:keeping:noting:maxDepth:)`` reports it.
    public enum Member: Sendable, Equatable {
        /// A member it was asked to keep, parsed in full.
        case value(JSONValue)
        /// A member it was asked to note: validated and skipped; only its kind is known.
        case skipped(Kind)
    }

    /// Reads a document the way ``parse(_:maxDepth:)`` does, with the same errors at the
    /// same offsets, but builds only the top-level members named in `keeping`.
    ///
    /// Members named in `noting` are validated and reported by kind; every other member
    /// is validated and dropped. Skipped values cost no allocation however large they are
    /// (the gateway reads a 1 MiB `data` this way without copying it). A repeated name
    /// keeps its last value, as in ``parse(_:maxDepth:)``.
    ///
    /// - Returns: the kept and noted members, or `nil` when the document is valid JSON
    ///   but not an object.
    public static func parseMembers(
        of data: Data, keeping: Set<String>, noting: Set<String> = [], maxDepth: Int = 64
    ) throws(Failure) -> [String: Member]? {
        var ranges: [String: Range<Int>] = [:]
        return try parseMembers(of: data, keeping: keeping, noting: noting, maxDepth: maxDepth, ranges: &ranges)
    }

    /// ``parseMembers(of:keeping:noting:maxDepth:)`` that also reports where each noted
    /// member's value lies in `data` (offsets from its start), so a caller can pass those
    /// bytes on without building or writing them again (the HTTP edge does so with a
    /// reply's `data`).
    public static func parseMembers(
        of data: Data, keeping: Set<String>, noting: Set<String> = [], maxDepth: Int = 64, ranges: inout [String: Range<Int>]
    ) throws(Failure) -> [String: Member]? {
        try parseMembers(of: data, MemberNames(keeping: keeping, noting: noting), maxDepth: maxDepth, ranges: &ranges)
    }

    /// The member names ``parseMembers(of:_:maxDepth:ranges:)`` looks for, as bytes: made
    /// once by a caller that parses many frames (the gateway, for every request's head).
    public struct MemberNames: Sendable {
        let wanted: [(name: [UInt8], keep: Bool)]

        /// Members to build (`keeping`) and members only to check and locate (`noting`).
        public init(keeping: Set<String>, noting: Set<String> = []) {
            self.init(ordered: Array(keeping), noting: Array(noting))
        }

        /// The same, in this order: ``JSONParser/parseMemberSlots(of:_:maxDepth:)`` reports
        /// `keeping[i]` in slot `i` and `noting[j]` in slot `keeping.count + j`.
        public init(ordered keeping: [String], noting: [String] = []) {
            wanted = keeping.map { (name: Array($0.utf8), keep: true) } + noting.map { (name: Array($0.utf8), keep: false) }
        }
    }

    /// ``parseMembers(of:keeping:noting:maxDepth:ranges:)`` with the names made beforehand.
    public static func parseMembers(
        of data: Data, _ names: MemberNames, maxDepth: Int = 64, ranges: inout [String: Range<Int>]
    ) throws(Failure) -> [String: Member]? {
        var found: [Range<Int>?] = []
        guard let slots = try parseMemberSlots(of: data, names, maxDepth: maxDepth, ranges: &found) else { return nil }
        var members: [String: Member] = [:]
        for (index, slot) in slots.enumerated() {
            guard let slot else { continue }
            let name = String(decoding: names.wanted[index].name, as: UTF8.self)
            members[name] = slot
            if let range = found[index] { ranges[name] = range }
        }
        return members
    }

    /// ``parseMembers(of:_:maxDepth:ranges:)`` without dictionaries: the wanted members
    /// by their position in `names` (`nil` where absent), and where each noted member's
    /// value lies. The gateway reads every request's head this way.
    public static func parseMemberSlots(
        of data: Data, _ names: MemberNames, maxDepth: Int = 64, ranges: inout [Range<Int>?]
    ) throws(Failure) -> [Member?]? {
        let wanted = names.wanted
        var slots = [Member?](repeating: nil, count: wanted.count)
        var found = [Range<Int>?](repeating: nil, count: wanted.count)
        let isObject: Result<Bool, Failure> = data.withUnsafeBytes { raw in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self), maxDepth: maxDepth)
            do throws(Failure) {
                parser.skipWhitespace()
                guard parser.index < parser.bytes.count else { throw parser.fail("unexpected end of input") }
                let isObject = parser.bytes[parser.index] == UInt8(ascii: "{")
                if isObject {
                    try parser.readTopLevelObject(wanted: wanted, slots: &slots, ranges: &found)
                } else {
                    _ = try parser.skipValue(depth: 0)
                }
                parser.skipWhitespace()
                guard parser.index == parser.bytes.count else { throw parser.fail("unexpected data after the JSON value") }
                return .success(isObject)
            } catch {
                return .failure(error)
            }
        }
        guard try isObject.get() else { return nil }
        ranges = found
        return slots
    }

    /// The top-level object of ``parseMembers(of:keeping:noting:maxDepth:)``; mirrors
    /// `parseObject` at depth 0.
    private mutating func readTopLevelObject(
        wanted: [(name: [UInt8], keep: Bool)], slots: inout [Member?], ranges: inout [Range<Int>?]
    ) throws(Failure) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let match = try matchMemberName(wanted)
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            if let match {
                guard slots[match] == nil else { throw fail("repeated member name") }
                if wanted[match].keep {
                    slots[match] = .value(try parseValue(depth: 1))
                } else {
                    let start = index
                    slots[match] = .skipped(try skipValue(depth: 1))
                    ranges[match] = start..<index
                }
            } else {
                _ = try skipValue(depth: 1)
            }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return }
            throw fail("expected ',' or '}'")
        }
    }

    /// Reads a member name and returns the index of the wanted name it equals, if any.
    /// Names without escapes are compared in place; an escaped name (rare) is decoded.
    private mutating func matchMemberName(_ wanted: [(name: [UInt8], keep: Bool)]) throws(Failure) -> Int? {
        let start = index
        let hadEscapes = try skipString()
        if hadEscapes {
            index = start
            let name = Array(try parseString().utf8)
            return wanted.firstIndex { $0.name == name }
        }
        let raw = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(index - 1)])
        return wanted.firstIndex { candidate in
            candidate.name.count == raw.count
                && (raw.isEmpty || candidate.name.withUnsafeBufferPointer { memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0 })
        }
    }

    /// Validates one value without building it, with `parseValue`'s errors; returns its kind.
    private mutating func skipValue(depth: Int) throws(Failure) -> Kind {
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try skipObject(depth: depth); return .object
        case UInt8(ascii: "["): try skipArray(depth: depth); return .array
        case UInt8(ascii: "\""): _ = try skipString(); return .string
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber(); return .number
        default: throw fail("unexpected character")
        }
    }

    private mutating func skipObject(depth: Int) throws(Failure) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            _ = try skipString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            _ = try skipValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func skipArray(depth: Int) throws(Failure) {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            _ = try skipValue(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return }
            throw fail("expected ',' or ']'")
        }
    }

    /// Validates a string like `parseString` (same errors, same offsets) without building
    /// it. Returns whether it had escapes.
    ///
    /// `parseString` checks UTF-8 once, over the decoded text, when it reaches the closing
    /// quote. Escapes always decode to whole scalars, so that text is valid exactly when
    /// every raw run between escapes is; the runs are checked as they end and a failure is
    /// reported at the closing quote, where `parseString` reports it.
    private mutating func skipString() throws(Failure) -> Bool {
        index += 1
        var runStart = index
        var validUTF8 = true
        var hadEscapes = false
        while index < bytes.count {
            skipPlainStringBytes()
            guard index < bytes.count else { break }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                validUTF8 = validUTF8 && isValidUTF8(runStart..<index)
                index += 1
                guard validUTF8 else { throw fail("invalid UTF-8 in string") }
                return hadEscapes
            case UInt8(ascii: "\\"):
                hadEscapes = true
                validUTF8 = validUTF8 && isValidUTF8(runStart..<index)
                index += 1
                guard index < bytes.count else { throw fail("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    _ = try unicodeEscape()
                default:
                    throw fail("invalid escape")
                }
                runStart = index
            default:
                if byte < 0x20 { throw fail("control character in string") }
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    /// Validates a number like `parseNumber`, including its range check, which needs the
    /// number's text only when the value could be out of `Double`'s range.
    private mutating func skipNumber() throws(Failure) {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
        let integerStart = index
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let integerDigits = index - integerStart
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var hasExponent = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            hasExponent = true
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // Without an exponent, fewer than 309 integer digits always fit in a Double.
        guard hasExponent || integerDigits > 308 else { return }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
    }

    /// Advances over string bytes that need no attention (not a quote, a backslash or a
    /// control character) eight at a time; stops at or shortly before one that does.
    private mutating func skipPlainStringBytes() {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= bytes.count {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // The classic "has a zero byte" test, for bytes < 0x20 and for '"' and '\\'.
            let control = (word &- ones &* 0x20) & ~word & highs
            let quoted = word ^ (ones &* 0x22)
            let escaped = word ^ (ones &* 0x5C)
            let special = control | ((quoted &- ones) & ~quoted & highs) | ((escaped &- ones) & ~escaped & highs)
            guard special == 0 else { return }
            index += 8
        }
    }

    /// Whether the bytes are well-formed UTF-8, checked in place by the standard
    /// library's validator, the one `String(validating:)` uses.
    private func isValidUTF8(_ range: Range<Int>) -> Bool {
        let run = UnsafeBufferPointer(rebasing: bytes[range])
        return (try? UTF8Span(validating: run.span)) != nil
    }
}

extension JSONValue {
    /// Compact JSON text of the value; object keys sorted, so equal values give equal bytes.
    public var serialized: Data {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        write(to: &output)
        return Data(output)
    }

    /// Appends the compact JSON text of the value.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): JSONValue.writeInteger(value, to: &output)
        case .number(let value):
            if value.rounded() == value, abs(value) < 1e15 {
                JSONValue.writeInteger(Int64(value), to: &output)
            } else {
                output.append(contentsOf: "\(value)".utf8)
            }
        case .string(let text): JSONValue.writeString(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (offset, key) in members.keys.sorted().enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                JSONValue.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                members[key]?.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Appends a JSON string literal with the required escapes.
    public static func writeString(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(utf8: $0, to: &output) }
    }

    /// Appends a JSON string literal of UTF-8 text (a database column's, say) with the
    /// required escapes.
    public static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        do {
            // Runs of bytes that need no escape are copied at once.
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
                case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex: StaticString = "0123456789abcdef"
                    let digits = hex.utf8Start
                    output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
                }
            }
            if runStart < bytes.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count])) }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends the decimal digits of an integer, without making a `String` first.
    public static func writeInteger(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        writeMagnitude(value.magnitude, to: &output)
    }

    private static func writeMagnitude(_ value: UInt64, to output: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes hold the 20 digits of UInt64.max
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            var rest = value
            repeat {
                count += 1
                buffer[24 - count] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
            } while rest > 0
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }
}

extension JSONValue {
    /// Indented JSON text for people (`ctl`), keys sorted.
    public var prettyPrinted: String {
        var output = ""
        writePretty(to: &output, indent: 0)
        return output
    }

    private func writePretty(to output: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent + 1)
        let closingPad = String(repeating: "  ", count: indent)
        switch self {
        case .array(let elements) where !elements.isEmpty:
            output += "[\n"
            for (offset, element) in elements.enumerated() {
                output += pad
                element.writePretty(to: &output, indent: indent + 1)
                output += offset < elements.count - 1 ? ",\n" : "\n"
            }
            output += closingPad + "]"
        case .object(let members) where !members.isEmpty:
            output += "{\n"
            let keys = members.keys.sorted()
            for (offset, key) in keys.enumerated() {
                output += pad + String(decoding: JSONValue.string(key).serialized, as: UTF8.self) + ": "
                members[key]?.writePretty(to: &output, indent: indent + 1)
                output += offset < keys.count - 1 ? ",\n" : "\n"
            }
            output += closingPad + "}"
        default:
            output += String(decoding: serialized, as: UTF8.self)
        }
    }
}

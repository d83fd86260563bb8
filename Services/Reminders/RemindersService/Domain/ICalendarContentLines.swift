import Foundation

// The syntax layer of iCalendar (RFC 5545 3.1, 3.4, 3.6): bytes to unfolded content lines,
// content lines to a tree of BEGIN/END components. What the properties mean is read in
// ICalendarParser.swift.

/// One parameter of a content line: `TZID=Europe/Berlin`, `MEMBER="mailto:a","mailto:b"`.
struct ICalParameter: Sendable, Hashable {
    /// The name, upper-cased (names are case-insensitive).
    var name: String
    /// The values, quotes removed (a quoted value may hold `;`, `:` and `,`).
    var values: [String]
}

/// One unfolded content line: `NAME *(";" param) ":" value`.
struct ICalContentLine: Sendable, Hashable {
    /// The property name, upper-cased.
    var name: String
    var parameters: [ICalParameter]
    /// The value exactly as written (still escaped, for TEXT).
    var value: String
    /// The physical line (1-based) the content line starts on.
    var line: Int

    /// The first value of the first parameter called `name` (upper-case).
    func parameter(_ name: String) -> String? {
        parameters.first { $0.name == name }?.values.first
    }
}

/// A `BEGIN:NAME` ... `END:NAME` block with its properties and nested blocks.
struct ICalComponent: Sendable {
    /// The component name, upper-cased: `VCALENDAR`, `VEVENT`, `VALARM`.
    var name: String
    /// The line of its BEGIN.
    var line: Int
    var properties: [ICalContentLine] = []
    var children: [ICalComponent] = []
}

/// Reads bytes into components.
///
/// The rules (RFC 5545 3.1, with the leniencies real files need):
/// - Lines end in CRLF or a bare LF (extra CRs before the LF, as some Windows tools
///   write, are dropped too). A line that starts with a space or a tab continues
///   the one before it (the CRLF and that one whitespace character are removed). The
///   unfolding is done on bytes, so a multi-byte UTF-8 character split across a fold is
///   put back together. Empty lines are ignored.
/// - Each unfolded line is at most ``maximumLineOctets`` octets, must be UTF-8 and holds
///   no control characters other than the tab.
/// - `NAME *(";" PARAM "=" value *("," value)) ":" value`, names and parameter names of
///   letters, digits, `-` (and `_`, which some X- names use), compared case-insensitively.
///   A parameter value may be quoted (`"..."`) and then holds `;`, `:` and `,`.
/// - BEGIN and END must nest: an END that does not close the innermost open BEGIN, an
///   END with nothing open and a BEGIN never closed are errors with their line. The
///   outermost component must be VCALENDAR (several VCALENDARs one after another are
///   allowed); nothing but blank lines may stand outside. Nesting deeper than
///   ``maximumDepth`` is refused.
enum ICalLexer {
    /// The longest content line after unfolding, in octets.
    static let maximumLineOctets = 10_000
    /// The deepest nesting of components (VCALENDAR > VEVENT > VALARM is 3).
    static let maximumDepth = 10

    /// The VCALENDAR components of `bytes` (UTF-8, any BOM already removed). Refuses more
    /// than `maximumEvents` VEVENTs directly inside the VCALENDARs.
    static func calendars(_ bytes: [UInt8], maximumEvents: Int) throws(ICalError) -> [ICalComponent] {
        var tree = TreeBuilder(maximumEvents: maximumEvents)
        var logical: [UInt8] = []
        var logicalLine = 0  // 0: no content line started yet
        var physicalLine = 0
        var index = bytes.startIndex
        while index < bytes.endIndex {
            physicalLine += 1
            let start = index
            let newline = bytes[index...].firstIndex(of: ICalASCII.lineFeed) ?? bytes.endIndex
            index = newline < bytes.endIndex ? newline + 1 : newline
            var end = newline
            while end > start, bytes[end - 1] == ICalASCII.carriageReturn { end -= 1 }
            if end == start { continue }

            if bytes[start] == ICalASCII.space || bytes[start] == ICalASCII.tab {
                guard logicalLine > 0 else {
                    throw ICalError(line: physicalLine, "the file starts with a continuation line (a line starting with a space)")
                }
                guard logical.count + (end - start - 1) <= maximumLineOctets else {
                    throw ICalError(line: logicalLine, "a line longer than \(maximumLineOctets) octets (after unfolding)")
                }
                logical.append(contentsOf: bytes[(start + 1)..<end])
            } else {
                if logicalLine > 0 { try tree.add(firstOrNext(logical, line: logicalLine, first: !tree.sawContent)) }
                guard end - start <= maximumLineOctets else {
                    throw ICalError(line: physicalLine, "a line longer than \(maximumLineOctets) octets (after unfolding)")
                }
                logical.removeAll(keepingCapacity: true)
                logical.append(contentsOf: bytes[start..<end])
                logicalLine = physicalLine
            }
        }
        if logicalLine > 0 { try tree.add(firstOrNext(logical, line: logicalLine, first: !tree.sawContent)) }
        return try tree.finish()
    }

    /// Parses a content line; a first line that is text but not a content line (an HTML
    /// page, a CSV file) says the file is not a calendar at all.
    private static func firstOrNext(_ bytes: [UInt8], line: Int, first: Bool) throws(ICalError) -> ICalContentLine {
        guard first else { return try contentLine(bytes, line: line) }
        try checkCharacters(bytes, line: line)
        do {
            return try contentLine(bytes, line: line)
        } catch {
            throw ICalError(line: line, "not an iCalendar file: it must start with BEGIN:VCALENDAR")
        }
    }

    // MARK: Content lines

    /// Parses one unfolded content line.
    static func contentLine(_ bytes: [UInt8], line: Int) throws(ICalError) -> ICalContentLine {
        try checkCharacters(bytes, line: line)
        var index = 0
        func token() -> String {
            let start = index
            while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self).uppercased()
        }

        let name = token()
        guard !name.isEmpty, index < bytes.count, bytes[index] == ICalASCII.semicolon || bytes[index] == ICalASCII.colon else {
            throw ICalError(line: line, "\(preview(bytes)) is not a content line (NAME:value)")
        }
        var parameters: [ICalParameter] = []
        while index < bytes.count, bytes[index] == ICalASCII.semicolon {
            index += 1
            let parameterName = token()
            guard !parameterName.isEmpty, index < bytes.count, bytes[index] == ICalASCII.equals else {
                throw ICalError(line: line, "\(name): a parameter is not of the form NAME=value")
            }
            index += 1
            var values: [String] = []
            while true {
                if index < bytes.count, bytes[index] == ICalASCII.quote {
                    let start = index + 1
                    guard let close = bytes[start...].firstIndex(of: ICalASCII.quote) else {
                        throw ICalError(line: line, "\(name): the quoted value of \(parameterName) is not closed")
                    }
                    values.append(String(decoding: bytes[start..<close], as: UTF8.self))
                    index = close + 1
                } else {
                    let start = index
                    while index < bytes.count, !isParameterDelimiter(bytes[index]) { index += 1 }
                    values.append(String(decoding: bytes[start..<index], as: UTF8.self))
                }
                guard index < bytes.count, bytes[index] == ICalASCII.comma else { break }
                index += 1
            }
            parameters.append(ICalParameter(name: parameterName, values: values))
        }
        guard index < bytes.count, bytes[index] == ICalASCII.colon else {
            throw ICalError(line: line, "\(name): no ':' before the value")
        }
        let value = String(decoding: bytes[(index + 1)...], as: UTF8.self)
        return ICalContentLine(name: name, parameters: parameters, value: value, line: line)
    }

    /// Refuses bytes that are not UTF-8, and control characters other than the tab (which
    /// RFC 5545 does not allow in a content line, and which a database may refuse).
    static func checkCharacters(_ bytes: [UInt8], line: Int) throws(ICalError) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1, let byte = encoded.first, (byte < 0x20 && byte != ICalASCII.tab) || byte == 0x7F {
                    throw ICalError(line: line, "a control character (\(hex(byte))) in the text")
                }
                offset += encoded.count
            case .error:
                let byte = offset < bytes.count ? bytes[offset] : 0
                throw ICalError(line: line, "the text is not UTF-8 (byte \(hex(byte))); save the file as UTF-8")
            case .emptyInput:
                return
            }
        }
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    static func isParameterDelimiter(_ byte: UInt8) -> Bool {
        byte == ICalASCII.semicolon || byte == ICalASCII.colon || byte == ICalASCII.comma
    }

    /// `0x89`.
    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
    }

    /// The start of a line for an error message (at most 40 characters).
    static func preview(_ bytes: [UInt8]) -> String {
        preview(String(decoding: bytes.prefix(200), as: UTF8.self))
    }

    /// At most 40 characters of a value, for an error message.
    static func preview(_ text: some StringProtocol) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : String(text)
    }

    // MARK: Components

    /// Builds the component tree from content lines in order, checking that BEGIN and END
    /// nest.
    struct TreeBuilder {
        let maximumEvents: Int
        var open: [ICalComponent] = []
        var calendars: [ICalComponent] = []
        var events = 0
        var sawContent = false

        mutating func add(_ line: ICalContentLine) throws(ICalError) {
            defer { sawContent = true }
            switch line.name {
            case "BEGIN":
                let name = try componentName(line)
                guard !open.isEmpty || name == "VCALENDAR" else {
                    throw ICalError(line: line.line, sawContent
                        ? "BEGIN:\(name) outside BEGIN:VCALENDAR ... END:VCALENDAR"
                        : "not an iCalendar file: it must start with BEGIN:VCALENDAR, not BEGIN:\(name)")
                }
                guard open.count < ICalLexer.maximumDepth else {
                    throw ICalError(line: line.line, "components nested more than \(ICalLexer.maximumDepth) deep")
                }
                if name == "VEVENT", open.count == 1 {
                    events += 1
                    guard events <= maximumEvents else {
                        throw ICalError(line: line.line, "more than \(maximumEvents) events: split the file")
                    }
                }
                open.append(ICalComponent(name: name, line: line.line))
            case "END":
                let name = try componentName(line)
                guard let innermost = open.last else {
                    throw ICalError(line: line.line, "END:\(name) without a BEGIN:\(name)")
                }
                guard innermost.name == name else {
                    throw ICalError(line: line.line, "END:\(name) where END:\(innermost.name) was expected (BEGIN:\(innermost.name) is on line \(innermost.line))")
                }
                open.removeLast()
                if open.isEmpty {
                    calendars.append(innermost)
                } else {
                    open[open.count - 1].children.append(innermost)
                }
            default:
                guard !open.isEmpty else {
                    throw ICalError(line: line.line, sawContent
                        ? "\(line.name) outside BEGIN:VCALENDAR ... END:VCALENDAR"
                        : "not an iCalendar file: it must start with BEGIN:VCALENDAR")
                }
                open[open.count - 1].properties.append(line)
            }
        }

        func finish() throws(ICalError) -> [ICalComponent] {
            if let innermost = open.last {
                throw ICalError(line: innermost.line, "BEGIN:\(innermost.name) is never closed (no END:\(innermost.name))")
            }
            guard !calendars.isEmpty else {
                throw ICalError(line: nil, "not an iCalendar file: there is no BEGIN:VCALENDAR")
            }
            return calendars
        }

        /// The upper-cased component name of a BEGIN or END line.
        func componentName(_ line: ICalContentLine) throws(ICalError) -> String {
            let name = line.value.trimmingCharacters(in: .whitespaces).uppercased()
            guard !name.isEmpty, name.utf8.allSatisfy(ICalLexer.isNameByte) else {
                throw ICalError(line: line.line, "\(line.name):\(ICalLexer.preview(line.value)) is not a component name")
            }
            return name
        }
    }
}

/// The ASCII bytes the syntax uses.
enum ICalASCII {
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "\"")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let equals = UInt8(ascii: "=")
    static let backslash = UInt8(ascii: "\\")
}

import Foundation

extension JSONSchema {
    /// The most problems one answer reports: a request with thousands of unknown members
    /// gets a short answer, not one larger than itself (the rest show once these are fixed).
    public static let maxReportedProblems = 20

    /// Checks a value and returns each problem keyed by its path (`email`,
    /// `items[2].name`), at most ``maxReportedProblems`` of them; an empty result means the
    /// value is valid.
    public func validate(_ value: JSONValue) -> [String: String] {
        var problems: [String: String] = [:]
        validate(value, at: "", into: &problems)
        return problems
    }

    private func validate(_ value: JSONValue, at path: String, into problems: inout [String: String]) {
        guard problems.count < Self.maxReportedProblems else { return }
        let field = path.isEmpty ? "data" : path
        if case .null = value {
            if !isNullable, !isAny { problems[field] = "must not be null" }
            return
        }
        switch kind {
        case .any:
            return
        case .object(let properties, let required, let additional):
            guard case .object(let members) = value else {
                problems[field] = "must be an object"
                return
            }
            for name in required where members[name] == nil {
                problems[join(path, name)] = "is required"
            }
            for (name, member) in members {
                if problems.count >= Self.maxReportedProblems { return }
                if let schema = properties[name] {
                    schema.validate(member, at: join(path, name), into: &problems)
                } else if let additional {
                    additional.validate(member, at: join(path, name), into: &problems)
                } else {
                    problems[join(path, name)] = "is not a known field"
                }
            }
        case .string(let minLength, let maxLength, let format, let allowed):
            guard case .string(let text) = value else {
                problems[field] = "must be a string"
                return
            }
            if let allowed {
                if !allowed.contains(text) { problems[field] = "must be one of: \(allowed.joined(separator: ", "))" }
                return
            }
            // A string has at most as many characters as UTF-8 bytes: counting characters (a
            // walk over grapheme clusters) is needed only when the bytes cannot decide, which
            // keeps a long string (an image's base64) from being walked for nothing.
            let bytes = text.utf8.count
            // Lengths count Unicode code points, as JSON Schema does (counting grapheme
            // clusters would let a base letter carry any number of combining marks).
            if minLength > 0 && (bytes < minLength || (minLength > 1 && text.unicodeScalars.count < minLength)) {
                problems[field] = minLength == 1 ? "must not be empty" : "must have at least \(minLength) characters"
            } else if bytes > maxLength && text.unicodeScalars.count > maxLength {
                problems[field] = "must have at most \(maxLength) characters"
            } else if let problem = JSONSchema.unsafeCharacterProblem(text, allowingLineBreaks: format == .multiline) {
                problems[field] = problem
            } else if let format, !format.accepts(text) {
                problems[field] = format.problem
            }
        case .integer(let minimum, let maximum):
            guard case .integer(let number) = value else {
                problems[field] = "must be an integer"
                return
            }
            if let minimum, number < minimum { problems[field] = "must be at least \(minimum)" }
            if let maximum, number > maximum { problems[field] = "must be at most \(maximum)" }
        case .number:
            switch value {
            case .integer, .number: return
            default: problems[field] = "must be a number"
            }
        case .boolean:
            guard case .bool = value else {
                problems[field] = "must be true or false"
                return
            }
        case .array(let items, let minItems, let maxItems):
            guard case .array(let elements) = value else {
                problems[field] = "must be an array"
                return
            }
            if elements.count < minItems { problems[field] = "must have at least \(minItems) items" }
            if elements.count > maxItems { problems[field] = "must have at most \(maxItems) items" }
            for (index, element) in elements.prefix(maxItems).enumerated() {
                if problems.count >= Self.maxReportedProblems { return }
                items.validate(element, at: "\(field)[\(index)]", into: &problems)
            }
        }
    }

    private var isAny: Bool {
        if case .any = kind { return true }
        return false
    }

    private func join(_ path: String, _ name: String) -> String {
        path.isEmpty ? name : "\(path).\(name)"
    }
}

extension JSONSchema {
    /// The schema as JSON Schema (draft 2020-12), as `describe` shows it.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue]
        switch kind {
        case .any:
            members = [:]
        case .object(let properties, let required, let additional):
            members = ["type": "object", "properties": .object(properties.mapValues(\.jsonValue))]
            if !required.isEmpty { members["required"] = .array(required.sorted().map { .string($0) }) }
            members["additionalProperties"] = additional?.jsonValue ?? .bool(false)
        case .string(let minLength, let maxLength, let format, let allowed):
            members = ["type": "string"]
            if let allowed {
                // `null` too when the value may be null: an enum is checked on its own.
                members["enum"] = .array(allowed.map { .string($0) } + (isNullable ? [.null] : []))
            } else {
                if minLength > 0 { members["minLength"] = .integer(Int64(minLength)) }
                members["maxLength"] = .integer(Int64(maxLength))
                if let format {
                    members["format"] = .string(format.rawValue)
                    if let pattern = format.pattern { members["pattern"] = .string(pattern) }
                }
            }
        case .integer(let minimum, let maximum):
            members = ["type": "integer"]
            if let minimum { members["minimum"] = .integer(minimum) }
            if let maximum { members["maximum"] = .integer(maximum) }
        case .number:
            members = ["type": "number"]
        case .boolean:
            members = ["type": "boolean"]
        case .array(let items, let minItems, let maxItems):
            members = ["type": "array", "items": items.jsonValue, "maxItems": .integer(Int64(maxItems))]
            if minItems > 0 { members["minItems"] = .integer(Int64(minItems)) }
        }
        if isNullable, case .string(let type)? = members["type"] {
            members["type"] = .array([.string(type), "null"])
        }
        if let summary { members["description"] = .string(summary) }
        return .object(members)
    }
}

extension JSONSchema {
    /// What a string's characters may not be, read from its UTF-8 bytes in one walk:
    /// a control character (general category Cc: U+0000–U+001F and U+007F–U+009F: a byte
    /// under 0x20, 0x7F, or 0xC2 followed by 0x80–0x9F), or one of Unicode's explicit
    /// directional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069: E2 80
    /// AA–AE, E2 81 A6–A9), which make text shown to others read differently from what it
    /// holds ("Trojan Source"). The marks U+200E, U+200F and U+061C, which right-to-left
    /// text may need, pass. Asking each scalar its Unicode properties took 60% of an image
    /// upload's time.
    enum UnsafeCharacter {
        case control
        case bidiOverride
    }

    static func unsafeCharacter(_ text: String, allowingLineBreaks: Bool) -> UnsafeCharacter? {
        func scan(_ bytes: some Sequence<UInt8>) -> UnsafeCharacter? {
            var (previous, beforePrevious): (UInt8, UInt8) = (0, 0)
            for byte in bytes {
                if allowingLineBreaks && (byte == 0x0A || byte == 0x0D || byte == 0x09) {
                    (beforePrevious, previous) = (previous, byte)
                    continue
                }
                if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte >= 0x80 && byte <= 0x9F) { return .control }
                if beforePrevious == 0xE2, (previous == 0x80 && (0xAA...0xAE).contains(byte)) || (previous == 0x81 && (0xA6...0xA9).contains(byte)) {
                    return .bidiOverride
                }
                (beforePrevious, previous) = (previous, byte)
            }
            return nil
        }
        // Parsed strings are native, so their bytes are read from one buffer.
        return text.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(text.utf8)
    }

    /// The problem a text field reports for ``unsafeCharacter(_:allowingLineBreaks:)``.
    public static func unsafeCharacterProblem(_ text: String, allowingLineBreaks: Bool = false) -> String? {
        switch unsafeCharacter(text, allowingLineBreaks: allowingLineBreaks) {
        case .control: "must not contain control characters"
        case .bidiOverride: "must not contain bidirectional embeddings, overrides or isolates (U+202A–U+202E, U+2066–U+2069)"
        case nil: nil
        }
    }
}

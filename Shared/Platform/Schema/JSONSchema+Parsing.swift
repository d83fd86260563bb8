import Foundation

extension JSONSchema {
    /// A schema read back from its JSON Schema form (``jsonValue``, as `describe` shows it),
    /// so a client that only has `describe` can validate values as the service does.
    ///
    /// Reads exactly the subset ``jsonValue`` writes: `type` (one type, or one type and
    /// `"null"`), `properties`, `required`, `additionalProperties`, `enum`, `minLength`,
    /// `maxLength`, `format`, `minimum`, `maximum`, `items`, `minItems`, `maxItems` and
    /// `description`; `{}` is any value.
    public init(jsonValue value: JSONValue) throws(SchemaParsingError) {
        guard case .object(let members) = value else { throw SchemaParsingError("a schema must be an object") }
        var nullable = false
        var type: String?
        switch members["type"] {
        case nil:
            type = nil
        case .string(let name)?:
            type = name
        case .array(let names)?:
            let strings = names.compactMap(\.stringValue)
            guard strings.count == names.count, strings.count == 2, strings.contains("null") else {
                throw SchemaParsingError("type must be one type, or one type and \"null\"")
            }
            nullable = true
            type = strings.first { $0 != "null" }
        default:
            throw SchemaParsingError("type must be a string or an array of strings")
        }
        var schema: JSONSchema
        switch type {
        case nil:
            schema = .any
        case "object":
            var properties: [String: JSONSchema] = [:]
            for (name, property) in members["properties"]?.objectValue ?? [:] {
                do {
                    properties[name] = try JSONSchema(jsonValue: property)
                } catch {
                    throw SchemaParsingError("\(name): \(error.description)")
                }
            }
            let required = members["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var additional: JSONSchema?
            switch members["additionalProperties"] {
            case nil, .bool(false)?: additional = nil
            case .bool(true)?: additional = .any
            case let other?: additional = try JSONSchema(jsonValue: other)
            }
            schema = .object(properties, required: required, additional: additional)
        case "string":
            if let allowed = members["enum"]?.arrayValue {
                // (A nullable enum lists null too; `type` says it is nullable.)
                schema = .oneOf(allowed.compactMap(\.stringValue))
            } else {
                var format: StringFormat?
                if let name = members["format"]?.stringValue {
                    // `time`: what `local-time` was written as before (README, "describe").
                    guard let known = StringFormat(rawValue: name == "time" ? StringFormat.time.rawValue : name) else {
                        throw SchemaParsingError("unknown format \(name)")
                    }
                    format = known
                }
                schema = .string(
                    minLength: Int(members["minLength"]?.integerValue ?? 0), maxLength: Int(members["maxLength"]?.integerValue ?? Int64(Int.max)),
                    format: format)
            }
        case "integer":
            schema = .integer(minimum: members["minimum"]?.integerValue, maximum: members["maximum"]?.integerValue)
        case "number":
            schema = .number
        case "boolean":
            schema = .boolean
        case "array":
            guard let items = members["items"] else { throw SchemaParsingError("an array schema needs items") }
            schema = .array(
                of: try JSONSchema(jsonValue: items), minItems: Int(members["minItems"]?.integerValue ?? 0),
                maxItems: Int(members["maxItems"]?.integerValue ?? Int64(Int.max)))
        case let other?:
            throw SchemaParsingError("unknown type \(other)")
        }
        if nullable { schema = schema.nullable() }
        if let summary = members["description"]?.stringValue { schema = schema.described(summary) }
        self = schema
    }
}

/// A JSON Schema document outside the subset ``JSONSchema`` reads.
public struct SchemaParsingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, with the path of the member when nested.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

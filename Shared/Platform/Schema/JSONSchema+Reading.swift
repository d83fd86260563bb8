import Foundation

extension JSONSchema {
    /// Reads back a schema in the form ``jsonValue`` writes (what `describe` shows), so a
    /// client holding only `describe` can check replies against the declared schemas.
    /// Anything not of that form is `nil`.
    public init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var nullable = false
        var typeName: String?
        switch members["type"] {
        case .string(let name)?: typeName = name
        case .array(let names)?:
            nullable = names.contains(.string("null"))
            typeName = names.compactMap(\.stringValue).first { $0 != "null" }
        case nil: typeName = nil
        default: return nil
        }
        var schema: JSONSchema
        switch typeName {
        case nil:
            schema = .any
        case "object":
            var properties: [String: JSONSchema] = [:]
            for (name, property) in members["properties"]?.objectValue ?? [:] {
                guard let parsed = JSONSchema(json: property) else { return nil }
                properties[name] = parsed
            }
            let required = members["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var additional: JSONSchema?
            if let extra = members["additionalProperties"], extra != .bool(false) {
                guard let parsed = JSONSchema(json: extra) else { return nil }
                additional = parsed
            }
            schema = .object(properties, required: required, additional: additional)
        case "string":
            if let allowed = members["enum"]?.arrayValue {
                schema = .oneOf(allowed.compactMap(\.stringValue))
            } else {
                let format = members["format"]?.stringValue.flatMap(StringFormat.init(rawValue:))
                if members["format"] != nil, format == nil { return nil }
                schema = .string(
                    minLength: Int(members["minLength"]?.integerValue ?? 0), maxLength: Int(members["maxLength"]?.integerValue ?? 1_000),
                    format: format)
            }
        case "integer":
            schema = .integer(minimum: members["minimum"]?.integerValue, maximum: members["maximum"]?.integerValue)
        case "number":
            schema = .number
        case "boolean":
            schema = .boolean
        case "array":
            guard let items = members["items"].flatMap(JSONSchema.init(json:)) else { return nil }
            schema = .array(
                of: items, minItems: Int(members["minItems"]?.integerValue ?? 0), maxItems: Int(members["maxItems"]?.integerValue ?? 1_000))
        default:
            return nil
        }
        if nullable { schema = schema.nullable() }
        if let summary = members["description"]?.stringValue { schema = schema.described(summary) }
        self = schema
    }
}

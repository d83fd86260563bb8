import Foundation
import Platform

/// Hostile requests, seeded: for an operation's request schema (as `describe` shows it),
/// request bodies that are valid, nearly valid, or broken in the ways attackers and
/// broken clients break them: wrong types, missing and unknown fields, huge numbers and
/// strings, NUL bytes, invalid UTF-8, duplicate keys, 10,000 levels of nesting, truncated
/// or corrupted envelopes. The same seed gives the same requests (a finding can be replayed).
public struct RequestFuzzer {
    private var random: SplitMix64

    public init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// Kinds of request the fuzzer makes, for reports.
    public enum Kind: String, CaseIterable, Sendable {
        case valid, missingField, wrongType, unknownField, nastyData, duplicateKey, deepNesting, corruptEnvelope, invalidUTF8
    }

    /// One request body (a whole envelope) for `op` with `schema`, and what kind it is.
    public mutating func request(op: String, schema: JSONValue, token: String?) -> (kind: Kind, body: Data) {
        let kind = Kind.allCases[Int(random.next() % UInt64(Kind.allCases.count))]
        var data = instance(of: schema, depth: 0)
        switch kind {
        case .valid:
            break
        case .missingField:
            if case .object(var members) = data, let key = members.keys.sorted().randomElement(using: &random) {
                members[key] = nil
                data = .object(members)
            }
        case .wrongType:
            data = replacingOneField(data, with: nasty())
        case .unknownField:
            if case .object(var members) = data {
                members["unexpected\(random.next() % 100)"] = nasty()
                data = .object(members)
            }
        case .nastyData:
            data = nasty()
        case .duplicateKey, .deepNesting, .corruptEnvelope, .invalidUTF8:
            break
        }
        var envelope: [String: JSONValue] = ["id": .string("f\(random.next() % 1_000_000)"), "op": .string(op), "data": data]
        if let token { envelope["token"] = .string(token) }
        if random.next() % 4 == 0 { envelope["idem"] = .string("fuzz-\(random.next())") }
        var body = JSONValue.object(envelope).serialized
        switch kind {
        case .duplicateKey:
            // The first key of data again, with another value: `{"data":{"k":<nasty>,"k":...}`.
            if case .object(let members) = data, let key = members.keys.sorted().first,
                let range = body.range(of: Data(#""data":{"#.utf8))
            {
                body.insert(contentsOf: Data(#""\#(key)":"#.utf8) + nasty().serialized + Data(",".utf8), at: range.upperBound)
            }
        case .deepNesting:
            let depth = 10_000
            let deep = Data(repeating: UInt8(ascii: "["), count: depth) + Data(repeating: UInt8(ascii: "]"), count: depth)
            if let range = body.range(of: Data(#""data":"#.utf8)) {
                if case .object(let members) = data, let key = members.keys.sorted().first, let inner = body.range(of: Data(#""data":{"#.utf8)) {
                    body.insert(contentsOf: Data(#""\#(key)":"#.utf8) + deep + Data(",".utf8), at: inner.upperBound)
                } else {
                    body.insert(contentsOf: Data(#""nested":"#.utf8) + deep + Data(",".utf8), at: range.lowerBound)
                }
            }
        case .corruptEnvelope:
            switch random.next() % 3 {
            case 0: body = body.prefix(Int(random.next() % UInt64(max(1, body.count))))
            case 1:
                let position = Int(random.next() % UInt64(max(1, body.count)))
                if position < body.count { body[body.startIndex + position] ^= UInt8(truncatingIfNeeded: random.next() | 1) }
            default: body.insert(0, at: Int(random.next() % UInt64(max(1, body.count))))
            }
        case .invalidUTF8:
            if let range = body.range(of: Data(#""op":""#.utf8)) {
                body.insert(contentsOf: [0xC3, 0x28, 0xFF, 0xED, 0xA0, 0x80], at: range.upperBound)
            } else {
                body.append(contentsOf: [0xFF, 0xFE])
            }
        default:
            break
        }
        return (kind, body)
    }

    /// A value that satisfies `schema` (JSON Schema as `describe` writes it), as far as
    /// it can tell: types, enums, required and optional members, lengths, bounds, formats.
    public mutating func instance(of schema: JSONValue, depth: Int) -> JSONValue {
        if let values = schema["enum"]?.arrayValue, let value = values.randomElement(using: &random) { return value }
        if let value = schema["const"] { return value }
        for key in ["oneOf", "anyOf"] {
            if let choices = schema[key]?.arrayValue, let choice = choices.randomElement(using: &random) { return instance(of: choice, depth: depth + 1) }
        }
        var type = schema["type"]?.stringValue
        if case .array(let types)? = schema["type"] {
            type = types.compactMap(\.stringValue).filter { $0 != "null" }.randomElement(using: &random) ?? "null"
        }
        guard depth < 6 else { return .null }
        switch type {
        case "object":
            var members: [String: JSONValue] = [:]
            let required = Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
            if case .object(let properties)? = schema["properties"] {
                for (name, property) in properties where required.contains(name) || random.next() % 2 == 0 {
                    members[name] = instance(of: property, depth: depth + 1)
                }
            }
            return .object(members)
        case "array":
            let count = Int(random.next() % 3) + Int(schema["minItems"]?.integerValue ?? 0)
            return .array((0..<min(count, 20)).map { _ in instance(of: schema["items"] ?? .object([:]), depth: depth + 1) })
        case "string":
            return .string(string(for: schema))
        case "integer":
            let low = schema["minimum"]?.integerValue ?? 0, high = schema["maximum"]?.integerValue ?? max(low, 1_000)
            return .integer(low + Int64(random.next() % UInt64(max(1, high - low + 1))))
        case "number":
            return .number(Double(random.next() % 10_000) / 100)
        case "boolean":
            return .bool(random.next() % 2 == 0)
        case "null":
            return .null
        default:
            return .object([:])
        }
    }

    private mutating func string(for schema: JSONValue) -> String {
        let today = ZoneClock.utc.localDate(of: Date()).adding(days: Int(random.next() % 60))
        switch schema["format"]?.stringValue {
        case "date": return today.description
        case "date-time": return Instant.format(Date().addingTimeInterval(Double(random.next() % 5_000_000)))
        case "time-zone": return ["Europe/Minsk", "UTC", "Asia/Tokyo"].randomElement(using: &random)!
        case "email": return "fuzz\(random.next() % 1_000)@fuzz.example"
        case "uri": return "https://fuzz.example/\(random.next() % 1_000)"
        default:
            let minimum = Int(schema["minLength"]?.integerValue ?? 1), maximum = Int(schema["maxLength"]?.integerValue ?? 24)
            let length = min(max(minimum, 1 + Int(random.next() % 12)), max(minimum, maximum))
            return String((0..<length).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789-_".randomElement(using: &random)! })
        }
    }

    /// A value a careful client never sends.
    public mutating func nasty() -> JSONValue {
        let values: [JSONValue] = [
            .string(""), .string(String(repeating: "x", count: 100_000)), .string("a\u{0}b"), .string("\u{FEFF}\u{202E}💥"), .string("-1"),
            .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min), .number(1e308), .number(-1e308), .number(0.1),
            .bool(true), .null, .array([]), .object([:]), .array([.array([.array([.array([])])])]), .string("2026-02-30"),
            .string("9999-12-31T23:59:59.999Z"), .string("../../etc/passwd"), .string("'; DROP TABLE user; --"), .string("<script>alert(1)</script>"),
            .object(["$where": .string("1")]), .array(Array(repeating: .integer(1), count: 10_000)),
        ]
        return values[Int(random.next() % UInt64(values.count))]
    }

    private mutating func replacingOneField(_ data: JSONValue, with value: JSONValue) -> JSONValue {
        guard case .object(var members) = data, let key = members.keys.sorted().randomElement(using: &random) else { return value }
        members[key] = value
        return .object(members)
    }
}

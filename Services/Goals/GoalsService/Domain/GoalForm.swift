import Foundation
import Platform

/// The settings window of a goal type (table 3 of the spec): an information text and the
/// fields the recipient fills in, which admins edit. Each edit is a new version; a goal
/// keeps the version it was created with, so its settings always read against their form.
public struct GoalForm: Codable, Sendable, Equatable {
    /// What kind of answer a field takes.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// One of `options` (the sport for weight loss, the equipment for muscle mass).
        case choice
        /// Free text up to `maxLength` (the "suggest your own goal" text).
        case text
        /// A natural number within `minimum`...`maximum` (goals count in whole numbers,
        /// section 5.3).
        case integer
        /// Yes or no.
        case boolean
    }

    /// One option of a choice.
    public struct Option: Codable, Sendable, Equatable {
        public var value: String
        public var label: String
    }

    /// One field of the window.
    public struct Field: Codable, Sendable, Equatable {
        public var key: String
        public var kind: Kind
        public var label: String
        public var help: String?
        public var required: Bool
        public var options: [Option]?
        public var minimum: Int64?
        public var maximum: Int64?
        public var maxLength: Int?
    }

    /// The window's information text.
    public var info: String?
    /// Its fields, in order.
    public var fields: [Field]

    public init(info: String?, fields: [Field]) {
        self.info = info
        self.fields = fields
    }

    /// At most this many fields, options per choice, characters of a text answer.
    public static let maxFields = 20, maxOptions = 30, maxTextLength = 2_000

    /// Problems of the form itself as an admin wrote it, keyed under `field` (empty when valid).
    public func problems(field: String) -> [String: String] {
        var problems: [String: String] = [:]
        var keys = Set<String>()
        if fields.count > Self.maxFields { problems["\(field).fields"] = "at most \(Self.maxFields) fields" }
        for (index, item) in fields.enumerated() {
            let path = "\(field).fields[\(index)]"
            if item.key.isEmpty || item.key.count > 40 || !item.key.allSatisfy({ ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "_" }) {
                problems["\(path).key"] = "1 to 40 of a-z, 0-9 and _"
            } else if !keys.insert(item.key).inserted {
                problems["\(path).key"] = "appears twice"
            }
            switch item.kind {
            case .choice:
                let values = (item.options ?? []).map(\.value)
                if values.isEmpty || values.count > Self.maxOptions {
                    problems["\(path).options"] = "a choice needs 1 to \(Self.maxOptions) options"
                } else if Set(values).count != values.count || values.contains(where: \.isEmpty) {
                    problems["\(path).options"] = "option values must be unique and not empty"
                }
            case .integer:
                if let minimum = item.minimum, let maximum = item.maximum, minimum > maximum {
                    problems["\(path).maximum"] = "must not be less than minimum"
                }
                if (item.minimum ?? 1) < 1 { problems["\(path).minimum"] = "counts are natural numbers: at least 1" }
            case .text:
                if let length = item.maxLength, !(1...Self.maxTextLength).contains(length) {
                    problems["\(path).maxLength"] = "from 1 to \(Self.maxTextLength)"
                }
            case .boolean: break
            }
            if item.kind != .choice && item.options != nil { problems["\(path).options"] = "only a choice has options" }
        }
        return problems
    }

    /// The recipient's settings checked against the form: every required field present,
    /// each value of its field's kind and limits, no unknown keys. Problems are keyed
    /// `settings.<key>`; empty when valid.
    public func problems(of settings: [String: JSONValue]) -> [String: String] {
        var problems: [String: String] = [:]
        let known = Dictionary(uniqueKeysWithValues: fields.map { ($0.key, $0) })
        for key in settings.keys where known[key] == nil { problems["settings.\(key)"] = "is not a field of this goal type" }
        for item in fields {
            let path = "settings.\(item.key)"
            guard let value = settings[item.key], value != .null else {
                if item.required { problems[path] = "is required" }
                continue
            }
            switch (item.kind, value) {
            case (.choice, .string(let text)):
                if !(item.options ?? []).contains(where: { $0.value == text }) {
                    problems[path] = "must be one of " + (item.options ?? []).map(\.value).joined(separator: ", ")
                }
            case (.text, .string(let text)):
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                if trimmed.isEmpty && item.required { problems[path] = "must not be blank" }
                if text.unicodeScalars.count > (item.maxLength ?? Self.maxTextLength) { problems[path] = "must have at most \(item.maxLength ?? Self.maxTextLength) characters" }
                // Free text for people, as everywhere: line breaks and tabs, no other control characters.
                if let problem = JSONSchema.unsafeCharacterProblem(text, allowingLineBreaks: true) { problems[path] = problem }
            case (.integer, .integer(let number)):
                if number < (item.minimum ?? 1) { problems[path] = "must be at least \(item.minimum ?? 1)" }
                if let maximum = item.maximum, number > maximum { problems[path] = "must be at most \(maximum)" }
            case (.boolean, .bool): break
            default:
                problems[path] = "must be \(item.kind == .integer ? "an integer" : item.kind == .boolean ? "true or false" : "a string")"
            }
        }
        return problems
    }
}

/// An admin's questionnaire (the "Test" tabs of the recommendations and nutrition screens,
/// section 3.9): questions answered by choosing one option each.
public struct Questionnaire: Sendable, Equatable {
    /// One question; `section` groups the nutrition test's work days and weekend days.
    public struct Question: Codable, Sendable, Equatable {
        public var id: String
        public var text: String
        public var section: String?
        public var options: [GoalForm.Option]
    }

    public var questions: [Question]

    public init(questions: [Question]) { self.questions = questions }

    /// Problems of a submission, keyed `answers.<question id>`: every question must be
    /// answered (the OK button is available only then), each with one of its options, and
    /// nothing else. Empty when complete.
    public func problems(of answers: [String: String]) -> [String: String] {
        var problems: [String: String] = [:]
        let byID = Dictionary(uniqueKeysWithValues: questions.map { ($0.id, $0) })
        for key in answers.keys where byID[key] == nil { problems["answers.\(key)"] = "is not a question of this test" }
        for question in questions {
            guard let answer = answers[question.id] else {
                problems["answers.\(question.id)"] = "is required: answer every question"
                continue
            }
            if !question.options.contains(where: { $0.value == answer }) { problems["answers.\(question.id)"] = "is not one of the options" }
        }
        return problems
    }
}

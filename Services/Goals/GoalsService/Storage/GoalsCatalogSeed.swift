import Foundation
import GRDB
import Platform

/// The catalog a fresh database starts with (section 3.3 of the spec): the goal types with
/// their settings windows, the sponsor groups, and the two questionnaires. Admins change
/// all of it afterwards; icons are uploaded through the media operations.
enum GoalsCatalogSeed {
    typealias Field = GoalForm.Field
    typealias Option = GoalForm.Option

    static func choice(_ key: String, _ label: String, _ options: [(String, String)]) -> Field {
        Field(
            key: key, kind: .choice, label: label, help: nil, required: true, options: options.map { Option(value: $0.0, label: $0.1) },
            minimum: nil, maximum: nil, maxLength: nil)
    }

    static let types: [(id: String, title: String, form: GoalForm)] = [
        (
            "weight_loss", "Weight loss",
            GoalForm(
                info: "Lose weight with the sport you like. Choose it below.",
                fields: [
                    choice("sport", "Sport", [("swimming", "Swimming"), ("running", "Running"), ("cycling", "Cycling")]),
                    Field(
                        key: "kilograms", kind: .integer, label: "Kilograms to lose", help: nil, required: false, options: nil, minimum: 1,
                        maximum: 150, maxLength: nil),
                ])
        ),
        (
            "muscle_mass", "Muscle mass",
            GoalForm(
                info: "Build muscle with what you have at hand. Choose your equipment below.",
                fields: [
                    choice(
                        "equipment", "Equipment",
                        [
                            ("body_only", "Only my body"), ("pull_up_bar", "Pull-up bar"), ("dumbbells", "Set of dumbbells"),
                            ("gym_membership", "Equipped gym membership"),
                        ])
                ])
        ),
        ("marathon", "Run a marathon", GoalForm(info: "42.195 km. Your plan builds up to it week by week.", fields: [])),
        ("triathlon", "Triathlon", GoalForm(info: "Swim, bike and run in one race.", fields: [])),
        ("ironman", "Ironman", GoalForm(info: "3.86 km swim, 180.25 km bike, 42.2 km run.", fields: [])),
        (
            "custom", "Suggest your own goal",
            GoalForm(
                info: "Describe the goal you want to reach.",
                fields: [
                    Field(
                        key: "goal", kind: .text, label: "Your goal", help: nil, required: true, options: nil, minimum: nil, maximum: nil,
                        maxLength: 500)
                ])
        ),
    ]

    static let groups: [(id: String, title: String)] = [
        ("insurers", "Insurance companies"), ("employers", "Employers"), ("family", "Family and friends"),
    ]

    static let questions: [(questionnaire: String, question: Questionnaire.Question)] = [
        (
            "recommendations",
            .init(
                id: "work_load", text: "How physical is your work?", section: nil,
                options: [.init(value: "sedentary", label: "Mostly sitting"), .init(value: "mixed", label: "Mixed"), .init(value: "physical", label: "Mostly physical")])
        ),
        (
            "recommendations",
            .init(
                id: "free_time", text: "How many hours a week can you train?", section: nil,
                options: [.init(value: "lt3", label: "Less than 3"), .init(value: "3to6", label: "3 to 6"), .init(value: "gt6", label: "More than 6")])
        ),
        (
            "nutrition",
            .init(
                id: "meals_work_days", text: "Which meals do you have on work days?", section: "work_days",
                options: [
                    .init(value: "three", label: "Breakfast, lunch, dinner"), .init(value: "two", label: "Lunch and dinner"),
                    .init(value: "snacks", label: "Snacks through the day"),
                ])
        ),
        (
            "nutrition",
            .init(
                id: "meals_weekend_days", text: "Which meals do you have on weekend days?", section: "weekend_days",
                options: [
                    .init(value: "three", label: "Breakfast, lunch, dinner"), .init(value: "brunch", label: "Brunch and dinner"),
                    .init(value: "snacks", label: "Snacks through the day"),
                ])
        ),
    ]

    static func insert(_ db: Database, at now: String) throws {
        for (position, type) in types.enumerated() {
            try db.execute(
                sql: "INSERT INTO goal_type (id, title, form_version, position, created_at, updated_at) VALUES (?, ?, 1, ?, ?, ?)",
                arguments: [type.id, type.title, position, now, now])
            try db.execute(
                sql: "INSERT INTO goal_type_form (type_id, version, form, created_at) VALUES (?, 1, ?, ?)",
                arguments: [type.id, String(decoding: try WireJSON.encode(type.form), as: UTF8.self), now])
        }
        for (position, group) in groups.enumerated() {
            try db.execute(
                sql: "INSERT INTO sponsor_group (id, title, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [group.id, group.title, position, now, now])
        }
        for (position, entry) in questions.enumerated() {
            try db.execute(
                sql: "INSERT INTO question (id, questionnaire, section, text, options, position) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    entry.question.id, entry.questionnaire, entry.question.section, entry.question.text,
                    String(decoding: try WireJSON.encode(entry.question.options), as: UTF8.self), position,
                ])
        }
    }
}

import Foundation
import GRDB
import Platform

/// The "Test" tabs (3.8, 3.9): the recipient answers the admin's questions, every one of
/// them; a retake replaces the earlier answers, which admins read
/// (`goals.admin.questionnaire.results`).
struct QuestionnaireOperations: Sendable {
    var all: [ServiceOperation] { [get, submit] }

    static let name = JSONSchema.oneOf(["recommendations", "nutrition"])

    struct GetRequest: Codable, Sendable {
        var questionnaire: String
    }

    var get: ServiceOperation {
        .read(
            "goals.questionnaire",
            summary: "A questionnaire's questions (nutrition's in sections work_days and weekend_days) with the caller's current answers (null before the first submission).",
            auth: GoalOperations.recipient, request: .object(["questionnaire": Self.name], required: ["questionnaire"]),
            response: .object(
                [
                    "questions": .array(of: CatalogOperations.questionSchema),
                    "answers": JSONSchema.object([:], additional: .string()).nullable(), "submittedAt": JSONSchema.string(format: .dateTime).nullable(),
                ], required: ["questions", "answers", "submittedAt"])
        ) { (context, input: GetRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let questionnaire = try CatalogOperations.questionnaire(db, input.questionnaire)
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT answers, submitted_at FROM answer_set WHERE user_id = ? AND questionnaire = ?"), arguments: [user, input.questionnaire])
            var answers: JSONValue = .null
            if let text: String = row?["answers"] {
                // Answers to retired questions no longer show.
                let current = Set(questionnaire.questions.map(\.id))
                answers = .object(try WireJSON.decode([String: String].self, from: Data(text.utf8)).filter { current.contains($0.key) }.mapValues(JSONValue.string))
            }
            return [
                "questions": try WireJSON.value(of: questionnaire.questions), "answers": answers,
                "submittedAt": (row?["submitted_at"] as String?).map(JSONValue.string) ?? .null,
            ]
        }
    }

    struct SubmitRequest: Codable, Sendable {
        var questionnaire: String
        var answers: [String: String]
    }

    var submit: ServiceOperation {
        .write(
            "goals.questionnaire.submit",
            summary: "Submits the caller's answers, one option value per question id; every question must be answered (each missing one is named in validation_failed). A retake replaces the earlier answers.",
            auth: GoalOperations.recipient,
            request: .object(
                ["questionnaire": Self.name, "answers": .object([:], additional: .string(minLength: 1, maxLength: 60))],
                required: ["questionnaire", "answers"]),
            response: .object(["submittedAt": .string(format: .dateTime), "answered": .integer(minimum: 0)], required: ["submittedAt", "answered"])
        ) { (context, input: SubmitRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let questionnaire = try CatalogOperations.questionnaire(db, input.questionnaire)
            let problems = questionnaire.problems(of: input.answers)
            guard problems.isEmpty else { throw ServiceError.validationFailed(problems) }
            let now = Instant.format(context.receivedAt)
            try db.cachedStatement(sql: """
                    INSERT INTO answer_set (user_id, questionnaire, answers, submitted_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (user_id, questionnaire) DO UPDATE SET answers = excluded.answers, submitted_at = excluded.submitted_at
                    """).execute(arguments: [user, input.questionnaire, String(decoding: try WireJSON.encode(input.answers), as: UTF8.self), now])
            return ["submittedAt": .string(now), "answered": .integer(Int64(input.answers.count))]
        }
    }
}

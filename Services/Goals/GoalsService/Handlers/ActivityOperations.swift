import Foundation
import GRDB
import Platform

/// Activities from fitness trackers and apps (4.2: Jawbone, Fitbit, Apple Watch, Nike+
/// Running, Runtastic, Runkeeper), imported by the app from the device's health data and
/// kept once per source and external id, as evidence for checked plan items.
struct ActivityOperations: Sendable {
    static let sources = ["jawbone", "fitbit", "apple_watch", "apple_health", "nike_run_club", "runtastic", "runkeeper", "other"]

    var all: [ServiceOperation] { [importActivities, list] }

    struct ActivityInput: Codable, Sendable {
        var source: String
        var externalId: String
        var type: String
        var start: String
        var durationSeconds: Int
        var distanceMeters: Int?
        var calories: Int?
    }

    static let activitySchema = JSONSchema.object(
        [
            "source": .oneOf(sources), "externalId": .string(minLength: 1, maxLength: 200), "type": .string(minLength: 1, maxLength: 60),
            "start": .string(format: .dateTime), "durationSeconds": .integer(minimum: 1, maximum: 7 * 86_400),
            "distanceMeters": .integer(minimum: 0, maximum: 10_000_000), "calories": .integer(minimum: 0, maximum: 100_000),
        ], required: ["source", "externalId", "type", "start", "durationSeconds"])

    struct ImportRequest: Codable, Sendable {
        var activities: [ActivityInput]
    }

    var importActivities: ServiceOperation {
        .write(
            "goals.activities.import",
            summary: "Imports the caller's activity records from trackers and apps (up to 500 at once): source, its external id, type (running, swimming, ...), start, duration, distance, calories. A record already imported (same source and external id) is skipped, so the app may send overlapping batches. Answers each record's id in order.",
            auth: GoalOperations.recipient,
            request: .object(["activities": .array(of: Self.activitySchema, minItems: 1, maxItems: 500)], required: ["activities"]),
            response: .object(
                ["imported": .integer(minimum: 0), "duplicates": .integer(minimum: 0), "ids": .array(of: .string(), maxItems: 500)],
                required: ["imported", "duplicates", "ids"])
        ) { (context, input: ImportRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            // A record from the future is a device with a wrong clock (a day of zones allowed).
            let latest = context.receivedAt.addingTimeInterval(86_400)
            for (index, activity) in input.activities.enumerated() where (Instant.parse(activity.start) ?? .distantFuture) > latest {
                throw ServiceError.invalid("activities[\(index)].start", "must not be in the future")
            }
            let now = Instant.format(context.receivedAt)
            var imported = 0, ids: [JSONValue] = []
            for activity in input.activities {
                // Stored in one form, so the same instant sent with another offset is the same record.
                let start = Instant.parse(activity.start).map(Instant.format) ?? activity.start
                try db.cachedStatement(sql: """
                        INSERT INTO activity (id, user_id, source, external_id, type, start_at, duration_s, distance_m, calories, imported_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, source, external_id) DO NOTHING
                        """).execute(arguments: [
                        RecordID.make(prefix: "act", at: context.receivedAt), user, activity.source, activity.externalId, activity.type.lowercased(), start,
                        activity.durationSeconds, activity.distanceMeters, activity.calories, now,
                    ])
                imported += db.changesCount
                ids.append(
                    .string(
                        try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM activity WHERE user_id = ? AND source = ? AND external_id = ?"),
                            arguments: [user, activity.source, activity.externalId]) ?? ""))
            }
            return ["imported": .integer(Int64(imported)), "duplicates": .integer(Int64(input.activities.count - imported)), "ids": .array(ids)]
        }
    }

    struct ListRequest: Codable, Sendable {
        var from: String?
        var to: String?
        var limit: Int?
    }

    var list: ServiceOperation {
        .read(
            "goals.activities",
            summary: "The caller's imported activities starting within `from`…`to` (instants), newest first.",
            auth: GoalOperations.recipient,
            request: .object(["from": .string(format: .dateTime), "to": .string(format: .dateTime), "limit": .integer(minimum: 1, maximum: 500)]),
            response: .object(
                ["activities": .array(of: Self.activitySchema.adding(["id": .string()], required: ["id"]), maxItems: 500)], required: ["activities"])
        ) { (context, input: ListRequest, db: Database) -> JSONValue in
            let user = try context.requirePrincipal().userID
            let from = input.from.flatMap(Instant.parse).map(Instant.format), to = input.to.flatMap(Instant.parse).map(Instant.format)
            if let from, let to, from > to { throw ServiceError.invalid("to", "must not be before from") }
            let rows = try Row.fetchAll(db.cachedStatement(sql: """
                    SELECT * FROM activity WHERE user_id = ? AND (? IS NULL OR start_at >= ?) AND (? IS NULL OR start_at <= ?)
                    ORDER BY start_at DESC LIMIT ?
                    """), arguments: [user, from, from, to, to, input.limit ?? 100])
            return [
                "activities": .array(
                    rows.map { row in
                        var entry: [String: JSONValue] = [
                            "id": .string(row["id"]), "source": .string(row["source"]), "externalId": .string(row["external_id"]),
                            "type": .string(row["type"]), "start": .string(row["start_at"]), "durationSeconds": .integer(row["duration_s"]),
                        ]
                        if let distance: Int64 = row["distance_m"] { entry["distanceMeters"] = .integer(distance) }
                        if let calories: Int64 = row["calories"] { entry["calories"] = .integer(calories) }
                        return .object(entry)
                    })
            ]
        }
    }
}

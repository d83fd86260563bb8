import Foundation
import GRDB
import Platform

/// The events stats publishes (each listed with its schema in `stats.describe`), written to
/// the outbox in the transaction that makes the change.
enum StatsEvents {
    static let workoutData = JSONSchema.object(
        [
            "userId": .string(), "workoutId": .string(), "exercisesDone": .integer(minimum: 0), "exercisesSkipped": .integer(minimum: 0),
            "score": .integer(minimum: 0), "repetitions": .integer(minimum: 0), "startedAt": .string(format: .dateTime),
            "endedAt": .string(format: .dateTime),
        ], required: ["userId", "workoutId", "exercisesDone", "exercisesSkipped", "score", "repetitions", "startedAt", "endedAt"])

    static let descriptions: [EventDescription] = [
        EventDescription(
            "stats.workout.completed", summary: "A user finished a workout with at least one exercise done (live, or uploaded after an offline one).",
            data: workoutData)
    ]

    static func workoutCompleted(_ db: Database, user: String, summary: JSONValue, startedMs: Int64, endedMs: Int64, at date: Date) throws {
        var data = summary.objectValue ?? [:]
        data["userId"] = .string(user)
        data["startedAt"] = .string(Instant.format(Instant.date(milliseconds: startedMs)))
        data["endedAt"] = .string(Instant.format(Instant.date(milliseconds: endedMs)))
        try Outbox.append(db, type: "stats.workout.completed", data: JSONValue.object(data), at: date)
        // The admins' figures: a workout is something the user did in the fitness app that day.
        try CrossAppEvents.seen(db, source: "stats", day: String(Instant.format(date).prefix(10)), user: user)
    }
}

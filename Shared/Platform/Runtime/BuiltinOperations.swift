import Foundation
import GRDB

/// The operations every service answers (CONTRACT.md, "Every service answers").
enum BuiltinOperations {
    struct ReplayRequest: Codable, Sendable {
        var after: Int64
        var limit: Int?
    }

    struct ReplayResult: Codable, Sendable {
        var events: [Event]
        var last: Int64
        /// The last seq of the backup this database was restored from, if it was.
        var restoredAt: Int64?
        /// The id of that restore (a new one each time).
        var restoreId: String?
        /// Every restore kept, oldest first (the latest is the one above).
        var restores: [RestoreRecord]?
    }

    static let healthSchema = JSONSchema.object(
        [
            "status": .oneOf(["ok"]), "version": .string(),
            "uptimeMs": .integer(minimum: 0).described("milliseconds since the process started"),
        ], required: ["status", "version", "uptimeMs"])

    static let eventSchema = JSONSchema.object(
        [
            "source": .string(), "seq": .integer(minimum: 1), "type": .string(), "at": .string(format: .dateTime),
            "data": JSONSchema.object([:], additional: .any).described("as `describe` declares for the event's type"),
        ], required: ["source", "seq", "type", "at", "data"])

    static func health(service: String, startedAt: ContinuousClock.Instant) -> ServiceOperation {
        .inline(
            "\(service).health", summary: "Whether the service is up, its version and uptime.", response: healthSchema
        ) { (_, _: Empty) -> JSONValue in
            // Built as a JSONValue: health is the hottest operation and skips Foundation's encoder.
            [
                "status": "ok", "version": .string(BuildInfo.version),
                "uptimeMs": .integer(Int64((ContinuousClock.now - startedAt).wholeMilliseconds)),
            ]
        }
    }

    static let countsSchema = JSONSchema.object(
        [
            "requests": .integer(minimum: 0), "errors": .integer(minimum: 0),
            "errorsByCode": JSONSchema.object([:], additional: .integer(minimum: 0)).described("error code → count"),
            "p50Ms": JSONSchema.number.nullable(), "p90Ms": JSONSchema.number.nullable(), "p99Ms": JSONSchema.number.nullable(),
        ], required: ["requests", "errors", "errorsByCode", "p50Ms", "p90Ms", "p99Ms"])

    static func countsValue(_ counts: RequestMetrics.Counts) -> JSONValue {
        func percentile(_ fraction: Double) -> JSONValue { counts.percentileMs(fraction).map { .number($0) } ?? .null }
        return [
            "requests": .integer(counts.requests), "errors": .integer(counts.errors),
            "errorsByCode": .object(counts.errorsByCode.mapValues { .integer($0) }),
            "p50Ms": percentile(0.5), "p90Ms": percentile(0.9), "p99Ms": percentile(0.99),
        ]
    }

    static func metrics(service: String) -> ServiceOperation {
        .inline(
            "\(service).metrics",
            summary: "Requests answered, errors by code and latency percentiles (p50, p90, p99: the upper bound of the "
                + "bucket the rank falls in, in ms) since the process started, over the last hour, and per minute for the "
                + "last 60 minutes (oldest first), and per operation since the start (the busiest 200; an unknown operation "
                + "as (unknown)). Health checks are not counted. Admins only.",
            auth: .anyRole(["admin"]),
            response: .object(
                [
                    "since": .string(format: .dateTime), "total": countsSchema, "lastHour": countsSchema,
                    "minutes": .array(
                        of: .object(
                            [
                                "start": .string(format: .dateTime), "requests": .integer(minimum: 0), "errors": .integer(minimum: 0),
                                "p99Ms": JSONSchema.number.nullable(),
                            ], required: ["start", "requests", "errors", "p99Ms"]), maxItems: 60),
                    "operations": .array(
                        of: .object(
                            [
                                "op": .string(), "requests": .integer(minimum: 0), "errors": .integer(minimum: 0),
                                "p50Ms": JSONSchema.number.nullable(), "p99Ms": JSONSchema.number.nullable(),
                            ], required: ["op", "requests", "errors", "p50Ms", "p99Ms"]), maxItems: 200),
                ], required: ["since", "total", "lastHour", "minutes", "operations"])
        ) { (_, _: Empty) -> JSONValue in
            let metrics = RequestMetrics.of(service: service)
            let snapshot = metrics.snapshot()
            return [
                "since": .string(Instant.format(metrics.startedAt)), "total": countsValue(snapshot.total),
                "lastHour": countsValue(snapshot.lastHour),
                "minutes": .array(
                    snapshot.minutes.map { minute in
                        [
                            "start": .string(Instant.format(minute.start)), "requests": .integer(minute.counts.requests),
                            "errors": .integer(minute.counts.errors),
                            "p99Ms": minute.counts.percentileMs(0.99).map { .number($0) } ?? .null,
                        ]
                    }),
                "operations": .array(
                    metrics.operations().sorted { ($0.value.requests, $1.key) > ($1.value.requests, $0.key) }.prefix(200).map { op, counts in
                        [
                            "op": .string(op), "requests": .integer(counts.requests), "errors": .integer(counts.errors),
                            "p50Ms": counts.percentileMs(0.5).map { .number($0) } ?? .null,
                            "p99Ms": counts.percentileMs(0.99).map { .number($0) } ?? .null,
                        ]
                    }),
            ]
        }
    }

    static func prometheus(service: String) -> ServiceOperation {
        .inline(
            "\(service).metrics.prometheus",
            summary: "This process's per-operation figures in Prometheus text format (backend_requests_total by op and "
                + "outcome, backend_request_duration_seconds histograms), the lag of the events it applies "
                + "(backend_event_lag_seconds by source) and its memory (process_resident_memory_bytes, "
                + "process_peak_resident_memory_bytes), for the gateway's /metrics endpoint, `ctl top` and `loadgen`. "
                + "Services and operators only (internal: never forwarded by the gateway).",
            auth: .internal,
            response: .object(["text": .string()], required: ["text"])
        ) { (_, _: Empty) -> JSONValue in
            RequestMetrics.recordMemory(service: service)
            return ["text": .string(RequestMetrics.prometheus.emitToString())]
        }
    }

    static func replay(service: String) -> ServiceOperation {
        .read(
            "\(service).events.replay",
            summary: "Events after a seq, oldest first, for subscribers that missed some. Services only.",
            auth: .internal,
            request: .object(
                ["after": .integer(minimum: 0), "limit": .integer(minimum: 1, maximum: 1_000).described("default 100")],
                required: ["after"]),
            response: .object(
                [
                    "events": .array(of: eventSchema, maxItems: 1_000), "last": .integer(minimum: 0),
                    "restoredAt": .integer(minimum: 0).described(
                        "when the database was restored from a backup: the backup's last seq (events after it are new)"),
                    "restoreId": .string().described("that restore's id"),
                    "restores": .array(
                        of: .object(
                            [
                                "id": .string(), "restoredAt": .integer(minimum: 0),
                                "resumedAfter": .integer(minimum: 0).described("the source's new events have seqs above it"),
                            ], required: ["id", "restoredAt", "resumedAfter"]),
                        maxItems: RestoreHistory.keptRestores
                    ).described(
                        "the latest restores, oldest first: of those it has not followed that gave seqs again (resumedAfter equal to restoredAt), a subscriber goes back to the lowest resumedAfter, once per restore"),
                ],
                required: ["events", "last"])
        ) { (_, request: ReplayRequest, db: Database) in
            let last = try Outbox.lastSeq(db)
            let restores = RestoreHistory.sane(try RestoreHistory.restores(db), last: last)
            return ReplayResult(
                events: try Outbox.events(db, source: service, after: request.after, limit: request.limit ?? 100),
                last: last, restoredAt: restores.last?.restoredAt, restoreId: restores.last?.id,
                restores: restores.isEmpty ? nil : restores)
        }
    }

    /// A JSON Schema document (draft 2020-12), as `describe` shows each one.
    static let schemaDocument = JSONSchema.object([:], additional: .any).described("a JSON Schema (draft 2020-12)")

    static let describeSummary = "Every operation with its schemas and auth rule, and every event type."
    static let describeSchema = JSONSchema.object(
        [
            "service": .string(), "summary": .string(), "version": .string(),
            "operations": .array(
                of: .object(
                    [
                        "op": .string(), "summary": .string(maxLength: 10_000), "auth": .string(), "mode": .oneOf(["inline", "read", "write", "task"]),
                        "request": schemaDocument, "response": schemaDocument,
                        "idem": JSONSchema.oneOf(["ignored"]).described("present when the operation ignores `idem`"),
                    ], required: ["op", "summary", "auth", "mode", "request", "response"]), maxItems: 1_000),
            "events": .array(
                of: .object(["type": .string(), "summary": .string(maxLength: 10_000), "data": schemaDocument], required: ["type", "summary", "data"]),
                maxItems: 1_000),
        ], required: ["service", "summary", "version", "operations", "events"])

    /// `describe`: the document is computed once, since operations do not change while
    /// running; it lists `describe` itself too.
    static func describe(service: String, summary: String, operations: [ServiceOperation], events: [EventDescription]) -> ServiceOperation {
        let document = describeDocument(service: service, summary: summary, operations: operations.map(\.descriptionValue), events: events)
        return .inline("\(service).describe", summary: describeSummary, response: describeSchema) { (_, _: Empty) in document }
    }

    /// The `describe` document of `service`: its operations (as ``ServiceOperation/descriptionValue``
    /// writes them) with `describe` itself, by name, and its events.
    static func describeDocument(service: String, summary: String, operations: [JSONValue], events: [EventDescription]) -> JSONValue {
        let own: JSONValue = [
            "op": .string("\(service).describe"), "summary": .string(describeSummary), "auth": "public", "mode": "inline",
            "request": JSONSchema.empty.jsonValue, "response": describeSchema.jsonValue,
        ]
        let listed = (operations + [own]).sorted { ($0["op"]?.stringValue ?? "") < ($1["op"]?.stringValue ?? "") }
        return [
            "service": .string(service), "summary": .string(summary), "version": .string(BuildInfo.version),
            "operations": .array(listed), "events": .array(events.map(\.descriptionValue)),
        ]
    }

    /// The service's operations with the built-in ones added.
    static func complete(_ definition: ServiceDefinition, startedAt: ContinuousClock.Instant) -> [ServiceOperation] {
        var operations = definition.operations
        operations.append(health(service: definition.name, startedAt: startedAt))
        operations.append(replay(service: definition.name))
        operations.append(metrics(service: definition.name))
        operations.append(prometheus(service: definition.name))
        operations.append(
            describe(service: definition.name, summary: definition.summary, operations: operations, events: definition.events))
        return operations
    }
}

/// Operations the gateway never forwards for clients (`forbidden`): they are for the
/// services themselves (CONTRACT.md: `events.replay` is for services only).
public enum InternalOperations {
    /// Whether `op` is internal: `<service>.events.replay`, `<service>.metrics.prometheus` or
    /// `<service>.internal.*`.
    public static func contains(_ op: String) -> Bool {
        // On the UTF-8 view: the gateway asks this of every request.
        let utf8 = op.utf8
        guard let dot = utf8.firstIndex(of: UInt8(ascii: ".")) else { return false }
        let rest = utf8[utf8.index(after: dot)...]
        return rest.elementsEqual("events.replay".utf8) || rest.elementsEqual("metrics.prometheus".utf8)
            || rest.starts(with: "internal.".utf8)
    }
}

/// What the gateway answers about itself (`gateway.describe`): its own operations, in the
/// shape every service's `describe` has. It publishes no events.
public enum GatewayDescription {
    /// `gateway.health`'s answer.
    public static let healthSchema = JSONSchema.object(
        [
            "status": JSONSchema.oneOf(["ok", "degraded"]).described("ok when every service answered its check"),
            "version": .string(), "uptimeMs": .integer(minimum: 0).described("milliseconds since the gateway started"),
            "services": JSONSchema.object([:], additional: serviceStatusSchema).described("service name → its health as the gateway saw it"),
        ], required: ["status", "version", "uptimeMs", "services"])

    static let serviceStatusSchema = JSONSchema.object(
        [
            "status": .oneOf(["ok", "unavailable"]), "version": .string(), "uptimeMs": .integer(minimum: 0),
            "latencyMs": JSONSchema.number.described("the check's round trip"),
            "error": JSONSchema.string().described("why it is unavailable"),
        ], required: ["status"])

    static let healthSummary =
        "The gateway and every service it routes to: each service's own health, asked through the socket requests take (one round serves every caller for a second)."

    /// The `gateway.describe` document.
    public static var document: JSONValue {
        let health: JSONValue = [
            "op": "gateway.health", "summary": .string(healthSummary), "auth": "public", "mode": "inline",
            "request": JSONSchema.empty.jsonValue, "response": healthSchema.jsonValue,
        ]
        return BuiltinOperations.describeDocument(
            service: "gateway", summary: "The clients' door: routes each request to its service by the first segment of `op`.",
            operations: [health], events: [])
    }
}

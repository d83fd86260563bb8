import Foundation
import Platform

/// The OpenAPI 3.1 document of the edge, made from every service's `describe`.
///
/// Each operation a client may call becomes `POST /v1/{op}` (operationId: the op), with
/// its request schema as the JSON body, its response schema as the 200 answer, every
/// error status of the contract as a shared response, and its auth rule as a security
/// requirement (`bearerAuth`; roles in `x-roles`). Internal operations are left out, as
/// the gateway refuses them. The schemas are `describe`'s JSON Schemas (draft 2020-12,
/// OpenAPI 3.1's own dialect) as they are. Media get `GET /v1/media/{service}/{id}` and
/// `POST /v1/media/{service}`.
enum OpenAPIDocument {
    /// The HTTP status of every error code, for the shared error responses.
    static let errorStatuses: [(status: Int, codes: [ErrorCode])] = [
        (400, [.badRequest]), (401, [.unauthenticated]), (403, [.forbidden]), (404, [.notFound, .unknownOp]),
        (409, [.conflict]), (413, [.payloadTooLarge]), (422, [.validationFailed]), (429, [.rateLimited]),
        (500, [.internal]), (503, [.unavailable]), (504, [.timeout]),
    ]

    static let imageTypes = ["image/png", "image/jpeg", "image/webp"]

    /// Builds the document from the `describe` answers that arrived (any order).
    static func build(describes: [JSONValue], version: String, serverURL: String?) -> JSONValue {
        var paths: [String: JSONValue] = [:]
        var tags: [JSONValue] = []
        var mediaGet: [String] = []
        var mediaPut: [(service: String, response: JSONValue, auth: String)] = []
        let sorted = describes.sorted { ($0["service"]?.stringValue ?? "") < ($1["service"]?.stringValue ?? "") }
        for describe in sorted {
            guard let service = describe["service"]?.stringValue, case .array(let operations)? = describe["operations"] else { continue }
            tags.append(["name": .string(service), "description": describe["summary"] ?? ""])
            for operation in operations {
                guard let op = operation["op"]?.stringValue, !InternalOperations.contains(op) else { continue }
                paths["/v1/\(op)"] = ["post": self.operation(operation, op: op, service: service)]
                if op == "\(service).media.get" { mediaGet.append(service) }
                if op == "\(service).media.put" {
                    mediaPut.append((service, operation["response"] ?? [:], operation["auth"]?.stringValue ?? "authenticated"))
                }
            }
        }
        paths["/v1/gateway.health"] = ["post": gatewayHealth]
        tags.append(["name": "gateway", "description": "The gateway itself."])
        if !mediaGet.isEmpty { paths["/v1/media/{service}/{id}"] = ["get": mediaDownload(services: mediaGet)] }
        for upload in mediaPut {
            paths["/v1/media/\(upload.service)"] = ["post": mediaUpload(upload.service, response: upload.response, auth: upload.auth)]
        }
        paths["/v1/openapi.json"] = ["get": openAPIOperation]
        var responses: [String: JSONValue] = [:]
        for entry in errorStatuses { responses[String(entry.status)] = errorResponse(entry.codes) }
        var document: [String: JSONValue] = [
            "openapi": "3.1.0",
            "info": [
                "title": "Backend HTTP edge",
                "version": .string(version),
                "description": """
                    Every operation of the backend's services over HTTPS (README, "HTTP edge"): `POST /v1/{op}` with the \
                    operation's `data` as the JSON body, `Authorization: Bearer <access token>` and, for writes, \
                    `Idempotency-Key`. Success: 200 with the operation's result; failure: the contract's error code \
                    as `{"code", "message", "fields"}` with its status.
                    """,
            ],
            "tags": .array(tags),
            "paths": .object(paths),
            "components": [
                "securitySchemes": [
                    "bearerAuth": ["type": "http", "scheme": "bearer", "description": "An access token from auth's sign-in operations."]
                ],
                "schemas": ["Error": errorSchema],
                "responses": .object(responses),
                "parameters": [
                    "IdempotencyKey": [
                        "name": "Idempotency-Key", "in": "header", "required": false,
                        "description": "A retried write with the same key and body returns the first answer and changes nothing.",
                        "schema": ["type": "string", "minLength": 1, "maxLength": .integer(Int64(RequestEnvelope.maxIdempotencyKeyLength))],
                    ]
                ],
            ],
        ]
        if let serverURL { document["servers"] = [["url": .string(serverURL)]] }
        return .object(document)
    }

    static let errorSchema: JSONValue = [
        "type": "object",
        "properties": [
            "code": ["type": "string", "enum": .array(ErrorCode.allCases.map { .string($0.rawValue) })],
            "message": ["type": "string"],
            "fields": ["type": "object", "additionalProperties": ["type": "string"], "description": "the problem of each field, by dotted path"],
        ],
        "required": ["code", "message", "fields"],
        "additionalProperties": false,
    ]

    static func errorResponse(_ codes: [ErrorCode]) -> JSONValue {
        var response: [String: JSONValue] = [
            "description": .string(codes.map(\.rawValue).joined(separator: " or ")),
            "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]],
        ]
        var headers: [String: JSONValue] = [
            "X-Error-Reason": ["description": "why, in one word, when the service says (e.g. full, no_credit, idempotency_key_reused)", "schema": ["type": "string"]]
        ]
        if codes.contains(.rateLimited) {
            headers["Retry-After"] = ["description": "seconds to wait", "schema": ["type": "integer", "minimum": 1]]
        }
        response["headers"] = .object(headers)
        return .object(response)
    }

    static var errorReferences: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: errorStatuses.map { (String($0.status), ["$ref": .string("#/components/responses/\($0.status)")]) })
    }

    /// A security requirement for an auth rule: none for public operations, the bearer
    /// token otherwise.
    static func security(_ auth: String) -> JSONValue {
        auth == "public" ? [] : [["bearerAuth": []]]
    }

    static func operation(_ operation: JSONValue, op: String, service: String) -> JSONValue {
        let auth = operation["auth"]?.stringValue ?? "authenticated"
        let request = operation["request"] ?? ["type": "object"]
        let required = !(request["required"]?.arrayValue?.isEmpty ?? true)
        var responses = errorReferences
        responses["200"] = ["description": "the operation's result", "content": ["application/json": ["schema": operation["response"] ?? [:]]]]
        var summary = operation["summary"]?.stringValue ?? ""
        var result: [String: JSONValue] = [
            "operationId": .string(op), "tags": [.string(service)],
            "requestBody": ["required": .bool(required), "content": ["application/json": ["schema": request]]],
            "responses": .object(responses), "security": security(auth),
        ]
        if auth.hasPrefix("role:") {
            let roles = auth.dropFirst(5).split(separator: "|").map { JSONValue.string(String($0)) }
            result["x-roles"] = .array(roles)
            summary += " Roles: \(auth.dropFirst(5).split(separator: "|").joined(separator: ", "))."
        }
        result["description"] = .string(summary)
        result["summary"] = .string(Self.firstSentence(of: summary))
        // Writes, and tasks (a payment's top-up): both take `idem`, unless the operation says it ignores it.
        if operation["mode"]?.stringValue == "write" || operation["mode"]?.stringValue == "task", operation["idem"]?.stringValue != "ignored" {
            result["parameters"] = [["$ref": "#/components/parameters/IdempotencyKey"]]
        }
        return .object(result)
    }

    static let gatewayHealth: JSONValue = [
        "operationId": "gateway.health", "tags": ["gateway"], "summary": "The gateway and every service it routes to.",
        "security": [],
        "responses": .object(
            errorReferences.merging(["200": ["description": "health", "content": ["application/json": ["schema": GatewayDescription.healthSchema.jsonValue]]]]) { $1 }),
    ]

    static let openAPIOperation: JSONValue = [
        "operationId": "edge.openapi", "tags": ["gateway"], "summary": "This document.", "security": [],
        "responses": ["200": ["description": "the OpenAPI document", "content": ["application/json": ["schema": ["type": "object"]]]]],
    ]

    static func mediaDownload(services: [String]) -> JSONValue {
        var responses = errorReferences
        responses["200"] = [
            "description": "the image; `ETag` is its SHA-256, and it never changes",
            "headers": [
                "ETag": ["schema": ["type": "string"]], "Cache-Control": ["schema": ["type": "string"]],
            ],
            "content": .object(Dictionary(uniqueKeysWithValues: imageTypes.map { ($0, ["schema": ["type": "string", "contentMediaType": .string($0)]]) })),
        ]
        responses["304"] = ["description": "not modified (`If-None-Match` names the current `ETag`)"]
        return [
            "operationId": "media.download", "tags": ["gateway"],
            "summary": "An image from a service's media store by its id (`<service>.media.get`).",
            "parameters": [
                ["name": "service", "in": "path", "required": true, "schema": ["type": "string", "enum": .array(services.map { .string($0) })]],
                ["name": "id", "in": "path", "required": true, "schema": ["type": "string", "minLength": 1, "maxLength": 100]],
                ["name": "If-None-Match", "in": "header", "required": false, "schema": ["type": "string"]],
            ],
            // Public for services whose images anyone with the id may see; the others need a token.
            "security": [[:], ["bearerAuth": []]],
            "responses": .object(responses),
        ]
    }

    static func mediaUpload(_ service: String, response: JSONValue, auth: String) -> JSONValue {
        var responses = errorReferences
        responses["200"] = ["description": "the stored image", "content": ["application/json": ["schema": response]]]
        return [
            "operationId": .string("\(service).media.upload"), "tags": [.string(service)],
            "summary": .string("Uploads an image as the raw body (`\(service).media.put`); its Content-Type must match its bytes."),
            "parameters": [["$ref": "#/components/parameters/IdempotencyKey"]],
            "requestBody": [
                "required": true,
                "content": .object(Dictionary(uniqueKeysWithValues: imageTypes.map { ($0, ["schema": ["type": "string", "contentMediaType": .string($0)]]) })),
            ],
            "security": security(auth),
            "responses": .object(responses),
        ]
    }

    /// The first sentence of a summary, for OpenAPI's short `summary`.
    static func firstSentence(of text: String) -> String {
        if let end = text.range(of: ". ") { return String(text[..<end.lowerBound]) + "." }
        return text
    }
}

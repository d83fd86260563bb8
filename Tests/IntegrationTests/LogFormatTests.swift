import Foundation
import Platform
import SharedTesting
import Testing

/// `BACKEND_LOG_FORMAT=json`: every line a process writes is one JSON object, request lines
/// included, for log shippers.
@Suite("Log format")
struct LogFormatTests {
    @Test("with BACKEND_LOG_FORMAT=json each log line is a JSON object with at, level, label and message")
    func jsonLines() async throws {
        try await TestStack.with(services: ["savings"], extraEnvironment: ["BACKEND_LOG_FORMAT": "json"]) { stack in
            #expect(try await stack.client.call("savings.health", idempotent: true).ok)
            #expect(try await stack.client.call("savings.no_such_op", idempotent: true).error?.code == .unknownOp)
            let savings = try #require(stack.process("savings"))
            // Request lines are written every 50 ms: wait for the second one.
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline, !savings.output.contains("savings.no_such_op") {
                try await Task.sleep(for: .milliseconds(50))
            }
            let lines = savings.output.split(separator: "\n").filter { !$0.isEmpty }
            #expect(lines.count >= 3)
            var requests: [JSONValue] = []
            for line in lines {
                let value = try JSONParser.parse(Data(line.utf8))
                #expect(value["at"]?.stringValue.flatMap(Instant.parse) != nil, "\(line)")
                #expect(value["level"]?.stringValue != nil && value["label"] == "savings" && value["message"]?.stringValue != nil, "\(line)")
                if value["message"] == "request" { requests.append(value) }
            }
            let refused = try #require(requests.first { $0["op"] == "savings.no_such_op" })
            #expect(refused["outcome"] == "unknown_op" && refused["us"]?.integerValue != nil)
        }
    }
}

import Foundation
import LoadKit
import Platform
import SharedTesting
import Testing

/// The load driver (`loadgen`'s engine): outcomes counted per operation, closed and open
/// loops against a real echo over ZeroMQ, HTTP responses read whole.
@Suite("Load driver")
struct LoadKitTests {
    @Test("an HTTP response is read once complete: Content-Length, chunked, an error's code")
    func httpResponses() throws {
        let plain = Array("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"a\":true}\n".utf8)
        #expect(HTTPLoadTransport.response(in: Array(plain.prefix(30)), wantsData: false) == nil)
        let (ok, keepAlive) = try #require(HTTPLoadTransport.response(in: plain, wantsData: true))
        #expect(ok.ok && keepAlive && ok.data?["a"] == true)
        let chunked = Array("HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\n{\"cod\r\n10\r\ne\":\"conflict\"}  \r\n0\r\n\r\n".utf8)
        let (refused, stays) = try #require(HTTPLoadTransport.response(in: chunked, wantsData: false))
        #expect(!refused.ok && refused.code == "conflict" && refused.isRefusal && !stays)
        #expect(HTTPLoadTransport.response(in: Array(chunked.dropLast(5)), wantsData: false) == nil)
        let (failed, _) = try #require(HTTPLoadTransport.response(in: Array("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n".utf8), wantsData: false))
        #expect(failed.code == "http_502" && !failed.isRefusal)
    }

    @Test("a contract reply: success without parsing, error codes, data when wanted")
    func replies() {
        #expect(LoadReply.parse(envelope: Data(#"{"id":"l","ok":true,"data":{"x":1}}"#.utf8), wantsData: false).ok)
        #expect(LoadReply.parse(envelope: Data(#"{"id":"l","ok":true,"data":{"x":1}}"#.utf8), wantsData: true).data?["x"] == 1)
        let refused = LoadReply.parse(envelope: Data(#"{"id":"l","ok":false,"error":{"code":"validation_failed","message":"m"}}"#.utf8), wantsData: false)
        #expect(!refused.ok && refused.code == "validation_failed" && refused.isRefusal)
        #expect(LoadReply.parse(envelope: Data("nonsense".utf8), wantsData: false).code == "malformed_reply")
        // Successes are told from their head whatever the id (benchmarks prepare their own).
        #expect(LoadReply.isPlainSuccess(Data(#"{"id":"b-17","ok":true,"data":{}}"#.utf8)))
        #expect(LoadReply.isPlainSuccess(Data(#"{"id":"x","ok":true}"#.utf8)))
        #expect(!LoadReply.isPlainSuccess(Data(#"{"id":"b-17","ok":false,"error":{"code":"internal","message":"m"}}"#.utf8)))
        #expect(!LoadReply.isPlainSuccess(Data(#"{"id":"a\",\"ok\":true","ok":false}"#.utf8)))
        #expect(!LoadReply.isPlainSuccess(Data(#"{"id":"x","ok":truest}"#.utf8)))
        #expect(!LoadReply.isPlainSuccess(Data(#"{"id":"x""#.utf8)))
        let escaped = LoadReply.parse(envelope: Data(#"{"id":"a\",\"ok\":true","ok":false,"error":{"code":"conflict","message":"m"}}"#.utf8), wantsData: false)
        #expect(!escaped.ok && escaped.code == "conflict")
        var statistics = OperationStatistics()
        statistics.record(micros: 100, reply: refused)
        statistics.record(micros: 200, reply: LoadReply(ok: false, code: "internal"))
        statistics.record(micros: 300, reply: LoadReply(ok: true))
        #expect(statistics.count == 3 && statistics.ok == 1 && statistics.refused == 1 && statistics.failed == 1)
    }

    @Test("closed loop by count and open loop by rate against a raw echo", .timeLimit(.minutes(1)))
    func loops() async throws {
        let endpoint = TestEnvironment.freeEndpoint()
        let echo = SocketThread(name: "echo") { try? RawEcho.serve(endpoint: endpoint) }
        _ = echo
        let request = LoadRequest(op: "echo", data: Data("{}".utf8))
        let closed = try await LoadEngine.run(
            shape: LoadShape(loop: .closed(inFlight: 8), users: 1, seconds: nil, count: 2_000, warmupSeconds: 0), workload: RepeatedWorkload(request),
            makeTransport: { try ZeroMQLoadTransport(link: Link(endpoint), echo: true) })
        #expect(closed.total.count == 2_000 && closed.total.ok == 2_000 && closed.operations["echo"]?.count == 2_000, "\(closed.total.count) \(closed.total.ok) \(closed.total.errors)")

        // 400 requests due per second for 1.5 s: about 600 sent, each timed from when it was due.
        let open = try await LoadEngine.run(
            shape: LoadShape(loop: .open(ratePerSecond: 400), users: 1, seconds: 1.5, count: nil, warmupSeconds: 0), workload: RepeatedWorkload(request),
            makeTransport: { try ZeroMQLoadTransport(link: Link(endpoint), echo: true) })
        #expect((500...700).contains(open.total.count), "\(open.total.count) sent")
        #expect(open.total.failed == 0 && open.notSent == 0)
    }
}

import Foundation
import Platform
import SharedTesting
import Testing

/// libcurl (with the thirty libraries it brings, about 4 MiB resident) is loaded when a
/// process first calls a provider: services that never call one do not map it.
@Suite("Provider library loaded on use")
struct ProviderLibraryTests {
    @Test("a running savings service, having answered requests, has not mapped libcurl")
    func notMappedUntilUsed() async throws {
        try await TestStack.with(services: ["savings"]) { stack in
            let reply = try await stack.client.call("savings.methods.list", idempotent: true)
            #expect(reply.ok)
            let process = try #require(stack.process("savings"))
            // Read to the end (a /proc file says its size is 0).
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(process.pid)/maps"))
            defer { try? handle.close() }
            let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
            #expect(maps.contains("libsqlite3"))  // the check reads the right map
            #expect(!maps.contains("libcurl"))
            #expect(!maps.contains("libgnutls"))
        }
    }
}

import Foundation
import Platform
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Fixtures for tests that use real sockets, files and processes.
public enum TestEnvironment {
    /// A TCP port on 127.0.0.1 that was free a moment ago.
    ///
    /// Chosen at random below the kernel's ephemeral range (32768 and up on Linux), so
    /// an outgoing connection cannot take it between this check and the bind.
    public static func freePort() -> Int {
        while true {
            let port = Int.random(in: 20_000..<32_000)
            // Never hand out a port twice in one test process: tests run in parallel and
            // a port is only bound once the process using it starts.
            let fresh = handedOut.withLock { $0.insert(port).inserted }
            if fresh, canBind(port) { return port }
        }
    }

    private static let handedOut = Mutex<Set<Int>>([])

    private static func canBind(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        return result == 0
    }

    /// A loopback TCP endpoint on a free port.
    public static func freeEndpoint() -> String {
        "tcp://127.0.0.1:\(freePort())"
    }

    /// The folder with the built executables (`gateway`, `auth`, `stack`, ...): the one
    /// holding the running test binary, or `BACKEND_BIN_DIR`.
    public static var binaryDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["BACKEND_BIN_DIR"] {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        var folder = URL(fileURLWithPath: ProcessSetup.executablePath).deletingLastPathComponent()
        // The test binary may sit inside an .xctest bundle folder.
        while folder.path.contains(".xctest") { folder = folder.deletingLastPathComponent() }
        return folder
    }

    /// The path of a built executable.
    public static func binary(_ name: String) -> URL {
        binaryDirectory.appendingPathComponent(name)
    }
}

/// A folder under the system's temporary folder, removed by ``remove()`` or on deinit.
public final class TemporaryDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Creates a new, empty folder.
    public init(prefix: String = "backend-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The folder's path.
    public var path: String { url.path }

    /// Deletes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    deinit {
        remove()
    }
}

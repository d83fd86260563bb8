import Foundation
import Platform

/// Requests over the HTTP edge (`POST /v1/{op}`, the token as `Authorization: Bearer`,
/// `idem` as `Idempotency-Key`), one request at a time on each of `connections`
/// keep-alive connections to a loopback address, read with `poll(2)`.
public final class HTTPLoadTransport: LoadTransport {
    private final class Connection {
        var descriptor: Int32 = -1
        var tag: UInt64?
        var wantsData = false
        var output: [UInt8] = []
        var written = 0
        var input: [UInt8] = []
    }

    private let host: String
    private let port: UInt16
    private var connections: [Connection]
    private var idle: [Int]
    private var byTag: [UInt64: Int] = [:]
    public var capacity: Int { connections.count }

    /// `address` is `host:port` of a loopback listener (plain HTTP).
    public init(address: String, connections count: Int) throws {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1]) else { throw LoadError("edge address must be host:port, not \(address)") }
        host = String(parts[0])
        self.port = port
        connections = (0..<max(1, count)).map { _ in Connection() }
        idle = Array((0..<connections.count).reversed())
    }

    public func send(_ request: LoadRequest, tag: UInt64) throws {
        guard let index = idle.popLast() else { throw LoadError("no idle connection") }
        let connection = connections[index]
        if connection.descriptor < 0 { connection.descriptor = try connect() }
        var head = "POST /v1/\(request.op) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nContent-Length: \(request.data.count)\r\n"
        if let token = request.token { head += "Authorization: Bearer \(token)\r\n" }
        if let idem = request.idem { head += "Idempotency-Key: \(idem)\r\n" }
        head += "\r\n"
        connection.output = Array(head.utf8) + request.data
        connection.written = 0
        connection.input.removeAll(keepingCapacity: true)
        connection.tag = tag
        connection.wantsData = request.wantsReply
        byTag[tag] = index
        flush(connection)
    }

    public func receive(timeoutMs: Int, _ handle: (UInt64, LoadReply) -> Void) throws {
        var descriptors: [pollfd] = []
        var indexes: [Int] = []
        for (index, connection) in connections.enumerated() where connection.tag != nil && connection.descriptor >= 0 {
            let events = Int16(POLLIN) | (connection.written < connection.output.count ? Int16(POLLOUT) : 0)
            descriptors.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
            indexes.append(index)
        }
        if descriptors.isEmpty {
            if timeoutMs > 0 { usleep(UInt32(min(timeoutMs, 100)) * 1000) }
            return
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(timeoutMs))
        guard ready > 0 else { return }
        for (position, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
            let connection = connections[indexes[position]]
            if descriptor.revents & Int16(POLLOUT) != 0 { flush(connection) }
            guard descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var closed = false
            while true {
                let count = read(connection.descriptor, &buffer, buffer.count)
                if count > 0 {
                    connection.input.append(contentsOf: buffer[0..<count])
                    if count < buffer.count { break }
                } else if count == 0 {
                    closed = true
                    break
                } else {
                    if errno != EAGAIN && errno != EWOULDBLOCK { closed = true }
                    break
                }
            }
            if let (reply, keepAlive) = Self.response(in: connection.input, wantsData: connection.wantsData) {
                finish(indexes[position], reply: reply, handle)
                if !keepAlive || closed { reset(connection) }
            } else if closed {
                finish(indexes[position], reply: LoadReply(ok: false, code: "connection_closed"), handle)
                reset(connection)
            }
        }
    }

    public func abandon(tag: UInt64) {
        // The connection may still receive that reply: start it afresh.
        guard let index = byTag.removeValue(forKey: tag) else { return }
        reset(connections[index])
        connections[index].tag = nil
        idle.append(index)
    }

    public func close() {
        for connection in connections { reset(connection) }
    }

    private func finish(_ index: Int, reply: LoadReply, _ handle: (UInt64, LoadReply) -> Void) {
        let connection = connections[index]
        guard let tag = connection.tag else { return }
        connection.tag = nil
        byTag[tag] = nil
        idle.append(index)
        handle(tag, reply)
    }

    private func reset(_ connection: Connection) {
        if connection.descriptor >= 0 { Glibc.close(connection.descriptor) }
        connection.descriptor = -1
        connection.input.removeAll(keepingCapacity: true)
    }

    private func flush(_ connection: Connection) {
        while connection.written < connection.output.count {
            let count = connection.output.withUnsafeBytes { bytes in
                write(connection.descriptor, bytes.baseAddress! + connection.written, bytes.count - connection.written)
            }
            guard count > 0 else { return }
            connection.written += count
        }
    }

    private func connect() throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LoadError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else {
            Glibc.close(descriptor)
            throw LoadError("the edge address must be a numeric IPv4 address, not \(host)")
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw LoadError("cannot connect to \(host):\(port): \(message)")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        return descriptor
    }

    /// A complete response in `bytes` (status, headers, a `Content-Length` or chunked
    /// body): the reply and whether the connection stays open; `nil` while incomplete.
    public static func response(in bytes: [UInt8], wantsData: Bool) -> (LoadReply, Bool)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = bytes.firstRange(of: separator) else { return nil }
        let head = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self).lowercased()
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            return (LoadReply(ok: false, code: "malformed_reply"), false)
        }
        var length: Int?
        var chunked = false
        var keepAlive = true
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "content-length": length = Int(parts[1])
            case "transfer-encoding": chunked = parts[1].contains("chunked")
            case "connection": keepAlive = !parts[1].contains("close")
            default: break
            }
        }
        let bodyStart = headEnd.upperBound
        var body: [UInt8]
        if chunked {
            body = []
            var position = bodyStart
            while true {
                guard let lineEnd = bytes[position...].firstRange(of: [13, 10]) else { return nil }
                let sizeText = String(decoding: bytes[position..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return (LoadReply(ok: false, code: "malformed_reply"), false) }
                let chunkStart = lineEnd.upperBound
                guard bytes.count >= chunkStart + size + 2 else { return nil }
                if size == 0 { break }
                body.append(contentsOf: bytes[chunkStart..<chunkStart + size])
                position = chunkStart + size + 2
            }
        } else {
            let count = length ?? 0
            guard bytes.count >= bodyStart + count else { return nil }
            body = Array(bytes[bodyStart..<bodyStart + count])
        }
        if status == 200 {
            return (LoadReply(ok: true, data: wantsData ? try? JSONParser.parse(Data(body)) : nil), keepAlive)
        }
        let code = (try? JSONParser.parse(Data(body)))?["code"]?.stringValue ?? "http_\(status)"
        return (LoadReply(ok: false, code: code), keepAlive)
    }
}

/// A load run's own failure (bad options, an unreachable target).
public struct LoadError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

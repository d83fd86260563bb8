import CZeroMQ
import Foundation
import Synchronization

/// A ZAP (ZeroMQ RFC 27) handler for CURVE: accepts clients whose public key is in the
/// allowed set and refuses every other one.
///
/// It binds `inproc://zeromq.zap.01` in its context, so start it before binding any
/// CURVE server socket there. Its REP socket lives on its own thread.
public final class ZAPAuthenticator: Sendable {
    private let allowedKeys: Mutex<Set<String>>
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the handler with the Z85 public keys of the allowed clients.
    public init(context: ZMQContext = .shared, allowedClientKeys: Set<String>) throws(ZMQError) {
        allowedKeys = Mutex(allowedClientKeys)
        let ready = DispatchSemaphore(value: 0)
        let startError = Mutex<ZMQError?>(nil)
        let thread = Thread { [self] in
            let socket: ZMQSocket
            do throws(ZMQError) {
                socket = try ZMQSocket(context, type: .rep)
                try socket.bind("inproc://zeromq.zap.01")
            } catch {
                startError.withLock { $0 = error }
                ready.signal()
                finished.signal()
                return
            }
            ready.signal()
            serve(socket)
            socket.close()
            finished.signal()
        }
        thread.name = "zap"
        thread.start()
        ready.wait()
        if let error = startError.withLock({ $0 }) { throw error }
    }

    /// Replaces the allowed client keys; later handshakes use the new set.
    public func allow(_ keys: Set<String>) {
        allowedKeys.withLock { $0 = keys }
    }

    /// Stops the handler and waits for its thread; later calls return at once.
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    private func serve(_ socket: ZMQSocket) {
        var poller = Poller()
        poller.add(socket)
        while !stopping.load(ordering: .relaxed) {
            guard (try? poller.poll(timeoutMs: 100)) ?? 0 > 0,
                let request = try? socket.receiveMultipart(dontWait: true)
            else { continue }
            let reply = answer(request)
            _ = try? socket.send(multipart: reply)
        }
    }

    /// Builds the ZAP reply for a request: version, request id, status, text, user, metadata.
    func answer(_ request: [Data]) -> [Data] {
        // Request frames: version, request id, domain, address, identity, mechanism, credentials...
        // A REP socket must answer every request, even a malformed one.
        guard request.count >= 6 else {
            return [request.first ?? Data("1.0".utf8), request.count > 1 ? request[1] : Data(), Data("400".utf8), Data("malformed".utf8), Data(), Data()]
        }
        let version = request[0]
        let requestID = request[1]
        let mechanism = String(decoding: request[5], as: UTF8.self)
        var status = "400", text = "refused"
        if mechanism == "CURVE", request.count >= 7 {
            let key = Z85.encode(Array(request[6])) ?? ""
            if allowedKeys.withLock({ $0.contains(key) }) {
                status = "200"
                text = "OK"
            }
        }
        return [version, requestID, Data(status.utf8), Data(text.utf8), Data(), Data()]
    }
}

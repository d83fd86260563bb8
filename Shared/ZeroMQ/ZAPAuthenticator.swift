import CZeroMQ
import Foundation
import Synchronization

/// A ZAP (ZeroMQ RFC 27) handler for CURVE: for each ZAP domain (a server socket's
/// `ZMQ_ZAP_DOMAIN`) it admits the clients its ``Admission`` allows and refuses every
/// other one, and every handshake on a domain it does not know.
///
/// It binds `inproc://zeromq.zap.01` in its context, so start it before binding any
/// CURVE server socket there; one per context (``forSharedContext()`` is the process's).
/// Its REP socket lives on its own thread.
public final class ZAPAuthenticator: Sendable {
    /// Which clients a domain admits.
    public enum Admission: Sendable, Equatable {
        /// Only clients whose Z85 public key is in the set.
        case keys(Set<String>)
        /// Any client that completes the handshake (it knows the server's public key):
        /// encryption without client authentication, for sockets whose callers prove who
        /// they are another way (tokens).
        case anyClient
    }

    private let domains: Mutex<[String: Admission]>
    /// The admission of handshakes whose domain is not registered (`nil`: refused).
    private let fallback: Admission?
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the handler with an admission per domain.
    public init(context: ZMQContext = .shared, domains: [String: Admission] = [:], fallback: Admission? = nil) throws(ZMQError) {
        self.domains = Mutex(domains)
        self.fallback = fallback
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

    /// Starts a handler that admits the Z85 public keys in `allowedClientKeys` whatever
    /// the domain.
    public convenience init(context: ZMQContext = .shared, allowedClientKeys: Set<String>) throws(ZMQError) {
        try self.init(context: context, fallback: .keys(allowedClientKeys))
    }

    private static let shared = Mutex<ZAPAuthenticator?>(nil)

    /// The handler of ``ZMQContext/shared``, started on first use and kept for the life of
    /// the process: every component of a process registers its domains with it.
    public static func forSharedContext() throws(ZMQError) -> ZAPAuthenticator {
        let result: Result<ZAPAuthenticator, ZMQError> = shared.withLock { handler in
            if let handler { return .success(handler) }
            do throws(ZMQError) {
                let started = try ZAPAuthenticator(context: .shared)
                handler = started
                return .success(started)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Sets the admission of `domain`; later handshakes on it use the new one.
    public func admit(_ admission: Admission, domain: String) {
        domains.withLock { $0[domain] = admission }
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
        let domain = String(decoding: request[2], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        var status = "400", text = "refused", user = ""
        if mechanism == "CURVE", request.count >= 7, let admission = domains.withLock({ $0[domain] }) ?? fallback {
            let admitted: Bool
            switch admission {
            case .anyClient: admitted = true
            case .keys(let keys): admitted = keys.contains(Z85.encode(Array(request[6])) ?? "")
            }
            if admitted {
                status = "200"
                text = "OK"
                // The user id libzmq attaches to the peer's messages (`User-Id`): its key.
                user = Z85.encode(Array(request[6])) ?? ""
            }
        }
        return [version, requestID, Data(status.utf8), Data(text.utf8), Data(user.utf8), Data()]
    }
}

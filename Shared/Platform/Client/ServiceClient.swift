import Foundation
import Synchronization
import ZeroMQ

/// Why a call through ``ServiceClient`` produced no reply.
public struct ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// No reply before the deadline.
        case timeout
        /// No connection to the endpoint could take the request before the deadline.
        case unavailable
        /// The client was closed.
        case closed
        /// The reply was not a valid reply frame.
        case malformedReply
    }

    /// What went wrong.
    public let reason: Reason
    /// The endpoint called.
    public let endpoint: String

    public var description: String {
        switch reason {
        case .timeout: "no reply from \(endpoint) before the deadline"
        case .unavailable: "\(endpoint) is not reachable"
        case .closed: "the client was closed"
        case .malformedReply: "\(endpoint) sent a reply that is not valid JSON"
        }
    }
}

/// A client for one endpoint (the gateway or a service), on a DEALER socket.
///
/// Many requests can be in flight; each has its own deadline. The socket lives on its
/// own thread and reconnects by itself. A request is retried only when retrying cannot
/// do a write twice: reads (`idempotent: true`) and writes carrying an `idem` key.
public final class ServiceClient: Sendable {
    /// The endpoint this client connects to.
    public let endpoint: String
    private let name: String
    private let commands = Mailbox<Command>()
    private let nextID = Atomic<UInt64>(0)
    private let stopping = StopFlag()
    private let thread: SocketThread

    private enum Command: Sendable {
        case send(tag: Data, body: Data, deadline: ContinuousClock.Instant, completion: Completion)
    }

    /// Connects through `link` (its endpoint, with CURVE when it has a role).
    public convenience init(link: Link, name: String = "client") {
        self.init(endpoint: link.endpoint, name: name, curve: link.curve)
    }

    /// Connects to `endpoint`. `curve` secures the connection when the server uses CURVE.
    public init(endpoint: String, name: String = "client", curve: CurveRole? = nil) {
        self.endpoint = endpoint
        self.name = name
        let commands = self.commands
        let stopping = self.stopping
        thread = SocketThread(name: "\(name)-client") {
            ServiceClient.loop(endpoint: endpoint, curve: curve, commands: commands, stopping: stopping)
        }
    }

    deinit {
        stopping.raise()
        commands.wake()
    }

    /// Closes the socket; calls in flight fail with ``ClientError/Reason/closed``.
    public func close() async {
        stopping.raise()
        commands.wake()
        await thread.join()
    }

    /// Calls an operation and returns the parsed reply (which may carry an error).
    ///
    /// - Parameters:
    ///   - idempotent: whether the call may be retried when no reply comes; defaults
    ///     to `true` when `idem` is set. Pass `true` for reads.
    ///   - timeout: the deadline of each attempt.
    ///   - attempts: how many attempts a retryable call gets.
    public func call(
        _ op: String, data: JSONValue = .object([:]), token: String? = nil, idem: String? = nil,
        idempotent: Bool? = nil, timeout: Duration = .seconds(5), attempts: Int = 3
    ) async throws -> Reply.Parsed {
        let retryable = idempotent ?? (idem != nil)
        var lastError = ClientError(reason: .timeout, endpoint: endpoint)
        let attemptCount = retryable ? max(1, attempts) : 1
        for attempt in 1...attemptCount {
            let id = "\(name)-\(nextID.add(1, ordering: .relaxed).newValue)"
            let body = RequestEnvelope(id: id, op: op, token: token, idem: idem, data: data).encoded
            do {
                let reply = try await send(body, timeout: timeout)
                guard let parsed = try? Reply.parse(reply) else {
                    throw ClientError(reason: .malformedReply, endpoint: endpoint)
                }
                return parsed
            } catch let error as ClientError where error.reason == .timeout || error.reason == .unavailable {
                lastError = error
                if attempt < attemptCount { try await Task.sleep(for: .milliseconds(50 * attempt)) }
            }
        }
        throw lastError
    }

    /// Sends one request frame as it is and returns the raw reply frame.
    ///
    /// Replies are matched by a routing frame the client puts before the delimiter
    /// (`[tag, "", body]`, sent packed into one frame: ``PackedFrames``), which ROUTER
    /// sockets return unchanged, so the body is never parsed here and may even be invalid JSON.
    public func send(_ body: Data, timeout: Duration) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            send(body, timeout: timeout) { continuation.resume(with: $0) }
        }
    }

    /// What a request's sender hears: the reply frame or a ``ClientError``.
    public typealias Completion = @Sendable (Result<Data, any Error>) -> Void

    /// Sends one request frame and calls `completion` once with the reply frame or the
    /// error: on the socket thread (it must return quickly: the socket waits meanwhile), or
    /// on the caller's when the client is already closed. For
    /// callers that decide where the reply is handled (the HTTP edge resumes on the event
    /// loop that asked).
    public func send(_ body: Data, timeout: Duration, completion: @escaping Completion) {
        guard !stopping.isRaised else { return completion(.failure(ClientError(reason: .closed, endpoint: endpoint))) }
        let deadline = ContinuousClock.now + timeout
        var tagValue = nextID.add(1, ordering: .relaxed).newValue
        let tag = withUnsafeBytes(of: &tagValue) { Data($0) }
        // A closed mailbox means the socket thread is gone: fail now rather than hang.
        if !commands.post(.send(tag: tag, body: body, deadline: deadline, completion: completion)) {
            completion(.failure(ClientError(reason: .closed, endpoint: endpoint)))
        }
    }

    /// A request waiting for its reply, or for a connection to send it on.
    private struct Pending {
        var body: Data
        var deadline: ContinuousClock.Instant
        var completion: Completion
        var sent: Bool
    }

    private static func loop(endpoint: String, curve: CurveRole?, commands: Mailbox<Command>, stopping: StopFlag) {
        var pending: [Data: Pending] = [:]
        var unsent: [Data] = []
        func failAll(_ reason: ClientError.Reason) {
            for (_, request) in pending { request.completion(.failure(ClientError(reason: reason, endpoint: endpoint))) }
            pending.removeAll()
        }
        let socket: ZMQSocket
        do {
            // IMMEDIATE: a request is never queued for a peer that is not connected, so
            // it cannot be delivered late, after its caller gave up and retried.
            socket = try ZMQSocket(type: .dealer, options: .with { $0.immediate = true; $0.curve = curve })
            try socket.connect(endpoint)
        } catch {
            for case .send(_, _, _, let completion) in commands.close() {
                completion(.failure(ClientError(reason: .unavailable, endpoint: endpoint)))
            }
            return
        }
        var poller = Poller()
        let socketItem = poller.add(socket)
        let mailboxItem = poller.add(fileDescriptor: commands.fileDescriptor)
        while !stopping.isRaised {
            let now = ContinuousClock.now
            // Expire requests past their deadline.
            var nextDeadline = now + .milliseconds(250)
            for (id, request) in pending {
                if request.deadline <= now {
                    pending[id] = nil
                    let reason: ClientError.Reason = request.sent ? .timeout : .unavailable
                    request.completion(.failure(ClientError(reason: reason, endpoint: endpoint)))
                } else if request.deadline < nextDeadline {
                    nextDeadline = request.deadline
                }
            }
            // Send what could not be sent while no connection was up.
            unsent.removeAll { tag in
                guard var request = pending[tag] else { return true }
                guard (try? socket.send(multipart: [PackedFrames.pack([tag, Data(), request.body])], dontWait: true)) == true else { return false }
                request.sent = true
                pending[tag] = request
                return true
            }
            var timeout = (nextDeadline - now).wholeMilliseconds + 1
            if !unsent.isEmpty { timeout = min(timeout, 5) }
            guard (try? poller.poll(timeoutMs: timeout)) != nil else { break }
            if poller.isReadable(mailboxItem) {
                for case .send(let tag, let body, let deadline, let completion) in commands.drain() {
                    let sent = (try? socket.send(multipart: [PackedFrames.pack([tag, Data(), body])], dontWait: true)) == true
                    pending[tag] = Pending(body: body, deadline: deadline, completion: completion, sent: sent)
                    if !sent { unsent.append(tag) }
                }
            }
            if poller.isReadable(socketItem) {
                while let received = try? socket.receiveMultipart(dontWait: true) {
                    // A reply is [tag, "", body], packed as the request was; anything else
                    // is not ours to match.
                    let frames = PackedFrames.openReply(received)
                    guard frames.count == 3, frames[1].isEmpty, let request = pending.removeValue(forKey: frames[0]) else {
                        continue
                    }
                    let body = frames[2]
                    request.completion(.success(body))
                }
            }
        }
        for case .send(_, _, _, let completion) in commands.close() {
            completion(.failure(ClientError(reason: .closed, endpoint: endpoint)))
        }
        failAll(.closed)
        socket.close()
    }
}

import CZeroMQ

/// Runs `zmq_proxy_steerable` between two sockets until a `TERMINATE` command arrives
/// on `control` (a PAIR or SUB socket). Blocks the calling thread, which must own all
/// three sockets.
public func runSteerableProxy(frontend: ZMQSocket, backend: ZMQSocket, control: ZMQSocket) throws(ZMQError) {
    while true {
        let rc = zmq_proxy_steerable(frontend.handle, backend.handle, nil, control.handle)
        if rc == 0 { return }
        let error = ZMQError.last("zmq_proxy_steerable")
        if error.code == EINTR { continue }
        if error.isTerminated { return }
        throw error
    }
}

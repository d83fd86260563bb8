import Foundation
import Platform
import Synchronization
import Testing

@Suite("Worker threads")
struct WorkerThreadsTests {
    @Test("a bounded queue refuses at once when full; work cancelled while queued never runs")
    func boundedAndCancelled() async throws {
        let workers = WorkerThreads(name: "test-workers", count: 1)
        let gate = DispatchSemaphore(value: 0)
        let ran = Recorder()
        // The one thread is held by `first`; `second` waits in the queue (bound 1).
        let started = DispatchSemaphore(value: 0)
        let first = Task { try await workers.run(maxQueued: 1) { started.signal(); gate.wait(); ran.append("first") } }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { started.wait(); continuation.resume() }
        }
        let second = Task { try await workers.run(maxQueued: 1) { ran.append("second") } }
        while workers.queued < 1 { try await Task.sleep(for: .milliseconds(5)) }
        await #expect(throws: WorkerThreads.Full.self) { try await workers.run(maxQueued: 1) { ran.append("third") } }
        second.cancel()
        gate.signal()
        try await first.value
        await #expect(throws: CancellationError.self) { try await second.value }
        // Unbounded callers still get through, after the dropped job.
        try await workers.run { ran.append("fourth") }
        #expect(ran.names == ["first", "fourth"])
        // A task already cancelled does not queue at all.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await workers.run { ran.append("never") }
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(ran.names == ["first", "fourth"])
    }
}

/// Names appended from worker threads.
private final class Recorder: Sendable {
    private let state = Mutex<[String]>([])
    func append(_ name: String) { state.withLock { $0.append(name) } }
    var names: [String] { state.withLock { $0 } }
}

@Suite("Worker threads, submitted work")
struct SubmittedWorkTests {
    @Test("submitted work runs on a thread; a ticket cancelled before a thread takes it runs its job as cancelled")
    func submitAndCancel() async throws {
        let workers = WorkerThreads(name: "test-submit", count: 1)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let seen = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        _ = workers.submit { cancelled in
            started.signal()
            gate.wait()
            seen.withLock { $0.append("first \(cancelled)") }
        }
        await withCheckedContinuation { continuation in DispatchQueue.global().async { started.wait(); continuation.resume() } }
        let second = workers.submit { cancelled in seen.withLock { $0.append("second \(cancelled)") } }
        _ = workers.submit { cancelled in
            seen.withLock { $0.append("third \(cancelled)") }
            done.signal()
        }
        second.cancel()
        gate.signal()
        await withCheckedContinuation { continuation in DispatchQueue.global().async { done.wait(); continuation.resume() } }
        #expect(seen.withLock { $0 } == ["first false", "second true", "third false"])
    }
}

/// The socket loops' deadline watch (`DeadlineWatch`): a look through the requests in
/// flight only once the earliest deadline may have passed, and a poll that wakes for it.
@Suite("Deadline watch")
struct DeadlineWatchTests {
    @Test("due only once the earliest noted deadline passed; then it starts over; polls wake just past it")
    func watch() {
        let now = ContinuousClock.now
        var watch = DeadlineWatch()
        let dueWhenEmpty = watch.isDue(at: now)
        #expect(!dueWhenEmpty && watch.pollTimeout(at: now, atMost: 250) == 250)
        watch.note(now + .milliseconds(900))
        watch.note(now + .milliseconds(40))
        watch.note(now + .milliseconds(5_000))
        #expect(watch.pollTimeout(at: now, atMost: 250) == 41)
        #expect(watch.pollTimeout(at: now, atMost: 20) == 20)
        let dueEarly = watch.isDue(at: now + .milliseconds(39))
        #expect(!dueEarly)
        let due = watch.isDue(at: now + .milliseconds(40))
        #expect(due)
        // Started over: nothing is due until the requests kept are noted again.
        let dueAfterLook = watch.isDue(at: now + .seconds(10))
        #expect(watch.earliest == nil && !dueAfterLook)
        watch.note(now + .milliseconds(900))
        #expect(watch.pollTimeout(at: now + .milliseconds(40), atMost: 250) == 250)
        #expect(watch.pollTimeout(at: now + .milliseconds(800), atMost: 250) == 101)
        #expect(watch.pollTimeout(at: now + .seconds(2), atMost: 250) == 0)
    }
}

import EdgeService
import Foundation
import NIOCore
import NIOPosix
import Testing

@Suite("Edge: handlers run on the event loops")
struct EventLoopExecutorTests {
    @Test("a task under the loops' preference runs on the loop that woke it, on a loop when another thread did, and its child tasks start on its loop")
    func tasksRunOnTheLoopThatWokeThem() async throws {
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let executor = EventLoopExecutor(loops)
        let (first, second) = (loops.next(), loops.next())
        #expect(first !== second)
        let outside = executor.currentLoop
        let seen = await withTaskExecutorPreference(executor) {
            var seen: [String: Bool] = ["started on a loop": executor.currentLoop != nil]
            // A connection's task is woken by its channel's loop; the edge hands the
            // gateway's reply to the loop that asked. (A resume that comes before the task
            // has suspended lets it go on where it is: the loops wait a little first.)
            for (name, loop) in [("first", first), ("second", second), ("first again", first)] {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    loop.scheduleTask(in: .milliseconds(5)) { continuation.resume() }
                }
                seen["woken by \(name)"] = executor.currentLoop === loop
            }
            // Woken by a thread that is no loop (a socket thread): still on a loop.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread {
                    Thread.sleep(forTimeInterval: 0.005)
                    continuation.resume()
                }
            }
            seen["woken by a thread"] = executor.currentLoop != nil
            // Hummingbird runs each connection as a child of its server's task group.
            let parent = executor.currentLoop.map(ObjectIdentifier.init)
            let children = await withTaskGroup(of: ObjectIdentifier?.self) { group in
                for _ in 0..<8 { group.addTask { executor.currentLoop.map(ObjectIdentifier.init) } }
                return await group.reduce(into: [ObjectIdentifier?]()) { $0.append($1) }
            }
            seen["children on the parent's loop"] = children.count == 8 && parent != nil && children.allSatisfy { $0 == parent }
            return seen
        }
        #expect(outside == nil, "the test itself runs off the loops, so the checks mean something")
        #expect(seen.filter { !$0.value }.isEmpty, "\(seen)")
        #expect(seen.count == 6)
        try await loops.shutdownGracefully()
    }
}

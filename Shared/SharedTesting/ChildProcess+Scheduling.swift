import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// Lowers the scheduling priority (raises `nice`) of every thread of the process, so
    /// a load test yields the CPU to the tests running beside it; threads the process
    /// starts later inherit it. On Linux, priority is per thread: hence each task.
    public func lowerPriority(niceness: Int32 = 19) {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return }
        for thread in tasks.compactMap({ id_t($0) }) {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, niceness)
        }
    }

    /// Lowers the scheduling priority of the calling thread (Linux: `setpriority` with
    /// who 0 applies to the calling thread only).
    public static func lowerPriorityOfCurrentThread(niceness: Int32 = 19) {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
    }
}

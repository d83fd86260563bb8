import Foundation
import Platform

extension ChildProcess {
    /// The process's memory as the kernel reports it in `/proc/<pid>/status`.
    public typealias Memory = ProcessMemory

    /// The process's memory now, or `nil` once it has exited.
    public var memory: Memory? {
        ProcessMemory.of(pid: pid)
    }

    /// The memory of any process by its id, or `nil` if it is gone.
    public static func memory(ofProcess pid: Int32) -> Memory? {
        ProcessMemory.of(pid: pid)
    }
}

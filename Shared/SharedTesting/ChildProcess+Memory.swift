import Foundation

extension ChildProcess {
    /// The process's memory as the kernel reports it in `/proc/<pid>/status`.
    public struct Memory: Sendable, Equatable {
        /// Resident now (`VmRSS`), in bytes.
        public var resident: Int
        /// The most it has been resident since it started (`VmHWM`), in bytes.
        public var peakResident: Int
    }

    /// The process's memory now, or `nil` once it has exited.
    public var memory: Memory? {
        Self.memory(ofProcess: pid)
    }

    /// The memory of any process by its id, or `nil` if it is gone.
    public static func memory(ofProcess pid: Int32) -> Memory? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func kilobytes(_ field: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return nil }
            return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
        }
        guard let resident = kilobytes("VmRSS"), let peak = kilobytes("VmHWM") else { return nil }
        return Memory(resident: resident * 1024, peakResident: peak * 1024)
    }
}

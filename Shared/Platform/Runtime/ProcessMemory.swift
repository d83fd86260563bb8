import Foundation

/// A process's memory as the kernel reports it in `/proc/<pid>/status`.
public struct ProcessMemory: Sendable, Equatable {
    /// Resident now (`VmRSS`), in bytes.
    public var resident: Int
    /// The most it has been resident since it started (`VmHWM`), in bytes.
    public var peakResident: Int
    /// Its proportional share (`Pss` of `/proc/<pid>/smaps_rollup`): private pages, plus
    /// each shared page (the Swift runtime, Foundation, libcrypto) divided by the processes
    /// sharing it, in bytes; `nil` where the kernel does not say.
    public var proportional: Int?

    public init(resident: Int, peakResident: Int, proportional: Int? = nil) {
        self.resident = resident
        self.peakResident = peakResident
        self.proportional = proportional
    }

    /// The memory of a process by its id, or `nil` if it is gone.
    public static func of(pid: Int32) -> ProcessMemory? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func kilobytes(_ field: String) -> Int? {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return nil }
            return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
        }
        guard let resident = kilobytes("VmRSS"), let peak = kilobytes("VmHWM") else { return nil }
        let rollup = (try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)) ?? ""
        let proportional = rollup.split(separator: "\n").first { $0.hasPrefix("Pss:") }
            .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } }
        return ProcessMemory(resident: resident * 1024, peakResident: peak * 1024, proportional: proportional.map { $0 * 1024 })
    }
}

import Foundation

/// Figures about processes and time that load runs read: monotonic nanoseconds, CPU time
/// and resident memory from `/proc`.
public enum ProcessFigures {
    /// Monotonic nanoseconds (`CLOCK_MONOTONIC`).
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// CPU time (user + system) a process has used so far, from `/proc/<pid>/stat`.
    public static func cpuSeconds(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // Fields after the command name: state is field 3; utime and stime are 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The machine in one line: CPU model, cores, memory and kernel.
    public static func machine() -> String {
        let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuInfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown CPU"
        var info = utsname()
        uname(&info)
        let kernel = withUnsafeBytes(of: &info.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let memory = ProcessInfo.processInfo.physicalMemory / (1 << 20)
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(memory) MiB, Linux \(kernel)"
    }
}
